#!/bin/sh
# rate_limited_after_ack.sh — a stand-in for an agent CLI whose model API
# becomes rate limited after it acknowledged: its first run acknowledges,
# then prints the API's error and exits 1; run again for the work (told to
# go on, not to acknowledge again), it writes the fix.
marker="$WILCO_RUN_DIR/rate-limited-once"
if [ ! -e "$marker" ]; then
	: >"$marker"
	printf '[ACK] %s - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n' "$WILCO_TASK_ID"
	echo 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}'
	exit 1
fi
if [ "$WILCO_PHASE" != work ] || ! grep -q 'was cut short' "$WILCO_PROMPT_FILE"; then
	echo "the work was not taken up as work: phase $WILCO_PHASE" >&2
	exit 3
fi
echo "fixed $WILCO_TASK_ID" >file.txt
