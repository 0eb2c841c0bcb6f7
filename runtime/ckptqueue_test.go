package runtime

import (
	"context"
	"testing"
	"time"

	"wilco/core"
	"wilco/store"
)

func recs(ids ...string) []store.Record {
	var out []store.Record
	for _, id := range ids {
		out = append(out, store.Record{Kind: "agent", ID: id})
	}
	return out
}

func ids(rs []store.Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestCheckpointCopiesAreTakenInTurnOrderWithTheWatermarkOnTheLastRow(t *testing.T) {
	var q ckptQueue
	q.push(recs("a", "b", "c"), nil, 0)
	q.push(recs("d"), nil, 7) // the last share of the checkpoint at seq 7
	q.push(recs("e"), nil, 0)
	var b store.Batch
	q.take(&b, 2)
	if got := ids(b.Records); len(got) != 2 || got[0] != "a" || got[1] != "b" || b.Watermark != 0 {
		t.Fatalf("first take: %v watermark %d", got, b.Watermark)
	}
	b = store.Batch{}
	q.take(&b, 2)
	if got := ids(b.Records); len(got) != 2 || got[0] != "c" || got[1] != "d" || b.Watermark != 7 {
		t.Fatalf("second take: %v watermark %d, want c d with watermark 7", got, b.Watermark)
	}
	if q.rows != 1 {
		t.Fatalf("%d rows left, want 1", q.rows)
	}
	b = store.Batch{}
	q.take(&b, 100)
	if !q.empty() || q.rows != 0 || len(b.Records) != 1 {
		t.Fatalf("last take: %+v, queue %+v", b, q)
	}
}

func TestCheckpointDeleteThenRecreateOfOneKeyIsNeverWrittenInOneBatch(t *testing.T) {
	// A batch writes records before deletes: agent "x" deleted by one
	// share and registered again by a later one would vanish if both went
	// into one batch.
	var q ckptQueue
	q.push(recs("a"), []store.Key{{Kind: "agent", ID: "x"}}, 0)
	q.push(recs("x"), nil, 9)
	var b store.Batch
	q.take(&b, 100)
	if len(b.Deletes) != 1 || len(b.Records) != 1 || b.Records[0].ID != "a" {
		t.Fatalf("first batch: %+v", b)
	}
	b = store.Batch{}
	q.take(&b, 100)
	if len(b.Records) != 1 || b.Records[0].ID != "x" || b.Watermark != 9 || !q.empty() {
		t.Fatalf("second batch: %+v", b)
	}
}

func TestCheckpointCopiesAreCommittedApartFromEventsAndNeverAheadOfThem(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := Config{CheckpointEvery: 5, CheckpointInterval: time.Hour, CheckpointShare: 2, CheckpointChunk: 3}
	b.openWith(cfg)
	b.rt.Start()
	ctx := context.Background()
	for i := range 30 {
		if _, err := b.rt.Do(ctx, register("a"+itoa(i), "mailbox")); err != nil {
			t.Fatal(err)
		}
		if _, err := b.rt.Do(ctx, delegate("a"+itoa(i), "T-"+itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	live := b.rt.core
	// Close writes what still waits, then a whole checkpoint (the last
	// commit).
	if err := b.rt.Close(); err != nil {
		t.Fatal(err)
	}
	b.st.mu.Lock()
	var durable uint64
	var copies, watermarks int
	for _, c := range b.st.commits[:len(b.st.commits)-1] {
		if len(c.Events) > 0 && (len(c.Records) > 0 || len(c.Deletes) > 0 || c.Watermark > 0) {
			t.Fatalf("a commit holds events %d.. and checkpoint copies", c.Events[0].Seq)
		}
		if n := len(c.Events); n > 0 {
			durable = c.Events[n-1].Seq
		}
		if len(c.Records) > cfg.CheckpointChunk {
			t.Fatalf("a checkpoint commit holds %d records, more than the chunk of %d", len(c.Records), cfg.CheckpointChunk)
		}
		if c.Watermark > durable {
			t.Fatalf("watermark %d declared with only %d durable", c.Watermark, durable)
		}
		copies += len(c.Records)
		if c.Watermark > 0 {
			watermarks++
		}
	}
	b.st.mu.Unlock()
	if copies == 0 || watermarks < 2 {
		t.Fatalf("%d copies and %d watermarks written", copies, watermarks)
	}
	_ = b.st.Store.Close()
	b.openWith(cfg)
	if diff := core.StateDiff(live, b.rt.core); diff != "" {
		t.Fatalf("recovered state differs: %s", diff)
	}
}
