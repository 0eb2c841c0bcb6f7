package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"wilco/store"
)

const (
	fenceSQL  = `SELECT wilco_fence($1, $2, $3)`
	eventsSQL = `INSERT INTO wilco_events (repo, seq, time, type, task_id, agent, data)
SELECT $1, * FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::bytea[])`
	recordsSQL = `INSERT INTO wilco_records (repo, kind, id, state, agent, task_id, data)
SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[])
ON CONFLICT (repo, kind, id) DO UPDATE SET state = excluded.state, agent = excluded.agent, task_id = excluded.task_id, data = excluded.data`
	deletesSQL = `DELETE FROM wilco_records WHERE repo = $1 AND (kind, id) IN (SELECT * FROM unnest($2::text[], $3::text[]))`
	metaSQL    = `INSERT INTO wilco_meta (repo, key, value) VALUES ($1, $2, $3)
ON CONFLICT (repo, key) DO UPDATE SET value = excluded.value`
)

// metaWatermark is the meta key of the checkpoint's watermark.
const metaWatermark = "watermark"

// Commit writes b in one transaction, sent to the server in one round trip
// (a pipeline the server runs as one implicit transaction): first
// wilco_fence, which refuses the whole batch unless this store's lease
// still holds and the log ends where this store believes, then the events,
// records, deletes and watermark. When it returns nil the transaction is
// committed, and durable as the server's synchronous_commit makes it (on
// by default: flushed to the server's WAL).
func (s *Store) Commit(ctx context.Context, b store.Batch) error {
	if s.closed.Load() {
		return fmt.Errorf("postgres: commit: %w", store.ErrClosed)
	}
	if len(b.Events) == 0 && len(b.Records) == 0 && len(b.Deletes) == 0 && b.Watermark == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: commit: %w", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return fmt.Errorf("postgres: commit: %w", store.ErrClosed)
	}
	token := s.token.Load()
	if token == 0 {
		return s.noLease("commit")
	}
	last := s.last.Load()
	for i, e := range b.Events {
		if want := last + 1 + uint64(i); e.Seq != want {
			return fmt.Errorf("postgres: commit event %d of %d: seq %d where %d is next: %w",
				i+1, len(b.Events), e.Seq, want, store.ErrSeq)
		}
	}
	newLast := last + uint64(len(b.Events))
	if newLast > math.MaxInt64 {
		return fmt.Errorf("postgres: commit: seq %d does not fit: %w", newLast, store.ErrSeq)
	}
	if b.Watermark > newLast {
		return fmt.Errorf("postgres: commit: watermark %d is beyond the last event %d", b.Watermark, newLast)
	}
	what := "commit"
	if len(b.Events) > 0 {
		what = fmt.Sprintf("commit events %d..%d", last+1, newLast)
	}
	if err := s.commit(ctx, b, token, last); err != nil {
		switch pgCode(err) {
		case codeFenced:
			s.lose(token)
			return fmt.Errorf("postgres: %s of %s: %w: %v", what, s.repo, ErrFenced, err)
		case codeSeq:
			return fmt.Errorf("postgres: %s of %s: %w: %v", what, s.repo, store.ErrSeq, err)
		}
		return s.fail(err, "%s of %s", what, s.repo)
	}
	s.last.Store(newLast)
	return nil
}

func (s *Store) commit(ctx context.Context, b store.Batch, token int64, last uint64) error {
	var q pgx.Batch
	q.Queue(fenceSQL, s.repo, token, int64(last))
	if n := len(b.Events); n > 0 {
		seqs, times := make([]int64, n), make([]*int64, n)
		types, tasks, agents := make([]string, n), make([]string, n), make([]string, n)
		data := make([][]byte, n)
		for i := range b.Events {
			e := &b.Events[i]
			seqs[i] = int64(e.Seq)
			if !e.Time.IsZero() {
				ns := e.Time.UnixNano()
				times[i] = &ns
			}
			types[i], tasks[i], agents[i], data[i] = e.Type, e.TaskID, e.Agent, e.Data
		}
		q.Queue(eventsSQL, s.repo, seqs, times, types, tasks, agents, data)
	}
	if len(b.Records) > 0 {
		// One INSERT … ON CONFLICT may not touch a row twice: the last
		// record with a key wins, as the store's contract says.
		at := make(map[store.Key]int, len(b.Records))
		for i := range b.Records {
			at[store.Key{Kind: b.Records[i].Kind, ID: b.Records[i].ID}] = i
		}
		n := len(at)
		kinds, ids, states, agents, tasks := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
		data := make([][]byte, 0, n)
		for i := range b.Records {
			r := &b.Records[i]
			if at[store.Key{Kind: r.Kind, ID: r.ID}] != i {
				continue
			}
			kinds, ids, states = append(kinds, r.Kind), append(ids, r.ID), append(states, r.State)
			agents, tasks, data = append(agents, r.Agent), append(tasks, r.TaskID), append(data, r.Data)
		}
		q.Queue(recordsSQL, s.repo, kinds, ids, states, agents, tasks, data)
	}
	if n := len(b.Deletes); n > 0 {
		kinds, ids := make([]string, n), make([]string, n)
		for i, k := range b.Deletes {
			kinds[i], ids[i] = k.Kind, k.ID
		}
		q.Queue(deletesSQL, s.repo, kinds, ids)
	}
	if b.Watermark > 0 {
		q.Queue(metaSQL, s.repo, metaWatermark, int64(b.Watermark))
	}
	br := s.pool.SendBatch(ctx, &q)
	var errs []error
	for range q.Len() {
		if _, err := br.Exec(); err != nil {
			errs = append(errs, err)
			break
		}
	}
	if err := br.Close(); len(errs) == 0 {
		return err
	}
	return errors.Join(errs...)
}

// fromUnixNano decodes the time column.
func fromUnixNano(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return time.Unix(0, *n).UTC()
}
