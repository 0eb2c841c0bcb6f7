package perform

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wilco/core"
	"wilco/dispatch"
	"wilco/notify"
	"wilco/runtime"
	"wilco/store/sqlite"
)

// bundle is a running runtime on a fresh store, and an executor on it
// with a dispatcher outside any git work tree.
type bundle struct {
	t    *testing.T
	rt   *runtime.Runtime
	x    *Executor
	logs *logRecorder
}

func setup(t *testing.T, hooks ...notify.Webhook) *bundle {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "wilco.db"))
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{t: t, logs: &logRecorder{}}
	if b.rt, err = runtime.Open(context.Background(), runtime.Config{Store: st}); err != nil {
		st.Close()
		t.Fatal(err)
	}
	log := slog.New(b.logs)
	d, err := dispatch.New(dispatch.Options{Dir: t.TempDir(), Logger: log, Runtime: b.rt})
	if err != nil {
		t.Fatal(err)
	}
	b.x = New(Options{Runtime: b.rt, Dispatch: d, Notifier: notify.New(notify.Options{Webhooks: hooks}), Logger: log})
	b.rt.Start()
	b.x.Start()
	t.Cleanup(func() {
		if err := b.x.Close(); err != nil {
			t.Error(err)
		}
		if err := b.rt.Close(); err != nil {
			t.Error(err)
		}
		st.Close()
	})
	return b
}

func (b *bundle) do(fn runtime.Func) any {
	b.t.Helper()
	v, err := b.rt.Do(context.Background(), fn)
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// logRecorder keeps the message and the effect of every log record.
type logRecorder struct {
	mu   sync.Mutex
	logs []string
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecorder) WithGroup(string) slog.Handler            { return h }
func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "effect" {
			line += ": " + a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	h.logs = append(h.logs, line)
	h.mu.Unlock()
	return nil
}

func (h *logRecorder) count(line string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, l := range h.logs {
		if l == line {
			n++
		}
	}
	return n
}

func TestAfterCloseNoEffectIsStarted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.do(func(c *core.State, now time.Time) (any, error) {
		return nil, c.RegisterAgent(now, core.AgentSpec{Name: "claude", Adapter: "exec"})
	})
	tk := b.do(func(c *core.State, now time.Time) (any, error) {
		return c.SubmitTask(now, core.TaskSpec{Description: "Add a flag", DryRun: true})
	}).(core.Task)
	if err := b.x.Close(); err != nil {
		t.Fatal(err)
	}

	for _, e := range []core.Effect{
		core.MakeProposal{TaskID: tk.ID, Attempt: tk.Attempt, RunID: "R-1"},
		core.ApplyProposal{TaskID: tk.ID, RunID: "R-1"},
		core.DiscardProposal{TaskID: tk.ID},
		core.RunVerify{TaskID: tk.ID, Attempt: tk.Attempt, RunID: "R-1"},
		core.StopSession{Agent: "claude"},
		core.RunOperation{ID: "OP-1", Name: "run", Command: []string{"true"}},
	} {
		b.x.perform(e)
	}
	// Closed again: safe, and it would wait for anything started.
	if err := b.x.Close(); err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{"diff " + tk.ID, "apply " + tk.ID, "discard " + tk.ID, "verify R-1", "end session claude", "operation OP-1"} {
		if n := b.logs.count("not started: wilco is stopping: " + name); n != 1 {
			t.Errorf("%q: told %d times that it was not started, want once", name, n)
		}
	}
	// Had the diff been made, its failure would have reached the core.
	var got core.Task
	if err := b.rt.Read(func(c *core.State) { got, _ = c.Task(tk.ID) }); err != nil {
		t.Fatal(err)
	}
	if len(got.Failures) != 0 {
		t.Fatalf("the core heard from an effect after Close: %s (%s), failures %+v", got.State, got.Milestone, got.Failures)
	}
}

// A notification's attempt is made in the background, its result reported
// through the runtime; one under way at Close is cut short and not
// reported (the next start makes it again).
func TestANotificationsAttemptIsReportedAndOneUnderWayAtCloseIsNot(t *testing.T) {
	t.Parallel()
	var hold atomic.Bool
	arrived, release := make(chan struct{}, 8), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		if hold.Load() {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	defer close(release)
	b := setup(t, notify.Webhook{Name: "ops", URL: srv.URL})
	b.do(func(c *core.State, now time.Time) (any, error) {
		p := core.DefaultPolicies()
		p.Notify.Hooks = []core.NotifyHook{{Name: "ops", Events: []core.NotifyEvent{core.NotifyOperation}}}
		if err := c.Configure(now, p); err != nil {
			return nil, err
		}
		return nil, c.RegisterAgent(now, core.AgentSpec{Name: "a", Adapter: "mailbox"})
	})
	state := func(id string) core.Notification {
		var n core.Notification
		if err := b.rt.Read(func(c *core.State) { n, _ = c.Notification(id) }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	b.do(func(c *core.State, now time.Time) (any, error) {
		return c.StartOperation(now, core.OperationRequest{Name: "restart", Agents: []string{"a"}})
	})
	<-arrived
	deadline := time.Now().Add(30 * time.Second)
	for state("N-1").InFlight() {
		if time.Now().After(deadline) {
			t.Fatalf("the attempt's result was never recorded: %+v", state("N-1"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	hold.Store(true)
	b.do(func(c *core.State, now time.Time) (any, error) {
		return c.StartOperation(now, core.OperationRequest{Name: "restart", Agents: []string{"a"}})
	})
	<-arrived
	if err := b.x.Close(); err != nil {
		t.Fatal(err)
	}
	if n := state("N-2"); !n.InFlight() {
		t.Fatalf("an attempt cut short by Close was recorded: %+v", n)
	}
}

// TestAnEffectIsPendingUntilItsOutcomeIsRecorded: the runtime counts an
// effect pending while the executor performs it, and no more once its
// outcome is recorded.
func TestAnEffectIsPendingUntilItsOutcomeIsRecorded(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	b := setup(t, notify.Webhook{Name: "ops", URL: srv.URL})
	b.do(func(c *core.State, now time.Time) (any, error) {
		p := core.DefaultPolicies()
		p.Notify.Hooks = []core.NotifyHook{{Name: "ops", Events: []core.NotifyEvent{core.NotifyOperation}}}
		if err := c.Configure(now, p); err != nil {
			return nil, err
		}
		return nil, c.RegisterAgent(now, core.AgentSpec{Name: "a", Adapter: "mailbox"})
	})
	b.do(func(c *core.State, now time.Time) (any, error) {
		return c.StartOperation(now, core.OperationRequest{Name: "restart", Agents: []string{"a"}})
	})
	<-arrived
	if n := b.rt.Pending(); n != 1 {
		t.Fatalf("%d effects pending while a notification's attempt is made, want 1", n)
	}
	close(release)
	deadline := time.Now().Add(30 * time.Second)
	for b.rt.Pending() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d effects still pending after the attempt", b.rt.Pending())
		}
		time.Sleep(5 * time.Millisecond)
	}
	var n core.Notification
	if err := b.rt.Read(func(c *core.State) { n, _ = c.Notification("N-1") }); err != nil {
		t.Fatal(err)
	}
	if n.InFlight() {
		t.Fatalf("nothing pending, and the attempt's result is not recorded: %+v", n)
	}
}
