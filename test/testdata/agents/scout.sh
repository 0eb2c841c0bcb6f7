#!/bin/sh
# scout.sh [write] — a scout: it answers what file.txt should hold for the
# task it is asked about; with "write" it also changes file.txt, which a
# scout must never do.
if [ "$1" = write ]; then
	echo "scribbled by the scout" >file.txt
fi
grep -q 'What should file.txt hold' "$WILCO_PROMPT_FILE" || { echo "not a question I know"; exit 0; }
echo "fixed $WILCO_TASK_ID"
