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
	"wilco/test/blackbox"
)

// Removing a tmux agent asks for its session's end with the removal: wilco
// killed after the removal is durable and before the session is ended
// ends it after its restart, and records that once; a further restart
// asks for nothing more.
func TestWilcoKilledBetweenAnAgentsRemovalAndItsSessionsEndEndsItOnceAfterARestart(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	dir := blackbox.NewRepo(t, "agents: []\n"+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir, perform.EnvKillBefore+"=StopSession")
	// An agent added through the API: wilco.yaml does not bring it back at
	// the next start.
	in.Must(201, in.Call("POST", "/v1/agents", blackbox.AdminToken, map[string]any{
		"name": "tui", "adapter": "tmux", "capabilities": []string{"go"}, "command": []string{tuiAgent(t)},
		"tmux": map[string]any{"ready": "^> ?$", "busy": "working…|thinking", "permission": `Allow .*\? \(y/n\)`, "settle": "500ms"},
	}))
	in.Submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt."})
	if got := in.WaitTask("T-1", 2*time.Minute, "success", "escalated", "stuck"); got.State != "success" {
		t.Fatalf("the task:\n%s\nserver:\n%s", got, blackbox.Tail(in.Stderr.String(), 40))
	}
	if !tuiSessionRuns(t, dir) {
		t.Fatal("the agent's session does not run after its task")
	}
	r := blackbox.WilcoCLI(t, dir, in.Url, time.Minute, "agents", "remove", "tui")
	in.WaitKilled(time.Minute)
	if r.Code == 0 {
		t.Fatalf("wilco agents remove answered although wilco was killed before the session's end:\n%s", r.Stdout)
	}
	if !tuiSessionRuns(t, dir) {
		t.Fatal("the session was ended before the kill: the test kills too late")
	}

	again := blackbox.ServeRepo(t, dir)
	again.Until("the removed agent's session is ended", time.Minute, func() bool {
		return len(again.EventsOf("agent.session_ended")) == 1 && !tuiSessionRuns(t, dir)
	})
	var a struct{ Status string }
	again.Must(200, again.Call("GET", "/v1/agents/tui", blackbox.AdminToken, nil), &a)
	again.Stop()

	third := blackbox.ServeRepo(t, dir)
	// Whatever this start asks for is performed and recorded before
	// what it did is checked.
	third.WaitEffectsPerformed(time.Minute)
	if n := len(third.EventsOf("agent.session_ended")); n != 1 {
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
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+
		"verify:\n  steps:\n    - {name: check, run: \"sh check.sh\", timeout: 10s}\n    - {name: count, run: "+blackbox.Quoted("echo run >> "+runs)+", timeout: 10s}\n")
	in := blackbox.ServeRepo(t, dir, perform.EnvKillBefore+"=report:VerifyResult")
	in.Submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt."})
	in.WaitKilled(2 * time.Minute)
	if n := countLines(t, runs); n != 1 {
		t.Fatalf("the verify steps ran %d times before the kill, want once", n)
	}

	again := blackbox.ServeRepo(t, dir)
	got := again.WaitTask("T-1", 2*time.Minute, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 1 || len(got.Failures) != 0 {
		t.Fatalf("the task ended %s at attempt %d, failures %+v:\n%s", got.State, got.Attempt, got.Failures, blackbox.Tail(again.Stderr.String(), 30))
	}
	if n := countLines(t, runs); n != 2 {
		t.Fatalf("the verify steps ran %d times in all, want twice (again after the restart)", n)
	}
	again.Stop()

	third := blackbox.ServeRepo(t, dir)
	// Whatever this start asks for is performed and recorded before
	// what it did is checked.
	third.WaitEffectsPerformed(time.Minute)
	if n := len(third.EventsOf("task.success")); n != 1 {
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
