package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The understanding the scripted TUI gives for a task that says LONG:
// wider than its pane, so it wraps it itself.
const tuiLongUnderstanding = "will write the fix into file.txt so that the check passes, and make sure that first.txt holds the word first, " +
	"that second.txt holds the word second, and that third.txt holds the word third, as the criteria say"

// A program wilco keeps no record of, drawn on the alternate screen: no
// scrollback, its own wrapping, a redraw on every change, rows re-wrapped
// narrower once a file was written, and a prompt longer than the pane is
// high. Four tasks through one session, each failing once and retried with
// an answer whose lines repeat the first attempt's word for word: each is
// acknowledged once with its whole Understanding, never with another's
// ACK, and no line of a prompt is read as the agent's.
func TestAProgramOnTheAlternateScreenIsReadRightThroughFourTasks(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := newRepo(t, "agents:\n"+tuiAgentYAML(t, "TUIAGENT_ALT: '1', TUIAGENT_BUSY: 400ms", ", width: 100, height: 30")+checkStep)
	endTmux(t, dir)
	in := serveRepo(t, dir)
	criteria := []string{"first.txt holds the word first", "second.txt holds the word second", "third.txt holds the word third"}
	ids := []string{"T-1", "T-2", "T-3", "T-4"}
	for _, id := range ids {
		in.submit(map[string]any{"id": id, "description": "Write the fix into file.txt LONG", "acceptance_criteria": criteria})
	}
	for _, id := range ids {
		got := in.waitTask(id, 3*time.Minute, "success", "escalated", "stuck", "failed")
		if got.State != "success" || got.Attempt != 2 {
			t.Fatalf("%s ended %s at attempt %d (want success at 2):\n%s\nthe agent's logs:\n%s\nserver:\n%s", id, got.State, got.Attempt, got, agentLogs(t, dir), tail(in.stderr.String(), 30))
		}
	}
	for _, id := range ids {
		var msgs struct{ Messages []message }
		in.must(200, in.call("GET", "/v1/messages?task="+id, adminToken, nil), &msgs)
		for _, m := range msgs.Messages {
			if m.Type == "task_delegation" && (m.State != "acknowledged" || m.Understanding != tuiLongUnderstanding) {
				t.Errorf("%s: the delegation %s is %s with the understanding %q", id, m.ID, m.State, m.Understanding)
			}
		}
	}
	evs, _ := in.events(0)
	for _, e := range evs {
		if d := string(e.Data); strings.Contains(d, `"kind":"correction"`) || strings.Contains(d, `"kind":"wrong_id"`) || strings.Contains(d, `"kind":"ack_request"`) {
			t.Errorf("wilco sent %s to the agent although it acknowledged each task right: %s", e.Type, d)
		}
	}
	runs, _ := filepath.Glob(filepath.Join(dir, ".wilco", "runs", "T-*"))
	if len(runs) != 8 {
		t.Fatalf("%d runs: %v", len(runs), runs)
	}
	for _, run := range runs {
		b, _ := os.ReadFile(filepath.Join(run, "agent.log"))
		acks := 0
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "--- wilco") {
				continue
			}
			acks += strings.Count(l, "[ACK] ")
			for _, p := range promptLines {
				if strings.Contains(l, p) {
					t.Errorf("%s: the agent's log holds a line of the prompt: %q", filepath.Base(run), l)
				}
			}
		}
		if acks != 1 {
			t.Errorf("%s: the agent's log holds %d ACKs, want 1:\n%s", filepath.Base(run), acks, b)
		}
	}
}
