package tmux

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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
	refuse      bool
	changed     chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 100)} }

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

func (r *recorder) EndTurn(_ context.Context, tr core.TurnResult) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.note()
	r.turns = append(r.turns, tr)
	return nil
}

func (r *recorder) Activity(_ context.Context, _ string, _ int, text string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.activities = append(r.activities, text)
	return nil
}

func (r *recorder) Permission(_ context.Context, p PermissionAsked) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.note()
	r.permissions = append(r.permissions, p)
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
		OnSubmit: func(s SubmitRecord) { b.submits <- s }})
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
