#!/bin/sh
# probe.sh — an agent whose side has no Go: it answers context probes, and
# any task with a fix.
if grep -q '^## Context probe' "$WILCO_PROMPT_FILE"; then
	printf 'os: TestOS 1\ncli: probe.sh 1.0\ntool go: missing\ntool git: 2.39\n'
	exit 0
fi
printf '[ACK] %s - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n' "$WILCO_TASK_ID"
echo "fixed $WILCO_TASK_ID" >file.txt
