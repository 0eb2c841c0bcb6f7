#!/bin/sh
# rate_limited.sh — a stand-in for an agent CLI whose model API is rate
# limited on its first run: it prints the API's error and exits 1 before
# any ACK; run again, it acknowledges and writes the fix.
marker="$WILCO_RUN_DIR/rate-limited-once"
if [ ! -e "$marker" ]; then
	: >"$marker"
	echo 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}'
	exit 1
fi
printf '[ACK] %s - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n' "$WILCO_TASK_ID"
echo "fixed $WILCO_TASK_ID" >file.txt
