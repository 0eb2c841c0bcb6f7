#!/bin/sh
# own_file.sh — a scripted exec agent for the black-box tests of tasks
# worked in parallel (test/parallel_test.go). It acknowledges the task,
# works a moment (so that tasks overlap), then writes the line the task's
# description asks for — its "Write LINE into FILE" — into FILE, in the
# directory it runs in (the task's worktree). A retry whose prompt names a
# merge conflict resolves it: it merges the target (its WILCO_TARGET),
# keeps both lines, and leaves the resolved merge for wilco to commit.
# OWN_FILE_ALSO names a second file it writes the line into as well.
prompt=$(cat "$WILCO_PROMPT_FILE")
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: %s\n\n' "$WILCO_TASK_ID" "$desc"
sleep "${OWN_FILE_SLEEP:-0.3}"
line=$(printf '%s\n' "$desc" | sed -n 's/^Write \(.*\) into \([^ ]*\)$/\1/p')
file=$(printf '%s\n' "$desc" | sed -n 's/^Write \(.*\) into \([^ ]*\)$/\2/p')
case $prompt in
*merge_conflict*)
	git -c user.name=agent -c user.email=agent@example.com merge -q --no-edit "$WILCO_TARGET" >/dev/null 2>&1
	# Keep both sides of each conflict.
	sed -i '/^<<<<<<< /d; /^=======$/d; /^>>>>>>> /d' "$file"
	echo "Resolved the conflict in $file keeping both."
	exit 0
	;;
esac
mkdir -p "$(dirname "$file")"
if [ "${OWN_FILE_APPEND:-}" = 1 ]; then
	echo "$line" >>"$file"
else
	echo "$line" >"$file"
fi
if [ -n "${OWN_FILE_ALSO:-}" ]; then
	mkdir -p "$(dirname "$OWN_FILE_ALSO")"
	echo "$line" >"$OWN_FILE_ALSO"
fi
echo "Wrote $line into $file."
