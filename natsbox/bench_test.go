package natsbox_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"wilco/client"
	"wilco/wire"
)

// BenchmarkDeliveryLatency measures a message's way to a remote agent:
// from the call that creates an instruction (POST /v1/instructions, its
// events committed before the push) to the moment the agent's side hands
// it over,
// pushed over NATS JetStream, and for comparison long-polled over HTTP.
// The agent acknowledges each one (not timed) so that no dispatch cycle
// resends it. It reports the median and the 99th percentile.
func BenchmarkDeliveryLatency(b *testing.B) {
	for _, way := range []string{"nats", "http"} {
		b.Run(way, func(b *testing.B) {
			tb := setup(b)
			ctx := b.Context()
			arrived := make(chan string, 1024)
			var seen sync.Map
			hand := func(id string) {
				if _, dup := seen.LoadOrStore(id, true); !dup {
					arrived <- id
				}
			}
			switch way {
			case "nats":
				if err := tb.agent.Cycle(ctx); err != nil {
					b.Fatal(err)
				}
				go tb.agent.Messages(ctx, func(m wire.InboxMessage) error { //nolint:errcheck // ends with the benchmark
					hand(m.InstructionID)
					go tb.agent.Reply(ctx, map[string]any{"in_reply_to": m.InstructionID, "text": "ok, done"}) //nolint:errcheck // not timed
					return nil
				})
			case "http":
				ag := client.New(tb.d.URL, tb.token)
				go func() {
					for ctx.Err() == nil {
						msgs, err := ag.Inbox(ctx, 30*time.Second)
						if err != nil {
							continue
						}
						for _, m := range msgs {
							hand(m.InstructionID)
							go ag.Reply(ctx, wire.Reply{InReplyTo: m.InstructionID, Text: "ok, done"}) //nolint:errcheck // not timed
						}
					}
				}()
			}
			var lat []time.Duration
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				in, err := tb.admin.Instruct(ctx, wire.CreateInstruction{Agent: "far.1", Content: "note the time"})
				if err != nil {
					b.Fatal(err)
				}
				for id := range arrived {
					if id == in.ID {
						break
					}
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
		})
	}
}
