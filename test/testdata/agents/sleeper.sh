#!/bin/sh
# sleeper.sh — a scripted exec agent that acknowledges, writes a partial
# change into partial.txt and, on the task's first attempt, waits for a
# child `sleep` until it is stopped (the shell's pid, the child's pid and
# the task id are appended to $PID_FILE first). On a later attempt it
# writes "fixed <task id>" into file.txt.
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: %s\n\n' "$WILCO_TASK_ID" "$desc"
echo "partial $WILCO_TASK_ID" >partial.txt
if [ "$WILCO_ATTEMPT" = 1 ]; then
	sleep 60 &
	echo "$$ $! $WILCO_TASK_ID" >>"$PID_FILE"
	wait
	exit 0
fi
echo "fixed $WILCO_TASK_ID" >file.txt
