#!/bin/sh
# ask_scout.sh WILCO SCOUT — an editor that consults a scout: it
# acknowledges, asks the scout (with the wilco binary WILCO) what file.txt
# should hold, and writes the answer; with no answer it writes "no answer".
printf '[ACK] %s - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n' "$WILCO_TASK_ID"
if answer=$("$1" ask "$2" "What should file.txt hold?"); then
	printf '%s\n' "$answer" >file.txt
	echo "Wrote the scout's answer into file.txt."
else
	echo "no answer" >file.txt
	echo "The scout gave no answer."
fi
