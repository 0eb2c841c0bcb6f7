package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"wilco/store"
)

// scanChunk is how many events Scan reads per query.
const scanChunk = 1024

const eventColumns = `seq, time, type, task_id, agent, data`

// LastSeq is the seq of the newest committed event, 0 for an empty log:
// the writer's own count while it holds the lease, else the database's.
func (s *Store) LastSeq(ctx context.Context) (uint64, error) {
	if s.closed.Load() {
		return 0, fmt.Errorf("postgres: last seq: %w", store.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("postgres: last seq: %w", err)
	}
	if s.token.Load() != 0 {
		return s.last.Load(), nil
	}
	return s.dbLastSeq(ctx)
}

func (s *Store) dbLastSeq(ctx context.Context) (uint64, error) {
	var last int64
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM wilco_events WHERE repo = $1`, s.repo).Scan(&last); err != nil {
		return 0, s.fail(err, "last seq of %s", s.repo)
	}
	return uint64(last), nil
}

// Events returns the events matching f in seq order.
func (s *Store) Events(ctx context.Context, f store.Filter) ([]store.Event, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("postgres: events: %w", store.ErrClosed)
	}
	var q strings.Builder
	q.WriteString(`SELECT ` + eventColumns + ` FROM wilco_events WHERE repo = $1 AND seq > $2`)
	args := []any{s.repo, int64(min(f.After, math.MaxInt64))}
	if f.TaskID != "" {
		args = append(args, f.TaskID)
		q.WriteString(` AND task_id = $` + strconv.Itoa(len(args)) + ` AND task_id <> ''`)
	}
	if f.Agent != "" {
		args = append(args, f.Agent)
		q.WriteString(` AND agent = $` + strconv.Itoa(len(args)))
	}
	q.WriteString(` ORDER BY seq`)
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q.WriteString(` LIMIT $` + strconv.Itoa(len(args)))
	}
	evs, err := s.queryEvents(ctx, q.String(), args...)
	if err != nil {
		return nil, s.fail(err, "events %+v", f)
	}
	return evs, nil
}

// Scan calls fn for every event with Seq > after that existed when Scan
// started, in seq order, scanChunk events per query, with no query open
// while fn runs (fn may use the store).
func (s *Store) Scan(ctx context.Context, after uint64, fn func(store.Event) error) error {
	if s.closed.Load() {
		return fmt.Errorf("postgres: scan: %w", store.ErrClosed)
	}
	end, err := s.LastSeq(ctx)
	if err != nil {
		return err
	}
	for after < end {
		if s.closed.Load() {
			return fmt.Errorf("postgres: scan after %d: %w", after, store.ErrClosed)
		}
		evs, err := s.queryEvents(ctx, `SELECT `+eventColumns+` FROM wilco_events WHERE repo = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4`,
			s.repo, int64(after), int64(end), scanChunk)
		if err != nil {
			return s.fail(err, "scan after %d", after)
		}
		if len(evs) == 0 {
			return nil
		}
		for _, e := range evs {
			if err := fn(e); err != nil {
				return err
			}
		}
		after = evs[len(evs)-1].Seq
	}
	return nil
}

func (s *Store) queryEvents(ctx context.Context, q string, args ...any) ([]store.Event, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var evs []store.Event
	for rows.Next() {
		var (
			e   store.Event
			seq int64
			tm  *int64
		)
		if err := rows.Scan(&seq, &tm, &e.Type, &e.TaskID, &e.Agent, &e.Data); err != nil {
			return nil, err
		}
		e.Seq = uint64(seq)
		e.Time = fromUnixNano(tm)
		evs = append(evs, e)
	}
	return evs, rows.Err()
}

// RecordCount is how many records Load would hand over now.
func (s *Store) RecordCount(ctx context.Context) (int, error) {
	if s.closed.Load() {
		return 0, fmt.Errorf("postgres: record count: %w", store.ErrClosed)
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM wilco_records WHERE repo = $1`, s.repo).Scan(&n); err != nil {
		return 0, s.fail(err, "record count")
	}
	return n, nil
}

// Records returns the records of one kind, with one state unless state is
// "", ordered by ID.
func (s *Store) Records(ctx context.Context, kind, state string) ([]store.Record, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("postgres: records: %w", store.ErrClosed)
	}
	q := `SELECT kind, id, state, agent, task_id, data FROM wilco_records WHERE repo = $1 AND kind = $2`
	args := []any{s.repo, kind}
	if state != "" {
		q += ` AND state = $3`
		args = append(args, state)
	}
	rows, err := s.pool.Query(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, s.fail(err, "records %q %q", kind, state)
	}
	defer rows.Close()
	var recs []store.Record
	for rows.Next() {
		var r store.Record
		if err := rows.Scan(&r.Kind, &r.ID, &r.State, &r.Agent, &r.TaskID, &r.Data); err != nil {
			return nil, s.fail(err, "records %q %q", kind, state)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(err, "records %q %q", kind, state)
	}
	return recs, nil
}

// errStop marks an error returned by Load's fn.
type errStop struct{ err error }

func (e errStop) Error() string { return e.err.Error() }

// Load calls fn for every checkpointed record and returns the watermark
// they reflect, read in one repeatable-read transaction so that the two
// agree.
func (s *Store) Load(ctx context.Context, fn func(store.Record) error) (uint64, error) {
	if s.closed.Load() {
		return 0, fmt.Errorf("postgres: load: %w", store.ErrClosed)
	}
	var wm uint64
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var v int64
		err := tx.QueryRow(ctx, `SELECT value FROM wilco_meta WHERE repo = $1 AND key = $2`, s.repo, metaWatermark).Scan(&v)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("read watermark: %w", err)
		default:
			wm = uint64(v)
		}
		rows, err := tx.Query(ctx, `SELECT kind, id, data FROM wilco_records WHERE repo = $1`, s.repo)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r store.Record
			if err := rows.Scan(&r.Kind, &r.ID, &r.Data); err != nil {
				return err
			}
			if err := fn(r); err != nil {
				return errStop{err}
			}
		}
		return rows.Err()
	})
	if err != nil {
		if stop, ok := errors.AsType[errStop](err); ok {
			return 0, stop.err
		}
		return 0, s.fail(err, "load")
	}
	return wm, nil
}
