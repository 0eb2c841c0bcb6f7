package test

// Black-box tests of wilco on a repository as a user sets it up: one
// server per repository, servers of two repositories side by side, config
// edits that take effect, and `wilco config check`.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// serveArgs starts `wilco serve ARGS…` in dir (the CLI's environment, no
// address or config flags unless given) and returns it with its output.
func serveArgs(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, *blackbox.LockedBuffer, chan error) {
	t.Helper()
	cmd := exec.Command(blackbox.WilcoBin, append([]string{"serve"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "WILCO_TOKEN="+blackbox.AdminToken), env...)
	out := &blackbox.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	return cmd, out, done
}

// waitAddr waits for the server of dir to write its address.
func waitAddr(t *testing.T, dir string, out *blackbox.LockedBuffer, done chan error) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(dir, ".wilco", "addr")); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("wilco serve exited at start: %v\n%s", err, out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("wilco serve wrote no address:\n%s", out)
	return ""
}

// inRepo runs the CLI in dir with no address or config flag or variable:
// it must find dir's own server.
func inRepo(t *testing.T, dir string, args ...string) blackbox.CliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, blackbox.WilcoBin, args...)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WILCO_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "WILCO_TOKEN="+blackbox.AdminToken)
	var out, errb blackbox.LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := blackbox.CliResult{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.Code = -1
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

// A second server on the same repository exits 1 at once, naming the
// first (pid, address); the first goes on serving; after the first is
// killed with SIGKILL, a new one starts.
func TestSecondServerOnTheSameRepositoryExitsNamingTheFirst(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "listen: 127.0.0.1:0\nagents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+blackbox.CheckStep)
	first, out, done := serveArgs(t, dir, nil)
	url := waitAddr(t, dir, out, done)

	for _, args := range [][]string{{"serve"}, {"serve", "--addr", "127.0.0.1:0"}} {
		r := blackbox.WilcoCLI(t, dir, "http://127.0.0.1:1", 20*time.Second, args...)
		want := fmt.Sprintf("another wilco (pid %d) already serves this repository at %s", first.Process.Pid, url)
		if r.Code != 1 || !strings.Contains(r.Stderr, want) {
			t.Fatalf("wilco %s beside a running server: exit %d, want 1 saying %q\n%s%s", strings.Join(args, " "), r.Code, want, r.Stdout, r.Stderr)
		}
	}
	if r := inRepo(t, dir, "status"); r.Code != 0 {
		t.Fatalf("the first server stopped answering: %d %s%s", r.Code, r.Stdout, r.Stderr)
	}

	_ = first.Process.Kill()
	done <- <-done // the cleanup waits on it too
	// The killed server leaves its files; the next one writes its own.
	_ = os.Remove(filepath.Join(dir, ".wilco", "addr"))
	_, out2, done2 := serveArgs(t, dir, nil)
	waitAddr(t, dir, out2, done2)
	if r := inRepo(t, dir, "status"); r.Code != 0 {
		t.Fatalf("after a SIGKILL the next server does not serve: %d %s%s\n%s", r.Code, r.Stdout, r.Stderr, out2)
	}
}

// Two repositories served side by side on the same configured port both
// work without flags: the second takes a free port and says so, and the
// CLI run in each repository reaches that repository's server.
func TestTwoRepositoriesServedSideBySideBothWork(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	yaml := fmt.Sprintf("listen: 127.0.0.1:%d\nagents:\n", port) + execAgent(t, "fixer", "fix_when.sh", nil) + blackbox.CheckStep
	a, b := blackbox.NewRepo(t, yaml), blackbox.NewRepo(t, yaml)
	_, outA, doneA := serveArgs(t, a, nil)
	urlA := waitAddr(t, a, outA, doneA)
	_, outB, doneB := serveArgs(t, b, nil)
	urlB := waitAddr(t, b, outB, doneB)
	if urlA == urlB {
		t.Fatalf("both servers at %s", urlA)
	}
	blackbox.MustContain(t, "the second server's log", outB.String(), "the configured port is taken")

	if r := inRepo(t, a, "submit", "Write the fix into file.txt", "--id", "A-1"); r.Code != 0 {
		t.Fatalf("submit in repository a: %d %s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := inRepo(t, b, "submit", "Write the fix into file.txt", "--id", "B-1"); r.Code != 0 {
		t.Fatalf("submit in repository b: %d %s%s", r.Code, r.Stdout, r.Stderr)
	}
	ra, rb := inRepo(t, a, "status"), inRepo(t, b, "status")
	if !strings.Contains(ra.Stdout, "A-1") || strings.Contains(ra.Stdout, "B-1") || !strings.Contains(rb.Stdout, "B-1") || strings.Contains(rb.Stdout, "A-1") {
		t.Fatalf("each repository's CLI does not reach its own server:\na:\n%s\nb:\n%s", ra.Stdout, rb.Stdout)
	}
}

// An agent removed from wilco.yaml gets no task after a restart; `wilco
// agents` shows it removed and says where the next task goes; `wilco
// agents remove` takes an agent out at once and refuses its token.
func TestAgentRemovedFromTheConfigGetsNoMoreTasks(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "aaa", "fix_when.sh", nil)+execAgent(t, "zzz", "fix_when.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "R-1", "description": "Write the fix into file.txt"})
	if got := in.WaitTask("R-1", 30*time.Second, "success"); got.Agent != "aaa" {
		t.Fatalf("R-1 went to %s, want aaa (first by name)", got.Agent)
	}
	blackbox.MustContain(t, "wilco agents", in.Cli("agents"), "next task (naming no agent) → aaa: aaa is available and first by name")
	in.Stop()

	// aaa leaves the file.
	cfg := "agents:\n" + execAgent(t, "zzz", "fix_when.sh", nil) + blackbox.CheckStep
	if err := os.WriteFile(filepath.Join(dir, "wilco.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	in = blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "R-2", "description": "Write the fix into file.txt again"})
	if got := in.WaitTask("R-2", 30*time.Second, "success"); got.Agent != "zzz" {
		t.Fatalf("R-2 went to %s after aaa left wilco.yaml", got.Agent)
	}
	out := in.Cli("agents")
	blackbox.MustContain(t, "wilco agents", out, "aaa", "removed", "next task (naming no agent) → zzz")
	if r := in.Call("POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"description": "x", "agent": "aaa"}); r.Status != 404 {
		t.Fatalf("a task for the removed agent: %d %s", r.Status, r.Body)
	}

	// wilco agents remove, on an agent added over the API.
	tok := in.Agent("remote")
	blackbox.MustContain(t, "wilco agents remove", in.Cli("agents", "remove", "remote"), "removed remote")
	if r := in.Call("GET", "/v1/inbox", tok, nil); r.Status != 401 {
		t.Fatalf("the removed agent's token still works: %d %s", r.Status, r.Body)
	}
	if r := blackbox.WilcoCLI(t, dir, in.Url, 20*time.Second, "agents", "remove", "nobody"); r.Code != 1 || !strings.Contains(r.Stderr, "no agent") {
		t.Fatalf("remove of an unknown agent: %d %s", r.Code, r.Stderr)
	}
}

// replan_after above hard_stop is valid: the server starts and warns.
func TestReplanAfterAboveHardStopStartsWithAWarning(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+blackbox.CheckStep+"policy:\n  loop: {replan_after: 20, hard_stop: 5}\n")
	in := blackbox.ServeRepo(t, dir)
	waitFor(t, "the warning", 10*time.Second, func() bool {
		return strings.Contains(in.Stderr.String(), "replan_after: 20 is more than hard_stop (5)")
	})
	r := blackbox.WilcoCLI(t, dir, in.Url, 20*time.Second, "config", "check")
	if r.Code != 0 || !strings.Contains(r.Stderr, "warning: ") || !strings.Contains(r.Stdout, "replan_after: 20") {
		t.Fatalf("wilco config check: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// `wilco config check` prints each error with file and line and exits 1;
// a valid file prints the effective configuration with the defaults.
func TestConfigCheckValidatesAndPrintsTheEffectiveConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wilco.yaml"), []byte("agents:\n  - {name: a, adapter: mailbox}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := inRepo(t, dir, "config", "check")
	if r.Code != 0 || !strings.Contains(r.Stdout, "hard_stop: 12") || !strings.Contains(r.Stdout, "timeouts: [5m, 2m, 1m]") {
		t.Fatalf("config check of a valid file: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("agents: 3\nlisen: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = inRepo(t, dir, "config", "check", "--config", bad)
	if r.Code != 1 || !strings.Contains(r.Stderr, "bad.yaml:1: agents: must be a list") || !strings.Contains(r.Stderr, "bad.yaml:2: lisen: unknown key") {
		t.Fatalf("config check of a bad file: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// `wilco config check` warns of a tmux agent's ready pattern that can
// never match — one that needs a blank just before the end of the line,
// which wilco trims from the pane's lines — naming the agent, the pattern,
// why, and a fix; the tmux example of docs/AGENTS.md is not one.
func TestConfigCheckWarnsOfAReadyPatternThatCanNeverMatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	yaml := "agents:\n  - name: tui\n    adapter: tmux\n    command: [python3, my_agent.py]\n    tmux:\n      ready: '^> $'\n"
	if err := os.WriteFile(filepath.Join(dir, "wilco.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := inRepo(t, dir, "config", "check")
	want := `wilco.yaml:6: agents[0].tmux.ready: '^> $' of agent "tui" can never match: wilco trims the blanks at the end of each line of the pane before it matches`
	if r.Code != 0 || !strings.HasPrefix(r.Stderr, "warning: ") || !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, `use '^>\s*$' or '^>$'`) {
		t.Fatalf("wilco config check of a ready pattern that can never match: exit %d, want 0 and on stderr\n%s\n… use '^>\\s*$' or '^>$'\nstdout:\n%s\nstderr:\n%s", r.Code, want, r.Stdout, r.Stderr)
	}

	doc, err := os.ReadFile(filepath.Join("..", "docs", "AGENTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	var example string
	for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		if strings.Contains(block[1], "adapter: tmux") && strings.Contains(block[1], "ready:") {
			example = block[1]
			break
		}
	}
	if example == "" {
		t.Fatal("docs/AGENTS.md has no example of a tmux agent with its ready pattern")
	}
	if err := os.WriteFile(filepath.Join(dir, "wilco.yaml"), []byte(example), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := inRepo(t, dir, "config", "check"); r.Code != 0 || strings.Contains(r.Stderr, "warning") {
		t.Fatalf("wilco config check of the tmux example of docs/AGENTS.md: exit %d\n%s\n%s%s", r.Code, example, r.Stdout, r.Stderr)
	}
}

// --config naming a file elsewhere does not move the repository: the
// state, the verify steps and the agents stay in the working directory.
func TestConfigElsewhereDoesNotMoveTheRepository(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "")
	cfg := filepath.Join(t.TempDir(), "team.yaml")
	if err := os.WriteFile(cfg, []byte("listen: 127.0.0.1:0\nagents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+blackbox.CheckStep), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, done := serveArgs(t, dir, nil, "--config", cfg)
	waitAddr(t, dir, out, done)
	if r := inRepo(t, dir, "submit", "Write the fix into file.txt", "--id", "C-1"); r.Code != 0 {
		t.Fatalf("submit: %d %s%s", r.Code, r.Stdout, r.Stderr)
	}
	waitFor(t, "the fix in the repository", 30*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "file.txt"))
		return string(b) == "fixed C-1\n"
	})
	waitFor(t, "C-1 to succeed", 30*time.Second, func() bool {
		return strings.Contains(inRepo(t, dir, "status", "C-1").Stdout, "C-1  success")
	})
	if _, err := os.Stat(filepath.Join(filepath.Dir(cfg), ".wilco")); err == nil {
		t.Fatal("the state went beside the configuration file")
	}
}
