#!/bin/sh
# pr_agent.sh — a scripted exec agent for the black-box tests of tasks
# landing as pull requests (test/prland_test.go). Each turn keeps its
# prompt as $PR_PROMPTS/prompt-N.txt (N counts the turns), acknowledges,
# fixes file.txt for the task, and writes its turn's number into turn.txt
# so that every attempt is a change of its own to push.
n=$(($(ls "$PR_PROMPTS" | wc -l) + 1))
# Written whole under a hidden name, then renamed: a test that sees the
# file reads all of it.
cp "$WILCO_PROMPT_FILE" "$PR_PROMPTS/.prompt-$n.tmp"
mv "$PR_PROMPTS/.prompt-$n.tmp" "$PR_PROMPTS/prompt-$n.txt"
printf '[ACK] %s - RECEIVED\nUnderstanding: Will fix file.txt for the task\n\n' "$WILCO_TASK_ID"
echo "fixed $WILCO_TASK_ID" >file.txt
echo "turn $n" >turn.txt
echo "Fixed file.txt (turn $n)."
