#!/bin/sh
# clarify.sh — a scripted exec agent that asks a question until its prompt
# carries the user's answers (a task-clarification); then it acknowledges
# and writes "fixed <task id>" into file.txt.
prompt=$(cat "$WILCO_PROMPT_FILE")
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
case $prompt in
*task-clarification*) ;;
*)
	printf '[ACK] %s - CLARIFICATION_NEEDED\nUnderstanding: Will do this: %s\nQuestions:\n- Which line goes into file.txt?\n\n' "$WILCO_TASK_ID" "$desc"
	exit 0
	;;
esac
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: %s\n\n' "$WILCO_TASK_ID" "$desc"
echo "fixed $WILCO_TASK_ID" >file.txt
