package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"wilco/store"
)

// scanChunk is how many events Scan reads per read transaction.
const scanChunk = 1024

const (
	eventColumns        = `seq, time, type, task_id, agent, data`
	scanQuery           = `SELECT ` + eventColumns + ` FROM events WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`
	recordColumns       = `kind, id, state, agent, task_id, data`
	recordsQuery        = `SELECT ` + recordColumns + ` FROM records WHERE kind = ? ORDER BY id`
	recordsByStateQuery = `SELECT ` + recordColumns + ` FROM records WHERE kind = ? AND state = ? ORDER BY id`
	// Load reads what a restart needs, not the listing columns.
	loadQuery = `SELECT kind, id, data FROM records`
)

// LastSeq is the seq of the newest committed event, 0 for an empty log.
func (s *Store) LastSeq(ctx context.Context) (uint64, error) {
	if s.closed.Load() {
		return 0, fmt.Errorf("sqlite: last seq: %w", store.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("sqlite: last seq: %w", err)
	}
	return s.last.Load(), nil
}

// Events returns the events matching f in seq order.
func (s *Store) Events(ctx context.Context, f store.Filter) ([]store.Event, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("sqlite: events: %w", store.ErrClosed)
	}
	q, args := eventsQuery(f)
	evs, err := s.queryEvents(ctx, q, args...)
	if err != nil {
		return nil, s.fail(err, "events %+v", f)
	}
	return evs, nil
}

// eventsQuery is the query of Events for f.
func eventsQuery(f store.Filter) (string, []any) {
	var q strings.Builder
	q.WriteString(`SELECT ` + eventColumns + ` FROM events WHERE seq > ?`)
	args := []any{int64(min(f.After, math.MaxInt64))}
	// The literal "!= ''" terms let SQLite use the partial indexes.
	if f.TaskID != "" {
		q.WriteString(` AND task_id = ? AND task_id != ''`)
		args = append(args, f.TaskID)
	}
	if f.Agent != "" {
		q.WriteString(` AND agent = ? AND agent != ''`)
		args = append(args, f.Agent)
	}
	q.WriteString(` ORDER BY seq`)
	if f.Limit > 0 {
		q.WriteString(` LIMIT ?`)
		args = append(args, f.Limit)
	}
	return q.String(), args
}

// Scan calls fn for every event with Seq > after that existed when Scan
// started, in seq order. It reads scanChunk events at a time and calls fn
// with no transaction open, so fn may use the store.
func (s *Store) Scan(ctx context.Context, after uint64, fn func(store.Event) error) error {
	if s.closed.Load() {
		return fmt.Errorf("sqlite: scan: %w", store.ErrClosed)
	}
	end := s.last.Load()
	for after < end {
		if s.closed.Load() {
			return fmt.Errorf("sqlite: scan after %d: %w", after, store.ErrClosed)
		}
		evs, err := s.queryEvents(ctx, scanQuery, int64(after), int64(end), scanChunk)
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

func (s *Store) queryEvents(ctx context.Context, query string, args ...any) ([]store.Event, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var evs []store.Event
	for rows.Next() {
		var (
			e   store.Event
			seq int64
			tm  sql.NullInt64
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

// RecordCount is how many records Load would hand over now (a count of
// the records' key index: milliseconds for a million).
func (s *Store) RecordCount(ctx context.Context) (int, error) {
	if s.closed.Load() {
		return 0, fmt.Errorf("sqlite: record count: %w", store.ErrClosed)
	}
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM records`).Scan(&n); err != nil {
		return 0, s.fail(err, "record count")
	}
	return n, nil
}

// Records returns the records of one kind, with one state unless state is
// "", ordered by ID.
func (s *Store) Records(ctx context.Context, kind, state string) ([]store.Record, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("sqlite: records: %w", store.ErrClosed)
	}
	q, args := recordsQuery, []any{kind}
	if state != "" {
		q, args = recordsByStateQuery, append(args, state)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
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

// errStop marks an error returned by Load's fn, to tell it from the store's.
type errStop struct{ err error }

func (e errStop) Error() string { return e.err.Error() }

// Load calls fn for every checkpointed record and returns the watermark they
// reflect, read in one transaction so that the two agree.
func (s *Store) Load(ctx context.Context, fn func(store.Record) error) (uint64, error) {
	if s.closed.Load() {
		return 0, fmt.Errorf("sqlite: load: %w", store.ErrClosed)
	}
	wm, err := s.load(ctx, fn)
	if err != nil {
		if stop, ok := errors.AsType[errStop](err); ok {
			return 0, stop.err
		}
		return 0, s.fail(err, "load")
	}
	return wm, nil
}

func (s *Store) load(ctx context.Context, fn func(store.Record) error) (uint64, error) {
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var wm uint64
	// A million records go through here on start. database/sql would copy
	// every Data a second time and convert every column through reflection;
	// the driver's own rows hand over values that are already ours.
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(driverConn)
		if !ok {
			return fmt.Errorf("driver connection %T lacks BeginTx or PrepareContext", dc)
		}
		tx, err := c.BeginTx(ctx, driver.TxOptions{ReadOnly: true})
		if err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		defer tx.Rollback() //nolint:errcheck // read only

		err = query(ctx, c, `SELECT value FROM meta WHERE key = ?`, []driver.NamedValue{{Ordinal: 1, Value: metaWatermark}},
			func(row []driver.Value) error {
				n, ok := row[0].(int64)
				if !ok || n < 0 {
					return fmt.Errorf("watermark is %T %v, not a seq", row[0], row[0])
				}
				wm = uint64(n)
				return nil
			})
		if err != nil {
			return fmt.Errorf("read watermark: %w", err)
		}
		return query(ctx, c, loadQuery, nil,
			func(row []driver.Value) error {
				var r store.Record
				r.Kind, _ = row[0].(string)
				r.ID, _ = row[1].(string)
				r.Data, _ = row[2].([]byte)
				if err := fn(r); err != nil {
					return errStop{err}
				}
				return nil
			})
	})
	if err != nil {
		return 0, err
	}
	return wm, nil
}

// driverConn is what query needs of a driver connection.
type driverConn interface {
	driver.ConnBeginTx
	driver.ConnPrepareContext
}

// query runs q on the driver connection c and calls fn with each row. The
// row's values are the driver's own: every string and []byte is a fresh copy
// that fn may keep.
func query(ctx context.Context, c driverConn, q string, args []driver.NamedValue, fn func([]driver.Value) error) error {
	st, err := c.PrepareContext(ctx, q)
	if err != nil {
		return err
	}
	defer st.Close()
	sq, ok := st.(driver.StmtQueryContext)
	if !ok {
		return fmt.Errorf("driver statement %T lacks QueryContext", st)
	}
	rows, err := sq.QueryContext(ctx, args)
	if err != nil {
		return err
	}
	defer rows.Close()
	row := make([]driver.Value, len(rows.Columns()))
	for {
		err := rows.Next(row)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(row); err != nil {
			return err
		}
	}
}
