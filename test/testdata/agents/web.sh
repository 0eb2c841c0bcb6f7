#!/bin/sh
# web.sh MODE — a scripted exec agent for the page's browser test. It
# acknowledges the task, waits WEB_AGENT_DELAY seconds (default 0) so that
# a watcher sees each state, then by MODE:
#   retry   a wrong guess ("attempt <n>" into file.txt) until its prompt
#           starts with a retry context, then the fix;
#   fix     a wrong guess until its prompt carries the user's instruction
#           (<user_intervention>), then the fix;
#   markup  writes HTML and scripts into its output (the page must show
#           them as text), then the fix.
# The fix is "fixed <task id>" in file.txt, what check.sh wants.
mode=$1
prompt=$(cat "$WILCO_PROMPT_FILE")
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: %s\n\n' "$WILCO_TASK_ID" "$desc"
sleep "${WEB_AGENT_DELAY:-0}"
guess() {
	echo "attempt $WILCO_ATTEMPT" >file.txt
	echo "Guessed: wrote attempt $WILCO_ATTEMPT into file.txt."
	exit 0
}
case $mode in
retry)
	case $prompt in
	"<retry_context"*) ;;
	*) guess ;;
	esac
	;;
fix)
	case $prompt in
	*"<user_intervention>"*) ;;
	*) guess ;;
	esac
	;;
markup)
	echo '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"><b id="pwned">bold</b>'
	;;
esac
echo "fixed $WILCO_TASK_ID" >file.txt
if [ "$mode" = markup ]; then
	echo 'Wrote the fix <script>window.__pwned = 3</script><b id="pwned-summary">and this</b>.'
else
	echo "Wrote the fix into file.txt."
fi
