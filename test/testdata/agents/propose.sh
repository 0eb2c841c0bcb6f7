#!/bin/sh
# propose.sh [names] — a scripted exec agent for dry runs: it acknowledges,
# writes "fixed <task id>" into file.txt and creates new.txt. With names,
# it also creates résumé.txt and adds a line to "notes with spaces.md":
# names git quotes in a diff ("r\303\251sum\303\251.txt") or leaves
# ambiguous (a/notes with spaces.md b/notes with spaces.md).
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: %s\n\n' "$WILCO_TASK_ID" "$desc"
echo "fixed $WILCO_TASK_ID" >file.txt
echo "a new file" >new.txt
if [ "$1" = names ]; then
	echo "a résumé of $WILCO_TASK_ID" >résumé.txt
	echo "a note of $WILCO_TASK_ID" >>"notes with spaces.md"
fi
