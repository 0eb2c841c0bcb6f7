package core

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"wilco/diagnose"
)

// lastFailure is the task's last failure record.
func lastFailure(b *testBundle, id string) FailureRecord {
	b.t.Helper()
	t := b.task(id)
	if len(t.Failures) == 0 {
		b.t.Fatalf("task %s has no failure", id)
	}
	return t.Failures[len(t.Failures)-1]
}

// toVerify runs a task to its verification.
func toVerify(b *testBundle, spec TaskSpec) Task {
	b.t.Helper()
	tk := submit(b, spec)
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	return b.task(tk.ID)
}

func TestTheVerdictIsTheCoresFromTheFactsVerifyReports(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := toVerify(b, TaskSpec{Description: "Fix Add"})
	b.advance(3 * time.Second)
	files := []FileState{{Path: "main.go", Status: "modified", LinesChanged: 4}}
	vet := StepRun{Name: "vet", Command: "go vet ./...", Duration: time.Second}
	build := StepRun{Name: "build", Command: "go build ./...", ExitCode: 2, Duration: 2 * time.Second,
		Output: "# example.com/app\n./main.go:12:3: undefined: NewPlannerID\n"}
	v, err := b.c.EndVerify(b.now, VerifyResult{TaskID: tk.ID, RunID: tk.RunID, Steps: []StepRun{vet, build},
		Files: []string{"main.go"}, FilesState: files, Duration: 3 * time.Second})
	b.ok(err)
	if v.Passed || v.Command != "go build ./..." || v.Failure == nil {
		t.Fatalf("verdict %+v", v)
	}
	f := lastFailure(b, tk.ID)
	if f.FailureType != VerificationFailed || f.Attempt != 1 || f.RunID != tk.RunID || !f.Timestamp.Equal(b.now) || f.DurationMS != 3000 {
		t.Errorf("record: %+v", f)
	}
	eo := f.ExecutorOutput
	if eo.Status != "failure" || !slices.Equal(eo.FilesModified, []string{"main.go"}) || eo.Verification == nil {
		t.Fatalf("executor_output: %+v", eo)
	}
	if v := eo.Verification; v.Command != "go build ./..." || v.ExitCode != 2 || v.OutputSummary != "./main.go:12:3: undefined: NewPlannerID" {
		t.Errorf("verification: %+v", v)
	}
	if !strings.Contains(eo.Error, "undefined: NewPlannerID") || !strings.Contains(f.RootCauseGuess, "main.go:12") ||
		!strings.Contains(f.SuggestedFix, "Declare NewPlannerID") || !strings.Contains(f.Details, "undefined: NewPlannerID") {
		t.Errorf("analysis: %+v", f)
	}
	if !slices.Equal(f.FilesState, files) || f.Escalate != "" {
		t.Errorf("files_state %v, escalate %q", f.FilesState, f.Escalate)
	}
	if got := b.task(tk.ID); got.Attempt != 2 || got.State.Terminal() {
		t.Errorf("after a failure: attempt %d, %s", got.Attempt, got.State)
	}

	// The same facts with every step passing: success, its summary naming
	// the commands that passed.
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	build.ExitCode, build.Output = 0, ""
	v, err = b.c.EndVerify(b.now, VerifyResult{TaskID: tk.ID, RunID: b.task(tk.ID).RunID, Steps: []StepRun{vet, build}, Files: []string{"main.go"}})
	b.ok(err)
	if !v.Passed || v.Failure != nil || v.Checks != 2 || v.Command != "go vet ./... && go build ./..." {
		t.Fatalf("verdict %+v", v)
	}
	if got := b.task(tk.ID); got.State != Success || got.Summary == nil || !strings.Contains(got.Summary.Text, "go vet ./... && go build ./...") {
		t.Fatalf("%s %+v", got.State, got.Summary)
	}
}

// TestAChangeOutOfItsBoundariesFailsWhateverTheStepsSay is the boundaries
// rule ("files or modules out of scope"): the core's, from the files the
// shell lists.
func TestAChangeOutOfItsBoundariesFailsWhateverTheStepsSay(t *testing.T) {
	t.Parallel()
	sc := Scope{Boundaries: []string{"internal/auth", "*.lock"}}
	changed := []string{"internal/auth/token.go", "main.go", "Cargo.lock"}
	o := sc.Check(changed)
	if o == nil || o.Check != "boundaries" || !slices.Equal(o.Files, []string{"internal/auth/token.go", "Cargo.lock"}) {
		t.Fatalf("Check = %+v", o)
	}
	v := Judge(sc, VerifyResult{RunID: "T-6-a1", Files: changed})
	if v.Passed || v.Failure == nil || v.Command != "boundary check" {
		t.Fatalf("Judge = %+v", v)
	}
	f := v.Failure
	if want := "files changed outside the task's boundaries: internal/auth/token.go, Cargo.lock"; f.ExecutorOutput.Error != want {
		t.Errorf("error = %q, want %q", f.ExecutorOutput.Error, want)
	}
	if f.FailureType != VerificationFailed || !strings.Contains(f.SuggestedFix, "internal/auth/token.go") ||
		!slices.Equal(f.ExecutorOutput.FilesModified, changed) {
		t.Errorf("record: %+v", f)
	}
	// Within the boundaries, the steps decide.
	in := Scope{Boundaries: []string{"internal/auth"}}
	if o := in.Check([]string{"main.go"}); o != nil {
		t.Fatalf("Check = %+v", o)
	}
	if v := Judge(in, VerifyResult{Files: []string{"main.go"}, Steps: []StepRun{{Name: "unit", Command: "true"}}}); !v.Passed || v.Checks != 1 {
		t.Fatalf("Judge = %+v", v)
	}

	// Through the core: the task's own boundaries.
	b := taskBundle(t)
	tk := toVerify(b, TaskSpec{Description: "x", Boundaries: []string{"internal/auth"}})
	_, err := b.c.EndVerify(b.now, VerifyResult{TaskID: tk.ID, RunID: tk.RunID, Files: []string{"internal/auth/token.go"},
		Steps: []StepRun{{Name: "unit", Command: "true"}}})
	b.ok(err)
	if f := lastFailure(b, tk.ID); f.ExecutorOutput.Verification.Command != "boundary check" {
		t.Fatalf("record: %+v", f)
	}
}

func TestAChangeOutsideItsTaskPackageFails(t *testing.T) {
	t.Parallel()
	sc := Scope{Package: "services/api"}
	if o := sc.Check([]string{"services/api/main.go"}); o != nil {
		t.Fatalf("Check = %+v", o)
	}
	v := Judge(sc, VerifyResult{Files: []string{"services/api/main.go", "services/web/app.js"}})
	if v.Passed || v.Command != "package check" || v.Failure.ExecutorOutput.Error != "files changed outside the task's package services/api: services/web/app.js" ||
		!strings.Contains(v.Failure.SuggestedFix, "split into tasks") {
		t.Fatalf("Judge = %+v %+v", v, v.Failure)
	}
}

// TestATimedOutStepIsATimeout is the verifier rule "Timeout counts as
// failure".
func TestATimedOutStepIsATimeout(t *testing.T) {
	t.Parallel()
	v := Judge(Scope{}, VerifyResult{Steps: []StepRun{{Name: "hang", Command: "sleep 30", TimedOut: true, Timeout: 300 * time.Millisecond,
		ExitCode: 128 + int(syscall.SIGKILL), Output: "waiting\n"}}})
	if v.Passed || v.Failure == nil || v.Failure.FailureType != Timeout {
		t.Fatalf("Judge = %+v", v)
	}
	if vf := v.Failure.ExecutorOutput.Verification; vf.ExitCode != 128+int(syscall.SIGKILL) || !strings.HasPrefix(vf.OutputSummary, "timed out after 300ms") {
		t.Errorf("verification: %+v", vf)
	}
	if !strings.Contains(v.Failure.RootCauseGuess, "did not finish within 300ms") {
		t.Errorf("root cause: %q", v.Failure.RootCauseGuess)
	}
}

func TestAStepDeniedPermissionEscalates(t *testing.T) {
	t.Parallel()
	v := Judge(Scope{}, VerifyResult{Steps: []StepRun{{Name: "unit", Command: "go test ./...", ExitCode: 1, Output: "open /var/lib/app/db: permission denied\n"}}})
	if v.Failure == nil || v.Failure.Escalate != diagnose.EscalatePermissionDenied {
		t.Fatalf("Judge = %+v", v.Failure)
	}
}

func TestAStepsMissingProgramIsAnEnvironmentFailure(t *testing.T) {
	t.Parallel()
	v := Judge(Scope{}, VerifyResult{Path: "/usr/bin:/bin", Steps: []StepRun{{Name: "unit", Command: "wilco-no-such-program --run", ExitCode: 127,
		Output: "sh: 1: wilco-no-such-program: not found\n"}}})
	f := v.Failure
	if f == nil || f.ExecutorOutput.Verification.ExitCode != 127 || f.FailureType != Environment || f.Escalate != Environment ||
		!strings.Contains(f.RootCauseGuess, `"wilco-no-such-program" is not installed`) ||
		!strings.Contains(f.RootCauseGuess, "PATH searched: /usr/bin:/bin") || !strings.Contains(f.SuggestedFix, "verify step") {
		t.Fatalf("Judge = %+v", f)
	}
}

func TestAFailureKeepsABoundedTailOfTheOutput(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	for i := 1; i <= 300000; i++ {
		out.WriteString("line\n")
	}
	out.WriteString("FAIL: the very end\n")
	v := Judge(Scope{}, VerifyResult{Steps: []StepRun{{Name: "noisy", Command: "seq", ExitCode: 1, Output: out.String()}}})
	f := v.Failure
	if len(f.Details) > DetailsBytes || !strings.HasSuffix(f.Details, "FAIL: the very end") {
		t.Errorf("details: %d bytes, ends %q", len(f.Details), f.Details[max(0, len(f.Details)-30):])
	}
	if len(f.ExecutorOutput.Verification.OutputSummary) > diagnose.MaxSummary || len(f.RootCauseGuess) > diagnose.MaxText {
		t.Errorf("unbounded record: %+v", f)
	}
}

func TestARunWithNoStepPassesUnverified(t *testing.T) {
	t.Parallel()
	if v := Judge(Scope{}, VerifyResult{}); !v.Passed || v.Command != "" || v.Checks != 0 {
		t.Fatalf("Judge = %+v", v)
	}
}

// FuzzJudge: whatever the facts, the verdict is one: passed with no
// record, or failed with a record whose analysis stays bounded.
func FuzzJudge(f *testing.F) {
	f.Add("go test ./...", 1, false, failingGoTest, "internal/auth", "internal/auth/token.go")
	f.Add("sleep 30", 137, true, "waiting\n", "", "main.go")
	f.Add("wilco-no-such-program", 127, false, "sh: 1: wilco-no-such-program: not found\n", "", "")
	f.Add("true", 0, false, "", "*.lock", "Cargo.lock")
	f.Add("npm test", 1, false, "Error: connect ECONNREFUSED 10.0.0.1:443\n", "`db/migrations` and vendor/", "db/migrations/1.sql")
	f.Fuzz(func(t *testing.T, command string, exit int, timedOut bool, output, boundary, file string) {
		v := Judge(Scope{Boundaries: []string{boundary}}, VerifyResult{Files: []string{file},
			Steps: []StepRun{{Name: "step", Command: command, ExitCode: exit, TimedOut: timedOut, Timeout: time.Second, Output: output}}})
		if v.Passed != (v.Failure == nil) {
			t.Fatalf("verdict %+v", v)
		}
		if v.Failure == nil {
			return
		}
		if len(v.Failure.Details) > DetailsBytes || v.Failure.ExecutorOutput.Verification == nil || v.Failure.FailureType == "" ||
			len(v.Failure.ExecutorOutput.FilesModified) != 1 {
			t.Fatalf("record %+v", v.Failure)
		}
		if v.Command != v.Failure.ExecutorOutput.Verification.Command {
			t.Fatalf("command %q, record's %q", v.Command, v.Failure.ExecutorOutput.Verification.Command)
		}
	})
}
