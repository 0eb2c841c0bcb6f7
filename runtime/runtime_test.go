package runtime

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/clock"
	"wilco/core"
	"wilco/store"
	"wilco/store/sqlite"
)

var epoch = time.Date(2026, 1, 26, 14, 0, 0, 0, time.UTC)

// recordingStore wraps a store and notes what each commit held, so that a
// test can check what was durable when an effect ran.
type recordingStore struct {
	store.Store
	mu      sync.Mutex
	commits []store.Batch
	failing error
}

func (s *recordingStore) Commit(ctx context.Context, b store.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing != nil {
		return s.failing
	}
	if err := s.Store.Commit(ctx, b); err != nil {
		return err
	}
	s.commits = append(s.commits, b)
	return nil
}

func (s *recordingStore) durable() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last uint64
	for _, b := range s.commits {
		if n := len(b.Events); n > 0 {
			last = b.Events[n-1].Seq
		}
	}
	return last
}

type effector struct {
	mu        sync.Mutex
	st        *recordingStore
	delivered []core.InboxMessage
	notified  []core.Notify
	durableAt []uint64
}

// take performs the effects the runtime hands out: it records the
// messages and the notifications' attempts, and what was durable then.
func (e *effector) take(rt *Runtime) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, x := range rt.TakeEffects() {
		switch x := x.(type) {
		case core.Deliver:
			e.delivered = append(e.delivered, x.Message)
		case core.Notify:
			e.notified = append(e.notified, x)
		default:
			continue
		}
		e.durableAt = append(e.durableAt, e.st.durable())
	}
}

type testBundle struct {
	t     *testing.T
	path  string
	clock *clock.Fake
	st    *recordingStore
	eff   *effector
	rt    *Runtime
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{t: t, path: filepath.Join(t.TempDir(), "wilco.db"), clock: clock.NewFake(epoch)}
	b.open()
	return b
}

// open opens the store and a runtime on it (driven by hand).
func (b *testBundle) open() {
	b.openWith(Config{CheckpointEvery: 1 << 30, CheckpointInterval: time.Hour})
}

func (b *testBundle) openWith(cfg Config) {
	b.t.Helper()
	s, err := sqlite.Open(b.path)
	if err != nil {
		b.t.Fatal(err)
	}
	b.st = &recordingStore{Store: s}
	b.eff = &effector{st: b.st}
	cfg.Store, cfg.Clock = b.st, b.clock
	rt, err := Open(context.Background(), cfg)
	if err != nil {
		b.t.Fatal(err)
	}
	b.rt = rt
	b.t.Cleanup(func() { _ = s.Close() })
}

// crash drops the runtime without Close (no final checkpoint) and opens
// again from what the store holds.
func (b *testBundle) crash() {
	b.t.Helper()
	_ = b.st.Store.Close()
	b.open()
}

// submit queues fn and returns a function that reports its result after
// Drain.
func (b *testBundle) submit(fn Func) func() (any, error) {
	var v any
	var err error
	done := false
	b.rt.Submit(fn, func(x any, e error) { v, err, done = x, e, true })
	return func() (any, error) {
		if !done {
			b.t.Fatal("not answered")
		}
		return v, err
	}
}

// drain runs the loop by hand (Drain) and performs the effects it
// committed.
func (b *testBundle) drain() int {
	n := b.rt.Drain()
	b.eff.take(b.rt)
	return n
}

func (b *testBundle) must(fn Func) any {
	b.t.Helper()
	res := b.submit(fn)
	b.drain()
	v, err := res()
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

func (b *testBundle) advanceTo(t time.Time) {
	for {
		next, ok := b.rt.NextTimer()
		if !ok || next.After(t) {
			break
		}
		b.clock.Set(next)
		b.drain()
	}
	b.clock.Set(t)
	b.drain()
}

func register(name, adapter string) Func {
	return func(c *core.State, now time.Time) (any, error) {
		return nil, c.RegisterAgent(now, core.AgentSpec{Name: name, Adapter: adapter, Capabilities: []string{"go"}})
	}
}

func delegate(agent, task string) Func {
	return func(c *core.State, now time.Time) (any, error) {
		return c.Send(now, core.SendRequest{To: agent, Type: core.TypeDelegation, TaskID: task, Body: "do " + task})
	}
}

func TestEventsAreDurableBeforeEffectsAndAnswers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(register("a", "exec"))
	var durableWhenAnswered uint64
	b.rt.Submit(delegate("a", "T-1"), func(any, error) { durableWhenAnswered = b.st.durable() })
	b.drain()
	seq := b.rt.CommittedSeq()
	if durableWhenAnswered != seq {
		t.Fatalf("answered with seq %d durable, want %d", durableWhenAnswered, seq)
	}
	if len(b.eff.delivered) != 1 || b.eff.durableAt[0] != seq {
		t.Fatalf("delivered %d messages; durable at delivery %v, want %d", len(b.eff.delivered), b.eff.durableAt, seq)
	}
}

func TestGroupCommitBatchesQueuedCommands(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(register("a", "exec"))
	before := len(b.st.commits)
	var answered int
	for i := range 500 {
		b.rt.Submit(delegate("a", "T-"+itoa(i)), func(_ any, err error) {
			if err == nil {
				answered++
			}
		})
	}
	b.drain()
	if answered != 500 {
		t.Fatalf("answered %d", answered)
	}
	// Drained by hand, each turn of at most MaxBatch commands commits on
	// its own (in the background the committer gathers turns too).
	if n, want := len(b.st.commits)-before, (500+b.rt.cfg.MaxBatch-1)/b.rt.cfg.MaxBatch; n != want {
		t.Fatalf("500 queued commands took %d commits, want %d", n, want)
	}
}

func itoa(i int) string { return time.Duration(i).String() }

func TestRefusedCommandWritesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	before := b.rt.CommittedSeq()
	res := b.submit(delegate("nobody", "T-1"))
	b.drain()
	if _, err := res(); core.CodeOf(err) != core.NotFound {
		t.Fatalf("err %v", err)
	}
	if b.rt.CommittedSeq() != before {
		t.Fatal("a refused command wrote events")
	}
}

func TestTimersFireAtTheirTimeAndAreRebuiltFromTheStoreOnStart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(register("a", "exec"))
	b.must(delegate("a", "T-1"))
	next, ok := b.rt.NextTimer()
	if !ok || next != epoch.Add(5*time.Minute+30*time.Second) {
		t.Fatalf("next timer %v", next)
	}
	b.crash()
	if got, ok := b.rt.NextTimer(); !ok || !got.Equal(next) {
		t.Fatalf("after restart next timer %v, want %v", got, next)
	}
	if b.rt.RecoveredTimers() != 1 {
		t.Fatalf("recovered %d timers", b.rt.RecoveredTimers())
	}
	b.advanceTo(epoch.Add(6 * time.Minute))
	// The delegation is handed over again (it may not have left before the
	// crash), then the ACK request comes at its time.
	if len(b.eff.delivered) != 2 || b.eff.delivered[0].Type != string(core.TypeDelegation) || b.eff.delivered[1].Type != string(core.SendAckRequest) {
		t.Fatalf("after restart: %+v", b.eff.delivered)
	}
	evs, _ := b.st.Events(context.Background(), store.Filter{})
	last := evs[len(evs)-1]
	if last.Type != core.TypeDeliveryRetried || !last.Time.Equal(next) {
		t.Fatalf("timer fired at %v (%s), want exactly %v", last.Time, last.Type, next)
	}
}

func TestRecoveryFromCheckpointPlusTailEqualsLiveState(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(register("a", "mailbox"))
	b.must(register("b", "exec"))
	b.must(delegate("a", "T-1"))
	b.rt.Close() // a full checkpoint
	b.crash()
	b.must(delegate("b", "T-2"))
	b.advanceTo(epoch.Add(20 * time.Minute))
	live := b.rt.core
	b.crash() // no checkpoint: the tail is replayed
	if diff := core.StateDiff(live, b.rt.core); diff != "" {
		t.Fatalf("recovered state differs: %s", diff)
	}
}

func TestSlowSubscriberIsDroppedNotWaitedFor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.rt.Start()
	defer b.rt.Close()
	sub, err := b.rt.Subscribe(context.Background(), nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, n := range []string{"a", "b", "c", "d"} {
		if _, err := b.rt.Do(ctx, register(n, "exec")); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for range sub.C {
		n++
	}
	if n != 2 || !errors.Is(sub.Err(), ErrSlow) {
		t.Fatalf("got %d events, err %v; want 2 then ErrSlow", n, sub.Err())
	}
}

func TestFollowResumesFromTheLogWithNoGapAndNoDuplicate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.rt.Start()
	defer b.rt.Close()
	ctx := context.Background()
	for _, n := range []string{"a", "b", "c"} {
		if _, err := b.rt.Do(ctx, register(n, "exec")); err != nil {
			t.Fatal(err)
		}
	}
	var got []uint64
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		done <- b.rt.Follow(fctx, StreamFilter{After: 1}, 64, func(ev store.Event) bool {
			got = append(got, ev.Seq)
			if ev.Seq == 5 {
				cancel()
			}
			return true
		})
	}()
	for _, n := range []string{"d", "e"} {
		if _, err := b.rt.Do(ctx, register(n, "exec")); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	want := []uint64{2, 3, 4, 5}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestStoreFailureStopsTheRuntime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.st.failing = errors.New("disk full")
	res := b.submit(register("a", "exec"))
	b.drain()
	if _, err := res(); err == nil {
		t.Fatal("a failed commit was answered ok")
	}
	if b.rt.Err() == nil {
		t.Fatal("the runtime runs on past a failed commit")
	}
	res = b.submit(register("b", "exec"))
	if _, err := res(); err == nil {
		t.Fatal("a stopped runtime took a command")
	}
	if len(b.eff.delivered) != 0 {
		t.Fatal("effects ran")
	}
}

// TestAReadOfAStoppedLoopSaysSo: once a failure stopped the loop, or
// Close did, Read does not run its function and returns why — ErrStopped
// wrapping the failure, or ErrClosed — so that no caller takes what it did
// not read for an empty state (an agent's token for an unknown one).
func TestAReadOfAStoppedLoopSaysSo(t *testing.T) {
	t.Parallel()
	read := func(rt *Runtime) (ran bool, err error) {
		err = rt.Read(func(*core.State) { ran = true })
		return ran, err
	}

	b := setup(t)
	b.rt.Start()
	ctx := context.Background()
	if _, err := b.rt.Do(ctx, register("a", "mailbox")); err != nil {
		t.Fatal(err)
	}
	if ran, err := read(b.rt); !ran || err != nil {
		t.Fatalf("a running loop's read: ran %v, err %v", ran, err)
	}
	diskFull := errors.New("disk full")
	b.st.mu.Lock()
	b.st.failing = diskFull
	b.st.mu.Unlock()
	if _, err := b.rt.Do(ctx, register("b", "mailbox")); !errors.Is(err, ErrStopped) || !errors.Is(err, diskFull) {
		t.Fatalf("the failed commit answered %v, want ErrStopped and the failure", err)
	}
	ran, err := read(b.rt)
	if ran || !errors.Is(err, ErrStopped) || !errors.Is(err, diskFull) {
		t.Fatalf("a stopped loop's read: ran %v, err %v; want not run, ErrStopped wrapping the failure", ran, err)
	}
	if _, err := b.rt.Timers(); !errors.Is(err, ErrStopped) {
		t.Fatalf("Timers of a stopped loop: %v", err)
	}
	if _, err := b.rt.Do(ctx, register("c", "mailbox")); !errors.Is(err, ErrStopped) {
		t.Fatalf("a command to a stopped loop: %v", err)
	}
	if err := b.rt.Close(); !errors.Is(err, diskFull) {
		t.Fatalf("Close of a stopped loop: %v", err)
	}

	closed := setup(t)
	closed.rt.Start()
	if _, err := closed.rt.Do(ctx, register("a", "mailbox")); err != nil {
		t.Fatal(err)
	}
	if err := closed.rt.Close(); err != nil {
		t.Fatal(err)
	}
	if ran, err := read(closed.rt); ran || !errors.Is(err, ErrClosed) {
		t.Fatalf("a closed loop's read: ran %v, err %v; want not run, ErrClosed", ran, err)
	}
}

func TestCheckpointWrittenALittleAtATimeRecoversTheSameState(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := Config{CheckpointEvery: 7, CheckpointInterval: time.Hour, CheckpointShare: 3}
	b.openWith(cfg)
	for i := range 40 {
		b.must(register("a"+itoa(i), []string{"exec", "mailbox"}[i%2]))
	}
	var partial bool
	for round := range 6 {
		for i := range 40 {
			b.must(delegate("a"+itoa(i), "T-"+itoa(round*100+i)))
		}
		b.advanceTo(b.clock.Now().Add(time.Duration(round+1) * 3 * time.Minute))
		for _, c := range b.st.commits {
			partial = partial || len(c.Records) > 0 && c.Watermark == 0
		}
		live := b.rt.core
		_ = b.st.Store.Close()
		b.openWith(cfg)
		if diff := core.StateDiff(live, b.rt.core); diff != "" {
			t.Fatalf("round %d: recovered state differs: %s", round, diff)
		}
	}
	if !partial {
		t.Fatal("no checkpoint was written in parts")
	}
}

func TestASendThatMayNotHaveLeftIsSentAgainAfterARestart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(register("a", "exec"))
	b.must(register("m", "mailbox"))
	b.must(func(c *core.State, now time.Time) (any, error) {
		return c.Send(now, core.SendRequest{To: "a", Type: core.TypeConversation, Body: "which approach?"})
	})
	b.must(func(c *core.State, now time.Time) (any, error) {
		return c.Send(now, core.SendRequest{To: "m", Type: core.TypeConversation, Body: "and you?"})
	})
	b.crash() // the commit happened; whether Deliver ran is unknown
	b.drain()
	if len(b.eff.delivered) != 1 || b.eff.delivered[0].Body != "which approach?" {
		t.Fatalf("after restart: %+v", b.eff.delivered)
	}
	var inbox int
	if err := b.rt.Read(func(c *core.State) { a, _ := c.Agent("m"); inbox = len(a.Inbox) }); err != nil {
		t.Fatal(err)
	}
	if inbox != 1 {
		t.Fatalf("the mailbox agent's inbox holds %d messages, want its 1 (kept, not doubled)", inbox)
	}
}

// The sends a restart hands over again go out with the loop's first turn,
// with no command to start it: Start, not a later command, wakes it (and
// a turn a command queued before starts at once may already have taken
// them).
func TestTheSendsARestartHandsOverAgainGoOutWhenTheLoopStarts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(register("a", "exec"))
	b.must(func(c *core.State, now time.Time) (any, error) {
		return c.Send(now, core.SendRequest{To: "a", Type: core.TypeConversation, Body: "which approach?"})
	})
	b.crash()
	// A command queued before the start: the loop's first turn may come
	// from it as well as from Start.
	b.rt.Submit(register("m", "mailbox"), nil)
	b.rt.Start()
	defer b.rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		effects, err := b.rt.Effects(ctx)
		if err != nil {
			t.Fatalf("the send was not handed over again: %v", err)
		}
		for _, e := range effects {
			if d, ok := e.(core.Deliver); ok && d.Message.Body == "which approach?" {
				return
			}
		}
	}
}

// gapStore hands over its log without one event.
type gapStore struct {
	store.Store
	skip uint64
}

func (s gapStore) Scan(ctx context.Context, after uint64, fn func(store.Event) error) error {
	return s.Store.Scan(ctx, after, func(ev store.Event) error {
		if ev.Seq == s.skip {
			return nil
		}
		return fn(ev)
	})
}

func TestRecoveryStopsAtAnEventItCannotReplayAndSaysWhich(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// broken returns the store to recover from, given the seq of the
		// event at which replay must stop, and what the error must say.
		broken func(s store.Store, at uint64) (store.Store, string)
		event  func(at uint64) store.Event
	}{
		{
			name: "an event that does not decode",
			event: func(at uint64) store.Event {
				return store.Event{Seq: at, Type: core.TypeDeliverySent, Data: []byte(`{"id":`)}
			},
			broken: func(s store.Store, at uint64) (store.Store, string) {
				return s, fmt.Sprintf("event %d", at)
			},
		},
		{
			name: "a gap in the log",
			broken: func(s store.Store, at uint64) (store.Store, string) {
				return gapStore{Store: s, skip: at}, fmt.Sprintf("replay event %d after %d", at+1, at-1)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.must(register("a", "exec"))
			for i := range 300 {
				b.must(delegate("a", fmt.Sprintf("T-%d", i)))
			}
			ctx := t.Context()
			good, err := b.st.Events(ctx, store.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			_ = b.st.Store.Close()

			// The broken event sits in a tail far longer than what the
			// replay reads ahead: the reader must stop too, not hang.
			s, err := sqlite.Open(b.path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			last := good[len(good)-1]
			at := last.Seq + 1
			var evs []store.Event
			if tc.event != nil {
				e := tc.event(at)
				e.Time = last.Time
				evs = append(evs, e)
			}
			for i := range 3000 - len(evs) {
				tmpl := good[i%len(good)]
				evs = append(evs, store.Event{Seq: at + uint64(len(evs)), Time: last.Time, Type: tmpl.Type, TaskID: tmpl.TaskID, Agent: tmpl.Agent, Data: tmpl.Data})
			}
			if err := s.Commit(ctx, store.Batch{Events: evs}); err != nil {
				t.Fatal(err)
			}
			st, want := tc.broken(s, at)
			_, err = Open(ctx, Config{Store: st, Clock: b.clock})
			if err == nil {
				t.Fatal("the log was recovered")
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("the error does not name the event: %v (want %q in it)", err, want)
			}
		})
	}
}

func TestAWaveOfDueTimersIsFiredOverSeveralTurnsAtTheirTime(t *testing.T) {
	t.Parallel()
	b := &testBundle{t: t, path: filepath.Join(t.TempDir(), "wilco.db"), clock: clock.NewFake(epoch)}
	b.openWith(Config{MaxBatch: 10, CheckpointEvery: 1 << 30, CheckpointInterval: time.Hour})
	b.must(register("a", "exec"))
	for i := range 35 {
		b.must(delegate("a", fmt.Sprintf("T-%d", i)))
	}
	due, _ := b.rt.NextTimer()
	before := len(b.st.commits)
	b.clock.Set(due)
	b.drain()

	turns, retried := 0, 0
	for _, c := range b.st.commits[before:] {
		n := 0
		for _, ev := range c.Events {
			if ev.Type == core.TypeDeliveryRetried {
				n++
				if !ev.Time.Equal(due) {
					t.Fatalf("a timer due at %v fired at %v", due, ev.Time)
				}
			}
		}
		if n > 10 {
			t.Fatalf("one turn fired %d timers; at most MaxBatch (10)", n)
		}
		if n > 0 {
			turns++
			retried += n
		}
	}
	if retried != 35 || turns < 4 {
		t.Fatalf("%d of 35 due timers fired, over %d turns", retried, turns)
	}
}

func TestANotificationIsDurableBeforeItsAttemptAndAnAttemptUnderWayAtACrashIsMadeAgain(t *testing.T) {
	t.Parallel()
	b := &testBundle{t: t, path: filepath.Join(t.TempDir(), "wilco.db"), clock: clock.NewFake(epoch)}
	var eff *effector
	open := func() {
		s, err := sqlite.Open(b.path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		b.st = &recordingStore{Store: s}
		eff = &effector{st: b.st}
		b.eff = eff
		rt, err := Open(context.Background(), Config{Store: b.st, Clock: b.clock, CheckpointEvery: 1 << 30, CheckpointInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		b.rt = rt
	}
	open()
	b.must(func(c *core.State, now time.Time) (any, error) {
		p := core.DefaultPolicies()
		p.Notify.Hooks = []core.NotifyHook{{Name: "ops", Events: []core.NotifyEvent{core.NotifyOperation}}}
		return nil, c.Configure(now, p)
	})
	b.must(register("a", "mailbox"))
	b.must(func(c *core.State, now time.Time) (any, error) {
		return c.StartOperation(now, core.OperationRequest{Name: "restart", Agents: []string{"a"}})
	})
	if len(eff.notified) != 1 || eff.notified[0].Attempt != 1 {
		t.Fatalf("notified %+v", eff.notified)
	}
	var queuedAt uint64
	if err := b.rt.Read(func(c *core.State) { n, _ := c.Notification("N-1"); queuedAt = n.Version }); err != nil {
		t.Fatal(err)
	}
	if eff.durableAt[0] < queuedAt {
		t.Fatalf("the attempt was made with the log durable to %d, before the notification (%d)", eff.durableAt[0], queuedAt)
	}
	// wilco dies before the attempt's result is recorded.
	_ = b.st.Store.Close()
	open()
	b.drain()
	if len(eff.notified) != 1 || eff.notified[0].Attempt != 1 || eff.notified[0].Notification.ID != "N-1" {
		t.Fatalf("after the restart: %+v", eff.notified)
	}
	// Its failure is recorded; a crash while it waits for its backoff
	// gives the timer back, and the attempt comes at its time.
	b.must(func(c *core.State, now time.Time) (any, error) {
		return c.EndNotification(now, core.NotificationResult{ID: "N-1", Attempt: 1, Status: 500})
	})
	_ = b.st.Store.Close()
	open()
	b.drain()
	if len(eff.notified) != 0 {
		t.Fatalf("made again before its backoff: %+v", eff.notified)
	}
	b.advanceTo(epoch.Add(time.Second))
	if len(eff.notified) != 1 || eff.notified[0].Attempt != 2 {
		t.Fatalf("at its time: %+v", eff.notified)
	}
	b.must(func(c *core.State, now time.Time) (any, error) {
		return c.EndNotification(now, core.NotificationResult{ID: "N-1", Attempt: 2, Status: 200})
	})
	_ = b.st.Store.Close()
	open()
	b.drain()
	if len(eff.notified) != 0 {
		t.Fatalf("a delivered notification was made again: %+v", eff.notified)
	}
}

// TestAnEffectIsPendingUntilItIsPerformed: an effect counts in Pending
// from its commit, while it waits to be taken and while it is performed,
// until the executor says it was performed.
func TestAnEffectIsPendingUntilItIsPerformed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(register("a", "exec"))
	b.rt.Performed(len(b.rt.TakeEffects())) // the registration's, if any
	if n := b.rt.Pending(); n != 0 {
		t.Fatalf("%d effects pending before the send", n)
	}
	b.rt.Submit(delegate("a", "T-1"), nil)
	b.rt.Drain()
	if n := b.rt.Pending(); n == 0 {
		t.Fatal("the send's effects are not pending once committed")
	}
	taken := b.rt.TakeEffects()
	if len(taken) == 0 || b.rt.Pending() != len(taken) {
		t.Fatalf("took %d effects, %d pending: taken, not yet performed, they count", len(taken), b.rt.Pending())
	}
	b.rt.Performed(len(taken) - 1)
	if n := b.rt.Pending(); n != 1 {
		t.Fatalf("%d pending with one effect still being performed, want 1", n)
	}
	b.rt.Performed(1)
	if n := b.rt.Pending(); n != 0 {
		t.Fatalf("%d pending once all were performed", n)
	}
}
