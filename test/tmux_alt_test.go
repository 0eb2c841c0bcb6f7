package test

import (
	"testing"
	"time"

	"wilco/test/blackbox"
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
	blackbox.NeedTmux(t)
	dir := blackbox.NewRepo(t, "agents:\n"+tuiAgentYAML(t, "TUIAGENT_ALT: '1', TUIAGENT_BUSY: 400ms", ", width: 100, height: 30")+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	criteria := []string{"first.txt holds the word first", "second.txt holds the word second", "third.txt holds the word third"}
	ids := []string{"T-1", "T-2", "T-3", "T-4"}
	for _, id := range ids {
		in.Submit(map[string]any{"id": id, "description": "Write the fix into file.txt LONG", "acceptance_criteria": criteria})
	}
	for _, id := range ids {
		got := in.WaitTask(id, 3*time.Minute, "success", "escalated", "stuck", "failed")
		if got.State != "success" || got.Attempt != 2 {
			t.Fatalf("%s ended %s at attempt %d (want success at 2):\n%s\nthe agent's logs:\n%s\nserver:\n%s", id, got.State, got.Attempt, got, blackbox.AgentLogs(t, dir), blackbox.Tail(in.Stderr.String(), 30))
		}
	}
	attempts := map[string]int{}
	for _, id := range ids {
		attempts[id] = 2
	}
	blackbox.CheckReadRight(t, in, dir, attempts, tuiLongUnderstanding)
}
