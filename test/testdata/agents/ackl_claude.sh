#!/bin/sh
# ackl_claude.sh — stands in for Claude Code in `-p --output-format
# stream-json` mode: it reads its prompt on standard input and writes the
# events Claude Code writes. Its assistant messages acknowledge the task
# and say they looked around; only its final "result" says it is blocked,
# and why.
cat >/dev/null
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
printf '{"type":"system","subtype":"init","session_id":"ackl-1","tools":[]}\n'
printf '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"[ACK] %s - RECEIVED\\nUnderstanding: Will do this: %s"}]},"session_id":"ackl-1"}\n' "$WILCO_TASK_ID" "$desc"
printf '{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"file.txt"}}]},"session_id":"ackl-1"}\n'
printf '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"I looked at file.txt and the deployment scripts."}]},"session_id":"ackl-1"}\n'
printf '{"type":"result","subtype":"success","is_error":false,"result":"I looked at file.txt and the deployment scripts.\\n\\n**Status:** blocked\\n**Reason:** I need the production credentials to regenerate file.txt","session_id":"ackl-1"}\n'
