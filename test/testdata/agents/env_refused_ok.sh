#!/bin/sh
# env_refused_ok.sh — a scripted exec agent that acknowledges, is refused
# the permission to write, says so, and exits 0 without doing the work, as
# agent CLIs in print mode do.
printf '[ACK] %s - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n' "$WILCO_TASK_ID"
echo "Claude requested permissions to write to file.txt, but you haven't granted it yet."
echo "I could not write the fix."
exit 0
