//go:build unix

package exec

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"wilco/ack"
	"wilco/core"
	"wilco/proc"
)

// guard bounds every wait of a test: a failure, never a pause.
const guard = 20 * time.Second

type testBundle struct {
	a    *Adapter
	rep  *fakeReporter
	repo string // the repository: the turns' working directory
	bin  string // where the agents' scripts are
	wt   string // a dry run's worktree
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{rep: newReporter(), repo: t.TempDir(), bin: t.TempDir(), wt: t.TempDir()}
	a, err := New(Options{
		Dir: b.repo, URL: "http://127.0.0.1:7777", Report: b.rep, KillGrace: 300 * time.Millisecond, ResultGrace: 500 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
		Worktree: func(_ context.Context, taskID string) (string, error) {
			if taskID != "T-1" {
				return "", errors.New("no worktree for " + taskID)
			}
			return b.wt, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b.a = a
	t.Cleanup(func() { _ = a.Close() })
	return b
}

// agent writes a shell script agent and registers it as c (whose Command
// is the script, unless it has a preset).
func (b *testBundle) agent(t *testing.T, c AgentConfig, script string) string {
	t.Helper()
	path := filepath.Join(b.bin, c.Name+".sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	c.Command = append([]string{path}, c.Command...)
	if err := b.a.Add(c); err != nil {
		t.Fatal(err)
	}
	return path
}

// fifo makes a named pipe the agent writes to when it has started.
func (b *testBundle) fifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(b.bin, "started.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitStarted blocks until the agent wrote to the fifo.
func waitStarted(t *testing.T, fifo string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := os.ReadFile(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(guard):
		t.Fatal("the agent did not start")
	}
}

func (b *testBundle) reply(t *testing.T) core.ReplyInput {
	t.Helper()
	select {
	case r := <-b.rep.replies:
		return r
	case <-time.After(guard):
		t.Fatal("no Reply")
	}
	return core.ReplyInput{}
}

func (b *testBundle) end(t *testing.T) core.TurnResult {
	t.Helper()
	select {
	case r := <-b.rep.ends:
		return r
	case <-time.After(guard):
		t.Fatal("no EndTurn")
	}
	return core.TurnResult{}
}

// turnOf returns the task's running turn.
func (b *testBundle) turnOf(t *testing.T, task string) *turn {
	t.Helper()
	b.a.mu.Lock()
	defer b.a.mu.Unlock()
	tr := b.a.tasks[task]
	if tr == nil {
		t.Fatalf("no turn for %s", task)
	}
	return tr
}

func waitDone(t *testing.T, tr *turn) {
	t.Helper()
	select {
	case <-tr.done:
	case <-time.After(guard):
		t.Fatal("the turn did not end")
	}
}

func (b *testBundle) read(t *testing.T, path string) string {
	t.Helper()
	if !filepath.IsAbs(path) {
		path = filepath.Join(b.repo, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func (b *testBundle) pgid(t *testing.T, file string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(b.read(t, file)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// assertGroupGone checks with kill -0 on the process group that no
// process of it is alive (a zombie init has not reaped yet is not).
func assertGroupGone(t *testing.T, pgid int) {
	t.Helper()
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return
	}
	if !proc.GroupGone(pgid) {
		t.Fatalf("process group %d is still alive", pgid)
	}
}

func delegation(task, id, body string) core.InboxMessage {
	return core.InboxMessage{ID: id, Type: string(core.TypeDelegation), TaskID: task, TaskAttempt: 1, Attempt: 1, Body: body}
}

const taskPrompt = "## Task: T-1\nWrite hello.txt with a greeting.\n\n" +
	"---\nACKNOWLEDGMENT REQUIRED: Reply with [ACK] T-1 - RECEIVED\n" +
	"Include: Understanding: {1-line summary of what you will do}\n" +
	"Status options: RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED\n---\n"

func TestTurnAcksWorksAndExits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent(t, AgentConfig{Name: "a1", Token: "tok-a1", Env: map[string]string{"EXTRA": "yes"}}, `
cat > stdin.txt
env | grep -E '^(WILCO_|EXTRA=)' | sort > env.txt
cat "$WILCO_PROMPT_FILE" > promptfile.txt
echo "Let me look at the task."
echo "[ACK] $WILCO_TASK_ID - RECEIVED"
echo "Understanding: write hello.txt with a greeting"
echo
echo hello > hello.txt
echo "wrote hello.txt"
`)
	b.a.Deliver("a1", delegation("T-1", "M-1", taskPrompt))

	r := b.reply(t)
	want := core.ReplyInput{Agent: "a1", InReplyTo: "M-1", Text: "[ACK] T-1 - RECEIVED\nUnderstanding: write hello.txt with a greeting"}
	if r.Agent != want.Agent || r.InReplyTo != want.InReplyTo || r.Text != want.Text {
		t.Fatalf("Reply = %+v, want %+v", r, want)
	}
	e := b.end(t)
	if e.TaskID != "T-1" || e.Attempt != 1 || e.ExitCode != 0 || e.TimedOut || e.Error != "" {
		t.Fatalf("EndTurn = %+v", e)
	}
	if !strings.HasSuffix(e.Summary, "wrote hello.txt") || !strings.Contains(e.Output, "[ACK] T-1 - RECEIVED") {
		t.Fatalf("EndTurn summary %q, output %q", e.Summary, e.Output)
	}
	if got := b.rep.callList(); !slices.Equal(got, []string{"reply", "end"}) {
		t.Fatalf("calls = %v, want the reply then the end", got)
	}
	if got := b.read(t, "hello.txt"); got != "hello\n" {
		t.Fatalf("hello.txt = %q", got)
	}
	if got := b.read(t, "stdin.txt"); got != taskPrompt {
		t.Fatalf("stdin = %q, want the prompt", got)
	}
	if got := b.read(t, "promptfile.txt"); got != taskPrompt {
		t.Fatalf("WILCO_PROMPT_FILE holds %q, want the prompt", got)
	}
	runDir := filepath.Join(b.repo, ".wilco", "runs", "T-1-a1")
	promptFile := filepath.Join(runDir, "prompt.md")
	wantEnv := []string{
		"EXTRA=yes",
		"WILCO_ADDR=http://127.0.0.1:7777",
		"WILCO_AGENT=a1",
		"WILCO_AGENT_TOKEN=tok-a1",
		"WILCO_ATTEMPT=1",
		"WILCO_MESSAGE_ID=M-1",
		"WILCO_PHASE=ack+work",
		"WILCO_PROMPT_FILE=" + promptFile,
		"WILCO_RUN_DIR=" + runDir,
		"WILCO_TASK_ID=T-1",
		"WILCO_URL=http://127.0.0.1:7777",
	}
	if got := strings.Split(strings.TrimSpace(b.read(t, "env.txt")), "\n"); !slices.Equal(got, wantEnv) {
		t.Fatalf("environment:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantEnv, "\n"))
	}
	if got := b.read(t, promptFile); got != taskPrompt {
		t.Fatalf("prompt.md = %q", got)
	}
	if log := b.read(t, filepath.Join(runDir, "agent.log")); !strings.Contains(log, "Let me look at the task.\n[ACK] T-1 - RECEIVED\n") {
		t.Fatalf("agent.log = %q", log)
	}
}

func TestPromptAsArgument(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent(t, AgentConfig{Name: "a1", Prompt: PromptArg, Handshake: HandshakeNone, Command: []string{"--flag"}}, `
printf '%s' "$1" > flag.txt
printf '%s' "$2" > arg.txt
printf '%s' "$WILCO_PHASE" > phase.txt
`)
	msg := delegation("T-1", "M-1", "do the thing\nin two lines")
	msg.Type = string(core.TypeTaskTurn)
	b.a.Deliver("a1", msg)
	if e := b.end(t); e.ExitCode != 0 {
		t.Fatalf("EndTurn = %+v", e)
	}
	if got := b.read(t, "flag.txt"); got != "--flag" {
		t.Fatalf("first argument %q", got)
	}
	if got := b.read(t, "arg.txt"); got != msg.Body {
		t.Fatalf("last argument %q, want the prompt", got)
	}
	if got := b.read(t, "phase.txt"); got != PhaseWork {
		t.Fatalf("WILCO_PHASE = %q", got)
	}
	if got := b.rep.callList(); !slices.Equal(got, []string{"end"}) {
		t.Fatalf("calls = %v: handshake none sends no reply", got)
	}
}

func TestPromptInFile(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent(t, AgentConfig{Name: "a1", Prompt: PromptFile, Handshake: HandshakeNone}, `
cat "$1" > got.txt
[ "$1" = "$WILCO_PROMPT_FILE" ] && echo same > same.txt
cat > stdin.txt
`)
	msg := delegation("T-1", "M-1", "the prompt, in a file")
	msg.Type = string(core.TypeTaskTurn)
	b.a.Deliver("a1", msg)
	if e := b.end(t); e.ExitCode != 0 {
		t.Fatalf("EndTurn = %+v", e)
	}
	if got := b.read(t, "got.txt"); got != msg.Body {
		t.Fatalf("the file holds %q", got)
	}
	if got := b.read(t, "same.txt"); got != "same\n" {
		t.Fatal("the file passed is not WILCO_PROMPT_FILE")
	}
	if got := b.read(t, "stdin.txt"); got != "" {
		t.Fatalf("stdin = %q, want nothing", got)
	}
}

func TestTurnWithoutAckIsReported(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent(t, AgentConfig{Name: "a1"}, `
echo "ACKNOWLEDGMENT REQUIRED: Reply with [ACK] T-1 - RECEIVED"
echo "working without a word"
`)
	b.a.Deliver("a1", delegation("T-1", "M-1", taskPrompt))
	e := b.end(t)
	if e.ExitCode != 0 || e.TimedOut {
		t.Fatalf("EndTurn = %+v", e)
	}
	if got := b.rep.callList(); !slices.Equal(got, []string{"end"}) {
		t.Fatalf("calls = %v: an echo of the request is no ACK", got)
	}
}

func TestTurnExitStatusIsAnExecutionError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent(t, AgentConfig{Name: "a1", Handshake: HandshakeNone}, "echo boom >&2\nexit 3\n")
	msg := delegation("T-1", "M-1", "fail")
	msg.Type = string(core.TypeTaskTurn)
	b.a.Deliver("a1", msg)
	e := b.end(t)
	if e.ExitCode != 3 || e.TimedOut || !strings.Contains(e.Error, "status 3") || e.Output != "boom" {
		t.Fatalf("EndTurn = %+v", e)
	}
}

func TestTurnCommandMissing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := b.a.Add(AgentConfig{Name: "a1", Command: []string{filepath.Join(b.bin, "nothing-here")}}); err != nil {
		t.Fatal(err)
	}
	b.a.Deliver("a1", delegation("T-1", "M-1", taskPrompt))
	e := b.end(t)
	if e.ExitCode != 127 || !strings.Contains(e.Error, "could not start") {
		t.Fatalf("EndTurn = %+v", e)
	}
}

func TestTimeoutStopsTheProcessGroup(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The agent and its child ignore SIGTERM: only SIGKILL stops them.
	b.agent(t, AgentConfig{Name: "a1", Timeout: 300 * time.Millisecond}, `
trap '' TERM
echo $$ > pgid.txt
sleep 1000 &
echo "[ACK] T-1 - RECEIVED"
echo "Understanding: hang"
echo
wait
`)
	b.a.Deliver("a1", delegation("T-1", "M-1", taskPrompt))
	b.reply(t)
	e := b.end(t)
	if !e.TimedOut || e.ExitCode == 0 || !strings.Contains(e.Error, "(timeout)") {
		t.Fatalf("EndTurn = %+v", e)
	}
	assertGroupGone(t, b.pgid(t, "pgid.txt"))
}

func TestIdleTimeoutStopsASilentAgent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent(t, AgentConfig{Name: "a1", Handshake: HandshakeNone, IdleTimeout: 300 * time.Millisecond}, `
echo $$ > pgid.txt
echo "thinking..."
sleep 1000
`)
	msg := delegation("T-1", "M-1", "stall")
	msg.Type = string(core.TypeTaskTurn)
	b.a.Deliver("a1", msg)
	e := b.end(t)
	if !e.TimedOut || !strings.Contains(e.Error, "idle_timeout") || e.Output != "thinking..." {
		t.Fatalf("EndTurn = %+v", e)
	}
	assertGroupGone(t, b.pgid(t, "pgid.txt"))
}

func TestTimeoutBoundsATalkativeAgent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent(t, AgentConfig{Name: "a1", Handshake: HandshakeNone, Timeout: 400 * time.Millisecond, IdleTimeout: time.Minute}, `
while :; do echo tick; sleep 0.05; done
`)
	msg := delegation("T-1", "M-1", "talk")
	msg.Type = string(core.TypeTaskTurn)
	b.a.Deliver("a1", msg)
	e := b.end(t)
	if !e.TimedOut || !strings.Contains(e.Error, "(timeout)") {
		t.Fatalf("EndTurn = %+v", e)
	}
}

func TestWhatATurnLeavesRunningIsStopped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent(t, AgentConfig{Name: "a1", Handshake: HandshakeNone}, `
echo $$ > pgid.txt
sleep 1000 &
echo "done, leaving a child behind"
`)
	msg := delegation("T-1", "M-1", "leave")
	msg.Type = string(core.TypeTaskTurn)
	b.a.Deliver("a1", msg)
	if e := b.end(t); e.ExitCode != 0 || e.TimedOut {
		t.Fatalf("EndTurn = %+v", e)
	}
	assertGroupGone(t, b.pgid(t, "pgid.txt"))
}

func TestCancelStopsTheTurnAndReportsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fifo := b.fifo(t)
	b.agent(t, AgentConfig{Name: "a1", Env: map[string]string{"FIFO": fifo}}, `
echo $$ > pgid.txt
sleep 1000 &
echo started > "$FIFO"
wait
`)
	b.a.Deliver("a1", delegation("T-1", "M-1", taskPrompt))
	tr := b.turnOf(t, "T-1")
	waitStarted(t, fifo)
	// A cancel of another delivery does not touch this turn.
	b.a.Deliver("a1", core.InboxMessage{ID: "M-0", Type: string(core.SendCancel), TaskID: "T-1"})
	b.a.Deliver("a1", core.InboxMessage{ID: "M-1", Type: string(core.SendCancel), TaskID: "T-1", Body: "Task T-1 is cancelled."})
	waitDone(t, tr)
	assertGroupGone(t, b.pgid(t, "pgid.txt"))
	if got := b.rep.callList(); len(got) != 0 {
		t.Fatalf("calls = %v, want none", got)
	}
}

func TestStopTurnStopsTheTurnAndReportsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fifo := b.fifo(t)
	b.agent(t, AgentConfig{Name: "a1", Handshake: HandshakeNone, Env: map[string]string{"FIFO": fifo}}, `
echo $$ > pgid.txt
echo started > "$FIFO"
sleep 1000
`)
	msg := delegation("T-1", "M-1", "work")
	msg.Type = string(core.TypeTaskTurn)
	b.a.Deliver("a1", msg)
	tr := b.turnOf(t, "T-1")
	waitStarted(t, fifo)
	b.a.StopTurn("T-1", "cancelled")
	waitDone(t, tr)
	assertGroupGone(t, b.pgid(t, "pgid.txt"))
	if got := b.rep.callList(); len(got) != 0 {
		t.Fatalf("calls = %v, want none", got)
	}
}

func TestAckRequestRestartsTheTurn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fifo := b.fifo(t)
	b.agent(t, AgentConfig{Name: "a1", Env: map[string]string{"FIFO": fifo}}, `
if grep -q "ACK REQUIRED" "$WILCO_PROMPT_FILE"; then
  cat > second-stdin.txt
  echo "[ACK] T-1 - RECEIVED"
  echo "Understanding: write hello.txt with a greeting"
  echo
  echo "second turn done"
  exit 0
fi
echo $$ > first-pgid.txt
echo started > "$FIFO"
sleep 1000
`)
	b.a.Deliver("a1", delegation("T-1", "M-1", taskPrompt))
	waitStarted(t, fifo)
	subject, body := ack.AckRequired("T-1")
	b.a.Deliver("a1", core.InboxMessage{ID: "M-1", Type: string(core.SendAckRequest), TaskID: "T-1", TaskAttempt: 1, Attempt: 2, Subject: subject, Body: body})

	if r := b.reply(t); r.InReplyTo != "M-1" || !strings.HasPrefix(r.Text, "[ACK] T-1 - RECEIVED") {
		t.Fatalf("Reply = %+v", r)
	}
	if e := b.end(t); e.ExitCode != 0 || e.Summary == "" {
		t.Fatalf("EndTurn = %+v", e)
	}
	if got := b.rep.callList(); !slices.Equal(got, []string{"reply", "end"}) {
		t.Fatalf("calls = %v: the stopped turn must report nothing", got)
	}
	if got, want := b.read(t, "second-stdin.txt"), subject+"\n\n"+body+"\n\n---\n\n"+taskPrompt; got != want {
		t.Fatalf("second prompt = %q, want %q", got, want)
	}
	assertGroupGone(t, b.pgid(t, "first-pgid.txt"))
}

func TestAckThatDoesNotLetWorkBeginStopsTheTurn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent(t, AgentConfig{Name: "a1"}, `
echo $$ > pgid.txt
echo "[ACK] T-1 - CLARIFICATION_NEEDED"
echo "Understanding: write a file"
echo "Questions:"
echo "1. Which greeting?"
echo
sleep 1000
`)
	b.a.Deliver("a1", delegation("T-1", "M-1", taskPrompt))
	tr := b.turnOf(t, "T-1")
	r := b.reply(t)
	if !strings.Contains(r.Text, "1. Which greeting?") {
		t.Fatalf("Reply = %q: the questions belong to the ACK", r.Text)
	}
	waitDone(t, tr)
	assertGroupGone(t, b.pgid(t, "pgid.txt"))
	if got := b.rep.callList(); !slices.Equal(got, []string{"reply"}) {
		t.Fatalf("calls = %v: no EndTurn after an ACK the core did not accept", got)
	}
}

func TestJSONAcknowledgmentOnALine(t *testing.T) {
	t.Parallel()
	b := setup(t)
	line := `{"type":"task-acknowledgment","task_id":"T-1","status":"received","understanding":"write hello.txt"}`
	b.agent(t, AgentConfig{Name: "a1"}, "echo '"+line+"'\n"+
		`echo '{"type":"checkpoint-ack","task_id":"T-1","checkpoint":1,"status":"completed","summary":"half"}'`+"\n"+
		`echo '{"type":"task-complete","task_id":"T-1","status":"blocked","summary":"no network","files_modified":["a.go"]}'`+"\n")
	b.a.Deliver("a1", delegation("T-1", "M-1", taskPrompt))
	if r := b.reply(t); r.Text != line {
		t.Fatalf("Reply = %q, want the JSON line", r.Text)
	}
	if r := b.reply(t); !strings.Contains(r.Text, "checkpoint-ack") || r.InReplyTo != "M-1" {
		t.Fatalf("checkpoint Reply = %+v", r)
	}
	e := b.end(t)
	if e.Status != ack.CompleteBlocked || e.Summary != "no network" || !slices.Equal(e.Files, []string{"a.go"}) {
		t.Fatalf("EndTurn = %+v", e)
	}
}

func TestDryRunWorksInTheWorktree(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent(t, AgentConfig{Name: "a1", Handshake: HandshakeNone}, `
echo made > made-here.txt
cat "$WILCO_PROMPT_FILE" > prompt-seen.txt
`)
	msg := delegation("T-1", "M-1", "dry")
	msg.Type, msg.DryRun = string(core.TypeTaskTurn), true
	b.a.Deliver("a1", msg)
	if e := b.end(t); e.ExitCode != 0 {
		t.Fatalf("EndTurn = %+v", e)
	}
	if got := b.read(t, filepath.Join(b.wt, "made-here.txt")); got != "made\n" {
		t.Fatalf("worktree file = %q", got)
	}
	if got := b.read(t, filepath.Join(b.wt, "prompt-seen.txt")); got != "dry" {
		t.Fatalf("prompt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(b.repo, "made-here.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a dry run changed the repository")
	}

	// Without a worktree the turn is an execution error.
	msg.TaskID = "T-2"
	b.a.Deliver("a1", msg)
	if e := b.end(t); e.ExitCode == 0 || !strings.Contains(e.Error, "worktree") {
		t.Fatalf("EndTurn = %+v", e)
	}
}

func TestConversationIsAnsweredWithTheOutput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent(t, AgentConfig{Name: "a1"}, `
echo "you said: $(cat)"
echo "phase $WILCO_PHASE"
`)
	b.a.Deliver("a1", core.InboxMessage{ID: "M-7", Type: string(core.TypeConversation), Attempt: 1, Body: "what is 2+2?"})
	r := b.reply(t)
	if r.Agent != "a1" || r.InReplyTo != "M-7" || r.Text != "you said: what is 2+2?\nphase message" {
		t.Fatalf("Reply = %+v", r)
	}
	// Notices ask for no answer; they run nothing.
	b.a.Deliver("a1", core.InboxMessage{ID: "M-8", Type: string(core.SendOperationOutcome), Body: "done"})
	if err := b.a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := b.rep.callList(); !slices.Equal(got, []string{"reply"}) {
		t.Fatalf("calls = %v", got)
	}
}

func TestSessionHandshakeResumesForTheWork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent(t, AgentConfig{Name: "claude", Preset: PresetClaudeCode, Handshake: HandshakeSession}, `
resume=""
while [ $# -gt 0 ]; do
  case "$1" in --resume) resume="$2"; shift;; esac
  shift
done
echo "$WILCO_PHASE $resume" >> phases.txt
if [ -z "$resume" ]; then
  printf '%s\n' '{"type":"system","subtype":"init","session_id":"sess-42"}'
  printf '%s\n' '{"type":"assistant","message":{"content":[{"type":"text","text":"[ACK] T-1 - RECEIVED\nUnderstanding: write hello.txt with a greeting"}]},"session_id":"sess-42"}'
  printf '%s\n' '{"type":"result","subtype":"success","result":"[ACK] T-1 - RECEIVED","session_id":"sess-42"}'
  exit 0
fi
cat > work-stdin.txt
echo hello > hello.txt
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"Wrote hello.txt."}]},"session_id":"sess-42"}'
echo '{"type":"result","subtype":"success","result":"Wrote hello.txt with a greeting.","session_id":"sess-42"}'
`)
	b.a.Deliver("claude", delegation("T-1", "M-1", taskPrompt))
	if r := b.reply(t); r.Text != "[ACK] T-1 - RECEIVED\nUnderstanding: write hello.txt with a greeting" {
		t.Fatalf("Reply = %q", r.Text)
	}
	e := b.end(t)
	if e.ExitCode != 0 || e.Summary != "Wrote hello.txt with a greeting." {
		t.Fatalf("EndTurn = %+v", e)
	}
	if got := b.read(t, "phases.txt"); got != "ack \nwork sess-42\n" {
		t.Fatalf("phases = %q", got)
	}
	if got := b.read(t, "work-stdin.txt"); !strings.HasPrefix(got, "Your acknowledgment of task T-1 was accepted.") || !strings.HasSuffix(got, taskPrompt) {
		t.Fatalf("work prompt = %q", got)
	}
	if got := b.rep.callList(); !slices.Equal(got, []string{"reply", "end"}) {
		t.Fatalf("calls = %v", got)
	}
}

// Claude Code writes its result, then waits for the shells it left running
// in the background (a dev server): the turn is over at its result, and
// what still runs is stopped once the grace has passed.
func TestAClaudeCodeTurnEndsAtItsResultThoughTheProgramKeepsRunning(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent(t, AgentConfig{Name: "claude", Preset: PresetClaudeCode, Timeout: time.Minute}, `
echo $$ > pgid.txt
printf '%s\n' '{"type":"system","subtype":"init","session_id":"sess-7"}'
printf '%s\n' '{"type":"assistant","message":{"content":[{"type":"text","text":"[ACK] T-1 - RECEIVED\nUnderstanding: start the server"}]},"session_id":"sess-7"}'
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Started the server.","session_id":"sess-7"}'
sleep 1000
`)
	b.a.Deliver("claude", delegation("T-1", "M-1", taskPrompt))
	b.reply(t)
	e := b.end(t)
	if e.ExitCode != 0 || e.Error != "" || e.TimedOut || e.Summary != "Started the server." {
		t.Fatalf("EndTurn = %+v", e)
	}
	assertGroupGone(t, b.pgid(t, "pgid.txt"))
	if log := b.read(t, ".wilco/runs/T-1-a1/agent.log"); !strings.Contains(log, "wrote its result but kept running") {
		t.Fatalf("agent.log does not say why the agent was stopped:\n%s", log)
	}
}

func TestCloseStopsEverything(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fifo := b.fifo(t)
	b.agent(t, AgentConfig{Name: "a1", Handshake: HandshakeNone, Env: map[string]string{"FIFO": fifo}}, `
echo $$ > pgid.txt
echo started > "$FIFO"
sleep 1000
`)
	msg := delegation("T-1", "M-1", "work")
	msg.Type = string(core.TypeTaskTurn)
	b.a.Deliver("a1", msg)
	waitStarted(t, fifo)
	if err := b.a.Close(); err != nil {
		t.Fatal(err)
	}
	assertGroupGone(t, b.pgid(t, "pgid.txt"))
	b.a.Deliver("a1", msg) // after Close: ignored
	if got := b.rep.callList(); len(got) != 0 {
		t.Fatalf("calls = %v, want none", got)
	}
}

func TestAddRefusesBadConfigurations(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, c := range []AgentConfig{
		{},
		{Name: "x"},
		{Name: "x", Preset: "cursor"},
		{Name: "x", Command: []string{"a"}, Prompt: "pipe"},
		{Name: "x", Command: []string{"a"}, Handshake: "twice"},
		{Name: "x", Command: []string{"a"}, Timeout: -time.Second},
	} {
		if err := b.a.Add(c); err == nil {
			t.Errorf("Add(%+v) accepted", c)
		}
	}
	if err := b.a.Add(AgentConfig{Name: "x", Preset: PresetCodex}); err != nil || !b.a.Has("x") || b.a.Has("y") {
		t.Fatalf("Add = %v", err)
	}
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without a Reporter")
	}
}
