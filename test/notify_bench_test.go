package test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// BenchmarkEscalationReachesItsWebhook escalates a task b.N times (an
// agent that changes nothing, escalate_after: 1) with a webhook that hears
// of escalations and answers 200 at once, and reports how long each
// notification took to arrive: from the escalation's event (the body's
// time, when the core decided) to the request at the webhook, which
// includes the commit, the effect and the HTTP request. The median and the
// max go in docs/BENCHMARKS.md:
//
//	go test ./test -run '^$' -bench EscalationReachesItsWebhook -benchtime 30x
func BenchmarkEscalationReachesItsWebhook(b *testing.B) {
	hook := newHookReceiver(b, "s", 0)
	yaml := "agents:\n" + execAgent(b, "noop", "noop.sh", nil) + checkStep +
		"policy:\n  loop: {escalate_after: 1}\n" +
		"notify:\n  webhooks:\n    - {name: ops, url: \"" + hook.srv.URL + "/\", secret: s, events: [escalated]}\n"
	dir := newRepo(b, yaml)
	in := serveRepo(b, dir)
	var lat []time.Duration
	for i := 0; i < b.N; i++ {
		id := fmt.Sprintf("B-%d", i+1)
		in.submit(map[string]any{"id": id, "description": "Make the check pass"})
		in.waitTask(id, time.Minute, "escalated")
		var r hookRequest
		if !eventually(time.Minute, time.Millisecond, func() bool { var ok bool; r, ok = hook.find(id); return ok }) {
			b.Fatalf("no notification of %s", id)
		}
		var body struct {
			Time time.Time `json:"time"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, r.at.Sub(body.Time))
		in.must(200, in.call("POST", "/v1/tasks/"+id+"/respond", adminToken, map[string]any{"action": "abort"}))
	}
	med, mx := medianMax(lat)
	b.ReportMetric(float64(med.Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(mx.Microseconds())/1000, "max-ms")
}
