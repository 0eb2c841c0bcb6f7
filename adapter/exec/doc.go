// Package exec is wilco's exec adapter: it hands a task to a
// local agent by starting one process per turn, reads the process's output
// for the acknowledgment, and reports the end of the turn.
//
// The runtime hands it messages with Deliver (which never blocks) and stops
// a task's agent with StopTurn; the adapter reports back through a
// Reporter: Reply for the agent's ACK, checkpoints and answers to
// messages, EndTurn for the end of a task's turn. It never touches the
// store.
//
// # A turn
//
// A task delegation (or, for handshake none, a task turn) starts one
// process:
//
//   - working directory: the repository (Options.Dir), or for a dry run
//     the worktree Options.Worktree returns for the task;
//   - the prompt: written to <RunsDir>/<task>-a<attempt>/prompt.md (the
//     core's run id: ':' becomes '_'), named by WILCO_PROMPT_FILE, and
//     passed per the agent's prompt key — as standard input (the file is
//     the process's stdin: it reads to the end), as the last argument, or
//     as the path of that file in the last argument;
//   - the environment: the parent's, without WILCO_TOKEN (the admin token
//     never reaches an agent), plus WILCO_TASK_ID, WILCO_ATTEMPT (the
//     task's attempt, 1-based), WILCO_PHASE (ack+work for inline, work for
//     none; ack then work for session), WILCO_PROMPT_FILE, WILCO_AGENT,
//     WILCO_URL, WILCO_AGENT_TOKEN, and this package's own WILCO_ADDR (=
//     WILCO_URL, for the wilco CLI), WILCO_MESSAGE_ID (the delivery, for
//     in_reply_to) and WILCO_RUN_DIR; then the agent's env, which wins;
//   - a process group of its own (Setpgid): stopping the turn — on
//     StopTurn, a cancel, a timeout, Close — sends SIGTERM to the group
//     and SIGKILL after Options.KillGrace; when the process exits, what it
//     left running in its group is stopped the same way. A turn is
//     reported only once no live process is left in its group.
//
// Everything the process writes, stdout and stderr together, is appended to
// <run dir>/agent.log (each process after a line "--- wilco: …") and read
// line by line. The full prompt of the delegation is also kept in
// <run dir>/delegation.md.
//
// With handshake inline, the first acknowledgment in the output is sent
// with Reply{InReplyTo: the delivery}, once per turn: an [ACK] line with
// the lines after it up to a blank line, another [ACK] line, 20 lines, the
// end of the agent's message (a JSON event) or a pause of a second; or a
// JSON task-acknowledgment or task-acknowledgment-error on a line. Lines
// that merely echo the protocol's lesson are not acknowledgments (package
// ack). The turn goes on only if the core's interpretation lists the
// delivery in Acknowledged; otherwise — questions, a rejection, a wrong id,
// an understanding that needs a correction, a refused reply — the process
// group is stopped and nothing more is reported: the core sends what comes
// next. JSON checkpoint-ack lines are sent with Reply as they come. The
// agent's completion report gives the turn's Status, Summary, Reason, Files
// and Error (a "success" never overrules a failed exit): the last report of
// its final answer (the result its format gives), else of the text it
// wrote — the JSON task-complete or a plain-text report such as "Status:
// blocked" with its "Reason:" line or "BLOCKED: why" (package ack) — else
// the last JSON task-complete line seen. A report for another task is never
// taken. An agent that exits 0 but reports blocked is blocked, not verified.
//
// The end of the process ends the turn: EndTurn{ExitCode, Output: the tail
// of the text, Summary: the agent's final answer when its format has one,
// else its last 20 lines}. A non-zero status or a crash (128+signal) is an
// execution error; a program that is not found (127, with the PATH
// searched in the error) or cannot be executed (126) is an environment
// failure, which the core escalates at once. timeout (the whole process)
// or idle_timeout (no output for that long) stops the group and reports
// TimedOut. A turn that ends without any ACK is reported all the same: the
// core fails that attempt at once, with the tail of the output.
//
// A later send of the same delivery — ack_request, correction, wrong_id,
// task_clarification — means the ACK did not come or was not right: the
// running turn is stopped (and reports nothing) and a new one starts, whose
// prompt is that message, a line "---", then the delegation's last full
// prompt (a resend carries the full prompt itself). A cancel stops the turn
// of that delivery; StopTurn the task's turn, whatever its delivery. A new
// delegation of a task replaces the turn running for it.
//
// Any other message — a conversation, a pre-operation request, a reminder,
// a follow-up when no turn of that delivery runs — runs the agent once with
// the message as its prompt (WILCO_PHASE=message; run directory
// <RunsDir>/msg-<id>-s<send>) and sends its answer (the final answer its
// format gives, else its whole text output) with Reply{InReplyTo: the
// message}, if it exits 0 and wrote something. While the agent still
// answers a message, further sends of it are not run. Notices that ask for
// no answer (timeout_notice, extension_granted, operation_outcome) are
// only logged.
//
// # Handshake session
//
// Session is implemented with resume for claude-code, codex, gemini and
// opencode: the first process (WILCO_PHASE=ack) gets the prompt and a note
// asking for the acknowledgment only; if the core accepts its ACK and the
// process exits 0, a second process (WILCO_PHASE=work) resumes the session
// id read from the first one's JSON output, with a note that the ACK was
// accepted followed by the full prompt again; its end is the turn's end.
// When no session id was found the second process starts a new session
// with the same prompt. For aider (which cannot resume by id) and for
// agents without a preset, session is treated as inline.
//
// # Presets
//
// A preset builds the command line of a known agent in its non-interactive
// mode. With a preset, `command` is the program and extra arguments: its
// first element replaces the program, the rest go after the preset's
// flags (for tools that take a flag's last value, a repeated flag
// overrides the preset's). Exactly:
//
//	claude-code  claude -p --output-format stream-json --verbose --permission-mode acceptEdits [extra] [--resume ID]
//	             stdin: the prompt on stdin; arg: PROMPT last; file: "Read the file PATH and follow…" last
//	             reads: "assistant" events' text blocks (scanned), "result".result (Summary), session_id
//	codex        codex exec --sandbox workspace-write --json [extra] [resume ID] -
//	             stdin: "-" and the prompt on stdin; arg: PROMPT; file: "Read the file PATH…"
//	             reads: item.completed agent_message text (the last is the Summary), thread.started thread_id
//	gemini       gemini --output-format stream-json --approval-mode auto_edit [extra] [--resume ID] -p TEXT
//	             stdin: the prompt on stdin and -p "Follow the instructions above…" (Gemini CLI puts stdin
//	             before -p); arg: -p PROMPT; file: -p "Read the file PATH…"
//	             reads: assistant "message" events (deltas joined), the last message (Summary), init session_id
//	aider        aider --yes-always --no-auto-commits --no-pretty [extra] --message-file PATH
//	             arg: --message PROMPT instead; stdin: the file as --message-file and on stdin
//	             reads: plain text
//	opencode     opencode run --format json [extra] [--session ID] "Read the file PATH…"
//	             arg: PROMPT instead; stdin: the pointer and the prompt on stdin
//	             reads: "text" events' part.text (the last is the Summary), sessionID
//
// claude-code's acceptEdits lets Claude Code edit files but not run
// commands in -p mode, and gemini's auto_edit likewise; give more with extra
// arguments (for example command: [claude, --allowedTools, "Bash(go test:*)"]).
// Without a preset, `command` runs as it is, its output is plain text, and
// the prompt goes on stdin, as the last argument, or as the path of the
// prompt file in the last argument.
package exec
