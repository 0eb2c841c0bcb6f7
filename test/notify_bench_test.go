package test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"wilco/test/blackbox"
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
	yaml := "agents:\n" + execAgent(b, "noop", "noop.sh", nil) + blackbox.CheckStep +
		"policy:\n  loop: {escalate_after: 1}\n" +
		"notify:\n  webhooks:\n    - {name: ops, url: \"" + hook.srv.URL + "/\", secret: s, events: [escalated]}\n"
	dir := blackbox.NewRepo(b, yaml)
	in := blackbox.ServeRepo(b, dir)
	var lat []time.Duration
	for i := 0; i < b.N; i++ {
		id := fmt.Sprintf("B-%d", i+1)
		in.Submit(map[string]any{"id": id, "description": "Make the check pass"})
		in.WaitTask(id, time.Minute, "escalated")
		var r hookRequest
		if !blackbox.Eventually(time.Minute, time.Millisecond, func() bool { var ok bool; r, ok = hook.find(id); return ok }) {
			b.Fatalf("no notification of %s", id)
		}
		var body struct {
			Time time.Time `json:"time"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, r.at.Sub(body.Time))
		in.Must(200, in.Call("POST", "/v1/tasks/"+id+"/respond", blackbox.AdminToken, map[string]any{"action": "abort"}))
	}
	med, mx := blackbox.MedianMax(lat)
	b.ReportMetric(float64(med.Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(mx.Microseconds())/1000, "max-ms")
}
