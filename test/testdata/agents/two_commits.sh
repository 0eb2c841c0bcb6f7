#!/bin/sh
# two_commits.sh — a scripted exec agent for the black-box tests of tasks
# worked in parallel: it acknowledges the task, commits a first draft of
# files/<task id>.txt on the task's branch itself, then writes the file's
# final content (the task's id) and leaves it for wilco to commit: the
# branch holds two commits when it lands.
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: write %s into files/%s.txt\n\n' "$WILCO_TASK_ID" "$WILCO_TASK_ID" "$WILCO_TASK_ID"
mkdir -p files
echo draft >"files/$WILCO_TASK_ID.txt"
git add "files/$WILCO_TASK_ID.txt"
git -c user.name=agent -c user.email=agent@example.com commit -q -m "a draft of $WILCO_TASK_ID" >/dev/null
echo "$WILCO_TASK_ID" >"files/$WILCO_TASK_ID.txt"
echo "Wrote $WILCO_TASK_ID into files/$WILCO_TASK_ID.txt."
