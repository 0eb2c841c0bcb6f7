//go:build unix

package verify

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"wilco/core"
	"wilco/diagnose"
	"wilco/proc"
)

type testBundle struct {
	dir  string // where steps run
	runs string // the runs directory
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	dir := t.TempDir()
	return &testBundle{dir: dir, runs: filepath.Join(dir, ".wilco", "runs")}
}

func (b *testBundle) runner(steps ...Step) *Runner {
	return &Runner{Steps: steps, Dir: b.dir}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// goneSoon waits a little for a killed group to be gone: SIGKILL is
// delivered asynchronously.
func goneSoon(t *testing.T, pgid int) bool {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !proc.GroupGone(pgid); {
		if time.Now().After(deadline) {
			return false
		}
		<-time.After(10 * time.Millisecond)
	}
	return true
}

func readPgid(t *testing.T, path string) int {
	t.Helper()
	pgid, err := strconv.Atoi(strings.TrimSpace(readFile(t, path)))
	if err != nil || pgid <= 1 {
		t.Fatalf("pgid file: %q", readFile(t, path))
	}
	return pgid
}

// judge is the core's verdict on a run's facts, for a task of no scope.
func judge(res Result) core.Verdict {
	return core.Judge(core.Scope{}, core.VerifyResult{RunID: res.RunID, Steps: res.StepRuns(), Path: res.Path})
}

func TestRunPasses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.runner(
		Step{Name: "first", Run: `echo "one $WILCO_RUN_ID $WILCO_ATTEMPT $WILCO_STEP $WILCO_TASK_ID"`, Timeout: 10 * time.Second},
		Step{Name: "second", Run: "echo two >&2; pwd"},
	)
	res := r.Run(context.Background(), RunSpec{RunID: "T-1-a2", Attempt: 2, TaskID: "T-1"})
	v := judge(res)
	if !v.Passed || v.Failure != nil || res.Err != nil {
		t.Fatalf("Run = %+v", res)
	}
	if want := `echo "one $WILCO_RUN_ID $WILCO_ATTEMPT $WILCO_STEP $WILCO_TASK_ID" && echo two >&2; pwd`; v.Command != want {
		t.Errorf("Command = %q", v.Command)
	}
	if res.LogPath != filepath.Join(b.runs, "T-1-a2", "run.log") {
		t.Errorf("LogPath = %s", res.LogPath)
	}
	log := readFile(t, res.LogPath)
	i1, i2 := strings.Index(log, "one T-1-a2 2 first T-1"), strings.Index(log, "two")
	if i1 < 0 || i2 < i1 || !strings.Contains(log, "==> second: echo two") || !strings.Contains(log, "<== first: passed") {
		t.Errorf("run.log:\n%s", log)
	}
	if got := readFile(t, filepath.Join(b.runs, "T-1-a2", "second.log")); !strings.HasPrefix(got, "two\n") {
		t.Errorf("second.log = %q", got)
	}
	r.WriteVerdict(res, v)
	var rf map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(b.runs, "T-1-a2", "result.json"))), &rf); err != nil {
		t.Fatal(err)
	}
	if rf["passed"] != true || rf["run_id"] != "T-1-a2" || len(rf["steps"].([]any)) != 2 || rf["failure"] != nil {
		t.Errorf("result.json = %v", rf)
	}
	if _, err := time.ParseDuration(rf["duration"].(string)); err != nil {
		t.Errorf("duration: %v", err)
	}
}

func TestRunStopsAtTheFirstFailingStep(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.runner(
		Step{Name: "vet", Run: "echo vet ok"},
		Step{Name: "build", Run: "echo '# example.com/app' >&2; echo './main.go:12:3: undefined: NewPlannerID' >&2; exit 2"},
		Step{Name: "unit", Run: "touch unit-ran"},
	)
	res := r.Run(context.Background(), RunSpec{RunID: "T-2-a1", Attempt: 1})
	v := judge(res)
	if v.Passed || res.Err != nil || v.Failure == nil {
		t.Fatalf("Run = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(b.dir, "unit-ran")); err == nil {
		t.Error("a step after the failing one ran")
	}
	// The record is the core's (core.Judge, tested there); what it makes
	// of the real step's facts:
	f := v.Failure
	if v := f.ExecutorOutput.Verification; v.Command != r.Steps[1].Run || v.ExitCode != 2 || v.OutputSummary != "./main.go:12:3: undefined: NewPlannerID" {
		t.Errorf("verification: %+v", v)
	}
	if !strings.Contains(f.ExecutorOutput.Error, "undefined: NewPlannerID") || !strings.Contains(f.RootCauseGuess, "main.go:12") ||
		!strings.Contains(f.SuggestedFix, "Declare NewPlannerID") || !strings.Contains(f.Details, "undefined: NewPlannerID") {
		t.Errorf("analysis: %+v", f)
	}
	if v.Command != r.Steps[1].Run || len(res.Steps) != 2 || res.Steps[1].ExitCode != 2 || res.StepsPassed() {
		t.Errorf("result: %+v", res)
	}
	log := readFile(t, res.LogPath)
	if !strings.Contains(log, "<== build: failed with exit code 2") || strings.Contains(log, "==> unit") {
		t.Errorf("run.log:\n%s", log)
	}
	r.WriteVerdict(res, v)
	var rf struct {
		Failure *core.FailureRecord `json:"failure"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(b.runs, "T-2-a1", "result.json"))), &rf); err != nil || rf.Failure == nil ||
		rf.Failure.ExecutorOutput.Verification.ExitCode != 2 {
		t.Errorf("result.json failure: %+v, %v", rf.Failure, err)
	}
}

// TestVerifyTimeoutKillsTheProcessGroup is the verifier rule "Timeout counts as
// failure", with the step's children killed too.
func TestVerifyTimeoutKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.runner(Step{Name: "hang", Run: "echo $$ > pgid; (sleep 30; echo late) & echo waiting; sleep 30", Timeout: 300 * time.Millisecond})
	start := time.Now()
	res := r.Run(context.Background(), RunSpec{RunID: "T-3-a1", Attempt: 1})
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Fatalf("Run took %s", elapsed)
	}
	f := judge(res).Failure
	if res.Err != nil || f == nil || f.FailureType != core.Timeout {
		t.Fatalf("Run = %+v", res)
	}
	v := f.ExecutorOutput.Verification
	if v.ExitCode != 128+int(syscall.SIGKILL) || !strings.HasPrefix(v.OutputSummary, "timed out after 300ms") || !res.Steps[0].TimedOut {
		t.Errorf("verification: %+v", v)
	}
	if !strings.Contains(f.RootCauseGuess, "did not finish within 300ms") {
		t.Errorf("root cause: %q", f.RootCauseGuess)
	}
	if pgid := readPgid(t, filepath.Join(b.dir, "pgid")); !goneSoon(t, pgid) {
		t.Fatalf("process group %d still has live processes", pgid)
	}
	if log := readFile(t, res.LogPath); !strings.Contains(log, "<== hang: timed out after 300ms (killed)") {
		t.Errorf("run.log:\n%s", log)
	}
}

func TestStepLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.runner(Step{Name: "daemon", Run: "echo $$ > pgid; sleep 30 & echo started"})
	start := time.Now()
	res := r.Run(context.Background(), RunSpec{RunID: "T-4-a1", Attempt: 1})
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Fatalf("Run waited %s for a background process", elapsed)
	}
	if !judge(res).Passed {
		t.Fatalf("Run = %+v", res)
	}
	if pgid := readPgid(t, filepath.Join(b.dir, "pgid")); !goneSoon(t, pgid) {
		t.Fatalf("the step's background process (group %d) outlived it", pgid)
	}
}

func TestStepWithLotsOfOutput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.runner(Step{Name: "noisy", Run: "seq 1 300000; echo 'FAIL: the very end' >&2; exit 1", Timeout: time.Minute})
	res := r.Run(context.Background(), RunSpec{RunID: "T-5-a1", Attempt: 1})
	f := judge(res).Failure
	if f == nil {
		t.Fatalf("Run = %+v", res)
	}
	stepLog := readFile(t, filepath.Join(b.runs, "T-5-a1", "noisy.log"))
	if n := strings.Count(stepLog, "\n"); n != 300001 || !strings.HasPrefix(stepLog, "1\n2\n") || !strings.HasSuffix(stepLog, "300000\nFAIL: the very end\n") {
		t.Errorf("step log: %d lines", n)
	}
	if runLog := readFile(t, res.LogPath); !strings.Contains(runLog, "299999\n300000\nFAIL: the very end\n") {
		t.Error("run.log lacks the output")
	}
	if len(f.Details) > core.DetailsBytes || !strings.HasSuffix(f.Details, "FAIL: the very end") {
		t.Errorf("details: %d bytes, ends %q", len(f.Details), f.Details[max(0, len(f.Details)-30):])
	}
	if len(f.ExecutorOutput.Verification.OutputSummary) > diagnose.MaxSummary || len(f.RootCauseGuess) > diagnose.MaxText {
		t.Errorf("unbounded record: %+v", f)
	}
}

// TestAChangeOutOfScopeRunsNoStep: the core's scope check
// (core.Scope.Check) found files out of the task's boundaries; the run
// says so and runs no step, the verdict failing whatever they would say.
func TestAChangeOutOfScopeRunsNoStep(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.runner(Step{Name: "unit", Run: "touch unit-ran"})
	sc := core.Scope{Boundaries: []string{"internal/auth", "*.lock"}}
	changed := []string{"internal/auth/token.go", "main.go", "Cargo.lock"}
	res := r.Run(context.Background(), RunSpec{RunID: "T-6-a1", Attempt: 1, OutOfScope: sc.Check(changed)})
	if res.Err != nil || len(res.Steps) != 0 {
		t.Fatalf("Run = %+v", res)
	}
	v := core.Judge(sc, core.VerifyResult{RunID: res.RunID, Steps: res.StepRuns(), Files: changed})
	if want := "files changed outside the task's boundaries: internal/auth/token.go, Cargo.lock"; v.Passed || v.Failure.ExecutorOutput.Error != want {
		t.Errorf("verdict %+v, want the error %q", v, want)
	}
	if _, err := os.Stat(filepath.Join(b.dir, "unit-ran")); err == nil {
		t.Error("the steps ran after the boundary check failed")
	}
	if log := readFile(t, res.LogPath); !strings.Contains(log, "boundaries") {
		t.Errorf("run.log:\n%s", log)
	}
	// Within the boundaries, the steps run.
	res = r.Run(context.Background(), RunSpec{RunID: "T-6-a2", Attempt: 2, OutOfScope: core.Scope{Boundaries: []string{"internal/auth"}}.Check([]string{"main.go"})})
	if !judge(res).Passed || len(res.Steps) != 1 {
		t.Fatalf("Run = %+v", res)
	}
}

func TestRunEndedByContext(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fifo := filepath.Join(b.dir, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no fifo:", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = os.ReadFile(fifo) // returns once the step has written to it
		cancel()
	}()
	r := b.runner(Step{Name: "long", Run: "echo $$ > pgid; echo go > started; sleep 30", Timeout: time.Minute})
	res := r.Run(ctx, RunSpec{RunID: "T-7-a1", Attempt: 1})
	if !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("Run = %+v", res)
	}
	if res.Steps[0].TimedOut {
		t.Error("a cancelled step is not a timeout")
	}
	if pgid := readPgid(t, filepath.Join(b.dir, "pgid")); !goneSoon(t, pgid) {
		t.Fatalf("process group %d outlived the cancel", pgid)
	}
}

func TestEscalationFromAStep(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.runner(Step{Name: "unit", Run: "echo 'open /var/lib/app/db: permission denied' >&2; exit 1"})
	res := r.Run(context.Background(), RunSpec{RunID: "T-8-a1", Attempt: 1})
	if f := judge(res).Failure; f == nil || f.Escalate != diagnose.EscalatePermissionDenied {
		t.Fatalf("Run = %+v", f)
	}
}

func TestMissingProgramIsAnEnvironmentFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.runner(Step{Name: "unit", Run: "wilco-no-such-program --run"})
	res := r.Run(context.Background(), RunSpec{RunID: "T-9-a1", Attempt: 1})
	f := judge(res).Failure
	if f == nil || f.ExecutorOutput.Verification.ExitCode != 127 || f.FailureType != core.Environment ||
		!strings.Contains(f.RootCauseGuess, `"wilco-no-such-program" is not installed`) ||
		!strings.Contains(f.RootCauseGuess, "PATH searched: ") || !strings.Contains(f.SuggestedFix, "verify step") || res.Path == "" {
		t.Fatalf("Run = %+v", f)
	}
}

func TestRunWithoutSteps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.runner().Run(context.Background(), RunSpec{RunID: "T-10-a1", Attempt: 1})
	if v := judge(res); !v.Passed || v.Command != "" || res.Err != nil {
		t.Fatalf("Run = %+v", res)
	}
}

func TestRunNeverOverwritesAnEarlierRunsLogAndKeepsTheAgentsTurn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := &Runner{Steps: []Step{{Name: "a", Run: "true"}}, Dir: b.dir, RunsDir: filepath.Join(b.dir, "elsewhere")}
	dir := filepath.Join(b.dir, "elsewhere", "T-11-a1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"a.log": "from before a crash", "agent.log": "the agent's turn", "prompt.md": "the prompt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := r.Run(context.Background(), RunSpec{RunID: "T-11-a1", Attempt: 1})
	if !judge(res).Passed || res.LogPath != filepath.Join(dir, "run.log") {
		t.Fatalf("Run = %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.log")); string(b) == "from before a crash" {
		t.Fatal("the earlier step log was written over, or left in place")
	}
	// Never overwritten: the earlier run's log is kept, and said where.
	if b, _ := os.ReadFile(filepath.Join(dir, "earlier-1", "a.log")); string(b) != "from before a crash" {
		t.Fatalf("the earlier run's step log is not kept in earlier-1/: %q", b)
	}
	if b, _ := os.ReadFile(res.LogPath); !strings.Contains(string(b), "kept in earlier-1/") {
		t.Fatalf("run.log does not say where the earlier logs are:\n%s", b)
	}
	res = r.Run(context.Background(), RunSpec{RunID: "T-11-a1", Attempt: 1})
	if _, err := os.Stat(filepath.Join(dir, "earlier-2", "run.log")); err != nil || !judge(res).Passed {
		t.Fatalf("a third run did not keep the second's log in earlier-2/: %v", err)
	}
	for _, name := range []string{"agent.log", "prompt.md"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatalf("the agent's %s of the same attempt was removed", name)
		}
	}
}

func TestInvalidRunID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, id := range []string{"", ".", "..", "../x", "a/b", "T 1"} {
		res := b.runner(Step{Name: "a", Run: "true"}).Run(context.Background(), RunSpec{RunID: id, Attempt: 1})
		if res.Err == nil {
			t.Errorf("RunID %q: %+v", id, res)
		}
		if _, err := LogFile(b.runs, id); err == nil {
			t.Errorf("LogFile(%q) succeeded", id)
		}
	}
	if _, err := os.Stat(filepath.Join(b.dir, "x")); err == nil {
		t.Fatal("a run directory escaped")
	}
	if p, err := LogFile(b.runs, "03-01_task-3-a2"); err != nil || p != filepath.Join(b.runs, "03-01_task-3-a2", "run.log") {
		t.Fatalf("LogFile = %s, %v", p, err)
	}
}

func TestStepLogNames(t *testing.T) {
	t.Parallel()
	got := stepLogNames([]Step{{Name: "unit"}, {Name: "unit"}, {Name: "run"}, {Name: "go vet ./..."}, {Name: ""}, {Name: "../up"}})
	want := []string{"unit.log", "unit-2.log", "run-2.log", "go_vet_._....log", "step-5.log", "_up.log"}
	if !slices.Equal(got, want) {
		t.Fatalf("stepLogNames = %q, want %q", got, want)
	}
}
