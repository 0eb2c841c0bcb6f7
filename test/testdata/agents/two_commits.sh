#!/bin/sh
# two_commits.sh — a scripted exec agent for the black-box tests of
# landing (test/landhow_test.go) that commits a part of its work itself:
# for the task's "Write LINE into FILE" it writes FILE.part and commits it
# on the task's branch ("Part of LINE", as the agent), then writes FILE
# and leaves it for wilco to commit. The task's branch so holds two
# commits.
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: %s\n\n' "$WILCO_TASK_ID" "$desc"
sleep "${OWN_FILE_SLEEP:-0.3}"
line=$(printf '%s\n' "$desc" | sed -n 's/^Write \(.*\) into \([^ ]*\)$/\1/p')
file=$(printf '%s\n' "$desc" | sed -n 's/^Write \(.*\) into \([^ ]*\)$/\2/p')
mkdir -p "$(dirname "$file")"
echo "$line" >"$file.part"
git add "$file.part"
git -c user.name=agent -c user.email=agent@example.com commit -qm "Part of $line" >/dev/null
echo "$line" >"$file"
echo "Committed a part of $line, wrote $line into $file."
