package test

// Crash tests of the effects the core asks for: wilco is killed (SIGKILL,
// by itself through the test-only environment variable of package
// perform) between an effect's cause, durable in the log, and the record
// of its end; started again, it performs the effect and records its end
// once.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wilco/perform"
)

// waitKilled waits until the server has died of the SIGKILL it sent
// itself.
func (in *instance) waitKilled(timeout time.Duration) {
	in.t.Helper()
	select {
	case err := <-in.exited:
		in.exited <- err
		if err == nil || !strings.Contains(err.Error(), "killed") {
			in.t.Fatalf("wilco serve ended with %v, not killed:\n%s", err, tail(in.stderr.String(), 30))
		}
	case <-time.After(timeout):
		in.t.Fatalf("wilco serve was not killed in %s:\n%s", timeout, tail(in.stderr.String(), 30))
	}
}

// eventsOf returns the events of a type in the log.
func (in *instance) eventsOf(typ string) []event {
	in.t.Helper()
	evs, _ := in.events(0)
	var out []event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// Removing a tmux agent asks for its session's end with the removal: wilco
// killed after the removal is durable and before the session is ended
// ends it after its restart, and records that once; a further restart
// asks for nothing more.
func TestWilcoKilledBetweenAnAgentsRemovalAndItsSessionsEndEndsItOnceAfterARestart(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := newRepo(t, "agents: []\n"+checkStep)
	endTmux(t, dir)
	in := serveRepo(t, dir, perform.EnvKillBefore+"=StopSession")
	// An agent added through the API: wilco.yaml does not bring it back at
	// the next start.
	in.must(201, in.call("POST", "/v1/agents", adminToken, map[string]any{
		"name": "tui", "adapter": "tmux", "capabilities": []string{"go"}, "command": []string{tuiAgent(t)},
		"tmux": map[string]any{"ready": "^> ?$", "busy": "working…|thinking", "permission": `Allow .*\? \(y/n\)`, "settle": "500ms"},
	}))
	in.submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt."})
	if got := in.waitTask("T-1", 2*time.Minute, "success", "escalated", "stuck"); got.State != "success" {
		t.Fatalf("the task:\n%s\nserver:\n%s", got, tail(in.stderr.String(), 40))
	}
	if !tuiSessionRuns(t, dir) {
		t.Fatal("the agent's session does not run after its task")
	}
	r := wilcoCLI(t, dir, in.url, time.Minute, "agents", "remove", "tui")
	in.waitKilled(time.Minute)
	if r.code == 0 {
		t.Fatalf("wilco agents remove answered although wilco was killed before the session's end:\n%s", r.stdout)
	}
	if !tuiSessionRuns(t, dir) {
		t.Fatal("the session was ended before the kill: the test kills too late")
	}

	again := serveRepo(t, dir)
	again.until("the removed agent's session is ended", time.Minute, func() bool {
		return len(again.eventsOf("agent.session_ended")) == 1 && !tuiSessionRuns(t, dir)
	})
	var a struct{ Status string }
	again.must(200, again.call("GET", "/v1/agents/tui", adminToken, nil), &a)
	again.stop()

	third := serveRepo(t, dir)
	time.Sleep(time.Second) // what a start asks for is performed at once
	if n := len(third.eventsOf("agent.session_ended")); n != 1 {
		t.Fatalf("the session's end recorded %d times, want once", n)
	}
	if tuiSessionRuns(t, dir) {
		t.Fatal("a session of the removed agent runs again")
	}
}

// A verification's verdict reaches the core as an outcome: wilco killed
// after the verify steps passed and before the verdict is recorded runs
// them again after its restart (the verdict was never recorded), and the
// task ends once.
func TestWilcoKilledBetweenAVerdictAndItsRecordEndsTheTaskOnce(t *testing.T) {
	t.Parallel()
	runs := filepath.Join(t.TempDir(), "verify-runs")
	dir := newRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+
		"verify:\n  steps:\n    - {name: check, run: \"sh check.sh\", timeout: 10s}\n    - {name: count, run: "+quoted("echo run >> "+runs)+", timeout: 10s}\n")
	in := serveRepo(t, dir, perform.EnvKillBefore+"=report:VerifyResult")
	in.submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt."})
	in.waitKilled(2 * time.Minute)
	if n := countLines(t, runs); n != 1 {
		t.Fatalf("the verify steps ran %d times before the kill, want once", n)
	}

	again := serveRepo(t, dir)
	got := again.waitTask("T-1", 2*time.Minute, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 1 || len(got.Failures) != 0 {
		t.Fatalf("the task ended %s at attempt %d, failures %+v:\n%s", got.State, got.Attempt, got.Failures, tail(again.stderr.String(), 30))
	}
	if n := countLines(t, runs); n != 2 {
		t.Fatalf("the verify steps ran %d times in all, want twice (again after the restart)", n)
	}
	again.stop()

	third := serveRepo(t, dir)
	time.Sleep(time.Second) // what a start asks for is performed at once
	if n := len(third.eventsOf("task.success")); n != 1 {
		t.Fatalf("the task succeeded %d times, want once", n)
	}
	if n := countLines(t, runs); n != 2 {
		t.Fatalf("the verify steps ran again after the task ended: %d runs", n)
	}
}

// countLines counts the lines of a file (0 when it does not exist).
func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}
