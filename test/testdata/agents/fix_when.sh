#!/bin/sh
# fix_when.sh [PATTERN]... — a scripted exec agent for the black-box task
# tests (test/tasks_test.go). It acknowledges the task (its Understanding
# repeats the task's first line), then writes "fixed <task id>" into
# file.txt when its prompt contains every PATTERN (fixed strings), else a
# wrong guess, "attempt <n>". With no PATTERN it fixes at once.
prompt=$(cat "$WILCO_PROMPT_FILE")
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: %s\n\n' "$WILCO_TASK_ID" "$desc"
for p in "$@"; do
	case $prompt in
	*"$p"*) ;;
	*)
		echo "attempt $WILCO_ATTEMPT" >file.txt
		echo "Guessed: wrote attempt $WILCO_ATTEMPT into file.txt."
		exit 0
		;;
	esac
done
echo "fixed $WILCO_TASK_ID" >file.txt
echo "Wrote the fix into file.txt."
