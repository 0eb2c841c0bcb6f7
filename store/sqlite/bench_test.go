package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"wilco/store"
	"wilco/store/sqlite"
)

// benchDir holds databases that are expensive to build and shared by the
// runs of one benchmark; TestMain removes it (benchDirPath), if it was made.
var (
	benchDirPath string
	benchDir     = sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", "wilco-sqlite-bench-")
		benchDirPath = dir
		return dir, err
	})
)

// benchTasks is how many tasks the benchmark's deliveries spread over, in
// turn, so that the events of one batch land all over the events_task
// index. WILCO_BENCH_TASKS overrides it (10 and 100 measured no cheaper).
var benchTasks = func() uint64 {
	if n, err := strconv.ParseUint(os.Getenv("WILCO_BENCH_TASKS"), 10, 64); err == nil && n > 0 {
		return n
	}
	return 5000
}()

var benchStart = time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)

// benchEvent is a delivery event as the runtime writes it: a JSON object of
// about 150 bytes, a task and an agent.
func benchEvent(seq uint64) store.Event {
	d := seq / 3
	return store.Event{
		Seq:    seq,
		Time:   benchStart.Add(time.Duration(seq) * 17 * time.Microsecond),
		Type:   [...]string{"delivery.created", "delivery.sent", "delivery.acked"}[seq%3],
		TaskID: "task-" + strconv.FormatUint(d%benchTasks, 10),
		Agent:  "agent-" + strconv.FormatUint(d%16, 10),
		Data: fmt.Appendf(nil, `{"delivery":"d-%08d","from":"lead","to":"agent-%d","attempt":1,"message":"m-%08d","ack":"wilco","at":"%s"}`,
			d, d%16, d, benchStart.Format(time.RFC3339Nano)),
	}
}

// benchRecord is the current state of delivery d: about 200 bytes of JSON.
func benchRecord(d uint64, state string) store.Record {
	return store.Record{
		Kind:   "delivery",
		ID:     fmt.Sprintf("d-%08d", d),
		State:  state,
		Agent:  "agent-" + strconv.FormatUint(d%16, 10),
		TaskID: "task-" + strconv.FormatUint(d%benchTasks, 10),
		Data: fmt.Appendf(nil, `{"id":"d-%08d","from":"lead","to":"agent-%d","state":%q,"attempts":1,"message":"m-%08d","deadline":"%s","last_sent":"%s"}`,
			d, d%16, state, d, benchStart.Format(time.RFC3339Nano), benchStart.Format(time.RFC3339Nano)),
	}
}

// BenchmarkCommit measures group commits of delivery events (three per
// delivery: created, sent, acked), at the default synchronous=NORMAL and with
// WithFullSync, with the checkpoint records that go with them:
//
//   - records=none: events only;
//   - records=upsert: every event upserts its delivery's record, which stays
//     (the records table grows as the log does);
//   - records=lifecycle: created and sent upsert the record, acked deletes
//     it (the records table holds the open deliveries only).
func BenchmarkCommit(b *testing.B) {
	for _, fullSync := range []bool{false, true} {
		for _, records := range []string{"none", "upsert", "lifecycle"} {
			for _, size := range []int{1, 100, 1000} {
				name := fmt.Sprintf("batch=%d/records=%s/fullsync=%t", size, records, fullSync)
				b.Run(name, func(b *testing.B) {
					opts := []sqlite.Option{sqlite.WithTuningFromEnv()}
					if fullSync {
						opts = append(opts, sqlite.WithFullSync())
					}
					s, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"), opts...)
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()

					// Events and records are built ahead, so that the
					// benchmark times Commit alone: only seqs and
					// delivery IDs change.
					evs := benchEvents(size)
					var recs [3]store.Record
					for i, state := range [...]string{"open", "sent", "acked"} {
						recs[i] = benchRecord(0, state)
					}
					batch := store.Batch{
						Records: make([]store.Record, 0, size),
						Deletes: make([]store.Key, 0, size),
					}
					seq := uint64(0)
					batches := 0
					var latencies []time.Duration
					cpu0, written0 := cpuTime(), writtenBytes()
					for b.Loop() {
						batch.Events = evs[batches%len(evs)]
						batch.Records, batch.Deletes = batch.Records[:0], batch.Deletes[:0]
						for i := range batch.Events {
							seq++
							batch.Events[i].Seq = seq
							id := "d-" + strconv.FormatUint(seq/3, 10)
							switch {
							case records == "upsert", records == "lifecycle" && seq%3 != 2:
								r := recs[seq%3]
								r.ID = id
								batch.Records = append(batch.Records, r)
							case records == "lifecycle":
								batch.Deletes = append(batch.Deletes, store.Key{Kind: "delivery", ID: id})
							}
						}
						if records != "none" {
							batch.Watermark = seq
						}
						start := time.Now()
						if err := s.Commit(b.Context(), batch); err != nil {
							b.Fatal(err)
						}
						latencies = append(latencies, time.Since(start))
						batches++
					}
					// The CPU and bytes written include Close, which
					// checkpoints what is left of the WAL: that is part of
					// the cost of the commits.
					s.Close()
					cpu, written := cpuTime()-cpu0, writtenBytes()-written0
					n := float64(batches * size)
					b.ReportMetric(n/b.Elapsed().Seconds(), "events/s")
					b.ReportMetric(float64(batches)/b.Elapsed().Seconds(), "commits/s")
					b.ReportMetric(float64(cpu.Nanoseconds())/1e3/n, "cpu-µs/event")
					b.ReportMetric(float64(written)/n, "written-B/event")
					slices.Sort(latencies)
					b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1e3, "p99-ms")
					b.ReportMetric(float64(latencies[len(latencies)-1].Microseconds())/1e3, "max-ms")
				})
			}
		}
	}
}

// benchEvents builds batches of size events, enough of them to cover 30 000
// events, for BenchmarkCommit to cycle through.
func benchEvents(size int) [][]store.Event {
	var evs [][]store.Event
	seq := uint64(0)
	for range max(1, 30_000/size) {
		be := make([]store.Event, size)
		for i := range be {
			seq++
			be[i] = benchEvent(seq)
		}
		evs = append(evs, be)
	}
	return evs
}

// loadRecords is the number of open deliveries wilco must recover in
// seconds on start.
const loadRecords = 1_000_000

// loadDB returns the path of a database holding loadRecords delivery
// records, building it once per process.
var loadDB = sync.OnceValues(func() (string, error) {
	dir, err := benchDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "load.db")
	s, err := sqlite.Open(path, sqlite.WithTuningFromEnv())
	if err != nil {
		return "", err
	}
	defer s.Close()
	const per = 5000
	for lo := uint64(0); lo < loadRecords; lo += per {
		b := store.Batch{Events: []store.Event{benchEvent(lo/per + 1)}, Watermark: lo/per + 1}
		for d := lo; d < lo+per; d++ {
			b.Records = append(b.Records, benchRecord(d, "sent"))
		}
		if err := s.Commit(context.Background(), b); err != nil {
			return "", err
		}
	}
	return path, s.Close()
})

// BenchmarkLoad measures the recovery read: Load of a million records of
// about 200 bytes, from a freshly opened store.
func BenchmarkLoad(b *testing.B) {
	path, err := loadDB()
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuTime()
	for b.Loop() {
		s, err := sqlite.Open(path, sqlite.WithTuningFromEnv())
		if err != nil {
			b.Fatal(err)
		}
		n, bytes := 0, 0
		if _, err := s.Load(b.Context(), func(r store.Record) error {
			n++
			bytes += len(r.Data)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		s.Close()
		if n != loadRecords {
			b.Fatalf("loaded %d records, want %d", n, loadRecords)
		}
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(b.N*loadRecords)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/load")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/load")
}
