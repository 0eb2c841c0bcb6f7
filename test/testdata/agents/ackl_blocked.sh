#!/bin/sh
# ackl_blocked.sh — a scripted exec agent that acknowledges the task, finds
# it cannot go on, says so in a BLOCKED: line with its reason, and exits 0
# without changing anything.
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: %s\n\n' "$WILCO_TASK_ID" "$desc"
echo "Tried to reach the fixture server first."
echo
echo "BLOCKED: the fixture server at localhost:9 refuses connections"
