package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"wilco/store"
)

// writeStmts are the writer's statements, prepared once on the writer
// connection and reused by every Commit's transaction.
type writeStmts struct {
	lastSeq, setMeta         *sql.Stmt
	events, records, deletes multiRow
}

func (w *writeStmts) prepare(ctx context.Context, db *sql.DB, maxRows int) error {
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&w.lastSeq, `SELECT coalesce(max(seq), 0) FROM events`},
		{&w.setMeta, `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`},
	} {
		st, err := db.PrepareContext(ctx, p.sql)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", p.sql, err)
		}
		*p.stmt = st
	}
	sizes := multiRowSizes(maxRows)
	if err := w.events.prepare(ctx, db, sizes, 6,
		`INSERT INTO events (seq, time, type, task_id, agent, data) VALUES `, ``); err != nil {
		return err
	}
	// Rows of one statement are inserted in order, so that a later record
	// with the same key in the same batch updates the earlier one.
	if err := w.records.prepare(ctx, db, sizes, 6,
		`INSERT INTO records (kind, id, state, agent, task_id, data) VALUES `,
		` ON CONFLICT (kind, id) DO UPDATE SET state = excluded.state, agent = excluded.agent, task_id = excluded.task_id, data = excluded.data`); err != nil {
		return err
	}
	return w.deletes.prepare(ctx, db, sizes, 2, `DELETE FROM records WHERE (kind, id) IN (VALUES `, `)`)
}

func (w *writeStmts) close() {
	for _, st := range []*sql.Stmt{w.lastSeq, w.setMeta} {
		if st != nil {
			st.Close()
		}
	}
	w.events.close()
	w.records.close()
	w.deletes.close()
}

// metaWatermark is the meta key of the checkpoint's watermark.
const metaWatermark = "watermark"

// Commit writes b in one transaction. When it returns nil the batch is in
// the WAL, durable against a crash of the process (and against power loss
// with WithFullSync).
func (s *Store) Commit(ctx context.Context, b store.Batch) error {
	if s.closed.Load() {
		return fmt.Errorf("sqlite: commit: %w", store.ErrClosed)
	}
	if len(b.Events) == 0 && len(b.Records) == 0 && len(b.Deletes) == 0 && b.Watermark == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}

	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return fmt.Errorf("sqlite: commit: %w", store.ErrClosed)
	}

	last := s.last.Load()
	for i, e := range b.Events {
		if want := last + 1 + uint64(i); e.Seq != want {
			return fmt.Errorf("sqlite: commit event %d of %d: seq %d where %d is next: %w",
				i+1, len(b.Events), e.Seq, want, store.ErrSeq)
		}
	}
	newLast := last + uint64(len(b.Events))
	if newLast > math.MaxInt64 {
		return fmt.Errorf("sqlite: commit: seq %d does not fit the events table: %w", newLast, store.ErrSeq)
	}
	if b.Watermark > newLast {
		return fmt.Errorf("sqlite: commit: watermark %d is beyond the last event %d", b.Watermark, newLast)
	}

	what := "commit"
	if len(b.Events) > 0 {
		what = fmt.Sprintf("commit events %d..%d", last+1, newLast)
	}
	if err := s.commit(ctx, b, last); err != nil {
		return s.fail(err, "%s", what)
	}
	s.last.Store(newLast)
	if s.ckpt != nil {
		s.ckpt.wrote(batchBytes(b))
	}
	return nil
}

// batchBytes estimates how many bytes b adds to the WAL: its rows and their
// index entries, before page overheads.
func batchBytes(b store.Batch) int64 {
	const row = 48 // keys, headers and index entry overheads
	n := 0
	for i := range b.Events {
		e := &b.Events[i]
		n += row + len(e.Type) + 2*len(e.TaskID) + 2*len(e.Agent) + len(e.Data)
	}
	for i := range b.Records {
		r := &b.Records[i]
		n += row + 2*len(r.Kind) + 2*len(r.ID) + 2*len(r.State) + len(r.Agent) + len(r.TaskID) + len(r.Data)
	}
	n += len(b.Deletes) * row
	return int64(n)
}

func (s *Store) commit(ctx context.Context, b store.Batch, last uint64) error {
	tx, err := s.w.BeginTx(ctx, nil) // BEGIN IMMEDIATE: see _txlock in Open
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit

	// Statements run without ctx: the modernc driver watches a cancelable
	// context with a goroutine per statement, which costs more than a
	// multi-row insert. The transaction still ends when ctx does: database/sql
	// rolls it back, and the next statement fails.
	sctx := context.WithoutCancel(ctx)

	// The in-memory last seq is the fast check; this one, under the write
	// lock, catches anyone else who wrote to the file.
	var dbLast int64
	if err := tx.StmtContext(sctx, s.ins.lastSeq).QueryRowContext(sctx).Scan(&dbLast); err != nil {
		return fmt.Errorf("read last seq: %w", err)
	}
	if uint64(dbLast) != last {
		s.last.Store(uint64(dbLast))
		return fmt.Errorf("the log ends at %d, not %d as this store believed: %w", dbLast, last, store.ErrSeq)
	}

	if len(b.Events) > 0 {
		err := s.ins.events.exec(sctx, tx, len(b.Events), func(args []any, i int) []any {
			e := &b.Events[i]
			return append(args, int64(e.Seq), unixNano(e.Time), e.Type, e.TaskID, e.Agent, e.Data)
		})
		if err != nil {
			return fmt.Errorf("insert events: %w", err)
		}
	}
	if len(b.Records) > 0 {
		err := s.ins.records.exec(sctx, tx, len(b.Records), func(args []any, i int) []any {
			r := &b.Records[i]
			return append(args, r.Kind, r.ID, r.State, r.Agent, r.TaskID, r.Data)
		})
		if err != nil {
			return fmt.Errorf("upsert records: %w", err)
		}
	}
	if len(b.Deletes) > 0 {
		err := s.ins.deletes.exec(sctx, tx, len(b.Deletes), func(args []any, i int) []any {
			k := &b.Deletes[i]
			return append(args, k.Kind, k.ID)
		})
		if err != nil {
			return fmt.Errorf("delete records: %w", err)
		}
	}
	if b.Watermark > 0 {
		if _, err := tx.StmtContext(sctx, s.ins.setMeta).ExecContext(sctx, metaWatermark, int64(b.Watermark)); err != nil {
			return fmt.Errorf("set watermark %d: %w", b.Watermark, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// unixNano encodes t for the time column: Unix nanoseconds, NULL for the
// zero time (whose Unix nanoseconds do not fit an int64).
func unixNano(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// fromUnixNano decodes the time column.
func fromUnixNano(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// multiRowSizes are the row counts of the multi-row statements a batch is
// cut into, largest first: max, then smaller powers of 8. One statement per
// row costs a step, a halt and a driver round trip per row; a few hundred
// rows per statement amortise them, and a batch of n rows takes at most
// n/max + 7 * len(sizes) statements.
func multiRowSizes(most int) []int {
	sizes := []int{most}
	for n := 512; n >= 1; n /= 8 {
		if n < most {
			sizes = append(sizes, n)
		}
	}
	return sizes
}

// multiRow is one statement over a list of rows, prepared for each size of
// multiRowSizes.
type multiRow struct {
	sizes []int
	stmts []*sql.Stmt // stmts[i] takes sizes[i] rows
	args  []any       // reused between calls; guarded by the writer mutex
}

// prepare prepares head + "(?, ?, …), (?, ?, …), …" + tail for every size,
// with cols parameters per row.
func (m *multiRow) prepare(ctx context.Context, db *sql.DB, sizes []int, cols int, head, tail string) error {
	row := "(" + strings.Repeat("?, ", cols-1) + "?)"
	m.sizes = sizes
	for _, n := range sizes {
		q := head + strings.Repeat(row+", ", n-1) + row + tail
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %.80q (%d rows): %w", q, n, err)
		}
		m.stmts = append(m.stmts, st)
	}
	return nil
}

// exec runs the statement over n rows in order, calling bind to append the
// arguments of row i.
func (m *multiRow) exec(ctx context.Context, tx *sql.Tx, n int, bind func(args []any, i int) []any) error {
	i := 0
	for k, size := range m.sizes {
		if n-i < size {
			continue
		}
		st := tx.StmtContext(ctx, m.stmts[k])
		for ; n-i >= size; i += size {
			args := m.args[:0]
			for j := i; j < i+size; j++ {
				args = bind(args, j)
			}
			m.args = args
			if _, err := st.ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("rows %d..%d of %d: %w", i+1, i+size, n, err)
			}
		}
	}
	clear(m.args) // let go of the batch's strings and bytes
	return nil
}

func (m *multiRow) close() {
	for _, st := range m.stmts {
		st.Close()
	}
}
