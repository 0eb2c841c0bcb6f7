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
)

// A task with no verify step configured ends unverified, never success:
// `wilco run` says so and exits 3; status, watch, stats, the summary and
// the retry log all say unverified.
func TestTaskWithoutVerificationIsNeverSuccess(t *testing.T) {
	t.Parallel()
	const nobody = "http://127.0.0.1:1" // no server answers there: run serves in its own process
	dir := newRepo(t, "listen: 127.0.0.1:0\nagents:\n"+execAgent(t, "fixer", "fix_when.sh", nil))
	r := wilcoCLI(t, dir, nobody, 60*time.Second, "run", "Write the fix into file.txt")
	if r.code != 3 {
		t.Fatalf("wilco run: exit %d, want 3 (unverified)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "wilco run", r.stdout, "T-1 is UNVERIFIED", "NOT VERIFIED", "verify:\n    steps:")
	if strings.Contains(r.stdout, "T-1 success") || strings.Contains(r.stdout, "→ success") {
		t.Fatalf("wilco run reported a success:\n%s", r.stdout)
	}
	if readFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
		t.Fatal("the agent's work is not in the repository")
	}

	in := serveRepo(t, dir)
	got := in.waitTask("T-1", 10*time.Second, "unverified")
	if got.Summary == nil || !strings.Contains(got.Summary.Text, "NOT VERIFIED") {
		t.Fatalf("summary %+v", got.Summary)
	}
	mustContain(t, "wilco status T-1", in.cli("status", "T-1"), "T-1  unverified", "NOT VERIFIED")
	mustContain(t, "wilco status", in.cli("status"), "unverified")
	mustContain(t, "wilco status --state unverified", in.cli("status", "--state", "unverified"), "T-1")
	w := wilcoCLI(t, dir, in.url, 30*time.Second, "watch", "T-1")
	if w.code != 0 {
		t.Fatalf("wilco watch of an ended task: exit %d\n%s%s", w.code, w.stdout, w.stderr)
	}
	mustContain(t, "wilco watch T-1", w.stdout, "NOT verified", "state running → unverified")

	var stats struct {
		Summary struct {
			FirstAttemptSuccess int `json:"first_attempt_success"`
			Unverified          int `json:"unverified"`
			Text                string
		}
	}
	in.must(200, in.call("GET", "/v1/stats", adminToken, nil), &stats)
	if stats.Summary.FirstAttemptSuccess != 0 || stats.Summary.Unverified != 1 {
		t.Fatalf("stats count an unverified task as a success: %+v", stats.Summary)
	}
	mustContain(t, "wilco stats", in.cli("stats"), "Unverified (no check ran) | 1", "unverified (no check ran)")
	mustContain(t, "retry.log", readFile(t, filepath.Join(dir, ".wilco", "logs", "retry.log")), "[T-1] resolved status=unverified")

	var evs struct{ Events []event }
	in.must(200, in.call("GET", "/v1/events?task=T-1&follow=false", adminToken, nil), &evs)
	for _, e := range evs.Events {
		if e.Type == "task.success" {
			t.Fatalf("an unverified task has a task.success event: %+v", e)
		}
	}
	in.watchFold("unverified")
}

// With a check configured, the same task is a success: the unverified
// outcome is for tasks nothing checked, and only those.
func TestTaskWithAVerifyStepStillSucceeds(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, "listen: 127.0.0.1:0\nagents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+checkStep)
	r := wilcoCLI(t, dir, "http://127.0.0.1:1", 60*time.Second, "run", "Write the fix into file.txt")
	if r.code != 0 || !strings.Contains(r.stdout, "How it was verified: sh check.sh passed") {
		t.Fatalf("wilco run: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// initIn runs `wilco init` in dir with only git (and sh) on the PATH: no
// agent CLI can be found.
func initIn(t *testing.T, dir string) cliResult {
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
	cmd := exec.Command(wilcoBin, "init")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + bin, "HOME=" + dir}
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := cliResult{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
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
	if r.code != 0 {
		t.Fatalf("wilco init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "wilco init's warnings", r.stderr, "WARNING: no agent found", "WARNING: no check found",
		`tasks will end "unverified"`, "verify:\n    steps:")
	if strings.Contains(r.stderr, "not a git repository") {
		t.Fatalf("init in a git repository warns it is none:\n%s", r.stderr)
	}
	yaml := readFile(t, filepath.Join(dir, "wilco.yaml"))
	if !strings.Contains(yaml, "agents: []") || strings.Contains(yaml, "\n  - name: remote-1") {
		t.Fatalf("wilco.yaml:\n%s", yaml)
	}
	start := time.Now()
	run := wilcoCLI(t, dir, "http://127.0.0.1:1", 30*time.Second, "run", "Fix the bug")
	if run.code != 1 || !strings.Contains(run.stderr, "no agent is configured") {
		t.Fatalf("wilco run with no agent: exit %d\nstdout:\n%s\nstderr:\n%s", run.code, run.stdout, run.stderr)
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
	if r.code != 0 {
		t.Fatalf("wilco init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "wilco init outside git", r.stderr, "WARNING: not a git repository", "dry runs", `"git init"`)
	if _, err := os.Stat(filepath.Join(dir, "wilco.yaml")); err != nil {
		t.Fatal(err)
	}
}

// The CLI prints what a person reads as text: a summary, an escalation,
// a blocked reason; the API's JSON only with --json.
func TestCLIPrintsSummariesAndEscalationsAsText(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+execAgent(t, "noop", "noop.sh", nil)+
		checkStep+"policy:\n  loop: {escalate_after: 1}\n")
	in := serveRepo(t, dir)
	in.submit(map[string]any{"id": "S-1", "description": "Write the fix into file.txt", "agent": "fixer"})
	in.waitTask("S-1", 30*time.Second, "success")
	out := in.cli("status", "S-1")
	mustContain(t, "wilco status S-1", out, "summary:\n  What changed:", "How it was verified: sh check.sh passed")
	if strings.Contains(out, `"text":`) || strings.Contains(out, `"run_id":`) {
		t.Fatalf("wilco status prints JSON:\n%s", out)
	}
	var js map[string]any
	if err := json.Unmarshal([]byte(in.cli("status", "S-1", "--json")), &js); err != nil || js["summary"] == nil {
		t.Fatalf("wilco status --json: %v %v", err, js)
	}

	in.submit(map[string]any{"id": "S-2", "description": "Make the impossible check pass", "agent": "noop"})
	in.waitTask("S-2", 30*time.Second, "escalated")
	out = in.cli("status", "S-2")
	mustContain(t, "wilco status S-2", out, "escalation:", "escalate_after", "attempt:", "of at most 12 verify loops")
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
