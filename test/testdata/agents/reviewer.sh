#!/bin/sh
# reviewer.sh STATE — a reviewer that rejects the first change it sees (the
# file STATE remembers it) and approves the next, checking it was sent the
# diff and the criteria.
grep -q '^+fixed ' "$WILCO_PROMPT_FILE" || { printf 'REJECTED\n- the review request holds no diff\n'; exit 0; }
if [ ! -e "$1" ]; then
	: >"$1"
	printf 'REJECTED\n- the summary must mention REVIEWER-REASON-42\n- and nothing else is wrong\n'
	exit 0
fi
echo "APPROVED"
