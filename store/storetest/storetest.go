package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"wilco/store"
)

// Run checks every rule that can be checked on one open store. open must
// return a new, empty store each time it is called; the suite closes it (a
// second Close by open's own cleanup is allowed: Close is idempotent).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	for _, c := range []struct {
		name string
		test func(t *testing.T, open func(t *testing.T) store.Store)
	}{
		{"EmptyStoreHasNothing", testEmptyStoreHasNothing},
		{"EventsAreNumberedWithoutGaps", testEventsAreNumberedWithoutGaps},
		{"CommitIsAtomic", testCommitIsAtomic},
		{"CommitWithDoneContextWritesNothing", testCommitWithDoneContextWritesNothing},
		{"LargeBatchCommitsWhole", testLargeBatchCommitsWhole},
		{"EmptyBatches", testEmptyBatches},
		{"WatermarkBeyondTheLogIsRefused", testWatermarkBeyondTheLogIsRefused},
		{"LoadReturnsCheckpointAndWatermark", testLoadReturnsCheckpointAndWatermark},
		{"LaterRecordInOneBatchWins", testLaterRecordInOneBatchWins},
		{"DeletesApplyAfterRecords", testDeletesApplyAfterRecords},
		{"LoadStopsAtFirstError", testLoadStopsAtFirstError},
		{"RecordsListByKindAndState", testRecordsListByKindAndState},
		{"EventsFilterByTaskAndAgent", testEventsFilterByTaskAndAgent},
		{"EventsAfterAndLimit", testEventsAfterAndLimit},
		{"ScanStreamsInSeqOrder", testScanStreamsInSeqOrder},
		{"ScanStopsAtFirstError", testScanStopsAtFirstError},
		{"ScanCallbackMayUseTheStore", testScanCallbackMayUseTheStore},
		{"TimesRoundTripWithNanoseconds", testTimesRoundTripWithNanoseconds},
		{"DataRoundTripsExactly", testDataRoundTripsExactly},
		{"ReadersSeeOnlyCommittedBatches", testReadersSeeOnlyCommittedBatches},
		{"ConcurrentReadersDuringCommits", testConcurrentReadersDuringCommits},
		{"ClosedStoreReturnsErrClosed", testClosedStoreReturnsErrClosed},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, open)
		})
	}
}

// testBundle is an open store of one subtest, and the subtest's context.
type testBundle struct {
	ctx context.Context
	s   store.Store
}

// setup opens a new store the subtest closes when it ends.
func setup(t *testing.T, open func(t *testing.T) store.Store) *testBundle {
	t.Helper()
	s := open(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &testBundle{ctx: t.Context(), s: s}
}

func testEmptyStoreHasNothing(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	if last := lastSeq(t, tb.s); last != 0 {
		t.Errorf("LastSeq = %d, want 0", last)
	}
	recs, wm := load(t, tb.s)
	if len(recs) != 0 || wm != 0 {
		t.Errorf("Load = %d records, watermark %d; want none, 0", len(recs), wm)
	}
	if got := eventsOf(t, tb.s, store.Filter{}); len(got) != 0 {
		t.Errorf("Events = %d events, want none", len(got))
	}
	if got := recordsOf(t, tb.s, "delivery", ""); len(got) != 0 {
		t.Errorf("Records = %d records, want none", len(got))
	}
	scanned := 0
	if err := tb.s.Scan(tb.ctx, 0, func(store.Event) error { scanned++; return nil }); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if scanned != 0 {
		t.Errorf("Scan called fn %d times, want 0", scanned)
	}
}

func testEventsAreNumberedWithoutGaps(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	// A refused batch carries records, deletes and a watermark too, so
	// that "writes nothing of it" covers every part of a batch.
	refuse := func(t *testing.T, what string, evs []store.Event) {
		t.Helper()
		beforeEvents := eventsOf(t, tb.s, store.Filter{})
		beforeRecs, beforeWM := load(t, tb.s)
		b := store.Batch{
			Events:    evs,
			Records:   []store.Record{rec("refused", "r1", "open", 1)},
			Deletes:   []store.Key{{Kind: "delivery", ID: "d1"}},
			Watermark: 1,
		}
		if len(evs) > 0 {
			b.Watermark = evs[len(evs)-1].Seq
		}
		err := tb.s.Commit(tb.ctx, b)
		if !errors.Is(err, store.ErrSeq) {
			t.Fatalf("Commit(%s) = %v, want ErrSeq", what, err)
		}
		assertEvents(t, eventsOf(t, tb.s, store.Filter{}), beforeEvents)
		afterRecs, afterWM := load(t, tb.s)
		if afterWM != beforeWM {
			t.Errorf("after refused %s: watermark = %d, want %d", what, afterWM, beforeWM)
		}
		assertRecordSet(t, afterRecs, beforeRecs)
		if last := lastSeq(t, tb.s); last != uint64(len(beforeEvents)) {
			t.Errorf("after refused %s: LastSeq = %d, want %d", what, last, len(beforeEvents))
		}
	}

	refuse(t, "first seq 0", []store.Event{ev(0)})
	refuse(t, "first seq 2", []store.Event{ev(2)})
	mustCommit(t, tb.s, store.Batch{
		Events:    []store.Event{ev(1), ev(2), ev(3)},
		Records:   []store.Record{rec("delivery", "d1", "open", 3)},
		Watermark: 3,
	})
	refuse(t, "a gap", []store.Event{ev(5)})
	refuse(t, "a gap inside the batch", []store.Event{ev(4), ev(5), ev(7)})
	refuse(t, "a repeat of the last seq", []store.Event{ev(3), ev(4)})
	refuse(t, "a repeat of an old seq", []store.Event{ev(1)})
	refuse(t, "a repeat inside the batch", []store.Event{ev(4), ev(4)})
	refuse(t, "seqs out of order", []store.Event{ev(5), ev(4)})
	refuse(t, "a descending run", []store.Event{ev(4), ev(5), ev(6), ev(5)})

	mustCommit(t, tb.s, store.Batch{Events: []store.Event{ev(4), ev(5)}})
	assertEvents(t, eventsOf(t, tb.s, store.Filter{}), evRange(1, 5))
	if last := lastSeq(t, tb.s); last != 5 {
		t.Errorf("LastSeq = %d, want 5", last)
	}
}

func testCommitIsAtomic(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	mustCommit(t, tb.s, store.Batch{
		Events:    evRange(1, 2),
		Records:   []store.Record{rec("delivery", "d1", "open", 1), rec("delivery", "d2", "open", 2)},
		Watermark: 2,
	})
	// A large batch whose very last event breaks the numbering: the
	// thousands of rows before it must not survive.
	bad := evRange(3, 2002)
	bad[len(bad)-1].Seq = 9999
	var recs []store.Record
	for i := range 500 {
		recs = append(recs, rec("delivery", fmt.Sprintf("n%04d", i), "open", i))
	}
	recs = append(recs, rec("delivery", "d1", "acked", 2002))
	err := tb.s.Commit(tb.ctx, store.Batch{
		Events:    bad,
		Records:   recs,
		Deletes:   []store.Key{{Kind: "delivery", ID: "d2"}},
		Watermark: 9999,
	})
	if !errors.Is(err, store.ErrSeq) {
		t.Fatalf("Commit = %v, want ErrSeq", err)
	}
	assertEvents(t, eventsOf(t, tb.s, store.Filter{}), evRange(1, 2))
	got, wm := load(t, tb.s)
	if wm != 2 {
		t.Errorf("watermark = %d, want 2", wm)
	}
	assertRecordSet(t, got, recordSet(rec("delivery", "d1", "open", 1), rec("delivery", "d2", "open", 2)))
}

func testCommitWithDoneContextWritesNothing(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	ctx, cancel := context.WithCancel(tb.ctx)
	cancel()
	err := tb.s.Commit(ctx, store.Batch{
		Events:    evRange(1, 10),
		Records:   []store.Record{rec("delivery", "d1", "open", 1)},
		Watermark: 10,
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit = %v, want context.Canceled", err)
	}
	if last := lastSeq(t, tb.s); last != 0 {
		t.Errorf("LastSeq = %d, want 0", last)
	}
	if recs, wm := load(t, tb.s); len(recs) != 0 || wm != 0 {
		t.Errorf("Load = %d records, watermark %d; want none, 0", len(recs), wm)
	}
	// The refused batch did not consume its seqs.
	mustCommit(t, tb.s, store.Batch{Events: evRange(1, 10)})
}

func testLargeBatchCommitsWhole(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	const n = 10_000
	evs := evRange(1, n)
	recs := make([]store.Record, 0, n)
	for i := range n {
		recs = append(recs, rec("delivery", fmt.Sprintf("d%05d", i), "open", i))
	}
	mustCommit(t, tb.s, store.Batch{Events: evs, Records: recs, Watermark: n})

	if last := lastSeq(t, tb.s); last != n {
		t.Errorf("LastSeq = %d, want %d", last, n)
	}
	assertEvents(t, eventsOf(t, tb.s, store.Filter{}), evs)
	got, wm := load(t, tb.s)
	if wm != n {
		t.Errorf("watermark = %d, want %d", wm, n)
	}
	assertRecordSet(t, got, recordSet(recs...))
}

func testEmptyBatches(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	// A fully empty batch is a no-op, on an empty log and later.
	mustCommit(t, tb.s, store.Batch{})
	if last := lastSeq(t, tb.s); last != 0 {
		t.Errorf("LastSeq after empty batch = %d, want 0", last)
	}
	mustCommit(t, tb.s, store.Batch{Events: evRange(1, 3)})
	mustCommit(t, tb.s, store.Batch{Events: []store.Event{}, Records: []store.Record{}, Deletes: []store.Key{}})
	if last := lastSeq(t, tb.s); last != 3 {
		t.Errorf("LastSeq after empty batch = %d, want 3", last)
	}

	// A checkpoint without events: records and watermark only.
	mustCommit(t, tb.s, store.Batch{
		Records:   []store.Record{rec("delivery", "d1", "open", 1), rec("delivery", "d2", "open", 2)},
		Watermark: 3,
	})
	got, wm := load(t, tb.s)
	if wm != 3 {
		t.Errorf("watermark = %d, want 3", wm)
	}
	assertRecordSet(t, got, recordSet(rec("delivery", "d1", "open", 1), rec("delivery", "d2", "open", 2)))

	// Deletes and a watermark only.
	mustCommit(t, tb.s, store.Batch{Deletes: []store.Key{{Kind: "delivery", ID: "d1"}}, Watermark: 3})
	got, _ = load(t, tb.s)
	assertRecordSet(t, got, recordSet(rec("delivery", "d2", "open", 2)))

	if last := lastSeq(t, tb.s); last != 3 {
		t.Errorf("LastSeq = %d, want 3", last)
	}
	assertEvents(t, eventsOf(t, tb.s, store.Filter{}), evRange(1, 3))
}

func testWatermarkBeyondTheLogIsRefused(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	mustCommit(t, tb.s, store.Batch{Events: evRange(1, 3), Records: []store.Record{rec("delivery", "d1", "open", 1)}, Watermark: 3})
	for _, b := range []store.Batch{
		{Records: []store.Record{rec("delivery", "d2", "open", 2)}, Watermark: 4},
		{Events: evRange(4, 5), Records: []store.Record{rec("delivery", "d2", "open", 2)}, Watermark: 6},
	} {
		if err := tb.s.Commit(tb.ctx, b); err == nil {
			t.Errorf("Commit with watermark %d beyond the log succeeded", b.Watermark)
		}
	}
	if last := lastSeq(t, tb.s); last != 3 {
		t.Errorf("LastSeq = %d, want 3", last)
	}
	got, wm := load(t, tb.s)
	if wm != 3 {
		t.Errorf("watermark = %d, want 3", wm)
	}
	assertRecordSet(t, got, recordSet(rec("delivery", "d1", "open", 1)))
}

func testLoadReturnsCheckpointAndWatermark(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	mustCommit(t, tb.s, store.Batch{
		Events: evRange(1, 3),
		Records: []store.Record{
			rec("delivery", "d1", "open", 1),
			rec("delivery", "d2", "open", 2),
			rec("agent", "d1", "idle", 3), // same id, other kind: another record
		},
		Watermark: 3,
	})
	got, wm := load(t, tb.s)
	if wm != 3 {
		t.Errorf("watermark = %d, want 3", wm)
	}
	assertRecordSet(t, got, recordSet(
		rec("delivery", "d1", "open", 1), rec("delivery", "d2", "open", 2), rec("agent", "d1", "idle", 3)))

	// A later batch replaces by kind+id and deletes; a batch without a
	// watermark keeps the last one.
	mustCommit(t, tb.s, store.Batch{
		Events:    evRange(4, 6),
		Records:   []store.Record{rec("delivery", "d1", "acked", 4), rec("delivery", "d3", "open", 5)},
		Deletes:   []store.Key{{Kind: "delivery", ID: "d2"}, {Kind: "delivery", ID: "never-was"}},
		Watermark: 6,
	})
	mustCommit(t, tb.s, store.Batch{Events: evRange(7, 8)})
	got, wm = load(t, tb.s)
	if wm != 6 {
		t.Errorf("watermark = %d, want 6", wm)
	}
	assertRecordSet(t, got, recordSet(
		rec("delivery", "d1", "acked", 4), rec("delivery", "d3", "open", 5), rec("agent", "d1", "idle", 3)))

	// The latest non-zero watermark wins, even when it is lower.
	mustCommit(t, tb.s, store.Batch{Watermark: 5})
	if _, wm = load(t, tb.s); wm != 5 {
		t.Errorf("watermark = %d, want 5", wm)
	}
}

func testLaterRecordInOneBatchWins(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	mustCommit(t, tb.s, store.Batch{
		Events:    evRange(1, 2),
		Records:   []store.Record{rec("delivery", "d1", "open", 1), rec("delivery", "d1", "sent", 2)},
		Watermark: 2,
	})
	got, _ := load(t, tb.s)
	assertRecordSet(t, got, recordSet(rec("delivery", "d1", "sent", 2)))

	// Also when the batch is large and the two are far apart.
	var recs []store.Record
	for i := range 1500 {
		recs = append(recs, rec("delivery", fmt.Sprintf("d%d", i%700), []string{"open", "sent", "acked"}[i/700], i))
	}
	mustCommit(t, tb.s, store.Batch{Records: recs, Watermark: 2})
	got, _ = load(t, tb.s)
	want := map[store.Key]store.Record{}
	for _, r := range recs {
		want[store.Key{Kind: r.Kind, ID: r.ID}] = r
	}
	assertRecordSet(t, got, want)
}

func testDeletesApplyAfterRecords(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	// A record created and removed within one batch ends removed.
	mustCommit(t, tb.s, store.Batch{
		Events:    evRange(1, 2),
		Records:   []store.Record{rec("delivery", "d1", "open", 1), rec("delivery", "d2", "open", 2)},
		Deletes:   []store.Key{{Kind: "delivery", ID: "d1"}},
		Watermark: 2,
	})
	got, _ := load(t, tb.s)
	assertRecordSet(t, got, recordSet(rec("delivery", "d2", "open", 2)))

	// Many deletes in one batch, of records old and new, present and
	// not.
	var recs []store.Record
	var dels []store.Key
	want := recordSet(rec("delivery", "d2", "open", 2))
	for i := range 1000 {
		r := rec("delivery", fmt.Sprintf("n%04d", i), "open", i)
		recs = append(recs, r)
		if i%3 == 0 {
			dels = append(dels, store.Key{Kind: r.Kind, ID: r.ID})
		} else {
			want[store.Key{Kind: r.Kind, ID: r.ID}] = r
		}
		dels = append(dels, store.Key{Kind: "delivery", ID: fmt.Sprintf("never-%d", i)})
	}
	dels = append(dels, store.Key{Kind: "agent", ID: "d2"}) // another kind: d2 stays
	mustCommit(t, tb.s, store.Batch{Records: recs, Deletes: dels, Watermark: 2})
	got, _ = load(t, tb.s)
	assertRecordSet(t, got, want)
	if c, ok := tb.s.(store.RecordCounter); ok {
		n, err := c.RecordCount(context.Background())
		if err != nil || n != len(want) {
			t.Fatalf("RecordCount = %d, %v; Load hands over %d", n, err, len(want))
		}
	}
}

func testLoadStopsAtFirstError(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	var recs []store.Record
	for i := range 100 {
		recs = append(recs, rec("delivery", fmt.Sprintf("d%03d", i), "open", i))
	}
	mustCommit(t, tb.s, store.Batch{Events: evRange(1, 1), Records: recs, Watermark: 1})
	stop := errors.New("stop")
	calls := 0
	_, err := tb.s.Load(tb.ctx, func(store.Record) error {
		calls++
		if calls == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Load = %v, want fn's error", err)
	}
	if calls != 10 {
		t.Errorf("fn called %d times, want 10", calls)
	}
}

func testRecordsListByKindAndState(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	mustCommit(t, tb.s, store.Batch{
		Events: evRange(1, 1),
		Records: []store.Record{
			rec("delivery", "d3", "open", 3),
			rec("delivery", "d1", "open", 1),
			rec("delivery", "d2", "acked", 2),
			rec("delivery", "d10", "open", 10),
			rec("agent", "a1", "open", 0),
		},
		Watermark: 1,
	})

	// Ordered by ID, byte-wise.
	assertRecords(t, recordsOf(t, tb.s, "delivery", ""), []store.Record{
		rec("delivery", "d1", "open", 1), rec("delivery", "d10", "open", 10),
		rec("delivery", "d2", "acked", 2), rec("delivery", "d3", "open", 3),
	})
	assertRecords(t, recordsOf(t, tb.s, "delivery", "open"), []store.Record{
		rec("delivery", "d1", "open", 1), rec("delivery", "d10", "open", 10), rec("delivery", "d3", "open", 3),
	})
	assertRecords(t, recordsOf(t, tb.s, "delivery", "acked"), []store.Record{rec("delivery", "d2", "acked", 2)})
	assertRecords(t, recordsOf(t, tb.s, "agent", ""), []store.Record{rec("agent", "a1", "open", 0)})
	assertRecords(t, recordsOf(t, tb.s, "delivery", "nacked"), nil)
	assertRecords(t, recordsOf(t, tb.s, "task", ""), nil)

	// A state change moves the record between listings.
	mustCommit(t, tb.s, store.Batch{Records: []store.Record{rec("delivery", "d1", "acked", 11)}, Watermark: 1})
	assertRecords(t, recordsOf(t, tb.s, "delivery", "acked"), []store.Record{
		rec("delivery", "d1", "acked", 11), rec("delivery", "d2", "acked", 2),
	})
}

func testEventsFilterByTaskAndAgent(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	all := evRange(1, 60)
	mustCommit(t, tb.s, store.Batch{Events: all})

	pick := func(keep func(store.Event) bool) []store.Event {
		var out []store.Event
		for _, e := range all {
			if keep(e) {
				out = append(out, e)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    store.Filter
		want []store.Event
	}{
		{"all", store.Filter{}, all},
		{"task", store.Filter{TaskID: "task-1"}, pick(func(e store.Event) bool { return e.TaskID == "task-1" })},
		{"agent", store.Filter{Agent: "agent-2"}, pick(func(e store.Event) bool { return e.Agent == "agent-2" })},
		{"task and agent", store.Filter{TaskID: "task-2", Agent: "agent-1"},
			pick(func(e store.Event) bool { return e.TaskID == "task-2" && e.Agent == "agent-1" })},
		{"task and agent after", store.Filter{TaskID: "task-2", Agent: "agent-1", After: 30},
			pick(func(e store.Event) bool { return e.TaskID == "task-2" && e.Agent == "agent-1" && e.Seq > 30 })},
		{"unknown task", store.Filter{TaskID: "task-9"}, nil},
		{"unknown agent", store.Filter{Agent: "agent-9"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertEvents(t, eventsOf(t, tb.s, tc.f), tc.want)
		})
	}
	// The filters must have selected something for the test to mean
	// anything.
	if len(pick(func(e store.Event) bool { return e.TaskID == "task-2" && e.Agent == "agent-1" && e.Seq > 30 })) == 0 {
		t.Fatal("test data has no event for task-2 and agent-1 after 30")
	}
}

func testEventsAfterAndLimit(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	all := evRange(1, 50)
	mustCommit(t, tb.s, store.Batch{Events: all})

	assertEvents(t, eventsOf(t, tb.s, store.Filter{After: 10}), all[10:])
	assertEvents(t, eventsOf(t, tb.s, store.Filter{Limit: 5}), all[:5])
	assertEvents(t, eventsOf(t, tb.s, store.Filter{After: 10, Limit: 5}), all[10:15])
	assertEvents(t, eventsOf(t, tb.s, store.Filter{After: 48, Limit: 5}), all[48:])
	assertEvents(t, eventsOf(t, tb.s, store.Filter{After: 50}), nil)
	assertEvents(t, eventsOf(t, tb.s, store.Filter{After: 1000}), nil)

	var task1 []store.Event
	for _, e := range all {
		if e.TaskID == "task-1" && e.Seq > 20 {
			task1 = append(task1, e)
		}
	}
	assertEvents(t, eventsOf(t, tb.s, store.Filter{TaskID: "task-1", After: 20, Limit: 3}), task1[:3])
}

func testScanStreamsInSeqOrder(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	// Enough events to cross any chunking an implementation does, in
	// batches of different sizes.
	const n = 5000
	for lo := uint64(1); lo <= n; {
		hi := min(lo+lo%700, n)
		mustCommit(t, tb.s, store.Batch{Events: evRange(lo, hi)})
		lo = hi + 1
	}
	for _, after := range []uint64{0, 1, 1234, n - 1, n, n + 10} {
		var got []store.Event
		err := tb.s.Scan(tb.ctx, after, func(e store.Event) error {
			got = append(got, e)
			return nil
		})
		if err != nil {
			t.Fatalf("Scan(%d): %v", after, err)
		}
		var want []store.Event
		if after < n {
			want = evRange(after+1, n)
		}
		assertEvents(t, got, want)
	}
}

func testScanStopsAtFirstError(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	mustCommit(t, tb.s, store.Batch{Events: evRange(1, 3000)})
	stop := errors.New("stop")
	var last uint64
	err := tb.s.Scan(tb.ctx, 0, func(e store.Event) error {
		last = e.Seq
		if e.Seq == 2500 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Scan = %v, want fn's error", err)
	}
	if last != 2500 {
		t.Errorf("Scan went on to seq %d after fn's error at 2500", last)
	}
}

func testScanCallbackMayUseTheStore(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	// A subscriber catching up may read, and the writer goes on
	// committing, while a Scan is in progress: neither may deadlock, and
	// the Scan still delivers every event that existed when it started,
	// in order and without gaps.
	const n = 3000
	mustCommit(t, tb.s, store.Batch{Events: evRange(1, n)})
	next := uint64(1)
	err := tb.s.Scan(tb.ctx, 0, func(e store.Event) error {
		if e.Seq != next {
			return fmt.Errorf("scan delivered seq %d, want %d", e.Seq, next)
		}
		next++
		if e.Seq%500 == 0 {
			if _, err := tb.s.LastSeq(tb.ctx); err != nil {
				return err
			}
			if _, err := tb.s.Events(tb.ctx, store.Filter{After: e.Seq, Limit: 10}); err != nil {
				return err
			}
			last, err := tb.s.LastSeq(tb.ctx)
			if err != nil {
				return err
			}
			if err := tb.s.Commit(tb.ctx, store.Batch{Events: evRange(last+1, last+10)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if next <= n {
		t.Errorf("Scan stopped after seq %d, want at least %d", next-1, n)
	}
}

func testTimesRoundTripWithNanoseconds(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	paris := time.FixedZone("CEST", 2*60*60)
	times := []time.Time{
		time.Date(2026, 4, 1, 12, 30, 45, 123456789, time.UTC),
		time.Date(2026, 4, 1, 14, 30, 45, 987654321, paris),
		time.Date(1999, 12, 31, 23, 59, 59, 1, time.UTC),
		time.Date(2100, 1, 1, 0, 0, 0, 999999999, time.UTC),
		time.Unix(0, 1),
		time.Now(), // carries a monotonic reading and the local zone
	}
	evs := make([]store.Event, len(times))
	for i, tm := range times {
		evs[i] = ev(uint64(i + 1))
		evs[i].Time = tm
	}
	mustCommit(t, tb.s, store.Batch{Events: evs})
	got := eventsOf(t, tb.s, store.Filter{})
	if len(got) != len(times) {
		t.Fatalf("Events = %d events, want %d", len(got), len(times))
	}
	for i, e := range got {
		if !e.Time.Equal(times[i]) {
			t.Errorf("time %d = %v, want %v", i, e.Time, times[i])
		}
		if e.Time.Location() != time.UTC {
			t.Errorf("time %d location = %v, want UTC", i, e.Time.Location())
		}
	}
}

func testDataRoundTripsExactly(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	big := bytes.Repeat([]byte(`{"k":"0123456789abcdef"}`), 1<<16/24) // 64 KiB
	binary := []byte{0, 1, 2, 0xff, 0xfe, '\n', 0}
	evs := []store.Event{ev(1), ev(2), ev(3), ev(4)}
	evs[0].Data = big
	evs[1].Data = binary
	evs[2].Type, evs[2].TaskID, evs[2].Agent = "unicode.é", "tâche-1", "agent-ü"
	evs[2].Data = []byte(`{"text":"héllo — 世界"}`)
	evs[3].TaskID, evs[3].Agent = "", ""
	recs := []store.Record{
		{Kind: "delivery", ID: "big", State: "open", Agent: "agent-ü", TaskID: "tâche-1", Data: big},
		{Kind: "delivery", ID: "bin", State: "open", Data: binary},
		{Kind: "delivery", ID: "empty"},
	}
	mustCommit(t, tb.s, store.Batch{Events: evs, Records: recs, Watermark: 4})

	assertEvents(t, eventsOf(t, tb.s, store.Filter{}), evs)
	got, _ := load(t, tb.s)
	assertRecordSet(t, got, recordSet(recs...))
	assertRecords(t, recordsOf(t, tb.s, "delivery", ""), recs)
}

func testReadersSeeOnlyCommittedBatches(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	// Every batch adds batchSize events and one record, bumps a counter
	// record and sets the watermark to its last event. A reader must
	// see whole batches only, and records that agree with the watermark.
	const batches, batchSize = 20, 25
	check := func() error { return checkWholeBatches(tb.ctx, tb.s, batches, batchSize) }

	done := make(chan struct{})
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				if err := check(); err != nil {
					errs <- err
					return
				}
				select {
				case <-done:
					return
				default:
				}
			}
		})
	}
	for k := range batches {
		lo := uint64(k*batchSize + 1)
		hi := lo + batchSize - 1
		err := tb.s.Commit(tb.ctx, store.Batch{
			Events: evRange(lo, hi),
			Records: []store.Record{
				{Kind: "item", ID: fmt.Sprintf("i%03d", k), State: "open"},
				{Kind: "counter", ID: "c", State: "open", Data: []byte(strconv.FormatUint(hi, 10))},
			},
			Watermark: hi,
		})
		if err != nil {
			t.Errorf("Commit batch %d: %v", k, err)
			break
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := check(); err != nil {
		t.Error(err)
	}
}

// checkWholeBatches checks what a reader of s sees while batches of
// batchSize events, one item record and the counter record are committed:
// whole batches only, and records that agree with the watermark.
func checkWholeBatches(ctx context.Context, s store.Store, batches, batchSize int) error {
	last, err := s.LastSeq(ctx)
	if err != nil {
		return err
	}
	if last%uint64(batchSize) != 0 {
		return fmt.Errorf("LastSeq = %d: part of a batch is visible", last)
	}
	evs, err := s.Events(ctx, store.Filter{})
	if err != nil {
		return err
	}
	if len(evs)%batchSize != 0 {
		return fmt.Errorf("Events returned %d events: part of a batch is visible", len(evs))
	}
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			return fmt.Errorf("Events: event %d has seq %d", i, e.Seq)
		}
	}
	items := 0
	var counter string
	wm, err := s.Load(ctx, func(r store.Record) error {
		switch r.Kind {
		case "item":
			items++
		case "counter":
			counter = string(r.Data)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if wm%uint64(batchSize) != 0 || uint64(items) != wm/uint64(batchSize) {
		return fmt.Errorf("Load: watermark %d with %d items", wm, items)
	}
	if wm > 0 && counter != strconv.FormatUint(wm, 10) {
		return fmt.Errorf("Load: watermark %d with counter %q", wm, counter)
	}
	recs, err := s.Records(ctx, "item", "")
	if err != nil {
		return err
	}
	if len(recs) > batches {
		return fmt.Errorf("Records: %d items", len(recs))
	}
	return nil

}

func testConcurrentReadersDuringCommits(t *testing.T, open func(t *testing.T) store.Store) {
	tb := setup(t, open)

	// Readers of every kind run while one writer commits; under -race
	// this is where an implementation's shared state gets checked.
	const batches, batchSize = 10, 50
	done := make(chan struct{})
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	readers := []func() error{
		func() error { _, err := tb.s.LastSeq(tb.ctx); return err },
		func() error {
			_, err := tb.s.Events(tb.ctx, store.Filter{TaskID: "task-1", Limit: 20})
			return err
		},
		func() error {
			_, err := tb.s.Events(tb.ctx, store.Filter{Agent: "agent-2", After: 100})
			return err
		},
		func() error {
			prev := uint64(0)
			return tb.s.Scan(tb.ctx, 0, func(e store.Event) error {
				if e.Seq != prev+1 {
					return fmt.Errorf("Scan: seq %d after %d", e.Seq, prev)
				}
				prev = e.Seq
				return nil
			})
		},
		func() error { _, err := tb.s.Load(tb.ctx, func(store.Record) error { return nil }); return err },
		func() error { _, err := tb.s.Records(tb.ctx, "delivery", "open"); return err },
	}
	for _, read := range readers {
		wg.Go(func() {
			for {
				if err := read(); err != nil {
					errs <- err
					return
				}
				select {
				case <-done:
					return
				default:
				}
			}
		})
	}
	for k := range batches {
		lo := uint64(k*batchSize + 1)
		hi := lo + batchSize - 1
		var recs []store.Record
		for i := lo; i <= hi; i += 5 {
			recs = append(recs, rec("delivery", fmt.Sprintf("d%05d", i), []string{"open", "acked"}[k%2], int(i)))
		}
		if err := tb.s.Commit(tb.ctx, store.Batch{Events: evRange(lo, hi), Records: recs, Watermark: hi}); err != nil {
			t.Errorf("Commit batch %d: %v", k, err)
			break
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if last := lastSeq(t, tb.s); last != batches*batchSize {
		t.Errorf("LastSeq = %d, want %d", last, batches*batchSize)
	}
}

func testClosedStoreReturnsErrClosed(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	ctx := t.Context()

	mustCommit(t, s, store.Batch{Events: evRange(1, 3), Records: []store.Record{rec("delivery", "d1", "open", 1)}, Watermark: 3})
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}

	calls := map[string]func() error{
		"Commit":       func() error { return s.Commit(ctx, store.Batch{Events: evRange(4, 4)}) },
		"Commit empty": func() error { return s.Commit(ctx, store.Batch{}) },
		"LastSeq":      func() error { _, err := s.LastSeq(ctx); return err },
		"Load":         func() error { _, err := s.Load(ctx, func(store.Record) error { return nil }); return err },
		"Events":       func() error { _, err := s.Events(ctx, store.Filter{}); return err },
		"Scan":         func() error { return s.Scan(ctx, 0, func(store.Event) error { return nil }) },
		"Records":      func() error { _, err := s.Records(ctx, "delivery", ""); return err },
	}
	if c, ok := s.(store.RecordCounter); ok {
		calls["RecordCount"] = func() error { _, err := c.RecordCount(ctx); return err }
	}
	for _, name := range slices.Sorted(maps.Keys(calls)) {
		if err := calls[name](); !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}

// RunReopen checks the rules about durability: what a store holds survives
// Close and a new open on the same data. open must open the store kept in
// dir, creating it empty when dir holds none; the suite gives each subtest
// its own dir and closes what open returns.
func RunReopen(t *testing.T, open func(t *testing.T, dir string) store.Store) {
	t.Helper()
	r := reopener{open: open}
	for _, c := range []struct {
		name string
		test func(t *testing.T, r reopener)
	}{
		{"SurvivesReopen", testSurvivesReopen},
		{"NumberingContinuesAfterReopen", testNumberingContinuesAfterReopen},
		{"EmptyStoreSurvivesReopen", testEmptyStoreSurvivesReopen},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, r)
		})
	}
}

// reopener opens the store kept in a directory, and opens it again.
type reopener struct {
	open func(t *testing.T, dir string) store.Store
}

// openIn opens the store in dir; the subtest closes it when it ends.
func (r reopener) openIn(t *testing.T, dir string) store.Store {
	t.Helper()
	s := r.open(t, dir)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// reopen closes s and opens the store in dir again.
func (r reopener) reopen(t *testing.T, dir string, s store.Store) store.Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return r.openIn(t, dir)
}

func testSurvivesReopen(t *testing.T, r reopener) {
	dir := t.TempDir()
	s := r.openIn(t, dir)

	mustCommit(t, s, store.Batch{
		Events:    evRange(1, 100),
		Records:   []store.Record{rec("delivery", "d1", "open", 1), rec("delivery", "d2", "open", 2), rec("agent", "a1", "idle", 3)},
		Watermark: 100,
	})
	mustCommit(t, s, store.Batch{
		Events:    evRange(101, 150),
		Records:   []store.Record{rec("delivery", "d1", "acked", 4)},
		Deletes:   []store.Key{{Kind: "delivery", ID: "d2"}},
		Watermark: 140,
	})
	mustCommit(t, s, store.Batch{Events: evRange(151, 160)})
	wantRecs := recordSet(rec("delivery", "d1", "acked", 4), rec("agent", "a1", "idle", 3))

	s = r.reopen(t, dir, s)

	if last := lastSeq(t, s); last != 160 {
		t.Errorf("LastSeq after reopen = %d, want 160", last)
	}
	assertEvents(t, eventsOf(t, s, store.Filter{}), evRange(1, 160))
	got, wm := load(t, s)
	if wm != 140 {
		t.Errorf("watermark after reopen = %d, want 140", wm)
	}
	assertRecordSet(t, got, wantRecs)
	assertRecords(t, recordsOf(t, s, "delivery", "acked"), []store.Record{rec("delivery", "d1", "acked", 4)})
	assertEvents(t, eventsOf(t, s, store.Filter{TaskID: "task-1", After: 100}),
		filterEvents(evRange(101, 160), func(e store.Event) bool { return e.TaskID == "task-1" }))
}

func testNumberingContinuesAfterReopen(t *testing.T, r reopener) {
	dir := t.TempDir()
	s := r.openIn(t, dir)

	mustCommit(t, s, store.Batch{Events: evRange(1, 10)})
	s = r.reopen(t, dir, s)

	for _, evs := range [][]store.Event{evRange(1, 1), evRange(10, 11), evRange(12, 12)} {
		if err := s.Commit(t.Context(), store.Batch{Events: evs}); !errors.Is(err, store.ErrSeq) {
			t.Errorf("Commit(%d..%d) after reopen = %v, want ErrSeq", evs[0].Seq, evs[len(evs)-1].Seq, err)
		}
	}
	mustCommit(t, s, store.Batch{Events: evRange(11, 20)})
	s = r.reopen(t, dir, s)
	assertEvents(t, eventsOf(t, s, store.Filter{}), evRange(1, 20))
}

func testEmptyStoreSurvivesReopen(t *testing.T, r reopener) {
	dir := t.TempDir()
	s := r.openIn(t, dir)
	s = r.reopen(t, dir, s)

	if last := lastSeq(t, s); last != 0 {
		t.Errorf("LastSeq = %d, want 0", last)
	}
	mustCommit(t, s, store.Batch{Events: evRange(1, 1)})
}

// ev builds the event with the given seq. Its fields are derived from seq
// so that any event can be rebuilt to compare against, and spread so that
// filters select irregular subsets.
func ev(seq uint64) store.Event {
	base := time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)
	e := store.Event{
		Seq:  seq,
		Time: base.Add(time.Duration(seq) * 1_000_000_007),
		Type: []string{"delivery.created", "delivery.sent", "delivery.acked"}[seq%3],
		Data: []byte(fmt.Sprintf(`{"seq":%d,"body":"event %d"}`, seq, seq)),
	}
	if seq%5 != 0 {
		e.TaskID = fmt.Sprintf("task-%d", seq%3)
	}
	if seq%7 != 0 {
		e.Agent = fmt.Sprintf("agent-%d", seq%4)
	}
	return e
}

// evRange builds the events lo..hi inclusive.
func evRange(lo, hi uint64) []store.Event {
	evs := make([]store.Event, 0, hi-lo+1)
	for s := lo; s <= hi; s++ {
		evs = append(evs, ev(s))
	}
	return evs
}

func filterEvents(evs []store.Event, keep func(store.Event) bool) []store.Event {
	var out []store.Event
	for _, e := range evs {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// rec builds a record whose other fields are derived from n.
func rec(kind, id, state string, n int) store.Record {
	return store.Record{
		Kind:   kind,
		ID:     id,
		State:  state,
		Agent:  fmt.Sprintf("agent-%d", n%4),
		TaskID: fmt.Sprintf("task-%d", n%3),
		Data:   []byte(fmt.Sprintf(`{"id":%q,"n":%d}`, id, n)),
	}
}

func recordSet(recs ...store.Record) map[store.Key]store.Record {
	m := make(map[store.Key]store.Record, len(recs))
	for _, r := range recs {
		m[store.Key{Kind: r.Kind, ID: r.ID}] = r
	}
	return m
}

func mustCommit(t *testing.T, s store.Store, b store.Batch) {
	t.Helper()
	if err := s.Commit(t.Context(), b); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

func lastSeq(t *testing.T, s store.Store) uint64 {
	t.Helper()
	last, err := s.LastSeq(t.Context())
	if err != nil {
		t.Fatalf("LastSeq: %v", err)
	}
	return last
}

func load(t *testing.T, s store.Store) (map[store.Key]store.Record, uint64) {
	t.Helper()
	m := map[store.Key]store.Record{}
	wm, err := s.Load(t.Context(), func(r store.Record) error {
		k := store.Key{Kind: r.Kind, ID: r.ID}
		if _, dup := m[k]; dup {
			return fmt.Errorf("Load returned %v twice", k)
		}
		m[k] = r
		return nil
	})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return m, wm
}

func eventsOf(t *testing.T, s store.Store, f store.Filter) []store.Event {
	t.Helper()
	evs, err := s.Events(t.Context(), f)
	if err != nil {
		t.Fatalf("Events(%+v): %v", f, err)
	}
	return evs
}

func recordsOf(t *testing.T, s store.Store, kind, state string) []store.Record {
	t.Helper()
	recs, err := s.Records(t.Context(), kind, state)
	if err != nil {
		t.Fatalf("Records(%q, %q): %v", kind, state, err)
	}
	return recs
}

func assertEvents(t *testing.T, got, want []store.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d events, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if msg := eventDiff(got[i], want[i]); msg != "" {
			t.Errorf("event %d: %s", i, msg)
			return
		}
	}
}

func eventDiff(got, want store.Event) string {
	switch {
	case got.Seq != want.Seq:
		return fmt.Sprintf("seq %d, want %d", got.Seq, want.Seq)
	case !got.Time.Equal(want.Time):
		return fmt.Sprintf("seq %d: time %v, want %v", got.Seq, got.Time, want.Time)
	case got.Time.Location() != time.UTC:
		return fmt.Sprintf("seq %d: time in %v, want UTC", got.Seq, got.Time.Location())
	case got.Type != want.Type || got.TaskID != want.TaskID || got.Agent != want.Agent:
		return fmt.Sprintf("seq %d: type/task/agent %q/%q/%q, want %q/%q/%q",
			got.Seq, got.Type, got.TaskID, got.Agent, want.Type, want.TaskID, want.Agent)
	case !bytes.Equal(got.Data, want.Data):
		return fmt.Sprintf("seq %d: data %.80q, want %.80q", got.Seq, got.Data, want.Data)
	}
	return ""
}

func recordDiff(got, want store.Record) string {
	if got.Kind != want.Kind || got.ID != want.ID || got.State != want.State ||
		got.Agent != want.Agent || got.TaskID != want.TaskID || !bytes.Equal(got.Data, want.Data) {
		return fmt.Sprintf("%s/%s: got state %q agent %q task %q data %.80q; want state %q agent %q task %q data %.80q",
			want.Kind, want.ID, got.State, got.Agent, got.TaskID, got.Data, want.State, want.Agent, want.TaskID, want.Data)
	}
	return ""
}

func assertRecords(t *testing.T, got, want []store.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d records, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i].Kind != want[i].Kind || got[i].ID != want[i].ID {
			t.Errorf("record %d is %s/%s, want %s/%s", i, got[i].Kind, got[i].ID, want[i].Kind, want[i].ID)
			return
		}
		if msg := recordDiff(got[i], want[i]); msg != "" {
			t.Errorf("record %d: %s", i, msg)
		}
	}
}

func assertRecordSet(t *testing.T, got, want map[store.Key]store.Record) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("record %s/%s missing", k.Kind, k.ID)
			continue
		}
		// Load hands over what a restart needs; the columns are Records'.
		if !bytes.Equal(g.Data, w.Data) {
			t.Errorf("%s/%s: got data %.80q, want %.80q", k.Kind, k.ID, g.Data, w.Data)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected record %s/%s", k.Kind, k.ID)
		}
	}
}
