package test

// Black-box tests of acknowledgments as models stream them.

import (
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// An ACK whose Understanding: comes after a blank line and a pause in the
// stream is judged once it is whole: accepted, never corrected.
func TestAckWithAPauseBeforeItsUnderstandingIsNotCorrected(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "streamer", "ack_pause.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "A-1", "description": "Write the fix into file.txt", "acceptance_criteria": []string{"the fix is in file.txt"}})
	got := in.WaitTask("A-1", 60*time.Second, "success", "escalated")
	if got.State != "success" || got.Attempt != 1 {
		t.Fatalf("the task ended %s at attempt %d:\n%s", got.State, got.Attempt, got)
	}
	var evs struct{ Events []blackbox.Event }
	in.Must(200, in.Call("GET", "/v1/events?task=A-1&follow=false", blackbox.AdminToken, nil), &evs)
	for _, e := range evs.Events {
		if e.Type == "delivery.notice" && strings.Contains(string(e.Data), "correction") || strings.Contains(string(e.Data), "CORRECTION") {
			t.Fatalf("the ACK was corrected: %s %s", e.Type, e.Data)
		}
	}
}
