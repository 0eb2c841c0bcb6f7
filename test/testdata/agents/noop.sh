#!/bin/sh
# noop.sh — a scripted exec agent that acknowledges the task and changes
# nothing, so that verification fails every time.
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: %s\n\n' "$WILCO_TASK_ID" "$desc"
echo "Looked around; changed nothing."
