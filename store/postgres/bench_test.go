package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"wilco/store"
)

// BenchmarkCommit measures one Commit of n events and n records, as the
// runtime's group commit sends them.
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{1, 64, 256, 1024, 4096} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := open(b, newRepo(b))
			seq := uint64(0)
			data := []byte(`{"id":"D-00000001","agent":"agent-17","attempt":2,"state":"acknowledged"}`)
			b.ResetTimer()
			for b.Loop() {
				var batch store.Batch
				for i := range n {
					seq++
					batch.Events = append(batch.Events, store.Event{Seq: seq, Time: time.Now(), Type: "delivery.acknowledged", Agent: "agent-17", Data: data})
					batch.Records = append(batch.Records, store.Record{Kind: "delivery", ID: fmt.Sprintf("D-%d", i), State: "acknowledged", Agent: "agent-17", Data: data})
				}
				batch.Watermark = seq
				if err := s.Commit(b.Context(), batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
