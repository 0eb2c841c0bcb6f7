#!/bin/sh
# env_approval.sh — a scripted exec agent that acknowledges, then stops at
# a permission prompt nobody answers, as agent CLIs do in print mode, and
# exits 1.
printf '[ACK] %s - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n' "$WILCO_TASK_ID"
echo "Claude requested permissions to use Bash, but you haven't granted it yet." >&2
exit 1
