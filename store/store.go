// Package store defines how wilco keeps its numbered, append-only event log
// and the current state of every entity, and the seam every store
// implementation (SQLite now, PostgreSQL later) plugs into.
//
// A store knows nothing about what events mean: the core decides, the
// runtime encodes, the store keeps. The conformance suite in store/storetest
// is what every implementation must pass.
package store

import (
	"context"
	"errors"
	"time"
)

// Event is one record of the log as the store keeps it. Seq is assigned by
// the caller (the runtime), starts at 1 and has no gaps; Append refuses any
// other sequence.
type Event struct {
	Seq    uint64
	Time   time.Time
	Type   string
	TaskID string // "" when the event concerns no task
	Agent  string // "" when the event concerns no agent
	Data   []byte // JSON object
}

// Record is the current state of one entity (a delivery, an agent, a task…),
// encoded by the runtime. Kind and ID identify it; State, Agent and TaskID are
// kept as columns so that listings can filter without decoding Data.
type Record struct {
	Kind   string
	ID     string
	State  string
	Agent  string
	TaskID string
	Data   []byte
}

// Filter selects events. Zero values match everything.
type Filter struct {
	After  uint64 // only events with Seq > After
	TaskID string
	Agent  string
	Limit  int // 0: no limit
}

// Batch is what one group commit writes atomically: a run of events and,
// optionally, a checkpoint of entity records that reflects the state after
// the last event of the batch (Watermark).
type Batch struct {
	Events []Event
	// Records to upsert. Only meaningful together with Watermark > 0.
	Records []Record
	// Deletes removes records by kind and id.
	Deletes []Key
	// Watermark, when non-zero, declares that after this batch the stored
	// records reflect every event up to and including this seq.
	Watermark uint64
}

// Key names one record.
type Key struct {
	Kind string
	ID   string
}

// Store is the durable home of the event log and the current state.
// Implementations must be safe for concurrent use by one writer (Commit) and
// any number of readers.
type Store interface {
	// Commit writes the batch in one transaction. When it returns nil the
	// batch is durable against a crash of the process.
	Commit(ctx context.Context, b Batch) error
	// LastSeq is the seq of the newest event, 0 for an empty log.
	LastSeq(ctx context.Context) (uint64, error)
	// Load calls fn for every checkpointed record (in no particular order)
	// and returns the watermark they reflect. It stops at fn's first error.
	// It hands over Kind, ID and Data, what a restart needs; State, Agent
	// and TaskID, kept for Records' listings, may be left empty.
	Load(ctx context.Context, fn func(Record) error) (watermark uint64, err error)
	// Events returns events matching f in seq order.
	Events(ctx context.Context, f Filter) ([]Event, error)
	// Scan calls fn for every event with Seq > after, in seq order, without
	// holding them all in memory. It stops at fn's first error.
	Scan(ctx context.Context, after uint64, fn func(Event) error) error
	// Records returns the records of one kind, optionally with one state,
	// ordered by ID.
	Records(ctx context.Context, kind, state string) ([]Record, error)
	// Close releases the store.
	Close() error
}

// RecordCounter is what a store implements when it can tell cheaply how
// many records Load will hand over. A restart uses it to size the maps it
// fills once, instead of growing them through a million inserts. The count
// may be stale by the time Load runs: it is a size, not a promise.
type RecordCounter interface {
	RecordCount(ctx context.Context) (int, error)
}

// Sentinel errors shared by all implementations.
var (
	// ErrSeq is returned by Commit when a batch's events do not continue the
	// log exactly (a gap, a repeat, or out of order).
	ErrSeq = errors.New("store: event seq does not continue the log")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("store: closed")
	// ErrLeaseLost is wrapped by a shared store's refusal of a write by a
	// node that no longer holds the repository's lease: another node
	// writes now, and the request should go to it.
	ErrLeaseLost = errors.New("store: this node no longer holds the repository's lease")
)
