package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"wilco/atomicfile"
	"wilco/core"
	"wilco/proc"
	"wilco/workspace"
)

// DefaultTimeout bounds a step that has no timeout of its own.
const DefaultTimeout = 10 * time.Minute

// DetailsBytes is about how much of the failing output's end a failure
// record keeps as its details (for the retry context).
const DetailsBytes = 2 << 10

// What of a step's output is kept in memory for the analyser: its start
// and its end (the logs have all of it).
const (
	keepHead = 64 << 10
	keepTail = 448 << 10
)

// drainGrace is how long the output of a finished step is still read when
// a process that left the step's group holds it open.
const drainGrace = 2 * time.Second

// Files of a run directory.
const (
	RunLogName = "run.log"
	ResultName = "result.json"
)

// Step is one verification command (verify.steps in wilco.yaml).
type Step struct {
	Name string
	// Run is a shell command line, run with sh -c.
	Run string
	// Timeout bounds the step; zero is DefaultTimeout.
	Timeout time.Duration
}

// Runner runs the verify steps. Its fields are read, never changed, so one
// Runner may serve runs at the same time (in different run ids).
type Runner struct {
	// Steps run in order; the first that fails ends the run.
	Steps []Step
	// Dir is where steps run (the repository) unless RunSpec.Dir says
	// otherwise; empty is the current directory.
	Dir string
	// RunsDir holds one directory per run; empty is <Dir>/.wilco/runs.
	RunsDir string
	// Env is added to the environment of every step.
	Env []string
}

// RunSpec is one verification run.
type RunSpec struct {
	// RunID names the run and its directory: letters, digits, '.', '_'
	// and '-'.
	RunID   string
	Attempt int
	// TaskID, when set, is given to the steps as WILCO_TASK_ID.
	TaskID string
	// Dir overrides Runner.Dir.
	Dir string
	// Boundaries are the task's boundaries (files or modules out of
	// scope); Changed the files the attempt changed. A changed file inside
	// a boundary fails the run before any step.
	Boundaries []string
	Changed    []string
	// Package is the monorepo package (a folder of the repository) the
	// task is scoped to, "" for none: a changed file outside it fails the
	// run before any step, as a boundary does, and each step runs in it —
	// or, when its command names {package}, at the root with {package}
	// replaced by the package's path.
	Package string
	// FilesState, when set, is the failure record's files_state (as
	// workspace.Changed returns it); Changed defaults to its paths.
	FilesState []core.FileState
}

// StepResult is how one step went.
type StepResult struct {
	Name     string        `json:"name"`
	Command  string        `json:"command"`
	Passed   bool          `json:"passed"`
	ExitCode int           `json:"exit_code"`
	TimedOut bool          `json:"timed_out,omitempty"`
	Duration time.Duration `json:"-"`
	// LogPath is the step's own log (its combined output).
	LogPath string `json:"log_path"`
}

// Result is how a run went.
type Result struct {
	RunID   string
	Attempt int
	Passed  bool
	// Command is the failing step's command, or the commands that passed
	// joined with " && ".
	Command string
	// Failure is the failure record of a failed run. Its
	// Attempt, RunID and Timestamp are set; the core may set them again.
	Failure *core.FailureRecord
	// LogPath is the run's log: every step's output in order, with a line
	// before and after each (what GET /v1/runs/{run_id}/log serves).
	LogPath  string
	Duration time.Duration
	Steps    []StepResult
	// Err is trouble on wilco's side, not the agent's: a bad run id, a run
	// directory that cannot be written, a step that cannot be started, or
	// ctx ending (Err then wraps ctx.Err()). The run is failed and Failure
	// says the same, but a run ended by ctx says nothing about the work:
	// do not count it as the attempt's failure.
	Err error
}

// ValidRunID reports whether id can name a run directory.
func ValidRunID(id string) bool {
	if id == "" || id == "." || id == ".." || len(id) > 200 {
		return false
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// LogFile returns the path of a run's log in runsDir, for serving it; an
// error for an id that cannot name a run.
func LogFile(runsDir, runID string) (string, error) {
	if !ValidRunID(runID) {
		return "", fmt.Errorf("verify: invalid run id %q", runID)
	}
	return filepath.Join(runsDir, runID, RunLogName), nil
}

// RunDir is where the run's logs go.
func (r *Runner) RunDir(runID string) string {
	return filepath.Join(r.runsDir(), runID)
}

func (r *Runner) runsDir() string {
	if r.RunsDir != "" {
		return r.RunsDir
	}
	return filepath.Join(r.Dir, workspace.StateDir, "runs")
}

// Run runs a verification: the boundary check, then each step in order
// with sh -c in the directory, in a process group of its own, under its
// timeout, until one fails. The run directory (RunDir) is made afresh and
// holds <step>.log for each step run, run.log and result.json. A step that
// runs past its timeout is killed with its whole group and fails with type
// timeout; a step that ends leaves no process of its group behind.
func (r *Runner) Run(ctx context.Context, spec RunSpec) Result {
	start := time.Now()
	res := Result{RunID: spec.RunID, Attempt: spec.Attempt}
	changed := spec.Changed
	if changed == nil && spec.FilesState != nil {
		changed = workspace.Paths(spec.FilesState)
	}
	if changed == nil {
		changed = []string{}
	}
	fail := func(f core.FailureRecord) Result {
		f.Attempt, f.RunID, f.Timestamp = spec.Attempt, spec.RunID, time.Now().UTC()
		f.ExecutorOutput.Status = "failure"
		f.ExecutorOutput.FilesModified = changed
		f.FilesState = spec.FilesState
		res.Passed, res.Failure = false, &f
		res.Duration = time.Since(start)
		return res
	}
	infra := func(err error) Result {
		res.Err = err
		return fail(core.FailureRecord{FailureType: core.VerificationFailed,
			ExecutorOutput: core.ExecutorOutput{Error: err.Error()},
			RootCauseGuess: "wilco could not run the verification", SuggestedFix: "See wilco's log; this is not a fault of the attempt"})
	}
	if !ValidRunID(spec.RunID) {
		return infra(fmt.Errorf("verify: invalid run id %q", spec.RunID))
	}
	dir := spec.Dir
	if dir == "" {
		dir = r.Dir
	}
	if dir == "" {
		dir = "."
	}
	runDir := r.RunDir(spec.RunID)
	// A run is verified again after a restart: its earlier files are kept
	// in earlier-N/ (never overwritten), the agent's files of the same
	// attempt stay where they are.
	names := stepLogNames(r.Steps)
	kept, err := keepEarlier(runDir, append([]string{RunLogName, ResultName}, names...))
	if err != nil {
		return infra(fmt.Errorf("verify: run %s: %w", spec.RunID, err))
	}
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return infra(fmt.Errorf("verify: run %s: %w", spec.RunID, err))
	}
	res.LogPath = filepath.Join(runDir, RunLogName)
	runLog, err := os.Create(res.LogPath)
	if err != nil {
		return infra(fmt.Errorf("verify: run %s: %w", spec.RunID, err))
	}
	defer runLog.Close()
	defer func() { writeResult(runDir, res, start) }()

	fmt.Fprintf(runLog, "wilco verify: run %s, attempt %d, %d step(s), started %s\n", spec.RunID, spec.Attempt, len(r.Steps), start.UTC().Format(time.RFC3339))
	if kept != "" {
		fmt.Fprintf(runLog, "wilco verify: an earlier run of %s was interrupted; its logs are kept in %s/\n", spec.RunID, kept)
	}

	// The boundaries first: a run that crossed them fails whatever the
	// tests say, and the steps need not run.
	if v := workspace.OutsideBoundaries(changed, spec.Boundaries); len(v) > 0 {
		msg := "files changed outside the task's boundaries: " + strings.Join(v, ", ")
		fmt.Fprintf(runLog, "==> boundaries: %s\n<== boundaries: failed\n", msg)
		summary := fmt.Sprintf("%d file(s) changed outside the task's boundaries", len(v))
		res.Command = "boundary check"
		return fail(core.FailureRecord{FailureType: core.VerificationFailed,
			ExecutorOutput: core.ExecutorOutput{Error: msg,
				Verification: &core.Verification{Command: res.Command, ExitCode: 1, OutputSummary: summary}},
			RootCauseGuess: "The attempt changed files the task puts out of scope (boundaries: " + strings.Join(spec.Boundaries, "; ") + ")",
			SuggestedFix:   "Undo the changes to " + strings.Join(v, ", ") + " (restore them, delete them if new) and make the change without touching them",
			Details:        msg})
	}

	if spec.Package != "" {
		var outside []string
		for _, f := range changed {
			if !workspace.MatchPattern(core.PackageBoundary(spec.Package), f) {
				outside = append(outside, f)
			}
		}
		if len(outside) > 0 {
			msg := "files changed outside the task's package " + spec.Package + ": " + strings.Join(outside, ", ")
			fmt.Fprintf(runLog, "==> package: %s\n<== package: failed\n", msg)
			res.Command = "package check"
			return fail(core.FailureRecord{FailureType: core.VerificationFailed,
				ExecutorOutput: core.ExecutorOutput{Error: msg,
					Verification: &core.Verification{Command: res.Command, ExitCode: 1, OutputSummary: fmt.Sprintf("%d file(s) changed outside package %s", len(outside), spec.Package)}},
				RootCauseGuess: "The task is scoped to package " + spec.Package + " and the attempt changed files of another",
				SuggestedFix: "Undo the changes to " + strings.Join(outside, ", ") + " and make the change inside " + spec.Package +
					"; a change that needs two packages must be split into tasks, one per package (a plan: wilco plan submit)",
				Details: msg})
		}
	}

	env := slices.Concat(os.Environ(), r.Env, []string{"WILCO_RUN_ID=" + spec.RunID, "WILCO_ATTEMPT=" + strconv.Itoa(spec.Attempt)})
	if spec.Package != "" {
		env = append(env, "WILCO_PACKAGE="+spec.Package)
	}
	if spec.TaskID != "" {
		env = append(env, "WILCO_TASK_ID="+spec.TaskID)
	}
	var passed []string
	for i, s := range r.Steps {
		if err := ctx.Err(); err != nil {
			fmt.Fprintf(runLog, "<== interrupted: %v\n", err)
			return infra(fmt.Errorf("verify: run %s interrupted: %w", spec.RunID, err))
		}
		stepDir := dir
		if spec.Package != "" {
			if strings.Contains(s.Run, "{package}") {
				s.Run = strings.ReplaceAll(s.Run, "{package}", spec.Package)
			} else {
				stepDir = filepath.Join(dir, filepath.FromSlash(spec.Package))
			}
		}
		sr, out, err := runStep(ctx, stepDir, slices.Concat(env, []string{"WILCO_STEP=" + s.Name}), s, filepath.Join(runDir, names[i]), runLog)
		res.Steps = append(res.Steps, sr)
		if err != nil {
			fmt.Fprintf(runLog, "<== %s: %v\n", s.Name, err)
			return infra(fmt.Errorf("verify: run %s, step %s: %w", spec.RunID, s.Name, err))
		}
		if ctx.Err() != nil {
			return infra(fmt.Errorf("verify: run %s interrupted during step %s: %w", spec.RunID, s.Name, ctx.Err()))
		}
		if sr.Passed {
			passed = append(passed, s.Run)
			continue
		}
		res.Command = s.Run
		a := Analyse(Input{Command: s.Run, ExitCode: sr.ExitCode, Output: out, TimedOut: sr.TimedOut, Timeout: stepTimeout(s)})
		typ := core.VerificationFailed
		if sr.TimedOut {
			typ = core.Timeout
		}
		f := core.FailureRecord{FailureType: typ,
			ExecutorOutput: core.ExecutorOutput{Error: a.Error,
				Verification: &core.Verification{Command: s.Run, ExitCode: sr.ExitCode, OutputSummary: a.Summary}},
			RootCauseGuess: a.RootCause, SuggestedFix: a.SuggestedFix,
			Details: Tail(out, DetailsBytes), Escalate: a.Escalate}
		if p, ok := core.ClassifyProgram(sr.ExitCode, out); ok && !sr.TimedOut {
			// A program the step needs is not installed: no attempt of
			// the agent's can fix that.
			f.FailureType, f.Escalate = core.Environment, core.Environment
			f.RootCauseGuess = "verify step " + s.Name + " (" + s.Run + "): " + p.Cause + " (PATH searched: " + pathOf(env) + ")"
			f.SuggestedFix = strings.Replace(p.Fix, "change the command in wilco.yaml", "change the verify step in wilco.yaml", 1)
			if f.ExecutorOutput.Error == "" {
				f.ExecutorOutput.Error = firstLine(out)
			}
		}
		return fail(f)
	}
	res.Passed, res.Command = true, strings.Join(passed, " && ")
	fmt.Fprintf(runLog, "wilco verify: passed\n")
	res.Duration = time.Since(start)
	return res
}

func stepTimeout(s Step) time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// stepLogNames gives each step a log file name: its name made path-safe,
// unique, never run.log.
func stepLogNames(steps []Step) []string {
	// The run directory is shared with the agent's turn of the same attempt
	// (prompt.md, delegation.md, agent.log): never take those names.
	used := map[string]bool{"run": true, "agent": true, "prompt": true, "delegation": true, "diff": true}
	out := make([]string, len(steps))
	for i, s := range steps {
		var b strings.Builder
		for _, c := range []byte(s.Name) {
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
				b.WriteByte(c)
			} else {
				b.WriteByte('_')
			}
		}
		base := strings.TrimLeft(b.String(), ".")
		if len(base) > 64 {
			base = base[:64]
		}
		if base == "" {
			base = "step-" + strconv.Itoa(i+1)
		}
		name := base
		for n := 2; used[name]; n++ {
			name = base + "-" + strconv.Itoa(n)
		}
		used[name] = true
		out[i] = name + ".log"
	}
	return out
}

// keepEarlier moves the files of names that exist in runDir into a new
// earlier-N folder of it (N from 1) and returns that folder's name, or ""
// when there was nothing to keep.
func keepEarlier(runDir string, names []string) (string, error) {
	var present []string
	for _, name := range names {
		if _, err := os.Lstat(filepath.Join(runDir, name)); err == nil {
			present = append(present, name)
		}
	}
	if len(present) == 0 {
		return "", nil
	}
	for n := 1; ; n++ {
		kept := fmt.Sprintf("earlier-%d", n)
		err := os.Mkdir(filepath.Join(runDir, kept), 0o755)
		if os.IsExist(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		for _, name := range present {
			if err := os.Rename(filepath.Join(runDir, name), filepath.Join(runDir, kept, name)); err != nil {
				return "", err
			}
		}
		return kept, nil
	}
}

// runStep runs one step and returns its result and the part of its output
// kept for the analyser. The error is wilco's trouble (the log cannot be
// written, sh cannot start).
func runStep(ctx context.Context, dir string, env []string, s Step, logPath string, runLog io.Writer) (StepResult, string, error) {
	sr := StepResult{Name: s.Name, Command: s.Run, LogPath: logPath, ExitCode: -1}
	timeout := stepTimeout(s)
	fmt.Fprintf(runLog, "==> %s: %s (timeout %s)\n", s.Name, s.Run, timeout)
	logFile, err := os.Create(logPath)
	if err != nil {
		return sr, "", err
	}
	defer logFile.Close()

	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command("sh", "-c", s.Run)
	cmd.Dir, cmd.Env = dir, env
	keep := &keeper{}
	start := time.Now()
	g, err := proc.Start(sctx, cmd, io.MultiWriter(logFile, runLog, keep))
	if err != nil {
		return sr, "", fmt.Errorf("starting sh: %w", err)
	}
	exit, waitErr := g.Wait()
	sr.Duration = time.Since(start)
	// What the step left running in its group goes with it.
	_ = g.Kill()
	g.Drain(drainGrace)

	sr.ExitCode = exit.Code
	sr.TimedOut = errors.Is(sctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	sr.Passed = waitErr == nil && exit.Code == 0 && !sr.TimedOut && ctx.Err() == nil
	if waitErr != nil {
		return sr, keep.String(), fmt.Errorf("waiting for sh: %w", waitErr)
	}
	switch {
	case sr.TimedOut:
		fmt.Fprintf(runLog, "\n<== %s: timed out after %s (killed)\n", s.Name, timeout)
	case sr.Passed:
		fmt.Fprintf(runLog, "<== %s: passed in %s\n", s.Name, sr.Duration.Round(time.Millisecond))
	default:
		fmt.Fprintf(runLog, "\n<== %s: failed with exit code %d after %s\n", s.Name, sr.ExitCode, sr.Duration.Round(time.Millisecond))
	}
	return sr, keep.String(), nil
}

// keeper keeps the first keepHead and the last keepTail bytes written.
type keeper struct {
	head    []byte
	tail    []byte
	dropped int64
}

func (k *keeper) Write(p []byte) (int, error) {
	n := len(p)
	if room := keepHead - len(k.head); room > 0 {
		c := min(room, len(p))
		k.head = append(k.head, p[:c]...)
		p = p[c:]
	}
	k.tail = append(k.tail, p...)
	if len(k.tail) > 2*keepTail {
		over := len(k.tail) - keepTail
		k.dropped += int64(over)
		k.tail = append(k.tail[:0], k.tail[over:]...)
	}
	return n, nil
}

func (k *keeper) String() string {
	tail := k.tail
	dropped := k.dropped
	if len(tail) > keepTail {
		dropped += int64(len(tail) - keepTail)
		tail = tail[len(tail)-keepTail:]
	}
	if dropped == 0 {
		return string(k.head) + string(tail)
	}
	return string(k.head) + fmt.Sprintf("\n[… %d bytes of output not kept here; the step's log has all of it …]\n", dropped) + string(tail)
}

// resultFile is result.json.
type resultFile struct {
	RunID     string              `json:"run_id"`
	Attempt   int                 `json:"attempt"`
	Passed    bool                `json:"passed"`
	Command   string              `json:"command"`
	StartedAt time.Time           `json:"started_at"`
	Duration  string              `json:"duration"`
	Steps     []stepFile          `json:"steps"`
	Failure   *core.FailureRecord `json:"failure"`
	Error     string              `json:"error,omitempty"`
}

type stepFile struct {
	StepResult
	Duration string `json:"duration"`
}

func writeResult(runDir string, res Result, start time.Time) {
	f := resultFile{RunID: res.RunID, Attempt: res.Attempt, Passed: res.Passed, Command: res.Command,
		StartedAt: start.UTC(), Duration: res.Duration.String(), Steps: []stepFile{}, Failure: res.Failure}
	for _, s := range res.Steps {
		f.Steps = append(f.Steps, stepFile{StepResult: s, Duration: s.Duration.String()})
	}
	if res.Err != nil {
		f.Error = res.Err.Error()
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return
	}
	_ = atomicfile.WriteFile(filepath.Join(runDir, ResultName), append(b, '\n'), 0o644)
}

// pathOf is the PATH of an environment.
func pathOf(env []string) string {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	return path
}

// firstLine is the first line of text that is not blank.
func firstLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
