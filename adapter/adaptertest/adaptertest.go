package adaptertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/ack"
	"wilco/adapter"
	"wilco/core"
	"wilco/dispatch"
)

// Harness is one adapter under the suite.
type Harness struct {
	// Start starts the adapter under test, reporting to r, with one agent
	// that runs the scripted program (see the package's comment). It
	// closes the adapter, and ends what it started, at the test's cleanup.
	Start func(t *testing.T, r adapter.Reporter) Started
	// Pull: the adapter's agents fetch their own messages; it runs no
	// program for them.
	Pull bool
	// Guard bounds every wait for a report (default 60 s).
	Guard time.Duration
}

// Started is an adapter the harness started.
type Started struct {
	Adapter dispatch.Adapter
	// Agent is the name of its scripted agent.
	Agent string
	// Dir is where the agent works: where it writes its files.
	Dir string
	// Gone, when set, reports whether the program of task's stopped turn
	// has ended (exec) or been interrupted (tmux).
	Gone func(task string) bool
}

// quiet is how long the suite waits to see that nothing more is
// reported.
const quiet = 1500 * time.Millisecond

// Run checks every rule of the suite on the adapter h starts.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.Guard <= 0 {
		h.Guard = 60 * time.Second
	}
	c := suiteRun{guard: h.Guard, start: func(t *testing.T) (*Recorder, Started) {
		t.Helper()
		r := NewRecorder()
		s := h.Start(t, r)
		if s.Adapter == nil || s.Agent == "" {
			t.Fatal("the harness started no adapter or no agent")
		}
		if !s.Adapter.Has(s.Agent) {
			t.Fatalf("the adapter does not have its own agent %q", s.Agent)
		}
		return r, s
	}}
	if h.Pull {
		runPull(t, c.start)
		return
	}

	for _, k := range []struct {
		name string
		test func(t *testing.T, c suiteRun)
	}{
		{"ADelegationIsAcknowledgedAndItsTurnEndReported", testADelegationIsAcknowledgedAndItsTurnEndReported},
		{"AReminderReachesTheSameAgent", testAReminderReachesTheSameAgent},
		{"ARetryReachesTheSameAgentWithItsFailure", testARetryReachesTheSameAgentWithItsFailure},
		{"StopTurnEndsARunningTurnAndNothingMoreIsReportedOfIt", testStopTurnEndsARunningTurnAndNothingMoreIsReportedOfIt},
		{"AnOperationIsPerformedOrRefusedWithAReason", testAnOperationIsPerformedOrRefusedWithAReason},
		{"ADeadProgramIsAnExecutionFailureWithItsLastOutput", testADeadProgramIsAnExecutionFailureWithItsLastOutput},
		{"TasksInWorktreesAreWorkedAtOnceEachInItsWorktree", testTasksInWorktreesAreWorkedAtOnceEachInItsWorktree},
	} {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			k.test(t, c)
		})
	}
}

// suiteRun is what a case of the suite needs: how long to wait for what
// it awaits, and how to start the adapter with one agent.
type suiteRun struct {
	guard time.Duration
	start func(t *testing.T) (*Recorder, Started)
}

func testADelegationIsAcknowledgedAndItsTurnEndReported(t *testing.T, c suiteRun) {
	r, s := c.start(t)
	s.Adapter.Deliver(s.Agent, Delegation("M-1", "T-1", 1, "Please write file.txt for the user."))
	r.WaitAck(t, c.guard, s.Agent, "M-1", 1)
	tr := r.WaitTurn(t, c.guard, "M-1", 1)
	succeeded(t, tr, "T-1", 1, "M-1")
	file(t, s.Dir, "file.txt", "attempt 1")
	r.Once(t, map[string]int{"M-1": 1})
}

func testAReminderReachesTheSameAgent(t *testing.T, c suiteRun) {
	r, s := c.start(t)
	d := Delegation("M-1", "T-1", 1, "Please write file.txt for the user.")
	s.Adapter.Deliver(s.Agent, d)
	r.WaitTurn(t, c.guard, "M-1", 1)
	s.Adapter.Deliver(s.Agent, core.InboxMessage{ID: "M-1", Type: string(core.SendAckRequest), TaskID: "T-1", TaskAttempt: 1, Attempt: 2,
		Subject: "Reminder: task T-1", Body: "Reminder: acknowledge task T-1 with [ACK] T-1 - RECEIVED."})
	r.WaitAck(t, c.guard, s.Agent, "M-1", 2)
	succeeded(t, r.WaitTurn(t, c.guard, "M-1", 2), "T-1", 1, "M-1")
	r.Once(t, map[string]int{"M-1": 2})
}

func testARetryReachesTheSameAgentWithItsFailure(t *testing.T, c suiteRun) {
	r, s := c.start(t)
	s.Adapter.Deliver(s.Agent, Delegation("M-1", "T-1", 1, "Please write file.txt for the user."))
	r.WaitTurn(t, c.guard, "M-1", 1)
	s.Adapter.Deliver(s.Agent, Delegation("M-2", "T-1", 2,
		"<retry_context attempt=\"2\">\nThe check failed: file.txt says attempt 1.\n</retry_context>\n\nPlease write file.txt for the user."))
	r.WaitAck(t, c.guard, s.Agent, "M-2", 1)
	succeeded(t, r.WaitTurn(t, c.guard, "M-2", 1), "T-1", 2, "M-2")
	file(t, s.Dir, "file.txt", "fixed T-1")
	r.Once(t, map[string]int{"M-1": 1, "M-2": 1})
}

func testStopTurnEndsARunningTurnAndNothingMoreIsReportedOfIt(t *testing.T, c suiteRun) {
	r, s := c.start(t)
	s.Adapter.Deliver(s.Agent, Delegation("M-1", "T-1", 1, "Please think about it for the user. IDLE"))
	r.WaitAck(t, c.guard, s.Agent, "M-1", 1)
	s.Adapter.StopTurn("T-1", "cancelled")
	if s.Gone != nil {
		waitFor(t, c.guard, "the stopped turn's program to end", func() bool { return s.Gone("T-1") })
	}
	time.Sleep(quiet)
	if n := r.Turns("M-1"); n != 0 {
		t.Fatalf("the stopped turn was reported as ended (%d times): %+v", n, r.TurnsOf("M-1"))
	}
	s.Adapter.Deliver(s.Agent, Delegation("M-2", "T-2", 1, "Please write file.txt for the user."))
	succeeded(t, r.WaitTurn(t, c.guard, "M-2", 1), "T-2", 1, "M-2")
	r.Once(t, map[string]int{"M-1": 1, "M-2": 1})
	if n := r.Turns("M-1"); n != 0 {
		t.Fatalf("the stopped turn was reported as ended (%d times): %+v", n, r.TurnsOf("M-1"))
	}
}

func testAnOperationIsPerformedOrRefusedWithAReason(t *testing.T, c suiteRun) {
	r, s := c.start(t)
	operations(t, s, true)
	s.Adapter.Deliver(s.Agent, Delegation("M-1", "T-1", 1, "Please write file.txt for the user."))
	succeeded(t, r.WaitTurn(t, c.guard, "M-1", 1), "T-1", 1, "M-1")
	r.Once(t, map[string]int{"M-1": 1})
}

func testADeadProgramIsAnExecutionFailureWithItsLastOutput(t *testing.T, c suiteRun) {
	r, s := c.start(t)
	s.Adapter.Deliver(s.Agent, Delegation("M-1", "T-1", 1, "Please write file.txt for the user. CRASH"))
	tr := r.WaitTurn(t, c.guard, "M-1", 1)
	if tr.TaskID != "T-1" || tr.Attempt != 1 || tr.ExitCode != 3 || tr.Error == "" || tr.Status == ack.CompleteSuccess ||
		!strings.Contains(tr.Error+"\n"+tr.Output, "panic: scripted crash") {
		t.Fatalf("the turn of a program that died: %+v", tr)
	}
	r.Once(t, map[string]int{"M-1": 1})
}

func testTasksInWorktreesAreWorkedAtOnceEachInItsWorktree(t *testing.T, c suiteRun) {
	r, s := c.start(t)
	worktree := func(task string) string {
		rel := core.TaskWorktree(task)
		if err := os.MkdirAll(filepath.Join(s.Dir, filepath.FromSlash(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		return rel
	}
	// Two turns that never end on their own: both acknowledged while the
	// other runs, they run at once.
	for _, task := range []string{"T-1", "T-2"} {
		d := Delegation("M-"+task, task, 1, "Please think about it for the user. IDLE")
		d.Worktree = worktree(task)
		s.Adapter.Deliver(s.Agent, d)
	}
	r.WaitAck(t, c.guard, s.Agent, "M-T-1", 1)
	r.WaitAck(t, c.guard, s.Agent, "M-T-2", 1)
	s.Adapter.StopTurn("T-1", "cancelled")
	s.Adapter.StopTurn("T-2", "cancelled")
	// Each task's files are written in its own worktree.
	for _, task := range []string{"T-3", "T-4"} {
		d := Delegation("M-"+task, task, 1, "Please write file.txt for the user.")
		d.Worktree = worktree(task)
		s.Adapter.Deliver(s.Agent, d)
	}
	for _, task := range []string{"T-3", "T-4"} {
		succeeded(t, r.WaitTurn(t, c.guard, "M-"+task, 1), task, 1, "M-"+task)
		file(t, filepath.Join(s.Dir, filepath.FromSlash(core.TaskWorktree(task))), "file.txt", "attempt 1")
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "file.txt")); err == nil {
		t.Fatal("a task worked in its worktree wrote file.txt in the repository")
	}
	r.Once(t, map[string]int{"M-T-1": 1, "M-T-2": 1, "M-T-3": 1, "M-T-4": 1})
	if n := r.Turns("M-T-1") + r.Turns("M-T-2"); n != 0 {
		t.Fatalf("stopped turns were reported as ended (%d times)", n)
	}
}

// runPull checks an adapter whose agents fetch their own messages: what
// it is handed waits for the agent, and it reports nothing of it.
func runPull(t *testing.T, start func(t *testing.T) (*Recorder, Started)) {
	t.Run("AMessageWaitsForThePullAgentAndNothingIsReported", func(t *testing.T) {
		t.Parallel()
		r, s := start(t)
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.Adapter.Deliver(s.Agent, Delegation("M-1", "T-1", 1, "Please write file.txt for the user."))
			s.Adapter.StopTurn("T-1", "cancelled")
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Deliver or StopTurn blocked")
		}
		time.Sleep(quiet)
		r.Once(t, map[string]int{"M-1": 0})
		if n := len(r.Replies()); n != 0 {
			t.Fatalf("replies reported for an agent that fetches its own messages: %+v", r.Replies())
		}
	})
	t.Run("AnOperationIsPerformedOrRefusedWithAReason", func(t *testing.T) {
		t.Parallel()
		r, s := start(t)
		operations(t, s, false)
		r.Once(t, nil)
	})
}

// operations hibernates, wakes and restarts the agent, each performed or
// refused with a reason, and asks for an operation no adapter knows.
// With local, an adapter that runs programs must know its agents.
func operations(t *testing.T, s Started, local bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conv := ""
	for _, op := range []adapter.Operation{{Name: core.OpHibernate}, {Name: core.OpWake}, {Name: core.OpRestart}} {
		if op.Name == core.OpWake {
			op.Conversation = conv
		}
		p, err := s.Adapter.Operate(ctx, s.Agent, op)
		switch {
		case err == nil && strings.TrimSpace(p.Action) == "":
			t.Fatalf("%s performed without saying what was done: %+v", op.Name, p)
		case err != nil && !errors.Is(err, adapter.ErrNotSupported):
			t.Fatalf("%s failed: %v", op.Name, err)
		case err != nil && strings.TrimSpace(strings.TrimSuffix(err.Error(), adapter.ErrNotSupported.Error())) == "":
			t.Fatalf("%s refused without a reason: %v", op.Name, err)
		}
		if op.Name == core.OpHibernate {
			conv = p.Conversation
		}
	}
	if _, err := s.Adapter.Operate(ctx, s.Agent, adapter.Operation{Name: "frobnicate"}); !errors.Is(err, adapter.ErrNotSupported) {
		t.Fatalf("an unknown operation: %v, want it refused (adapter.ErrNotSupported)", err)
	}
	if local {
		if _, err := s.Adapter.Operate(ctx, "nobody-"+s.Agent, adapter.Operation{Name: core.OpHibernate}); err == nil {
			t.Fatal("an operation on an agent the adapter does not have was performed")
		}
	}
}

// Delegation is a task's first send (or an attempt's) as the core hands
// it over, asking for the ACK.
func Delegation(id, task string, attempt int, description string) core.InboxMessage {
	body := "## Task: " + task + "\n\n" + description + "\n\n---\nACKNOWLEDGMENT REQUIRED: Reply with [ACK] " + task +
		" - RECEIVED\nInclude: Understanding: {1-line summary of what you will do}\nStatus options: RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED\n---"
	return core.InboxMessage{ID: id, Type: string(core.TypeDelegation), TaskID: task, TaskAttempt: attempt, Attempt: 1, Body: body, Subject: "Task " + task}
}

func succeeded(t *testing.T, tr core.TurnResult, task string, attempt int, delivery string) {
	t.Helper()
	if tr.TaskID != task || tr.Attempt != attempt || tr.Delivery != delivery || tr.ExitCode != 0 || tr.Error != "" || tr.TimedOut ||
		tr.Status != ack.CompleteSuccess || !strings.Contains(tr.Summary, "did what the task asked") {
		t.Fatalf("the turn of %s (attempt %d, %s): %+v", task, attempt, delivery, tr)
	}
}

func file(t *testing.T, dir, name, want string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || strings.TrimSpace(string(got)) != want {
		t.Fatalf("%s = %q (%v), want %q", name, got, err, want)
	}
}

func waitFor(t *testing.T, guard time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", guard, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Recorder is the suite's adapter.Reporter: it records every report and
// answers an ACK as the core does when it accepts one (RECEIVED,
// CONFIRMED or QUEUED acknowledge the delivery).
type Recorder struct {
	mu      sync.Mutex
	replies []core.ReplyInput
	reports []adapter.Report
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{} }

// Reply records an answer and interprets an ACK.
func (r *Recorder) Reply(_ context.Context, in core.ReplyInput) (core.Interpretation, error) {
	r.mu.Lock()
	r.replies = append(r.replies, in)
	r.mu.Unlock()
	out := core.Interpretation{Kind: "message"}
	if p, err := ack.Parse(in.Text); err == nil {
		out.Kind, out.Status = string(p.Kind), string(p.Status)
		if p.Kind == ack.KindAck && (p.Status == ack.Received || p.Status == ack.Confirmed || p.Status == ack.Queued) {
			out.Acknowledged = []string{in.InReplyTo}
		}
	}
	return out, nil
}

// Report records a report.
func (r *Recorder) Report(_ context.Context, rep adapter.Report) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, rep)
	return nil
}

// Replies are the answers reported so far.
func (r *Recorder) Replies() []core.ReplyInput {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.replies)
}

// acks are the ACKs of message reported so far.
func (r *Recorder) acks(message string) []core.ReplyInput {
	var out []core.ReplyInput
	for _, in := range r.Replies() {
		if in.InReplyTo != message {
			continue
		}
		if p, err := ack.Parse(in.Text); err == nil && p.Kind == ack.KindAck {
			out = append(out, in)
		}
	}
	return out
}

// TurnsOf are the ends of the turns of delivery reported so far.
func (r *Recorder) TurnsOf(delivery string) []core.TurnResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []core.TurnResult
	for _, rep := range r.reports {
		if e, ok := rep.(adapter.TurnEnded); ok && e.Result.Delivery == delivery {
			out = append(out, e.Result)
		}
	}
	return out
}

// Turns counts the ends of the turns of delivery reported so far.
func (r *Recorder) Turns(delivery string) int { return len(r.TurnsOf(delivery)) }

// WaitAck waits for the n-th ACK of message, and checks it came from
// agent.
func (r *Recorder) WaitAck(t *testing.T, guard time.Duration, agent, message string, n int) core.ReplyInput {
	t.Helper()
	waitFor(t, guard, fmt.Sprintf("ACK %d of %s (replies: %+v)", n, message, r.Replies()), func() bool { return len(r.acks(message)) >= n })
	in := r.acks(message)[n-1]
	if in.Agent != agent {
		t.Fatalf("the ACK of %s came from %q, not %q", message, in.Agent, agent)
	}
	return in
}

// WaitTurn waits for the n-th end of a turn of delivery.
func (r *Recorder) WaitTurn(t *testing.T, guard time.Duration, delivery string, n int) core.TurnResult {
	t.Helper()
	waitFor(t, guard, fmt.Sprintf("turn end %d of %s", n, delivery), func() bool { return r.Turns(delivery) >= n })
	return r.TurnsOf(delivery)[n-1]
}

// Once checks, after a quiet moment, that each delivery of sends was
// acknowledged, and its turn reported ended, no more often than it was
// sent as a task, that no turn was reported ended of anything else, and
// that no message was reported failed twice. (What an
// agent does, has spent, or asks may come again: those are not counted.)
func (r *Recorder) Once(t *testing.T, sends map[string]int) {
	t.Helper()
	time.Sleep(quiet)
	for delivery, n := range sends {
		if got := r.Turns(delivery); got > n {
			t.Errorf("the turn of %s was reported ended %d times for %d sends: %+v", delivery, got, n, r.TurnsOf(delivery))
		}
		if got := len(r.acks(delivery)); got > n {
			t.Errorf("%s was acknowledged %d times for %d sends: %+v", delivery, got, n, r.acks(delivery))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	failed := map[adapter.MessageFailed]int{}
	for _, rep := range r.reports {
		switch e := rep.(type) {
		case adapter.MessageFailed:
			if failed[e]++; failed[e] == 2 {
				t.Errorf("reported twice: %#v", e)
			}
		case adapter.TurnEnded:
			if _, sent := sends[e.Result.Delivery]; !sent {
				t.Errorf("the end of a turn of %q, which was never sent: %+v", e.Result.Delivery, e.Result)
			}
		}
	}
}
