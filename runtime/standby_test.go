package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"wilco/core"
)

// A standby rebuilt from the store, then caught up with what the active
// runtime committed since, holds the active's state; it refuses commands
// and writes nothing to the store.
func TestAStandbyCatchesUpWithTheActiveAndRunsNoCommand(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.openWith(Config{CheckpointEvery: 3, CheckpointInterval: time.Hour, CheckpointShare: 1})
	b.must(register("a", "mailbox"))
	b.must(register("b", "exec"))
	b.must(delegate("a", "T-1"))
	ctx := context.Background()
	sb, err := OpenStandby(ctx, Config{Store: b.st.Store})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if !sb.IsStandby() || b.rt.IsStandby() {
		t.Fatal("IsStandby is wrong")
	}
	if diff := core.StateDiff(b.rt.core, sb.core); diff != "" {
		t.Fatalf("the standby's rebuilt state differs: %s", diff)
	}

	b.must(delegate("b", "T-2"))
	b.must(delegate("a", "T-3"))
	b.advanceTo(epoch.Add(20 * time.Minute)) // reminders, backoff, cycles
	seq, err := sb.CatchUp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if seq != b.rt.CommittedSeq() || sb.CommittedSeq() != seq {
		t.Fatalf("caught up to %d (committed %d), want %d", seq, sb.CommittedSeq(), b.rt.CommittedSeq())
	}
	if diff := core.StateDiff(b.rt.core, sb.core); diff != "" {
		t.Fatalf("the caught-up state differs: %s", diff)
	}

	if _, err := sb.Do(ctx, register("c", "exec")); !errors.Is(err, ErrStandby) {
		t.Fatalf("a command on a standby: %v, want ErrStandby", err)
	}
	var answered error
	sb.Submit(register("c", "exec"), func(_ any, err error) { answered = err })
	if !errors.Is(answered, ErrStandby) {
		t.Fatalf("a submitted command on a standby: %v, want ErrStandby", answered)
	}
	commits := len(b.st.commits)
	last, _ := b.st.LastSeq(ctx)
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if now, _ := b.st.LastSeq(ctx); now != last || len(b.st.commits) != commits {
		t.Fatalf("the standby wrote to the store: seq %d → %d", last, now)
	}
}

// A standby's subscribers get every event it catches up with, after
// their From, in order: what a standby's event stream serves.
func TestAStandbyPublishesTheEventsItCatchesUpWith(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(register("a", "mailbox"))
	ctx := context.Background()
	sb, err := OpenStandby(ctx, Config{Store: b.st.Store})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	sub, err := sb.Subscribe(ctx, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sub.From != b.rt.CommittedSeq() {
		t.Fatalf("From %d, want %d", sub.From, b.rt.CommittedSeq())
	}
	b.must(register("b", "exec"))
	b.must(delegate("a", "T-1"))
	if _, err := sb.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	want := b.rt.CommittedSeq()
	next := sub.From + 1
	for next <= want {
		ev := <-sub.C
		if ev.Seq != next {
			t.Fatalf("event %d, want %d", ev.Seq, next)
		}
		next++
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-sub.C; ok || !errors.Is(sub.Err(), ErrClosed) {
		t.Fatalf("after Close the subscription ends with ErrClosed, got %v", sub.Err())
	}
	if _, err := sb.Subscribe(ctx, nil, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Subscribe after Close: %v", err)
	}
}

// Catch-ups called together share one read of the store, and each still
// returns only once every event committed before it was called is applied.
func TestCatchUpsCalledTogetherSeeEveryEarlierCommit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.rt.Start()
	defer b.rt.Close()
	ctx := context.Background()
	sb, err := OpenStandby(ctx, Config{Store: b.st.Store})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	done := make(chan error)
	for i := range 20 {
		name := string(rune('a' + i))
		go func() {
			if _, err := b.rt.Do(ctx, register(name, "exec")); err != nil {
				done <- err
				return
			}
			committed := b.rt.CommittedSeq()
			seq, err := sb.CatchUp(ctx)
			if err == nil && seq < committed {
				err = errors.New("caught up to an older seq than was committed before the call")
			}
			var found bool
			if rerr := sb.Read(func(c *core.State) { _, found = c.Agent(name) }); err == nil && rerr != nil {
				err = rerr
			}
			if err == nil && !found {
				err = errors.New("agent " + name + " is missing after the catch-up")
			}
			done <- err
		}()
	}
	for range 20 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
