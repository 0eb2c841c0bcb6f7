package core

import (
	"fmt"
	"strings"
	"time"

	"wilco/diagnose"
)

// A verification's verdict is decided here, and only here. The shell
// (verify, run by dispatch) reports what happened — the steps it ran with
// their commands, exit codes, durations and the kept part of their output,
// the files the attempt changed, the PATH the steps ran with — and Judge
// makes of those facts the verdict: passed or not, the failure type, the
// analysis of the failing output, an escalation, the boundary and package
// checks, the files a failure record names.

// DetailsBytes is about how much of the failing output's end a failure
// record keeps as its details (for the retry context).
const DetailsBytes = 2 << 10

// StepRun is what one verify step did: a fact the shell reports.
type StepRun struct {
	Name string
	// Command is the command line run (with {package} replaced).
	Command  string
	ExitCode int
	// TimedOut: the step ran past its timeout and was killed.
	TimedOut bool
	// Timeout is the step's timeout.
	Timeout  time.Duration
	Duration time.Duration
	// Output is the part of the step's combined output the shell kept (its
	// start and its end; the step's log has all of it).
	Output string
}

// Passed reports whether the step exited 0 within its timeout.
func (s StepRun) Passed() bool { return s.ExitCode == 0 && !s.TimedOut }

// VerifyResult is what the shell reports of one verification run: facts,
// no verdict.
type VerifyResult struct {
	TaskID string
	RunID  string
	// Steps are the verify steps run, in order: the run stops at the first
	// that failed. None ran when the change was out of the task's scope
	// (RunVerify.OutOfScope) or no step is configured.
	Steps []StepRun
	// Files are the files the attempt changed in the working tree (nil
	// when they could not be listed); FilesState the same with their
	// status and lines, when listed.
	Files      []string
	FilesState []FileState
	// Duration is how long the verify steps ran.
	Duration time.Duration
	// Path is the PATH the steps ran with.
	Path string
	// Inspection is the change, once the steps passed, when RunVerify
	// asked for it.
	Inspection *Inspection
}

// StepsPassed reports whether every step run passed (true when none ran).
func (r VerifyResult) StepsPassed() bool {
	for _, s := range r.Steps {
		if !s.Passed() {
			return false
		}
	}
	return true
}

// Verdict is what the core makes of a verification's facts.
type Verdict struct {
	Passed bool
	// Command is the failing step's command (or "boundary check",
	// "package check"), or the commands that passed joined with " && ".
	Command string
	// Failure is the failure record of a failed run.
	Failure *FailureRecord
	// Checks is how many verify steps passed. A run that passed with none
	// verified nothing: the task ends unverified, never success.
	Checks int
}

// Scope is what a task's change may touch: nothing inside its
// boundaries, nothing outside its package.
type Scope struct {
	Boundaries []string
	Package    string
}

// Scope is the task's scope the run checks.
func (e RunVerify) Scope() Scope { return Scope{Boundaries: e.Boundaries, Package: e.Package} }

// OutOfScope is a change that crossed its task's scope: the check that
// found it ("boundaries" or "package"), the files, and the message.
type OutOfScope struct {
	Check   string
	Files   []string
	Message string
}

// Check returns what of the changed files crosses the scope, nil when
// nothing does: the boundaries first, then the package. The shell asks it
// before the steps, which need not run for a change that fails anyway.
func (sc Scope) Check(changed []string) *OutOfScope {
	if v := OutsideBoundaries(changed, sc.Boundaries); len(v) > 0 {
		return &OutOfScope{Check: "boundaries", Files: v,
			Message: "files changed outside the task's boundaries: " + strings.Join(v, ", ")}
	}
	if sc.Package == "" {
		return nil
	}
	var outside []string
	for _, f := range changed {
		if !MatchPattern(PackageBoundary(sc.Package), f) {
			outside = append(outside, f)
		}
	}
	if len(outside) == 0 {
		return nil
	}
	return &OutOfScope{Check: "package", Files: outside,
		Message: "files changed outside the task's package " + sc.Package + ": " + strings.Join(outside, ", ")}
}

// Judge decides the verdict of a verification of a change in scope from
// the facts the shell reported: a change out of scope fails whatever the
// steps say; else the first step that failed fails the run, its output
// analysed; else it passed. Pure.
func Judge(sc Scope, r VerifyResult) Verdict {
	files := nonNil(r.Files)
	var v Verdict
	if o := sc.Check(files); o != nil {
		v.Failure = scopeFailure(sc, o)
		v.Command = v.Failure.ExecutorOutput.Verification.Command
	} else if i := firstFailed(r.Steps); i >= 0 {
		v.Command, v.Failure = r.Steps[i].Command, stepFailure(r.Steps[i], r.Path)
	} else {
		cmds := make([]string, len(r.Steps))
		for i, s := range r.Steps {
			cmds[i] = s.Command
		}
		return Verdict{Passed: true, Command: strings.Join(cmds, " && "), Checks: len(r.Steps)}
	}
	v.Failure.ExecutorOutput.Status = "failure"
	v.Failure.ExecutorOutput.FilesModified = files
	v.Failure.FilesState = r.FilesState
	v.Failure.RunID = r.RunID
	return v
}

func firstFailed(steps []StepRun) int {
	for i, s := range steps {
		if !s.Passed() {
			return i
		}
	}
	return -1
}

// scopeFailure is the failure record of a change out of its task's scope.
func scopeFailure(sc Scope, o *OutOfScope) *FailureRecord {
	f := &FailureRecord{FailureType: VerificationFailed, Details: o.Message,
		ExecutorOutput: ExecutorOutput{Error: o.Message}}
	if o.Check == "boundaries" {
		f.ExecutorOutput.Verification = &Verification{Command: "boundary check", ExitCode: 1,
			OutputSummary: fmt.Sprintf("%d file(s) changed outside the task's boundaries", len(o.Files))}
		f.RootCauseGuess = "The attempt changed files the task puts out of scope (boundaries: " + strings.Join(sc.Boundaries, "; ") + ")"
		f.SuggestedFix = "Undo the changes to " + strings.Join(o.Files, ", ") + " (restore them, delete them if new) and make the change without touching them"
		return f
	}
	f.ExecutorOutput.Verification = &Verification{Command: "package check", ExitCode: 1,
		OutputSummary: fmt.Sprintf("%d file(s) changed outside package %s", len(o.Files), sc.Package)}
	f.RootCauseGuess = "The task is scoped to package " + sc.Package + " and the attempt changed files of another"
	f.SuggestedFix = "Undo the changes to " + strings.Join(o.Files, ", ") + " and make the change inside " + sc.Package +
		"; a change that needs two packages must be split into tasks, one per package (a plan: wilco plan submit)"
	return f
}

// stepFailure is the failure record of a step that failed: its output
// analysed; a timeout is of type timeout; a program the step needs that
// is not installed is the environment's, which no attempt of the agent's
// can fix.
func stepFailure(s StepRun, path string) *FailureRecord {
	a := diagnose.Analyse(diagnose.Input{Command: s.Command, ExitCode: s.ExitCode, Output: s.Output, TimedOut: s.TimedOut, Timeout: s.Timeout})
	f := &FailureRecord{FailureType: VerificationFailed,
		ExecutorOutput: ExecutorOutput{Error: a.Error,
			Verification: &Verification{Command: s.Command, ExitCode: s.ExitCode, OutputSummary: a.Summary}},
		RootCauseGuess: a.RootCause, SuggestedFix: a.SuggestedFix,
		Details: diagnose.Tail(s.Output, DetailsBytes), Escalate: a.Escalate}
	if s.TimedOut {
		f.FailureType = Timeout
		return f
	}
	if p, ok := ClassifyProgram(s.ExitCode, s.Output); ok {
		f.FailureType, f.Escalate = Environment, Environment
		f.RootCauseGuess = "verify step " + s.Name + " (" + s.Command + "): " + p.Cause + " (PATH searched: " + path + ")"
		f.SuggestedFix = strings.Replace(p.Fix, "change the command in wilco.yaml", "change the verify step in wilco.yaml", 1)
		if f.ExecutorOutput.Error == "" {
			f.ExecutorOutput.Error = firstNonBlankLine(s.Output)
		}
	}
	return f
}

// firstNonBlankLine is the first line of text that is not blank, trimmed.
func firstNonBlankLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
