#!/bin/sh
# changelog.sh — a scripted exec agent for the landing tests
# (test/land_test.go). It acknowledges the task and writes "fixed <task
# id>" into file.txt; when its prompt says that a git hook found the
# CHANGELOG missing, it writes the CHANGELOG too.
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: %s\n\n' "$WILCO_TASK_ID" "$desc"
echo "fixed $WILCO_TASK_ID" >file.txt
if grep -q "CHANGELOG is missing" "$WILCO_PROMPT_FILE"; then
	echo "- $WILCO_TASK_ID: fixed file.txt" >CHANGELOG
	echo "Wrote the fix into file.txt and the CHANGELOG the hook asked for."
	exit 0
fi
echo "Wrote the fix into file.txt."
