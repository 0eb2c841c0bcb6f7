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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	tmuxadapter "wilco/adapter/tmux"
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

// needTmux skips a test when tmux cannot be run, saying why.
func needTmux(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("tmux")
	if err != nil {
		t.Skipf("tmux is not installed (apt-get install tmux): %v", err)
	}
	return path
}

// endTmux ends the tmux server wilco started for the repository's agents
// once the test is over (wilco leaves its agents' sessions running), and
// waits for the programs in its panes, and their children, to be gone.
func endTmux(t testing.TB, dir string) {
	t.Cleanup(func() {
		// wilco's server for the repository: its socket in .wilco, or, for
		// a path too long for a socket, a name made from it.
		srv, err := tmuxadapter.PrivateServer("", filepath.Join(dir, ".wilco"), nil)
		if err != nil {
			t.Error(err)
			return
		}
		out, _ := exec.Command("tmux", srv.Args("list-panes", "-a", "-F", "#{pane_pid}")...).Output()
		_ = exec.Command("tmux", srv.Args("kill-server")...).Run()
		for _, f := range strings.Fields(string(out)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			// The pane's program leads a process group of its own (the
			// shell around the agent's program, the program, its
			// children): wait until none of it is left.
			eventually(15*time.Second, 50*time.Millisecond, func() bool {
				return syscall.Kill(-pid, 0) != nil && syscall.Kill(pid, 0) != nil
			})
		}
	})
}

// endPanes ends a tmux server the test started itself and the programs in
// its panes: Gemini CLI goes on running once its terminal hung up, so what
// is left of a pane's process group a moment later is terminated.
func endPanes(srv tmuxadapter.Server) {
	out, _ := exec.Command("tmux", srv.Args("list-panes", "-a", "-F", "#{pane_pid}")...).Output()
	_ = srv.KillServer(context.Background())
	for _, f := range strings.Fields(string(out)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		gone := func() bool { return syscall.Kill(-pid, 0) != nil }
		if !eventually(2*time.Second, 50*time.Millisecond, gone) {
			_ = syscall.Kill(-pid, syscall.SIGTERM)
			if !eventually(5*time.Second, 50*time.Millisecond, gone) {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	}
}

// serveTUI serves a repository whose one agent is the scripted TUI, "tui",
// on a tmux server ended with the test.
func serveTUI(t *testing.T) (string, *instance) {
	t.Helper()
	needTmux(t)
	dir := newRepo(t, "agents:\n"+tuiAgentYAML(t, "", "")+checkStep)
	endTmux(t, dir)
	return dir, serveRepo(t, dir)
}

// tuiSessionRuns reports whether the session wilco made for "tui" runs.
func tuiSessionRuns(t *testing.T, dir string) bool {
	return exec.Command("tmux", tmuxServer(t, dir).Args("has-session", "-t", "=wilco-tui")...).Run() == nil
}

// tmuxServer is wilco's tmux server for the repository at dir.
func tmuxServer(t testing.TB, dir string) tmuxadapter.Server {
	t.Helper()
	srv, err := tmuxadapter.PrivateServer("", filepath.Join(dir, ".wilco"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// tuiAgentYAML is the wilco.yaml agent of the scripted interactive agent.
func tuiAgentYAML(t testing.TB, env string, tmux string) string {
	return fmt.Sprintf("  - name: tui\n    adapter: tmux\n    command: [%s]\n    env: {%s}\n    tmux: {ready: '^> ?$', busy: 'working…|thinking', permission: 'Allow .*\\? \\(y/n\\)', settle: 500ms%s}\n",
		quoted(tuiAgent(t)), env, tmux)
}

// A task delegated to a tmux agent — whose first submit key is lost — is
// pasted, resubmitted, acknowledged in the pane, worked (a real file
// written), verified, failed, retried with the failure and verified.
func TestATmuxAgentIsDeliveredAcknowledgedRetriedAndVerified(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := newRepo(t, "agents:\n"+tuiAgentYAML(t, "TUIAGENT_SWALLOW: \"1\"", "")+checkStep)
	endTmux(t, dir)
	in := serveRepo(t, dir)
	in.submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt"})
	got := in.waitTask("T-1", 2*time.Minute, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 2 {
		t.Fatalf("the task ended %s at attempt %d:\n%s\nthe agent's logs:\n%s", got.State, got.Attempt, got, agentLogs(t, dir))
	}
	if readFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
		t.Fatal("the agent's fix is not in the repository")
	}
	// Each attempt's prompt was submitted twice: the first key was lost.
	logs := readFile(t, filepath.Join(dir, ".wilco", "runs", "T-1-a1", "agent.log"))
	mustContain(t, "T-1-a1/agent.log", logs, "prompt submitted (submit key sent 2 time(s))", "[ACK] T-1 - RECEIVED", "Status: complete")
	mustContain(t, "the server's log", in.stderr.String(), "the submit key was lost; sending it again")
	// The retry's prompt, as the agent received it, carried the failure.
	tr := in.cli("transcript", "T-1", "--attempt", "2", "--full")
	mustContain(t, "wilco transcript T-1 --attempt 2", tr, `<retry_context attempt="2"`, "file.txt is not fixed")
	// wilco agents shows the pane's state; wilco attach opens its session.
	mustContain(t, "wilco agents", in.cli("agents"), "tui", "tmux", "pane ready")
	srv := tmuxServer(t, dir)
	srv.Conf = "" // a running server needs no configuration file
	mustContain(t, "wilco attach --print", in.cli("attach", "tui", "--print"), append(srv.Args("attach-session"), "=wilco-tui")...)
}

// A tmux agent whose program crashes in the middle of a turn: the attempt
// fails as an execution error with the pane's last lines, and the retry
// runs the program again.
func TestATmuxAgentThatCrashesIsAnExecutionErrorWithThePanesLastLines(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := newRepo(t, "agents:\n"+tuiAgentYAML(t, "", "")+checkStep+"policy:\n  loop: {escalate_after: 1}\n")
	endTmux(t, dir)
	in := serveRepo(t, dir)
	in.submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt. CRASH"})
	got := in.waitTask("T-1", 2*time.Minute, "escalated", "success", "stuck")
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
	in.submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt. BUSY=6s"})
	waitMilestone(t, in, "T-1", "Implementing", time.Minute)
	r := wilcoCLI(t, dir, in.url, 2*time.Minute, "op", "restart", "--agent", "tui", "--timeout", "2s", "--reminders", "1s")
	if r.code != 0 || !strings.Contains(r.stdout, "OP-") || !strings.Contains(r.stdout, "restarted") {
		t.Fatalf("wilco op restart: exit %d\n%s%s\nserver:\n%s", r.code, r.stdout, r.stderr, tail(in.stderr.String(), 30))
	}
	got := in.waitTask("T-1", 2*time.Minute, "success", "escalated", "stuck")
	if got.State != "success" {
		t.Fatalf("the task after the restart:\n%s\nserver:\n%s", got, tail(in.stderr.String(), 40))
	}

	// Ready: the agent answers "ok" in its pane, then is hibernated.
	r = wilcoCLI(t, dir, in.url, 2*time.Minute, "op", "hibernate", "--agent", "tui")
	if r.code != 0 || !strings.Contains(r.stdout, "tui: ok") || !strings.Contains(r.stdout, "hibernated") {
		t.Fatalf("wilco op hibernate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "wilco agents", in.cli("agents"), "hibernating, pane hibernating")
	if tuiSessionRuns(t, dir) {
		t.Fatal("the hibernated agent's session still runs")
	}
	// Hibernated, it cannot answer: the wake proceeds at its timeout.
	r = wilcoCLI(t, dir, in.url, 2*time.Minute, "op", "wake", "--agent", "tui", "--timeout", "1s", "--reminders", "500ms")
	if r.code != 0 || !strings.Contains(r.stdout, "woken") {
		t.Fatalf("wilco op wake: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "wilco agents", in.cli("agents"), "available, pane ready")

	// The operation log: every operation, and one's round step by step.
	log := in.cli("op", "log")
	mustContain(t, "wilco op log", log, "OP-1", "restart", "OP-2", "hibernate", "OP-3", "wake", "tui=ok")
	round := in.cli("op", "log", "OP-2")
	mustContain(t, "wilco op log OP-2", round, "hibernate asks tui", "request sent", "answered ok", "waiting → proceeding", "done: hibernated", "status available → hibernating")
	first := in.cli("op", "log", "OP-1")
	mustContain(t, "wilco op log OP-1", first, "reminder 1", "no answer: timeout", "proceeding anyway", "done: restarted")
}

// waitMilestone waits until the task's milestone contains want.
func waitMilestone(t *testing.T, in *instance, id, want string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		var v struct{ Milestone string }
		in.must(200, in.call("GET", "/v1/tasks/"+id, adminToken, nil), &v)
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
	in.submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt. BUSY=6s"})
	waitMilestone(t, in, "T-1", "Implementing", time.Minute)
	in.kill()
	if !tuiSessionRuns(t, dir) {
		t.Fatal("the agent's session died with wilco")
	}
	again := serveRepo(t, dir)
	got := again.waitTask("T-1", 2*time.Minute, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 2 {
		t.Fatalf("the task ended %s at attempt %d:\n%s\nthe agent's logs:\n%s", got.State, got.Attempt, got, agentLogs(t, dir))
	}
	mustContain(t, "the server's log", again.stderr.String(), "the agent's session runs already: used as it is", "following again the turn of a tmux agent")
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
	in.submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt."})
	if got := in.waitTask("T-1", 2*time.Minute, "success", "escalated", "stuck"); got.State != "success" {
		t.Fatalf("the task:\n%s\nserver:\n%s", got, tail(in.stderr.String(), 40))
	}
	if !tuiSessionRuns(t, dir) {
		t.Fatal("the agent's session does not run after its task")
	}
	r := wilcoCLI(t, dir, in.url, time.Minute, "agents", "remove", "tui")
	if r.code != 0 {
		t.Fatalf("wilco agents remove: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if tuiSessionRuns(t, dir) {
		t.Fatal("the removed agent's session still runs")
	}
}
