package test

// Black-box tests of tmux agents: the real binary, real tmux (on a server
// of the test's own), and a scripted interactive agent
// (adapter/tmux/testdata/tuiagent) that draws a prompt, reads keys in raw
// mode with bracketed paste, and answers as an agent would.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/test/blackbox"
)

var (
	tuiOnce sync.Once
	tuiPath string
	tuiErr  error
)

// tuiAgent builds the scripted interactive agent once per test binary.
func tuiAgent(t testing.TB) string {
	t.Helper()
	tuiOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wilco-tuiagent-")
		if err != nil {
			tuiErr = err
			return
		}
		tuiPath = filepath.Join(dir, "tuiagent")
		root, _ := filepath.Abs("..")
		cmd := exec.Command("go", "build", "-o", tuiPath, "./adapter/tmux/testdata/tuiagent")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			tuiErr = fmt.Errorf("build the scripted agent: %v\n%s", err, out)
		}
	})
	if tuiErr != nil {
		t.Fatal(tuiErr)
	}
	return tuiPath
}

// serveTUI serves a repository whose one agent is the scripted TUI, "tui",
// on a tmux server ended with the test.
func serveTUI(t *testing.T) (string, *blackbox.Instance) {
	t.Helper()
	blackbox.NeedTmux(t)
	dir := blackbox.NewRepo(t, "agents:\n"+tuiAgentYAML(t, "", "")+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	return dir, blackbox.ServeRepo(t, dir)
}

// tuiSessionRuns reports whether the session wilco made for "tui" runs.
func tuiSessionRuns(t *testing.T, dir string) bool {
	return exec.Command("tmux", blackbox.TmuxServer(t, dir).Args("has-session", "-t", "=wilco-tui")...).Run() == nil
}

// tuiAgentYAML is the wilco.yaml agent of the scripted interactive agent.
func tuiAgentYAML(t testing.TB, env string, tmux string) string {
	return fmt.Sprintf("  - name: tui\n    adapter: tmux\n    command: [%s]\n    env: {%s}\n    tmux: {ready: '^> ?$', busy: 'working…|thinking', permission: 'Allow .*\\? \\(y/n\\)', settle: 500ms%s}\n",
		blackbox.Quoted(tuiAgent(t)), env, tmux)
}

// A task delegated to a tmux agent — whose first submit key is lost — is
// pasted, resubmitted, acknowledged in the pane, worked (a real file
// written), verified, failed, retried with the failure and verified.
func TestATmuxAgentIsDeliveredAcknowledgedRetriedAndVerified(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	dir := blackbox.NewRepo(t, "agents:\n"+tuiAgentYAML(t, "TUIAGENT_SWALLOW: \"1\"", "")+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt"})
	got := in.WaitTask("T-1", 2*time.Minute, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 2 {
		t.Fatalf("the task ended %s at attempt %d:\n%s\nthe agent's logs:\n%s", got.State, got.Attempt, got, blackbox.AgentLogs(t, dir))
	}
	if blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
		t.Fatal("the agent's fix is not in the repository")
	}
	// Each attempt's prompt was submitted twice: the first key was lost.
	logs := blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", "T-1-a1", "agent.log"))
	blackbox.MustContain(t, "T-1-a1/agent.log", logs, "prompt submitted (submit key sent 2 time(s))", "[ACK] T-1 - RECEIVED", "Status: complete")
	blackbox.MustContain(t, "the server's log", in.Stderr.String(), "the submit key was lost; sending it again")
	// The retry's prompt, as the agent received it, carried the failure.
	tr := in.Cli("transcript", "T-1", "--attempt", "2", "--full")
	blackbox.MustContain(t, "wilco transcript T-1 --attempt 2", tr, `<retry_context attempt="2"`, "file.txt is not fixed")
	// wilco agents shows the pane's state; wilco attach opens its session.
	blackbox.MustContain(t, "wilco agents", in.Cli("agents"), "tui", "tmux", "pane ready")
	srv := blackbox.TmuxServer(t, dir)
	srv.Conf = "" // a running server needs no configuration file
	blackbox.MustContain(t, "wilco attach --print", in.Cli("attach", "tui", "--print"), append(srv.Args("attach-session"), "=wilco-tui")...)
}

// A tmux agent whose program crashes in the middle of a turn: the attempt
// fails as an execution error with the pane's last lines, and the retry
// runs the program again.
func TestATmuxAgentThatCrashesIsAnExecutionErrorWithThePanesLastLines(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	dir := blackbox.NewRepo(t, "agents:\n"+tuiAgentYAML(t, "", "")+blackbox.CheckStep+"policy:\n  loop: {escalate_after: 1}\n")
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt. CRASH"})
	got := in.WaitTask("T-1", 2*time.Minute, "escalated", "success", "stuck")
	if got.State != "escalated" || len(got.Failures) != 1 || got.Failures[0].FailureType != "execution_error" ||
		!strings.Contains(got.Failures[0].ExecutorOutput.Error, "panic: scripted crash") || !strings.Contains(got.Failures[0].ExecutorOutput.Error, "exited (status 3)") {
		t.Fatalf("the task:\n%s", got)
	}
}

// Operations on a tmux agent, each after its "ok" round answered in the
// agent's own pane: a restart while the agent works on a task (the
// operation proceeds at its timeout; the task goes on and succeeds),
// then hibernate (the program stops) and wake (it starts again and is
// ready); the operation log shows each round.
func TestOperationsOnATmuxAgentAskForOkThenRestartHibernateAndWakeIt(t *testing.T) {
	t.Parallel()
	dir, in := serveTUI(t)

	// Busy on a task: the request waits for the pane (never typed into a
	// busy agent), the timeout comes, the restart proceeds anyway.
	in.Submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt. BUSY=6s"})
	waitMilestone(t, in, "T-1", "Implementing", time.Minute)
	r := blackbox.WilcoCLI(t, dir, in.Url, 2*time.Minute, "op", "restart", "--agent", "tui", "--timeout", "2s", "--reminders", "1s")
	if r.Code != 0 || !strings.Contains(r.Stdout, "OP-") || !strings.Contains(r.Stdout, "restarted") {
		t.Fatalf("wilco op restart: exit %d\n%s%s\nserver:\n%s", r.Code, r.Stdout, r.Stderr, blackbox.Tail(in.Stderr.String(), 30))
	}
	got := in.WaitTask("T-1", 2*time.Minute, "success", "escalated", "stuck")
	if got.State != "success" {
		t.Fatalf("the task after the restart:\n%s\nserver:\n%s", got, blackbox.Tail(in.Stderr.String(), 40))
	}

	// Ready: the agent answers "ok" in its pane, then is hibernated.
	r = blackbox.WilcoCLI(t, dir, in.Url, 2*time.Minute, "op", "hibernate", "--agent", "tui")
	if r.Code != 0 || !strings.Contains(r.Stdout, "tui: ok") || !strings.Contains(r.Stdout, "hibernated") {
		t.Fatalf("wilco op hibernate: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	blackbox.MustContain(t, "wilco agents", in.Cli("agents"), "hibernating, pane hibernating")
	if tuiSessionRuns(t, dir) {
		t.Fatal("the hibernated agent's session still runs")
	}
	// Hibernated, it cannot answer: the wake proceeds at its timeout.
	r = blackbox.WilcoCLI(t, dir, in.Url, 2*time.Minute, "op", "wake", "--agent", "tui", "--timeout", "1s", "--reminders", "500ms")
	if r.Code != 0 || !strings.Contains(r.Stdout, "woken") {
		t.Fatalf("wilco op wake: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	blackbox.MustContain(t, "wilco agents", in.Cli("agents"), "available, pane ready")

	// The operation log: every operation, and one's round step by step.
	log := in.Cli("op", "log")
	blackbox.MustContain(t, "wilco op log", log, "OP-1", "restart", "OP-2", "hibernate", "OP-3", "wake", "tui=ok")
	round := in.Cli("op", "log", "OP-2")
	blackbox.MustContain(t, "wilco op log OP-2", round, "hibernate asks tui", "request sent", "answered ok", "waiting → proceeding", "done: hibernated", "status available → hibernating")
	first := in.Cli("op", "log", "OP-1")
	blackbox.MustContain(t, "wilco op log OP-1", first, "reminder 1", "no answer: timeout", "proceeding anyway", "done: restarted")
}

// waitMilestone waits until the task's milestone contains want.
func waitMilestone(t *testing.T, in *blackbox.Instance, id, want string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		var v struct{ Milestone string }
		in.Must(200, in.Call("GET", "/v1/tasks/"+id, blackbox.AdminToken, nil), &v)
		if strings.Contains(v.Milestone, want) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("task %s never showed %q (last: %q)", id, want, v.Milestone)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// A tmux agent's session outlives wilco: killed (kill -9) while the agent
// works on a task, wilco started again finds the session running, follows
// the turn to its end, and the task goes on to success.
func TestATmuxAgentsTurnIsFollowedAgainAfterWilcoIsKilled(t *testing.T) {
	t.Parallel()
	dir, in := serveTUI(t)
	in.Submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt. BUSY=6s"})
	waitMilestone(t, in, "T-1", "Implementing", time.Minute)
	in.Kill()
	if !tuiSessionRuns(t, dir) {
		t.Fatal("the agent's session died with wilco")
	}
	again := blackbox.ServeRepo(t, dir)
	got := again.WaitTask("T-1", 2*time.Minute, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 2 {
		t.Fatalf("the task ended %s at attempt %d:\n%s\nthe agent's logs:\n%s", got.State, got.Attempt, got, blackbox.AgentLogs(t, dir))
	}
	blackbox.MustContain(t, "the server's log", again.Stderr.String(), "the agent's session runs already: used as it is", "following again the turn of a tmux agent")
	// The first attempt's turn, followed by the second wilco, was verified.
	if len(got.Failures) != 1 || got.Failures[0].FailureType != "verification_failed" {
		t.Fatalf("the first attempt: %+v", got.Failures)
	}
}

// Removing a tmux agent (wilco agents remove) ends the session wilco made
// for it: its program does not go on running, unseen, after it left service.
func TestRemovingATmuxAgentEndsItsSession(t *testing.T) {
	t.Parallel()
	dir, in := serveTUI(t)
	in.Submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt."})
	if got := in.WaitTask("T-1", 2*time.Minute, "success", "escalated", "stuck"); got.State != "success" {
		t.Fatalf("the task:\n%s\nserver:\n%s", got, blackbox.Tail(in.Stderr.String(), 40))
	}
	if !tuiSessionRuns(t, dir) {
		t.Fatal("the agent's session does not run after its task")
	}
	r := blackbox.WilcoCLI(t, dir, in.Url, time.Minute, "agents", "remove", "tui")
	if r.Code != 0 {
		t.Fatalf("wilco agents remove: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if tuiSessionRuns(t, dir) {
		t.Fatal("the removed agent's session still runs")
	}
}
