#!/bin/sh
# propose.sh — a scripted exec agent for dry runs: it acknowledges, writes
# "fixed <task id>" into file.txt and creates new.txt.
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: %s\n\n' "$WILCO_TASK_ID" "$desc"
echo "fixed $WILCO_TASK_ID" >file.txt
echo "a new file" >new.txt
