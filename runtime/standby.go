package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"wilco/core"
	"wilco/store"
)

// ErrStandby is what a standby runtime answers to every command: it only
// reads. Another node, the active one, runs the commands and commits the
// events the standby catches up with.
var ErrStandby = errors.New("runtime: a standby only reads; commands go to the active node")

// standby is the state of a runtime opened with OpenStandby.
type standby struct {
	// mu guards the core: CatchUp applies events under its write lock,
	// Read and Subscribe read under its read lock.
	mu sync.RWMutex
	// catch serialises catch-ups; last is when the latest one began.
	catch sync.Mutex
	last  time.Time
	err   error
}

// OpenStandby rebuilds the core from the store as Open does, for a node
// that does not hold the repository: its runtime never runs a command,
// fires a timer or writes to the store. Reads (Read, Subscribe, Follow)
// answer from the rebuilt core; Do and Submit answer ErrStandby. CatchUp
// applies the events the active node committed since, and hands them to
// subscribers.
func OpenStandby(ctx context.Context, cfg Config) (*Runtime, error) {
	r, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r.standby = &standby{}
	r.resends = nil
	r.timers = timers{}
	r.core.TakeDirty() // nothing is checkpointed from here
	return r, nil
}

// IsStandby reports whether r was opened with OpenStandby.
func (r *Runtime) IsStandby() bool { return r.standby != nil }

// CatchUp applies to a standby's core the events committed after the last
// one it holds, in order, and publishes them to its subscribers. Calls
// made together share one read of the store: a caller waits for a
// catch-up that began after it called, so every event committed before
// CatchUp was called is applied when it returns nil. It returns the seq
// the core is at.
func (r *Runtime) CatchUp(ctx context.Context) (uint64, error) {
	sb := r.standby
	if sb == nil {
		return 0, errors.New("runtime: CatchUp on a runtime that is not a standby")
	}
	called := time.Now()
	sb.catch.Lock()
	defer sb.catch.Unlock()
	if sb.last.After(called) {
		// A catch-up that began after this call has ended meanwhile.
		return r.CommittedSeq(), sb.err
	}
	sb.last = time.Now()
	sb.err = r.catchUp(ctx)
	if sb.err != nil && !errors.Is(sb.err, context.Canceled) && !errors.Is(sb.err, context.DeadlineExceeded) {
		r.log.Warn("catching up with the store failed", "err", sb.err)
	}
	return r.CommittedSeq(), sb.err
}

// catchUp reads the events after the core's seq in chunks and applies each
// chunk under the write lock. Only catchUp changes a standby's core, and
// it runs under sb.catch: the core's seq is read without the lock.
func (r *Runtime) catchUp(ctx context.Context) error {
	const chunk = 512
	var evs []core.Event
	var stored []store.Event
	flush := func() error {
		if len(evs) == 0 {
			return nil
		}
		sb := r.standby
		sb.mu.Lock()
		var err error
		applied := 0
		for _, ev := range evs {
			if err = r.core.Replay(ev); err != nil {
				break
			}
			applied++
		}
		// Nothing is checkpointed by a standby: the set of changed
		// entities is dropped rather than left to grow.
		r.core.TakeDirty()
		r.publish(stored[:applied])
		sb.mu.Unlock()
		if applied > 0 {
			r.committedMu.Lock()
			r.committedSeq = evs[applied-1].Seq
			r.committedMu.Unlock()
		}
		evs, stored = evs[:0], stored[:0]
		return err
	}
	err := r.cfg.Store.Scan(ctx, r.core.Seq(), func(ev store.Event) error {
		data, err := core.DecodeEventData(ev.Type, ev.Data)
		if err != nil {
			return fmt.Errorf("event %d: %w", ev.Seq, err)
		}
		evs = append(evs, core.Event{Seq: ev.Seq, Time: ev.Time, Type: ev.Type, TaskID: ev.TaskID, Agent: ev.Agent, Data: data})
		stored = append(stored, ev)
		if len(evs) == chunk {
			return flush()
		}
		return nil
	})
	if ferr := flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("runtime: catch up after %d: %w", r.core.Seq(), err)
	}
	return nil
}

// closeStandby ends a standby's subscriptions. It writes nothing.
func (r *Runtime) closeStandby() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.standby.catch.Lock() // wait for a catch-up under way
	defer r.standby.catch.Unlock()
	r.subsMu.Lock()
	for s := range r.subs {
		s.end(ErrClosed)
	}
	r.subsMu.Unlock()
	return nil
}
