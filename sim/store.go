package sim

import (
	"context"
	"errors"

	"wilco/core"
	"wilco/store"
	"wilco/store/sqlite"
)

// fault is a crash planted in the next commit.
type fault int

const (
	noFault fault = iota
	// failCommit: the process dies while it writes the batch; nothing of it
	// is durable, and the callers waiting on it hear an error.
	failCommit
	// crashAfterCommit: the process dies right after the batch is durable,
	// before any effect is performed or any caller is answered.
	crashAfterCommit
)

func (f fault) String() string {
	switch f {
	case failCommit:
		return "fail_before_commit"
	case crashAfterCommit:
		return "crash_after_commit"
	}
	return "none"
}

var errCrashed = errors.New("sim: the process crashed")

// faultStore is the real SQLite store with a crash planted on demand. It
// also remembers the seq of the last durable event, so that the driver can
// check that nothing is answered or performed before it is durable.
type faultStore struct {
	*sqlite.Store
	armed   fault
	crashed fault // the fault that struck, noFault while alive
	// inCheckpoint: the fault struck a commit of checkpoint copies alone,
	// written after the turns whose events were durable and answered.
	inCheckpoint bool
	last         uint64
	// hit records a path the store saw taken.
	hit func(path string)
}

var _ store.Store = (*faultStore)(nil)

func (s *faultStore) Commit(ctx context.Context, b store.Batch) error {
	if s.crashed != noFault {
		return errCrashed
	}
	if s.armed == failCommit {
		s.armed, s.crashed, s.inCheckpoint = noFault, failCommit, len(b.Events) == 0
		return errCrashed
	}
	if err := s.Store.Commit(ctx, b); err != nil {
		return err
	}
	if n := len(b.Events); n > 0 {
		s.last = b.Events[n-1].Seq
	}
	for _, rec := range b.Records {
		if rec.Kind == string(core.KindDeliveryPack) {
			s.hit("checkpoint.pack")
		}
	}
	for _, k := range b.Deletes {
		if k.Kind == string(core.KindDelivery) {
			s.hit("checkpoint.own_record_deleted")
		}
	}
	if s.armed == crashAfterCommit {
		s.armed, s.crashed, s.inCheckpoint = noFault, crashAfterCommit, len(b.Events) == 0
	}
	return nil
}

// Load is the store's, noting a restart that reads packs of deliveries.
func (s *faultStore) Load(ctx context.Context, fn func(store.Record) error) (uint64, error) {
	return s.Store.Load(ctx, func(rec store.Record) error {
		if rec.Kind == string(core.KindDeliveryPack) {
			s.hit("restart.from_pack")
		}
		return fn(rec)
	})
}

// dead reports whether the process crashed after a commit: from then on
// nothing it does reaches the outside world.
func (s *faultStore) dead() bool { return s.crashed == crashAfterCommit }
