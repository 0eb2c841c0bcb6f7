#!/bin/sh
# ack_pause.sh — a scripted exec agent that writes its ACK as a streaming
# model does: the [ACK] line, a blank line, a pause of 2 s, then its
# Understanding:; then it writes the fix.
printf '[ACK] %s - RECEIVED\n\n' "$WILCO_TASK_ID"
sleep 2
printf 'Understanding: Will write the fix into file.txt\n\n'
echo "fixed $WILCO_TASK_ID" >file.txt
echo "Wrote the fix into file.txt."
