package test

// Failures that retrying cannot fix, waits that must not be silent, and
// remote agents across a restart of the server.

import (
	"strings"
	"testing"
	"time"
)

// After kill -9 and a restart, a mailbox agent's running attempt stays
// running: the agent is still working, and its late report is accepted.
func TestRemoteAgentsAttemptSurvivesAServerKill(t *testing.T) {
	t.Parallel()
	in, tok := mailboxRepo(t)
	in.submit(map[string]any{"id": "R-1", "description": "Write the fix into file.txt"})
	m := in.acceptTask(tok, "R-1")
	in.kill()

	in2 := serveRepo(t, in.dir)
	// Give recovery time to run: the task must still be running on
	// attempt 1 once the server answers and has settled.
	in2.until("recovery to settle", 30*time.Second, func() bool {
		for _, ev := range in2.taskEvents("R-1", "task.milestone") {
			if text, _ := eventData(t, ev)["text"].(string); strings.Contains(text, "restarted") {
				return true
			}
		}
		return in2.task("R-1").State != "running"
	})
	if got := in2.task("R-1"); got.State != "running" || got.Attempt != 1 || len(got.Failures) != 0 {
		t.Fatalf("after the restart the remote agent's attempt is no longer running:\n%s", got)
	}
	in2.fix("R-1")
	got := in2.replyAs(tok, map[string]any{"in_reply_to": m.ID, "text": "I wrote the fix into file.txt.\n\nStatus: complete"})
	if got["kind"] != "complete" {
		t.Fatalf("the late report was taken as %v", got)
	}
	if done := in2.waitTask("R-1", 30*time.Second, "success"); done.Attempt != 1 || len(done.Failures) != 0 {
		t.Fatalf("after the late report:\n%s", done)
	}
}
