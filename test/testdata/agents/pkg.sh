#!/bin/sh
# pkg.sh — an editor in a monorepo scoped to svc/a: first it writes into
# svc/b (the wrong package); told so, it writes svc/a/file.txt.
printf '[ACK] %s - RECEIVED\nUnderstanding: Will write the fix into file.txt of the package\n\n' "$WILCO_TASK_ID"
if grep -q "outside the task's package" "$WILCO_PROMPT_FILE"; then
	rm -f svc/b/file.txt
	echo "fixed $WILCO_TASK_ID" >svc/a/file.txt
else
	mkdir -p svc/b
	echo "fixed $WILCO_TASK_ID" >svc/b/file.txt
fi
