package test

// Black-box tests of how a task ends and what the user reads: a task no
// check verified is never a success, `wilco init` says what it could not
// set up, and the CLI prints summaries, escalations and blocked reasons as
// text.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// A task with no verify step configured ends unverified, never success:
// `wilco run` says so and exits 3; status, watch, stats, the summary and
// the retry log all say unverified.
func TestTaskWithoutVerificationIsNeverSuccess(t *testing.T) {
	t.Parallel()
	const nobody = "http://127.0.0.1:1" // no server answers there: run serves in its own process
	dir := blackbox.NewRepo(t, "listen: 127.0.0.1:0\nagents:\n"+execAgent(t, "fixer", "fix_when.sh", nil))
	r := blackbox.WilcoCLI(t, dir, nobody, 60*time.Second, "run", "Write the fix into file.txt")
	if r.Code != 3 {
		t.Fatalf("wilco run: exit %d, want 3 (unverified)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	blackbox.MustContain(t, "wilco run", r.Stdout, "T-1 is UNVERIFIED", "NOT VERIFIED", "verify:\n    steps:")
	if strings.Contains(r.Stdout, "T-1 success") || strings.Contains(r.Stdout, "→ success") {
		t.Fatalf("wilco run reported a success:\n%s", r.Stdout)
	}
	if blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
		t.Fatal("the agent's work is not in the repository")
	}

	in := blackbox.ServeRepo(t, dir)
	got := in.WaitTask("T-1", 10*time.Second, "unverified")
	if got.Summary == nil || !strings.Contains(got.Summary.Text, "NOT VERIFIED") {
		t.Fatalf("summary %+v", got.Summary)
	}
	blackbox.MustContain(t, "wilco status T-1", in.Cli("status", "T-1"), "T-1  unverified", "NOT VERIFIED")
	blackbox.MustContain(t, "wilco status", in.Cli("status"), "unverified")
	blackbox.MustContain(t, "wilco status --state unverified", in.Cli("status", "--state", "unverified"), "T-1")
	w := blackbox.WilcoCLI(t, dir, in.Url, 30*time.Second, "watch", "T-1")
	if w.Code != 0 {
		t.Fatalf("wilco watch of an ended task: exit %d\n%s%s", w.Code, w.Stdout, w.Stderr)
	}
	blackbox.MustContain(t, "wilco watch T-1", w.Stdout, "NOT verified", "state running → unverified")

	var stats struct {
		Summary struct {
			FirstAttemptSuccess int `json:"first_attempt_success"`
			Unverified          int `json:"unverified"`
			Text                string
		}
	}
	in.Must(200, in.Call("GET", "/v1/stats", blackbox.AdminToken, nil), &stats)
	if stats.Summary.FirstAttemptSuccess != 0 || stats.Summary.Unverified != 1 {
		t.Fatalf("stats count an unverified task as a success: %+v", stats.Summary)
	}
	blackbox.MustContain(t, "wilco stats", in.Cli("stats"), "Unverified (no check ran) | 1", "unverified (no check ran)")
	blackbox.MustContain(t, "retry.log", blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "logs", "retry.log")), "[T-1] resolved status=unverified")

	var evs struct{ Events []blackbox.Event }
	in.Must(200, in.Call("GET", "/v1/events?task=T-1&follow=false", blackbox.AdminToken, nil), &evs)
	for _, e := range evs.Events {
		if e.Type == "task.success" {
			t.Fatalf("an unverified task has a task.success event: %+v", e)
		}
	}
	in.WatchFold("unverified")
}

// With a check configured, the same task is a success: the unverified
// outcome is for tasks nothing checked, and only those.
func TestTaskWithAVerifyStepStillSucceeds(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "listen: 127.0.0.1:0\nagents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+blackbox.CheckStep)
	r := blackbox.WilcoCLI(t, dir, "http://127.0.0.1:1", 60*time.Second, "run", "Write the fix into file.txt")
	if r.Code != 0 || !strings.Contains(r.Stdout, "How it was verified: sh check.sh passed") {
		t.Fatalf("wilco run: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// initIn runs `wilco init` in dir with only git (and sh) on the PATH: no
// agent CLI can be found.
func initIn(t *testing.T, dir string) blackbox.CliResult {
	t.Helper()
	bin := t.TempDir()
	for _, p := range []string{"git", "sh"} {
		path, err := exec.LookPath(p)
		if err != nil {
			t.Fatalf("%s is not installed: %v", p, err)
		}
		if err := os.Symlink(path, filepath.Join(bin, p)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(blackbox.WilcoBin, "init")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + bin, "HOME=" + dir}
	var out, errb blackbox.LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := blackbox.CliResult{Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// `wilco init` in a repository with no agent CLI on the PATH and no test
// command writes no agent (not a mailbox agent nobody starts), says loudly
// that it found neither and what to do; `wilco run` then fails at once.
func TestInitWithoutAgentOrCheckSaysSoAndRunFailsAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	r := initIn(t, dir)
	if r.Code != 0 {
		t.Fatalf("wilco init: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	blackbox.MustContain(t, "wilco init's warnings", r.Stderr, "WARNING: no agent found", "WARNING: no check found",
		`tasks will end "unverified"`, "verify:\n    steps:")
	if strings.Contains(r.Stderr, "not a git repository") {
		t.Fatalf("init in a git repository warns it is none:\n%s", r.Stderr)
	}
	yaml := blackbox.ReadFile(t, filepath.Join(dir, "wilco.yaml"))
	if !strings.Contains(yaml, "agents: []") || strings.Contains(yaml, "\n  - name: remote-1") {
		t.Fatalf("wilco.yaml:\n%s", yaml)
	}
	start := time.Now()
	run := blackbox.WilcoCLI(t, dir, "http://127.0.0.1:1", 30*time.Second, "run", "Fix the bug")
	if run.Code != 1 || !strings.Contains(run.Stderr, "no agent is configured") {
		t.Fatalf("wilco run with no agent: exit %d\nstdout:\n%s\nstderr:\n%s", run.Code, run.Stdout, run.Stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("wilco run with no agent took %s to fail", d)
	}
}

// `wilco init` outside a git repository still writes its files and says
// what will not work.
func TestInitOutsideGitSaysWhatWillNotWork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := initIn(t, dir)
	if r.Code != 0 {
		t.Fatalf("wilco init: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	blackbox.MustContain(t, "wilco init outside git", r.Stderr, "WARNING: not a git repository", "dry runs", `"git init"`)
	if _, err := os.Stat(filepath.Join(dir, "wilco.yaml")); err != nil {
		t.Fatal(err)
	}
}

// The CLI prints what a person reads as text: a summary, an escalation,
// a blocked reason; the API's JSON only with --json.
func TestCLIPrintsSummariesAndEscalationsAsText(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+execAgent(t, "noop", "noop.sh", nil)+
		blackbox.CheckStep+"policy:\n  loop: {escalate_after: 1}\n")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "S-1", "description": "Write the fix into file.txt", "agent": "fixer"})
	in.WaitTask("S-1", 30*time.Second, "success")
	out := in.Cli("status", "S-1")
	blackbox.MustContain(t, "wilco status S-1", out, "summary:\n  What changed:", "How it was verified: sh check.sh passed")
	if strings.Contains(out, `"text":`) || strings.Contains(out, `"run_id":`) {
		t.Fatalf("wilco status prints JSON:\n%s", out)
	}
	var js map[string]any
	if err := json.Unmarshal([]byte(in.Cli("status", "S-1", "--json")), &js); err != nil || js["summary"] == nil {
		t.Fatalf("wilco status --json: %v %v", err, js)
	}

	in.Submit(map[string]any{"id": "S-2", "description": "Make the impossible check pass", "agent": "noop"})
	in.WaitTask("S-2", 30*time.Second, "escalated")
	out = in.Cli("status", "S-2")
	blackbox.MustContain(t, "wilco status S-2", out, "escalation:", "escalate_after", "attempt:", "of at most 12 verify loops")
	if strings.Contains(out, `"reason":`) || strings.Contains(out, `"message":`) {
		t.Fatalf("wilco status prints the escalation as JSON:\n%s", out)
	}
}

// git runs git in dir.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
