package tmux

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/adapter"
	"wilco/core"
)

// tuiAgent is the scripted interactive agent (testdata/tuiagent), built
// once for the package's tests.
var tuiAgent string

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "tuiagent")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		tuiAgent = filepath.Join(dir, "tuiagent")
		if out, err := exec.Command("go", "build", "-o", tuiAgent, "./testdata/tuiagent").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building the scripted agent: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// needTmux skips a test when tmux cannot be run, saying why.
func needTmux(t testing.TB) {
	t.Helper()
	if err := Available(""); err != nil {
		t.Skipf("tmux is not installed (apt-get install tmux): %v", err)
	}
}

// recorder is a Reporter that records what the adapter reports and
// answers an ACK as the core would: accepted unless refuse is set.
type recorder struct {
	mu          sync.Mutex
	replies     []core.ReplyInput
	turns       []core.TurnResult
	activities  []string
	permissions []PermissionAsked
	failed      []adapter.MessageFailed
	refuse      bool
	changed     chan struct{}
	// logs are the adapter's log lines, under their own lock: the
	// adapter logs while a test holds mu.
	logs *logLines
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 100), logs: &logLines{}} }

// logLines are the lines the adapter logged, each its message and its
// attributes ("ended the agent's session agent=tui session=…").
type logLines struct {
	mu    sync.Mutex
	lines []string
}

// logged reports whether the adapter logged a line holding every part.
func (r *recorder) logged(parts ...string) bool {
	r.logs.mu.Lock()
	defer r.logs.mu.Unlock()
	return slices.ContainsFunc(r.logs.lines, func(l string) bool {
		for _, p := range parts {
			if !strings.Contains(l, p) {
				return false
			}
		}
		return true
	})
}

// logHandler records each line the adapter logs in its recorder (noting
// the change, for wait), and hands it on to next.
type logHandler struct {
	r     *recorder
	attrs []slog.Attr
	next  slog.Handler
}

func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *logHandler) Handle(ctx context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	add := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	rec.Attrs(add)
	h.r.logs.mu.Lock()
	h.r.logs.lines = append(h.r.logs.lines, b.String())
	h.r.logs.mu.Unlock()
	h.r.note()
	if !h.next.Enabled(ctx, rec.Level) {
		return nil
	}
	return h.next.Handle(ctx, rec)
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{r: h.r, attrs: slices.Concat(h.attrs, attrs), next: h.next.WithAttrs(attrs)}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{r: h.r, attrs: h.attrs, next: h.next.WithGroup(name)}
}

func (r *recorder) note() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) Reply(_ context.Context, in core.ReplyInput) (core.Interpretation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.note()
	r.replies = append(r.replies, in)
	out := core.Interpretation{Kind: "message"}
	if strings.Contains(in.Text, "[ACK]") {
		out.Kind = "ack"
		if !r.refuse {
			out.Acknowledged = []string{in.InReplyTo}
		}
	}
	return out, nil
}

func (r *recorder) Report(_ context.Context, rep adapter.Report) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e := rep.(type) {
	case adapter.TurnEnded:
		defer r.note()
		r.turns = append(r.turns, e.Result)
	case adapter.Activity:
		r.activities = append(r.activities, e.Text)
	case adapter.PermissionAsked:
		defer r.note()
		r.permissions = append(r.permissions, e)
	case adapter.MessageFailed:
		defer r.note()
		r.failed = append(r.failed, e)
	}
	return nil
}

// wait waits until cond holds (checked under the recorder's lock).
func (r *recorder) wait(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		ok := cond()
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("timed out waiting for %s; replies %+v; turns %+v", what, r.replies, r.turns)
		}
	}
}

type bundle struct {
	dir     string
	rec     *recorder
	adapter *Adapter
	submits chan SubmitRecord
}

// setup starts an adapter with one scripted agent, "tui", whose program
// gets env.
func setup(t *testing.T, env map[string]string, tweak func(*AgentConfig)) *bundle {
	t.Helper()
	needTmux(t)
	dir := t.TempDir()
	b := &bundle{dir: dir, rec: newRecorder(), submits: make(chan SubmitRecord, 1000)}
	a, err := New(Options{Dir: dir, StateDir: filepath.Join(dir, ".wilco"), Report: b.rec, Poll: 50 * time.Millisecond,
		OnSubmit: func(s SubmitRecord) { b.submits <- s }, Logger: slog.New(&logHandler{r: b.rec, next: slog.Default().Handler()})})
	if err != nil {
		t.Fatal(err)
	}
	b.adapter = a
	cfg := AgentConfig{Name: "tui", Command: []string{tuiAgent}, Env: env, Ready: `^> ?$`, Busy: `working…|thinking`, Permission: `Allow .*\? \(y/n\)`,
		Settle: 400 * time.Millisecond, Width: 120, Height: 30}
	if tweak != nil {
		tweak(&cfg)
	}
	if err := a.Add(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Close()
		a.KillSessions(context.Background())
		srv, _ := PrivateServer("", filepath.Join(dir, ".wilco"), nil)
		_ = srv.KillServer(context.Background())
	})
	return b
}

// delegation is a task's first send as the core hands it over.
func delegation(id, task string, attempt int, description string) core.InboxMessage {
	body := "## Task: " + task + "\n\n" + description + "\n\n---\nACKNOWLEDGMENT REQUIRED: Reply with [ACK] " + task +
		" - RECEIVED\nInclude: Understanding: {1-line summary of what you will do}\nStatus options: RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED\n---"
	return core.InboxMessage{ID: id, Type: string(core.TypeDelegation), TaskID: task, TaskAttempt: attempt, Attempt: 1, Body: body, Subject: "Task " + task}
}

func TestATaskIsPastedSubmittedAcknowledgedAndItsTurnReported(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	b.adapter.Deliver("tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user."))
	b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	if len(b.rec.replies) == 0 || !strings.Contains(b.rec.replies[0].Text, "[ACK] T-1 - RECEIVED") || !strings.Contains(b.rec.replies[0].Text, "Understanding:") {
		t.Fatalf("the ACK read from the pane: %+v", b.rec.replies)
	}
	tr := b.rec.turns[0]
	if tr.ExitCode != 0 || tr.Status != "success" || tr.TaskID != "T-1" || tr.Delivery != "M-1" || !strings.Contains(tr.Summary, "did what the task asked") {
		t.Fatalf("the turn: %+v", tr)
	}
	if strings.Contains(tr.Output, "ACKNOWLEDGMENT REQUIRED") {
		t.Fatalf("the echo of the prompt was read as the agent's:\n%s", tr.Output)
	}
	if got, _ := os.ReadFile(filepath.Join(b.dir, "file.txt")); string(got) != "attempt 1\n" {
		t.Fatalf("file.txt = %q", got)
	}
	log, _ := os.ReadFile(filepath.Join(b.adapter.RunDir("T-1", 1), "agent.log"))
	if !strings.Contains(string(log), "[ACK] T-1 - RECEIVED") || !strings.Contains(string(log), "prompt submitted") {
		t.Fatalf("agent.log:\n%s", log)
	}
}

func TestASwallowedSubmitKeyIsNoticedAndSentAgain(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"TUIAGENT_SWALLOW": "1"}, nil)
	b.adapter.Deliver("tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user."))
	var s SubmitRecord
	select {
	case s = <-b.submits:
	case <-time.After(30 * time.Second):
		t.Fatal("the prompt was never confirmed")
	}
	if s.Submits != 2 {
		t.Fatalf("the submit key was sent %d times; the first was swallowed, so 2 were needed", s.Submits)
	}
	b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	if b.rec.turns[0].Status != "success" {
		t.Fatalf("turn: %+v", b.rec.turns[0])
	}
}

// A program that shows a paste late — its pane changing at once for
// another reason, its input box still empty — gets the submit key only
// once the prompt shows in its input box: a key sent before would be lost,
// and the empty box taken for the prompt gone.
func TestAPromptIsSubmittedOnceItShowsInTheInputBox(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"TUIAGENT_PASTE_LAG": "700ms"}, nil)
	b.adapter.Deliver("tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user."))
	var s SubmitRecord
	select {
	case s = <-b.submits:
	case <-time.After(30 * time.Second):
		t.Fatal("the prompt was never confirmed")
	}
	if s.Submits != 1 {
		t.Errorf("the submit key was sent %d times, want 1 (once the prompt showed)", s.Submits)
	}
	b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	if b.rec.turns[0].Status != "success" {
		t.Fatalf("turn: %+v", b.rec.turns[0])
	}
}

func TestAPromptWaitsWhileTheAgentIsBusy(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	b.adapter.Deliver("tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user. BUSY=2s"))
	first := <-b.submits
	// While the agent works, a message comes: it waits for the pane.
	b.adapter.Deliver("tui", core.InboxMessage{ID: "M-2", Type: string(core.TypeConversation), Attempt: 1, Body: "How is it going?"})
	var second SubmitRecord
	select {
	case second = <-b.submits:
	case <-time.After(30 * time.Second):
		t.Fatal("the message was never typed")
	}
	b.rec.wait(t, "the answer to the message", 30*time.Second, func() bool {
		for _, r := range b.rec.replies {
			if r.InReplyTo == "M-2" {
				return true
			}
		}
		return false
	})
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	if len(b.rec.turns) != 1 {
		t.Fatalf("turns: %+v", b.rec.turns)
	}
	// The message was pasted only once the task's turn was over (2s of work).
	if second.Pasted.Sub(first.Confirmed) < 2*time.Second {
		t.Fatalf("the message was typed %s after the task was submitted, while the agent was busy", second.Pasted.Sub(first.Confirmed))
	}
	for _, r := range b.rec.replies {
		if r.InReplyTo == "M-2" && strings.TrimSpace(r.Text) != "noted" {
			t.Fatalf("the answer read from the pane: %q", r.Text)
		}
	}
}

func TestAPermissionQuestionIsAnsweredByTheAllowList(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		allow  []string
		answer string
		file   string
		status string
	}{
		{[]string{`write to file\.txt`}, "allowed", "attempt 1\n", "success"},
		{[]string{`write to other\.txt`}, "denied", "", "blocked"},
	} {
		t.Run(c.answer, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil, func(cfg *AgentConfig) { cfg.Allow = c.allow })
			b.adapter.Deliver("tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user. PERMISSION"))
			b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
			b.rec.mu.Lock()
			defer b.rec.mu.Unlock()
			if len(b.rec.permissions) != 1 || b.rec.permissions[0].Answer != c.answer || !strings.Contains(b.rec.permissions[0].Text, "Allow write to file.txt?") {
				t.Fatalf("permissions reported: %+v", b.rec.permissions)
			}
			got, _ := os.ReadFile(filepath.Join(b.dir, "file.txt"))
			if string(got) != c.file || string(b.rec.turns[0].Status) != c.status {
				t.Fatalf("file.txt = %q, turn %+v", got, b.rec.turns[0])
			}
		})
	}
}

// A program may show its question a moment before it listens to it (a
// real opencode under load was seen to): the answer sent then is lost, and
// the question stays, unchanged. wilco sends its answer again — once
// reported, as it was asked once.
func TestAnAnswerToAPermissionQuestionThatWasLostIsSentAgain(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, func(cfg *AgentConfig) { cfg.Allow = []string{`write to file\.txt`} })
	b.adapter.Deliver("tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user. PERMISSION DEAF"))
	b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	if len(b.rec.permissions) != 1 || b.rec.permissions[0].Answer != "allowed" {
		t.Fatalf("permissions reported: %+v", b.rec.permissions)
	}
	got, _ := os.ReadFile(filepath.Join(b.dir, "file.txt"))
	if string(got) != "attempt 1\n" || b.rec.turns[0].Status != "success" {
		t.Fatalf("file.txt = %q, turn %+v", got, b.rec.turns[0])
	}
	log, _ := os.ReadFile(filepath.Join(b.adapter.RunDir("T-1", 1), "agent.log"))
	if !strings.Contains(string(log), "--- wilco: the question is still asked, unchanged: answered again (allowed)") {
		t.Fatalf("agent.log:\n%s", log)
	}
}

// The same question asked again once the program went on from the first
// (the same command run twice, the first one's step drawn between) is a
// question of its own: answered, and reported, again.
func TestAPermissionQuestionAskedAgainIsAnsweredAgain(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, func(cfg *AgentConfig) { cfg.Allow = []string{`write to file\.txt`} })
	b.adapter.Deliver("tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user. PERMISSION TWICE BUSY=2s"))
	b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	const asks = "Allow write to file.txt? (y/n)"
	if len(b.rec.permissions) != 2 || b.rec.permissions[0].Answer != "allowed" || b.rec.permissions[1].Answer != "allowed" ||
		!strings.HasSuffix(b.rec.permissions[0].Text, asks) || !strings.HasSuffix(b.rec.permissions[1].Text, asks) {
		t.Fatalf("permissions reported: %+v", b.rec.permissions)
	}
	if got, _ := os.ReadFile(filepath.Join(b.dir, "file.txt")); string(got) != "attempt 1\n" || b.rec.turns[0].Status != "success" {
		t.Fatalf("file.txt = %q, turn %+v", got, b.rec.turns[0])
	}
}

// A program may draw its question again, unchanged, a while after it
// took the answer, the question gone meanwhile and nothing drawn above it:
// the same question, reported once; still shown, unchanged, its answer is
// sent again.
func TestAPermissionQuestionDrawnAgainUnchangedIsReportedOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, func(cfg *AgentConfig) { cfg.Allow = []string{`write to file\.txt`} })
	b.adapter.Deliver("tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user. PERMISSION REDRAW BUSY=2s"))
	b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	if len(b.rec.permissions) != 1 || b.rec.permissions[0].Answer != "allowed" {
		t.Fatalf("permissions reported: %+v", b.rec.permissions)
	}
	if got, _ := os.ReadFile(filepath.Join(b.dir, "file.txt")); string(got) != "attempt 1\n" || b.rec.turns[0].Status != "success" {
		t.Fatalf("file.txt = %q, turn %+v", got, b.rec.turns[0])
	}
	log, _ := os.ReadFile(filepath.Join(b.adapter.RunDir("T-1", 1), "agent.log"))
	if !strings.Contains(string(log), "--- wilco: the question is still asked, unchanged: answered again (allowed)") {
		t.Fatalf("agent.log:\n%s", log)
	}
}

func TestAPermissionQuestionWithoutAPolicyWaitsForTheUser(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	b.adapter.Deliver("tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user. PERMISSION"))
	b.rec.wait(t, "the permission question", 30*time.Second, func() bool { return len(b.rec.permissions) == 1 })
	if st, _ := b.adapter.State("tui"); st.State != string(Permission) {
		t.Fatalf("the agent's state: %+v", st)
	}
	// The user answers in the pane (wilco attach): the turn goes on.
	ag, _ := b.adapter.agent("tui")
	if err := ag.srv.SendKeys(context.Background(), ag.session, "y"); err != nil {
		t.Fatal(err)
	}
	b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	if b.rec.permissions[0].Answer != "" || b.rec.turns[0].Status != "success" {
		t.Fatalf("permission %+v, turn %+v", b.rec.permissions, b.rec.turns)
	}
}

func TestACrashIsAnExecutionErrorWithThePanesLastLines(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	b.adapter.Deliver("tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user. CRASH"))
	b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	tr := b.rec.turns[0]
	if tr.ExitCode != 3 || !strings.Contains(tr.Error, "exited (status 3)") || !strings.Contains(tr.Error, "panic: scripted crash") {
		t.Fatalf("turn: %+v", tr)
	}
	// The next prompt starts the program again.
	b.adapter.Deliver("tui", delegation("M-2", "T-1", 2, "Please write file.txt for the user."))
	b.rec.wait(t, "the second turn", 30*time.Second, func() bool { return len(b.rec.turns) == 2 })
	if tr := b.rec.turns[1]; tr.ExitCode != 0 || tr.Status != "success" {
		t.Fatalf("the turn after the crash: %+v", tr)
	}
}

func TestAPaneThatShowsNothingNewForIdleTimeoutIsAStall(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, func(cfg *AgentConfig) { cfg.IdleTimeout = time.Second })
	b.adapter.Deliver("tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user. IDLE"))
	b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	tr := b.rec.turns[0]
	if !tr.TimedOut || !strings.Contains(tr.Error, "idle_timeout") {
		t.Fatalf("turn: %+v", tr)
	}
	// The agent was interrupted: it takes the next prompt.
	b.adapter.Deliver("tui", core.InboxMessage{ID: "M-2", Type: string(core.TypeConversation), Attempt: 1, Body: "Still there?"})
	b.rec.wait(t, "the answer", 30*time.Second, func() bool {
		for _, r := range b.rec.replies {
			if r.InReplyTo == "M-2" {
				return true
			}
		}
		return false
	})
}

func TestAnAckThatIsNotAcceptedStopsTheTurnAndReportsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	b.rec.refuse = true
	b.adapter.Deliver("tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user. BUSY=3s"))
	b.rec.wait(t, "the ACK", 30*time.Second, func() bool { return len(b.rec.replies) == 1 })
	// The core sends what comes next (a correction): the agent takes it.
	corr := core.InboxMessage{ID: "M-1", Type: string(core.SendCorrection), TaskID: "T-1", TaskAttempt: 1, Attempt: 2, Body: "Your understanding misses the criteria."}
	b.rec.mu.Lock()
	b.rec.refuse = false
	b.rec.mu.Unlock()
	b.adapter.Deliver("tui", corr)
	b.rec.wait(t, "the turn of the correction", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	if len(b.rec.replies) != 2 || b.rec.turns[0].Status != "success" {
		t.Fatalf("replies %+v, turns %+v", b.rec.replies, b.rec.turns)
	}
}

func TestAnOperationRequestIsAnsweredFromThePane(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	b.adapter.Deliver("tui", core.InboxMessage{ID: "M-9", Type: string(core.TypePreOperation), OperationID: "OP-1", Attempt: 1,
		Subject: "[restart] Pending - Acknowledgment Required", Body: "I will restart you. Please finish your current work and reply with \"ok\" when ready."})
	b.rec.wait(t, "the answer", 30*time.Second, func() bool { return len(b.rec.replies) == 1 })
	if r := b.rec.replies[0]; r.InReplyTo != "M-9" || strings.TrimSpace(r.Text) != "ok" {
		t.Fatalf("reply: %+v", r)
	}
}

// A session of the user's, named in the config: wilco runs the agent's
// program in it, and a hibernation stops the program but never ends the
// session; the wake runs the program there again.
func TestAnExistingSessionIsUsedAndNeverKilled(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "user.sock")
	user := Server{Socket: sock}
	ctx := context.Background()
	// The user's session, with a shell in it.
	if err := user.NewSession(ctx, "mine", dir, nil, []string{"sh"}, 100, 30); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = user.KillServer(context.Background()) })
	b := setup(t, nil, func(c *AgentConfig) { c.Session, c.Socket = "mine", sock })
	b.adapter.Deliver("tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user."))
	b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	if tr := b.rec.turns[0]; tr.Status != "success" {
		t.Fatalf("turn %+v", tr)
	}
	if _, _, err := b.adapter.Hibernate(ctx, "tui"); err != nil {
		t.Fatal(err)
	}
	if !user.HasSession(ctx, "mine") {
		t.Fatal("the user's session was ended")
	}
	if st, _ := b.adapter.State("tui"); st.State != "hibernating" {
		t.Fatalf("state %+v", st)
	}
	if _, err := b.adapter.Wake(ctx, "tui", ""); err != nil {
		t.Fatal(err)
	}
	b.adapter.Deliver("tui", core.InboxMessage{ID: "M-2", Type: string(core.TypeConversation), Attempt: 1, Body: "Back?"})
	b.rec.wait(t, "the answer after the wake", 30*time.Second, func() bool {
		for _, r := range b.rec.replies {
			if r.InReplyTo == "M-2" {
				return true
			}
		}
		return false
	})
	b.adapter.KillSessions(ctx)
	if !user.HasSession(ctx, "mine") {
		t.Fatal("the user's session was ended with wilco's")
	}
}

// A wake of an agent that is awake does nothing: its program is not
// started again.
func TestAWakeOfAnAwakeAgentChangesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	b.adapter.Deliver("tui", core.InboxMessage{ID: "M-1", Type: string(core.TypeConversation), Attempt: 1, Body: "Hello?"})
	b.rec.wait(t, "the answer", 30*time.Second, func() bool { return len(b.rec.replies) == 1 })
	ag, _ := b.adapter.agent("tui")
	before, _, _, err := ag.srv.PaneProgram(context.Background(), ag.session)
	if err != nil || before {
		t.Fatal(before, err)
	}
	pane, _ := ag.srv.Capture(context.Background(), ag.session)
	action, err := b.adapter.Wake(context.Background(), "tui", "")
	if err != nil || !strings.Contains(action, "already awake") {
		t.Fatalf("wake: %q, %v", action, err)
	}
	after, _ := ag.srv.Capture(context.Background(), ag.session)
	if after.PID != pane.PID {
		t.Fatalf("the program was started again: pid %d, then %d", pane.PID, after.PID)
	}
}

// Ending a session says whether there was one to end: a session already
// gone, or a server that does not run (or has no session left), is no
// error.
func TestEndingASessionThatIsGoneIsNoError(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := t.TempDir()
	srv := Server{Socket: filepath.Join(dir, "s.sock")}
	ctx := context.Background()
	if ended, err := srv.EndSession(ctx, "wilco-a"); ended || err != nil {
		t.Fatalf("no server: ended %v, %v", ended, err)
	}
	for _, s := range []string{"wilco-a", "wilco-b"} {
		if err := srv.NewSession(ctx, s, dir, nil, []string{"sh"}, 80, 24); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = srv.KillServer(context.Background()) })
	if ended, err := srv.EndSession(ctx, "wilco-a"); !ended || err != nil {
		t.Fatalf("a running session: ended %v, %v", ended, err)
	}
	if ended, err := srv.EndSession(ctx, "wilco-a"); ended || err != nil {
		t.Fatalf("a session gone: ended %v, %v", ended, err)
	}
	if got, err := srv.ListSessions(ctx); err != nil || len(got) != 1 || got[0] != "wilco-b" {
		t.Fatalf("sessions %q, %v", got, err)
	}
	if ended, err := srv.EndSession(ctx, "wilco-b"); !ended || err != nil {
		t.Fatalf("the last session: ended %v, %v", ended, err)
	}
	if ended, err := srv.EndSession(ctx, "wilco-b"); ended || err != nil {
		t.Fatalf("after the last session: ended %v, %v", ended, err)
	}
}

// The session wilco makes for an agent is named as tmux keeps it: '.' and
// ':', which tmux takes out of a session's name, are '_'.
func TestASessionIsNamedAsTmuxKeepsIt(t *testing.T) {
	t.Parallel()
	for agent, want := range map[string]string{"tui": "wilco-tui", "a.b": "wilco-a_b", "team:x.y": "wilco-team_x_y"} {
		if got := SessionName(agent); got != want {
			t.Errorf("SessionName(%q) = %q, want %q", agent, got, want)
		}
	}
}

// An agent whose name holds a '.' (a valid agent name, which tmux changes
// in a session's name) works in the session wilco made for it, and has it
// ended with its removal.
func TestAnAgentWithADotInItsNameWorksInItsSession(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, func(c *AgentConfig) { c.Name = "team.tui" })
	b.adapter.Deliver("team.tui", delegation("M-1", "T-1", 1, "Please write file.txt for the user."))
	b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	if tr := b.rec.turns[0]; tr.Status != "success" {
		t.Fatalf("turn %+v", tr)
	}
	srv, err := PrivateServer("", filepath.Join(b.dir, ".wilco"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if !srv.HasSession(ctx, "wilco-team_tui") {
		t.Fatal("no session wilco-team_tui")
	}
	if err := b.adapter.Remove(ctx, "team.tui"); err != nil {
		t.Fatal(err)
	}
	if srv.HasSession(ctx, "wilco-team_tui") {
		t.Fatal("the removed agent's session runs on")
	}
}
