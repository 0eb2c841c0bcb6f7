#!/bin/sh
# bounds.sh — an editor told to keep out of internal/auth: first it also
# writes internal/auth/token.go; told so, it removes it and writes
# file.txt alone.
printf '[ACK] %s - RECEIVED\nUnderstanding: Will write the fix into file.txt without touching internal/auth\n\n' "$WILCO_TASK_ID"
if grep -q "outside the task's boundaries" "$WILCO_PROMPT_FILE"; then
	rm -rf internal
else
	mkdir -p internal/auth
	echo "package auth" >internal/auth/token.go
fi
echo "fixed $WILCO_TASK_ID" >file.txt
