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

// What of a step's output is kept in memory for the core's analysis: its
// start and its end (the logs have all of it).
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
	// Package is the monorepo package (a folder of the repository) the
	// task is scoped to, "" for none: each step runs in it — or, when its
	// command names {package}, at the root with {package} replaced by the
	// package's path.
	Package string
	// OutOfScope, when set, is the change's crossing of its task's scope
	// (core.Scope.Check): the run says so in its log and runs no step,
	// since the verdict is a failure whatever the steps would say.
	OutOfScope *core.OutOfScope
}

// StepResult is how one step went.
type StepResult struct {
	Name     string        `json:"name"`
	Command  string        `json:"command"`
	Passed   bool          `json:"passed"`
	ExitCode int           `json:"exit_code"`
	TimedOut bool          `json:"timed_out,omitempty"`
	Timeout  time.Duration `json:"-"`
	Duration time.Duration `json:"-"`
	// LogPath is the step's own log (its combined output).
	LogPath string `json:"log_path"`
	// Output is the part of the output kept in memory: its start and its
	// end (the log has all of it).
	Output string `json:"-"`
}

// Result is what a run did: facts, no verdict (package core judges them,
// core.Judge).
type Result struct {
	RunID   string
	Attempt int
	// Start is when the run started.
	Start time.Time
	// LogPath is the run's log: every step's output in order, with a line
	// before and after each (what GET /v1/runs/{run_id}/log serves).
	LogPath  string
	Duration time.Duration
	// Steps are the steps run, in order, up to the first that failed.
	Steps []StepResult
	// Path is the PATH the steps ran with.
	Path string
	// Err is trouble on wilco's side, not the agent's: a bad run id, a run
	// directory that cannot be written, a step that cannot be started, or
	// ctx ending (Err then wraps ctx.Err()). Such a run says nothing about
	// the work: it is no verification of the attempt.
	Err error
}

// StepsPassed reports whether every step run passed (true when none ran).
func (r Result) StepsPassed() bool {
	for _, s := range r.Steps {
		if !s.Passed {
			return false
		}
	}
	return true
}

// StepRuns are the steps run as the core reads them.
func (r Result) StepRuns() []core.StepRun {
	out := make([]core.StepRun, len(r.Steps))
	for i, s := range r.Steps {
		out[i] = core.StepRun{Name: s.Name, Command: s.Command, ExitCode: s.ExitCode, TimedOut: s.TimedOut,
			Timeout: s.Timeout, Duration: s.Duration, Output: s.Output}
	}
	return out
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

// Run runs a verification: each step in order with sh -c in the
// directory, in a process group of its own, under its timeout, until one
// fails — none when the change is out of its task's scope
// (RunSpec.OutOfScope). The run directory (RunDir) is made afresh and
// holds <step>.log for each step run, run.log and result.json. A step
// that runs past its timeout is killed with its whole group; a step that
// ends leaves no process of its group behind. Run reports what happened;
// whether that passes is the core's verdict (WriteVerdict records it).
func (r *Runner) Run(ctx context.Context, spec RunSpec) Result {
	res := Result{RunID: spec.RunID, Attempt: spec.Attempt, Start: time.Now()}
	failed := func(err error) Result {
		res.Err, res.Duration = err, time.Since(res.Start)
		return res
	}
	if !ValidRunID(spec.RunID) {
		return failed(fmt.Errorf("verify: invalid run id %q", spec.RunID))
	}
	runDir := r.RunDir(spec.RunID)
	runLog, err := r.openRunLog(runDir, spec)
	if err != nil {
		return failed(fmt.Errorf("verify: run %s: %w", spec.RunID, err))
	}
	defer runLog.Close()
	res.LogPath = runLog.Name()
	defer func() { writeResult(runDir, res, nil) }()

	if o := spec.OutOfScope; o != nil {
		// The verdict is a failure whatever the tests say: the steps
		// need not run.
		fmt.Fprintf(runLog, "==> %s: %s\n<== %s: failed\n", o.Check, o.Message, o.Check)
		res.Duration = time.Since(res.Start)
		return res
	}
	env := r.env(spec)
	res.Path = pathOf(env)
	if err := r.runSteps(ctx, spec, env, runDir, runLog, &res); err != nil {
		return failed(err)
	}
	if res.StepsPassed() {
		fmt.Fprintf(runLog, "wilco verify: every step passed\n")
	}
	res.Duration = time.Since(res.Start)
	return res
}

// openRunLog makes the run directory and its run.log, the files of an
// earlier run of the same id kept in earlier-N/.
func (r *Runner) openRunLog(runDir string, spec RunSpec) (*os.File, error) {
	// A run is verified again after a restart: its earlier files are kept
	// in earlier-N/ (never overwritten), the agent's files of the same
	// attempt stay where they are.
	kept, err := keepEarlier(runDir, append([]string{RunLogName, ResultName}, stepLogNames(r.Steps)...))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, err
	}
	runLog, err := os.Create(filepath.Join(runDir, RunLogName))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(runLog, "wilco verify: run %s, attempt %d, %d step(s), started %s\n", spec.RunID, spec.Attempt, len(r.Steps), time.Now().UTC().Format(time.RFC3339))
	if kept != "" {
		fmt.Fprintf(runLog, "wilco verify: an earlier run of %s was interrupted; its logs are kept in %s/\n", spec.RunID, kept)
	}
	return runLog, nil
}

// env is the environment of the run's steps.
func (r *Runner) env(spec RunSpec) []string {
	env := slices.Concat(os.Environ(), r.Env, []string{"WILCO_RUN_ID=" + spec.RunID, "WILCO_ATTEMPT=" + strconv.Itoa(spec.Attempt)})
	if spec.Package != "" {
		env = append(env, "WILCO_PACKAGE="+spec.Package)
	}
	if spec.TaskID != "" {
		env = append(env, "WILCO_TASK_ID="+spec.TaskID)
	}
	return env
}

// runSteps runs the steps in order until one fails, adding each to
// res.Steps. The error is wilco's trouble, or ctx ending.
func (r *Runner) runSteps(ctx context.Context, spec RunSpec, env []string, runDir string, runLog io.Writer, res *Result) error {
	dir := firstOf(spec.Dir, r.Dir, ".")
	names := stepLogNames(r.Steps)
	for i, s := range r.Steps {
		if err := ctx.Err(); err != nil {
			fmt.Fprintf(runLog, "<== interrupted: %v\n", err)
			return fmt.Errorf("verify: run %s interrupted: %w", spec.RunID, err)
		}
		stepDir := dir
		if spec.Package != "" {
			if strings.Contains(s.Run, "{package}") {
				s.Run = strings.ReplaceAll(s.Run, "{package}", spec.Package)
			} else {
				stepDir = filepath.Join(dir, filepath.FromSlash(spec.Package))
			}
		}
		sr, err := runStep(ctx, stepDir, slices.Concat(env, []string{"WILCO_STEP=" + s.Name}), s, filepath.Join(runDir, names[i]), runLog)
		res.Steps = append(res.Steps, sr)
		if err != nil {
			fmt.Fprintf(runLog, "<== %s: %v\n", s.Name, err)
			return fmt.Errorf("verify: run %s, step %s: %w", spec.RunID, s.Name, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("verify: run %s interrupted during step %s: %w", spec.RunID, s.Name, ctx.Err())
		}
		if !sr.Passed {
			return nil
		}
	}
	return nil
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

// runStep runs one step and returns its result, with the part of its
// output kept for the core's analysis. The error is wilco's trouble (the
// log cannot be written, sh cannot start).
func runStep(ctx context.Context, dir string, env []string, s Step, logPath string, runLog io.Writer) (StepResult, error) {
	timeout := stepTimeout(s)
	sr := StepResult{Name: s.Name, Command: s.Run, LogPath: logPath, ExitCode: -1, Timeout: timeout}
	fmt.Fprintf(runLog, "==> %s: %s (timeout %s)\n", s.Name, s.Run, timeout)
	logFile, err := os.Create(logPath)
	if err != nil {
		return sr, err
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
		return sr, fmt.Errorf("starting sh: %w", err)
	}
	exit, waitErr := g.Wait()
	sr.Duration = time.Since(start)
	// What the step left running in its group goes with it.
	_ = g.Kill()
	g.Drain(drainGrace)

	sr.ExitCode = exit.Code
	sr.TimedOut = errors.Is(sctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	sr.Passed = waitErr == nil && exit.Code == 0 && !sr.TimedOut && ctx.Err() == nil
	sr.Output = keep.String()
	if waitErr != nil {
		return sr, fmt.Errorf("waiting for sh: %w", waitErr)
	}
	switch {
	case sr.TimedOut:
		fmt.Fprintf(runLog, "\n<== %s: timed out after %s (killed)\n", s.Name, timeout)
	case sr.Passed:
		fmt.Fprintf(runLog, "<== %s: passed in %s\n", s.Name, sr.Duration.Round(time.Millisecond))
	default:
		fmt.Fprintf(runLog, "\n<== %s: failed with exit code %d after %s\n", s.Name, sr.ExitCode, sr.Duration.Round(time.Millisecond))
	}
	return sr, nil
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

// resultFile is result.json: the run's facts, and the core's verdict
// once WriteVerdict has recorded it.
type resultFile struct {
	RunID     string              `json:"run_id"`
	Attempt   int                 `json:"attempt"`
	Passed    *bool               `json:"passed,omitempty"`
	Command   string              `json:"command,omitempty"`
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

// WriteVerdict records the core's verdict on a run in its result.json,
// beside the run's facts.
func (r *Runner) WriteVerdict(res Result, v core.Verdict) {
	writeResult(r.RunDir(res.RunID), res, &v)
}

func writeResult(runDir string, res Result, v *core.Verdict) {
	f := resultFile{RunID: res.RunID, Attempt: res.Attempt,
		StartedAt: res.Start.UTC(), Duration: res.Duration.String(), Steps: []stepFile{}}
	if v != nil {
		f.Passed, f.Command, f.Failure = &v.Passed, v.Command, v.Failure
	}
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

// firstOf is the first of ss that is not empty.
func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
