package test

// Black-box tests of acknowledgments as models stream them.

import (
	"strings"
	"testing"
	"time"
)

// An ACK whose Understanding: comes after a blank line and a pause in the
// stream is judged once it is whole: accepted, never corrected.
func TestAckWithAPauseBeforeItsUnderstandingIsNotCorrected(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, "agents:\n"+execAgent(t, "streamer", "ack_pause.sh", nil)+checkStep)
	in := serveRepo(t, dir)
	in.submit(map[string]any{"id": "A-1", "description": "Write the fix into file.txt", "acceptance_criteria": []string{"the fix is in file.txt"}})
	got := in.waitTask("A-1", 60*time.Second, "success", "escalated")
	if got.State != "success" || got.Attempt != 1 {
		t.Fatalf("the task ended %s at attempt %d:\n%s", got.State, got.Attempt, got)
	}
	var evs struct{ Events []event }
	in.must(200, in.call("GET", "/v1/events?task=A-1&follow=false", adminToken, nil), &evs)
	for _, e := range evs.Events {
		if e.Type == "delivery.notice" && strings.Contains(string(e.Data), "correction") || strings.Contains(string(e.Data), "CORRECTION") {
			t.Fatalf("the ACK was corrected: %s %s", e.Type, e.Data)
		}
	}
}
