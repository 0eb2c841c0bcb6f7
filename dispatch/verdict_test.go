package dispatch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"wilco/core"
	"wilco/verify"
)

// verifying submits a task, acknowledges it, lets write change the working
// tree as the agent's turn, ends the turn, and returns the RunVerify the
// core asks for.
func (b *coreBundle) verifying(spec core.TaskSpec, write func()) (core.Task, core.RunVerify) {
	b.t.Helper()
	tk := b.do(func(c *core.State, now time.Time) (any, error) { return c.SubmitTask(now, spec) }).(core.Task)
	b.do(func(c *core.State, now time.Time) (any, error) {
		return c.Reply(now, core.ReplyInput{Agent: tk.Agent, InReplyTo: tk.Delivery, Text: "[ACK] " + tk.ID + " - RECEIVED\nUnderstanding: " + spec.Description})
	})
	write()
	b.do(func(c *core.State, now time.Time) (any, error) {
		return c.EndTurn(now, core.TurnResult{TaskID: tk.ID, Attempt: tk.Attempt, Summary: "did it"})
	})
	rv := last[core.RunVerify](b.t, b)
	if rv.TaskID != tk.ID {
		b.t.Fatalf("the verification asked for is %s's, not %s's", rv.TaskID, tk.ID)
	}
	return b.task(tk.ID), rv
}

// failingStep is a verify step whose go test fails TestAdd.
const failingStep = "echo '--- FAIL: TestAdd (0.00s)'; echo '    calc_test.go:9: got 3, want 4'; echo FAIL; exit 1"

func TestDispatchReportsAVerificationsFactsAndNeverAltersItsVerdict(t *testing.T) {
	t.Parallel()
	dir, _ := repo(t, "calc.go")
	b := openCore(t)
	d, err := New(Options{Dir: dir, Steps: []verify.Step{{Name: "unit", Run: failingStep}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	d.rt = b.rt
	tk, rv := b.verifying(core.TaskSpec{Description: "Fix Add"}, func() { write(t, dir, "calc.go", "package calc // fixed\n") })

	perform(t, b, d, rv)

	got := b.task(tk.ID)
	if len(got.Failures) != 1 {
		t.Fatalf("%d failures recorded, want 1 (%s)", len(got.Failures), got.State)
	}
	f := got.Failures[0]
	// The record is exactly the core's verdict on the facts: the step's
	// command, exit code and output, the file the attempt changed.
	want := core.Judge(core.Scope{}, core.VerifyResult{RunID: rv.RunID, Path: os.Getenv("PATH"),
		Steps: []core.StepRun{{Name: "unit", Command: failingStep, ExitCode: 1, Timeout: verify.DefaultTimeout,
			Output: "--- FAIL: TestAdd (0.00s)\n    calc_test.go:9: got 3, want 4\nFAIL\n"}},
		Files: []string{"calc.go"}, FilesState: changed(t, d, tk.ID, true)}).Failure
	want.Attempt, want.Timestamp, want.DurationMS = f.Attempt, f.Timestamp, f.DurationMS
	if !reflect.DeepEqual(f, *want) {
		t.Fatalf("recorded failure:\n%+v\nthe core's verdict on the facts:\n%+v", f, *want)
	}
	// result.json holds that verdict beside the facts.
	var rf struct {
		Passed  *bool               `json:"passed"`
		Failure *core.FailureRecord `json:"failure"`
	}
	data, err := os.ReadFile(filepath.Join(d.runsDir, rv.RunID, verify.ResultName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rf); err != nil || rf.Passed == nil || *rf.Passed || rf.Failure == nil ||
		!reflect.DeepEqual(rf.Failure.ExecutorOutput, f.ExecutorOutput) || !rf.Failure.Timestamp.Equal(f.Timestamp) {
		t.Fatalf("result.json: %s", data)
	}
}

func TestAChangeOutOfItsTaskBoundariesRunsNoStepAndTheCoreFailsIt(t *testing.T) {
	t.Parallel()
	dir, _ := repo(t, "calc.go", "auth/token.go")
	b := openCore(t)
	d, err := New(Options{Dir: dir, Steps: []verify.Step{{Name: "unit", Run: "touch unit-ran"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	d.rt = b.rt
	tk, rv := b.verifying(core.TaskSpec{Description: "Fix Add", Boundaries: []string{"auth/"}},
		func() { write(t, dir, "auth/token.go", "package auth // changed\n") })

	perform(t, b, d, rv)

	got := b.task(tk.ID)
	if len(got.Failures) != 1 || got.Failures[0].ExecutorOutput.Verification.Command != "boundary check" ||
		got.Failures[0].ExecutorOutput.Error != "files changed outside the task's boundaries: auth/token.go" {
		t.Fatalf("failures %+v", got.Failures)
	}
	if _, err := os.Stat(filepath.Join(dir, "unit-ran")); err == nil {
		t.Fatal("a step ran for a change out of its task's boundaries")
	}
}
