#!/bin/sh
# switch_branch.sh — a scripted exec agent for the landing tests
# (test/land_test.go). It acknowledges the task, writes "fixed <task id>"
# into file.txt, then checks out a new branch "side" (as a user might
# while the task runs), carrying the change with it.
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: %s\n\n' "$WILCO_TASK_ID" "$desc"
echo "fixed $WILCO_TASK_ID" >file.txt
git checkout -q -b side
echo "Wrote the fix into file.txt, on a branch of its own."
