#!/bin/sh
# probe_honest.sh — an agent that answers context probes truthfully (each
# tool asked about is looked up on its PATH), and does a task by creating
# fixed.txt.
if grep -q '^## Context probe' "$WILCO_PROMPT_FILE"; then
	printf 'os: %s\ncli: probe_honest.sh 1.0\n' "$(uname -s)"
	sed -n 's/^tool \([^:]*\):.*/\1/p' "$WILCO_PROMPT_FILE" | while read -r tool; do
		if command -v "$tool" >/dev/null 2>&1; then
			echo "tool $tool: installed"
		else
			echo "tool $tool: missing"
		fi
	done
	exit 0
fi
printf '[ACK] %s - RECEIVED\nUnderstanding: Will create fixed.txt\n\n' "$WILCO_TASK_ID"
echo "fixed $WILCO_TASK_ID" >fixed.txt
