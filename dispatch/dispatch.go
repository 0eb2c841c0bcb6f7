// Package dispatch performs the core's effects on agents and the
// workspace — it hands messages to agents through their adapters, runs
// verification, makes, applies and discards dry-run diffs, commits
// verified changes, stops agents' turns and ends removed agents' sessions
// — and returns each outcome to
// the executor that called it; the adapters' own reports (replies, turns'
// ends, activity) go to the runtime's Report. It decides nothing: the core
// does.
package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"time"

	execadapter "wilco/adapter/exec"
	"wilco/adapter/mailbox"
	tmuxadapter "wilco/adapter/tmux"
	"wilco/atomicfile"
	"wilco/core"
	"wilco/prland"
	"wilco/runtime"
	"wilco/untested"
	"wilco/verify"
	"wilco/workspace"
)

// DiffName is the file a dry run's diff is kept in, inside its run
// directory.
const DiffName = "diff.patch"

// Dispatcher performs effects on agents and the workspace; the executor
// calls its methods, on goroutines of its own. It is the adapters'
// adapter.Reporter.
type Dispatcher struct {
	log    *slog.Logger
	ws     *workspace.Workspace
	verify *verify.Runner
	exec   *execadapter.Adapter
	tmux   *tmuxadapter.Adapter
	// adapters run their agents' programs (exec, tmux); the agents none
	// of them has are the mailbox side's.
	adapters []Adapter
	mailbox  Adapter
	runsDir  string
	rt       *runtime.Runtime
	// pr pushes and opens the pull requests of tasks landing as ones
	// (nil: no forge is configured).
	pr *prland.Lander
}

// Options configure a dispatcher.
type Options struct {
	// Dir is the repository; RunsDir defaults to <Dir>/.wilco/runs.
	Dir     string
	RunsDir string
	Steps   []verify.Step
	// URL is wilco's address, given to agents.
	URL string
	// MCP is the command line of wilco's MCP server for agents, exec and
	// tmux ones (see the adapters' Options.MCP).
	MCP []string
	// StateDir is where wilco's own tmux server keeps its socket (default
	// <Dir>/.wilco); Tmux the tmux program (default tmux on the PATH).
	StateDir string
	Tmux     string
	// RateLimitWait is the backoff before work a rate-limited model API
	// cut short goes on (see the exec adapter's Options.RateLimitWait).
	RateLimitWait func(n int) time.Duration
	Logger        *slog.Logger
	// Runtime is where the adapters' reports go (Report) and what Recover
	// settles.
	Runtime *runtime.Runtime
	// PR, when a forge is configured, pushes the branches of tasks
	// landing as pull requests, opens and merges them.
	PR *prland.Lander
}

// New makes a dispatcher for the repository at opts.Dir. The exec adapter
// is created with it; add agents with Exec().Add.
func New(opts Options) (*Dispatcher, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	runs := opts.RunsDir
	if runs == "" {
		runs = filepath.Join(dir, ".wilco", "runs")
	}
	d := &Dispatcher{log: log, runsDir: runs, verify: &verify.Runner{Steps: opts.Steps, Dir: dir, RunsDir: runs}, rt: opts.Runtime, pr: opts.PR}
	if ws, err := workspace.Open(dir); err == nil {
		d.ws = ws
	} else {
		log.Warn("not a git work tree: dry runs, diffs and the files-changed summary are unavailable", "dir", dir, "err", err)
	}
	ex, err := execadapter.New(execadapter.Options{Dir: dir, RunsDir: runs, URL: opts.URL, MCP: opts.MCP, Report: d, Logger: log, RateLimitWait: opts.RateLimitWait,
		Worktree: func(ctx context.Context, task string) (string, error) {
			if d.ws == nil {
				return "", errors.New("dry runs need a git work tree")
			}
			return d.ws.Worktree(ctx, task)
		},
		ReadOnly: d.readOnly})
	if err != nil {
		return nil, err
	}
	d.exec = ex
	tm, err := tmuxadapter.New(tmuxadapter.Options{Dir: dir, RunsDir: runs, StateDir: opts.StateDir, URL: opts.URL, MCP: opts.MCP, Program: opts.Tmux, Report: d, Logger: log, ReadOnly: d.readOnly})
	if err != nil {
		return nil, err
	}
	d.tmux = tm
	d.adapters = []Adapter{ex, tm}
	d.mailbox = &mailbox.Adapter{Logger: log}
	return d, nil
}

// Exec is the exec adapter, to add agents to.
func (d *Dispatcher) Exec() *execadapter.Adapter { return d.exec }

// Tmux is the tmux adapter, to add agents to.
func (d *Dispatcher) Tmux() *tmuxadapter.Adapter { return d.tmux }

// Has reports whether an adapter of the dispatcher that runs its agents'
// programs delivers to agent (exec and tmux agents).
func (d *Dispatcher) Has(agent string) bool {
	for _, a := range d.adapters {
		if a.Has(agent) {
			return true
		}
	}
	return false
}

// RunsDir is where run logs and diffs live.
func (d *Dispatcher) RunsDir() string { return d.runsDir }

// ErrNoRuntime is the answer of a report made by a dispatcher opened
// without a runtime.
var ErrNoRuntime = errors.New("dispatch: no runtime")

// report records an outcome in the core.
func (d *Dispatcher) report(ctx context.Context, what string, o core.Outcome) (any, error) {
	if d.rt == nil {
		return nil, ErrNoRuntime
	}
	v, err := d.rt.Report(context.WithoutCancel(ctx), o)
	if err != nil && core.CodeOf(err) == "" {
		d.log.Error("reporting to the core failed", "what", what, "err", err)
	}
	return v, err
}

// Deliver hands a message to an agent through its adapter (the caller
// routes here only the messages of the agents Has reports; a mailbox
// agent's wait in its inbox). The executor calls it in the order the core
// asked, after the task's RecordBaseline, so that the baseline is noted
// before the agent begins and a StopTurn never overtakes the send it
// stops.
func (d *Dispatcher) Deliver(agent string, msg core.InboxMessage) {
	d.adapterOf(agent).Deliver(agent, msg)
}

// StopTurn stops the agent working on a task, whichever adapter runs it.
func (d *Dispatcher) StopTurn(e core.StopTurn) {
	for _, a := range d.every() {
		a.StopTurn(e.TaskID, e.Reason)
	}
}

// StopSession ends the session the tmux adapter keeps for a removed
// agent — or, for an agent it no longer has (one that left wilco.yaml
// while wilco was down), the session wilco made for it on its own tmux
// server — and says how that went: ended, or already gone, or the error
// that kept a running session from being ended.
func (d *Dispatcher) StopSession(ctx context.Context, e core.StopSession) core.SessionEnded {
	r := core.SessionEnded{Agent: e.Agent}
	if err := d.tmux.Remove(ctx, e.Agent); err != nil {
		d.log.Warn("the removed agent's tmux session could not be ended", "agent", e.Agent, "err", err)
		r.Error = err.Error()
	}
	return r
}

// DiscardProposal removes a dry run's worktree.
func (d *Dispatcher) DiscardProposal(ctx context.Context, e core.DiscardProposal) {
	if d.ws == nil {
		return
	}
	if err := d.ws.Discard(ctx, e.TaskID); err != nil {
		d.log.Warn("discarding a dry run's worktree failed", "task", e.TaskID, "err", err)
	}
}

// A task's baseline is the working tree's changes when its first attempt
// began (path → content hash, or "absent"), so that a summary lists what
// the task changed, not what was already dirty. It is kept in a file of
// the runs directory, so that it outlives a restart and costs no memory
// between a task's verifications.
const baselinesDir = "baselines"

func (d *Dispatcher) baselinePath(task string) string {
	return filepath.Join(d.runsDir, baselinesDir, workspace.WorktreeName(task)+".json")
}

// headPath keeps the commit HEAD named when a task's baseline was noted:
// a commit of the task is looked for only after it.
func (d *Dispatcher) headPath(task string) string {
	return filepath.Join(d.runsDir, baselinesDir, workspace.WorktreeName(task)+".head")
}

// RecordBaseline notes the working tree's changes before a task's first
// send. A baseline already noted is kept: the effect asked again after a
// restart may come after the agent began.
func (d *Dispatcher) RecordBaseline(ctx context.Context, e core.RecordBaseline) core.BaselineRecorded {
	r := core.BaselineRecorded{TaskID: e.TaskID}
	if d.ws == nil {
		r.Error = "not a git work tree"
		return r
	}
	if _, err := os.Stat(d.baselinePath(e.TaskID)); err == nil {
		return r
	}
	if err := d.recordBaseline(ctx, e.TaskID); err != nil {
		r.Error = err.Error()
	}
	return r
}

// recordBaseline notes what was already changed in the working tree when a
// task begins (or a dry run's diff is applied).
func (d *Dispatcher) recordBaseline(ctx context.Context, task string) error {
	if d.ws == nil {
		return nil
	}
	files, err := d.ws.ChangedPaths(ctx)
	if err != nil {
		d.log.Warn("listing changed files failed; the task's summary will list every change", "task", task, "err", err)
		return err
	}
	base := map[string]string{}
	for _, f := range files {
		base[f.Path] = d.contentHash(f.Path)
	}
	path := d.baselinePath(task)
	b, err := json.Marshal(base)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		// Before the baseline, which says the whole is noted.
		var head string
		if head, err = d.ws.Head(ctx); err == nil {
			err = atomicfile.WriteFile(d.headPath(task), []byte(head+"\n"), 0o644)
		}
	}
	if err == nil {
		err = atomicfile.WriteFile(path, b, 0o644)
	}
	if err != nil {
		d.log.Warn("keeping the task's baseline failed; its summary will list every change", "task", task, "err", err)
	}
	return err
}

// baseline reads a task's baseline; ok is false when none was recorded.
func (d *Dispatcher) baseline(task string) (base map[string]string, ok bool) {
	b, err := os.ReadFile(d.baselinePath(task))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			d.log.Warn("reading the task's baseline failed; its summary lists every change", "task", task, "err", err)
		}
		return nil, false
	}
	if err := json.Unmarshal(b, &base); err != nil {
		d.log.Warn("the task's baseline is unreadable; its summary lists every change", "task", task, "err", err)
		return nil, false
	}
	return base, true
}

func (d *Dispatcher) contentHash(path string) string {
	b, err := os.ReadFile(filepath.Join(d.ws.Root(), path))
	if err != nil {
		return "absent"
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// changedByTask lists the files the task changed: those changed now whose
// content differs from when it began, those it restored to their committed
// content, and the untracked ones it deleted.
// With full, the line counts are read too (a failure's files_state).
func (d *Dispatcher) changedByTask(ctx context.Context, task string, full bool) ([]core.FileState, error) {
	return d.changedIn(ctx, "", task, full)
}

// changedIn lists the files a task changed in its worktree (relative to
// the checkout's root; "" for the checkout itself, where its baseline is
// left out): a worktree holds the task's changes only.
func (d *Dispatcher) changedIn(ctx context.Context, worktree, task string, full bool) ([]core.FileState, error) {
	ws, err := d.workspaceOf(worktree)
	if err != nil {
		return nil, err
	}
	changed := ws.ChangedPaths
	if full {
		changed = ws.Changed
	}
	files, err := changed(ctx)
	if err != nil {
		return nil, err
	}
	base, ok := d.baseline(task)
	if !ok || worktree != "" {
		return files, nil
	}
	var out []core.FileState
	seen := map[string]bool{}
	for _, f := range files {
		seen[f.Path] = true
		if h, was := base[f.Path]; was && h == d.contentHash(f.Path) {
			continue
		}
		out = append(out, f)
	}
	for p, h := range base {
		if seen[p] {
			continue
		}
		// Unchanged now: back to its committed content, or, when it is
		// gone, an untracked file deleted (a tracked one would show as
		// deleted above).
		status := "restored"
		if h != "absent" && d.contentHash(p) == "absent" {
			status = "deleted"
		}
		out = append(out, core.FileState{Path: p, Status: status})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// RunVerify runs a verification and returns its facts, for the core to
// judge (core.Judge), and what to do with the core's answer: record the
// verdict in the run's result.json. Nothing here decides whether the run
// passed. ok is false when the steps could not run (they run again at the
// next start).
func (d *Dispatcher) RunVerify(ctx context.Context, e core.RunVerify) (_ core.VerifyResult, judged func(any), ok bool) {
	res, l := d.runSteps(ctx, e)
	if res.Err != nil {
		d.log.Error("verification could not run; it runs again at the next start", "run", e.RunID, "err", res.Err)
		return core.VerifyResult{}, nil, false
	}
	r := core.VerifyResult{TaskID: e.TaskID, RunID: e.RunID, Steps: res.StepRuns(), Duration: res.Duration, Path: res.Path}
	if l.ok {
		r.Files = workspace.Paths(l.files)
	}
	if d.ws != nil {
		r.FilesState, r.Inspection = d.lines(ctx, e, res, l)
	}
	return r, func(v any) {
		if v, ok := v.(core.Verdict); ok {
			d.verify.WriteVerdict(res, v)
			d.log.Info("verification ended", "task", e.TaskID, "run", e.RunID, "passed", v.Passed, "duration", res.Duration.Round(time.Millisecond))
		}
	}, true
}

// listing is the files a task changed, when they could be listed (ok);
// full when with the lines each changed; outOfScope when the scope check
// found them crossing the task's scope.
type listing struct {
	files                []core.FileState
	ok, full, outOfScope bool
}

// runSteps runs the verify steps and lists the files the task changed.
// With a scope to check, the files come first: a change out of the scope
// (core.Scope.Check) runs no step. Without one, git runs beside the steps.
// The lines each file changed are read with the list when the definition
// of done will want them, so that git runs once.
func (d *Dispatcher) runSteps(ctx context.Context, e core.RunVerify) (verify.Result, listing) {
	spec := verify.RunSpec{RunID: e.RunID, Attempt: e.Attempt, TaskID: e.TaskID, Package: e.Package}
	if e.Worktree != "" && d.ws != nil {
		spec.Dir = filepath.Join(d.ws.Root(), filepath.FromSlash(e.Worktree))
	}
	list := func() listing {
		files, err := d.changedIn(ctx, e.Worktree, e.TaskID, e.Inspect)
		if err != nil {
			d.log.Warn("listing changed files failed", "err", err)
			return listing{}
		}
		return listing{files: files, ok: true, full: e.Inspect}
	}
	switch {
	case d.ws == nil:
		return d.verify.Run(ctx, spec), listing{}
	case len(e.Boundaries) > 0 || e.Package != "":
		l := list()
		if l.ok {
			spec.OutOfScope = e.Scope().Check(workspace.Paths(l.files))
			l.outOfScope = spec.OutOfScope != nil
		}
		return d.verify.Run(ctx, spec), l
	default:
		ch := make(chan listing, 1)
		go func() { ch <- list() }()
		res := d.verify.Run(ctx, spec)
		return res, <-ch
	}
}

// lines are the facts of the change the core may need beyond its list:
// the lines each file changed, which a failure's record names (when the
// steps failed or the change is out of scope), and the change's
// Inspection once the steps passed, when the definition of done asked for
// it.
func (d *Dispatcher) lines(ctx context.Context, e core.RunVerify, res verify.Result, l listing) ([]core.FileState, *core.Inspection) {
	full := func() ([]core.FileState, error) {
		if l.ok && l.full {
			return l.files, nil
		}
		return d.changedIn(ctx, e.Worktree, e.TaskID, true)
	}
	if !res.StepsPassed() || l.outOfScope {
		files, _ := full()
		return files, nil
	}
	if !e.Inspect {
		return nil, nil
	}
	files, err := full()
	if err != nil {
		d.log.Warn("inspecting the change failed: the definition of done's checks are skipped", "task", e.TaskID, "err", err)
		return nil, nil
	}
	return nil, d.inspect(ctx, e, files)
}

// maxReviewDiff bounds the diff a reviewer is sent.
const maxReviewDiff = 256 << 10

// inspect reads what the definition of done checks of a task's change
// whose verification passed: its files with their lines, the source files
// changed without a test, and (for a reviewer) the diff.
func (d *Dispatcher) inspect(ctx context.Context, e core.RunVerify, files []core.FileState) *core.Inspection {
	ins := &core.Inspection{Files: files}
	var live []string
	for _, f := range files {
		if f.Status != workspace.StatusDeleted && f.Status != "restored" {
			live = append(live, f.Path)
		}
	}
	ws, err := d.workspaceOf(e.Worktree)
	if err != nil {
		d.log.Warn("inspecting the change failed: the definition of done's checks are skipped", "task", e.TaskID, "err", err)
		return nil
	}
	ins.Untested = untested.Find(live, os.DirFS(ws.Root()))
	if e.Diff {
		diff, err := ws.DiffOf(ctx, workspace.Paths(files))
		if err != nil {
			d.log.Warn("the change's diff could not be made: the reviewer gets the file list only", "task", e.TaskID, "err", err)
		}
		if len(diff) > maxReviewDiff {
			diff = append(diff[:maxReviewDiff:maxReviewDiff], fmt.Sprintf("\n… (the diff is cut here: %d bytes in all)\n", len(diff))...)
		}
		ins.Diff = string(diff)
	}
	return ins
}

// DiffPath is where the diff of a dry run's run id is kept.
func (d *Dispatcher) DiffPath(runID string) string {
	return filepath.Join(d.runsDir, runID, DiffName)
}

// MakeProposal makes a dry run's diff and returns the result; ok is false
// when wilco stopping cut it short (the core asks again at the next
// start).
func (d *Dispatcher) MakeProposal(ctx context.Context, e core.MakeProposal) (r core.ProposalResult, ok bool) {
	r = core.ProposalResult{TaskID: e.TaskID, RunID: e.RunID}
	defer func() { ok = r.Error == "" || !interrupted(ctx, d.log, "making the diff", e.TaskID) }()
	if d.ws == nil {
		r.Error = "dry runs need a git work tree"
	} else if diff, files, err := d.ws.Diff(ctx, e.TaskID); err != nil {
		r.Error = err.Error()
	} else if err := writeFile(d.DiffPath(e.RunID), diff); err != nil {
		r.Error = err.Error()
	} else {
		r.Files = files
	}
	return r, ok
}

// interrupted reports (and logs) that an effect failed because wilco is
// stopping: its failure says nothing of the task and is not reported; the
// core asks for the effect again at the next start.
func interrupted(ctx context.Context, log *slog.Logger, what, task string) bool {
	if ctx.Err() == nil {
		return false
	}
	log.Warn("interrupted: wilco is stopping; it runs again at the next start", "effect", what, "task", task)
	return true
}

// ApplyProposal writes a dry run's diff into the working tree and returns
// the result; ok is false when wilco stopping cut it short.
func (d *Dispatcher) ApplyProposal(ctx context.Context, e core.ApplyProposal) (r core.ApplyResult, ok bool) {
	r = core.ApplyResult{TaskID: e.TaskID}
	defer func() { ok = r.Error == "" || !interrupted(ctx, d.log, "applying the diff", e.TaskID) }()
	diff, err := os.ReadFile(d.DiffPath(e.RunID))
	switch {
	case err != nil:
		r.Error = fmt.Sprintf("the proposed diff is gone: %v", err)
	case d.ws == nil:
		r.Error = "applying needs a git work tree"
	default:
		// The verification that follows lists what the diff changed, not
		// what was already dirty.
		_ = d.recordBaseline(ctx, e.TaskID) // a failure is logged
		if files, err := d.ws.ApplyDryRun(ctx, e.TaskID, diff); err != nil {
			r.Error = err.Error()
		} else {
			r.Files = files
			if err := d.ws.Discard(ctx, e.TaskID); err != nil {
				d.log.Warn("removing the applied dry run's worktree failed", "task", e.TaskID, "err", err)
			}
		}
	}
	return r, ok
}

// EditedSince names which of files changed in the working tree since the
// dry run of taskID started (nothing when there is no git work tree or no
// worktree for it).
func (d *Dispatcher) EditedSince(ctx context.Context, taskID string, files []string) ([]string, error) {
	if d.ws == nil {
		return nil, nil
	}
	edited, err := d.ws.EditedSince(ctx, taskID, files)
	if errors.Is(err, workspace.ErrNoWorktree) {
		return nil, nil
	}
	return edited, err
}

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// readOnly gives a scout's question a throw-away worktree made from the
// working tree as it is — the checkout's, or the worktree's of the task
// worked in parallel that asks (worktree) — and the function that lists
// what the scout changed there and removes it.
func (d *Dispatcher) readOnly(ctx context.Context, messageID, worktree string) (string, func(context.Context) ([]string, error), error) {
	if d.ws == nil {
		return "", nil, errors.New("a scout works in a copy of the working tree, which needs a git work tree")
	}
	ws, err := d.workspaceOf(worktree)
	if err != nil {
		return "", nil, err
	}
	key := "scout-" + messageID
	dir, err := ws.Worktree(ctx, key)
	if err != nil {
		return "", nil, err
	}
	return dir, func(ctx context.Context) ([]string, error) {
		_, files, err := ws.Diff(ctx, key)
		if derr := ws.Discard(context.WithoutCancel(ctx), key); derr != nil {
			d.log.Warn("removing a scout's worktree failed", "message", messageID, "err", derr)
		}
		return files, err
	}, nil
}

// Recover settles what a restart interrupted: turns that died with the
// server count as execution errors; verifications and applies run again;
// removed agents' sessions whose end is not recorded are ended;
// the turns of tmux agents, whose sessions outlived the server, are
// followed again; the sessions on wilco's own tmux server of agents it no
// longer runs are ended.
func (d *Dispatcher) Recover(ctx context.Context) error {
	live := map[string]bool{} // worktree names of dry runs and tasks not ended, and those kept
	var adopt, instances []core.Task
	if d.rt == nil {
		return ErrNoRuntime
	}
	_, err := d.rt.Do(ctx, func(c *core.State, now time.Time) (any, error) {
		c.RecoverTasks(now)
		c.RecoverSessions(now)
		for _, t := range c.Tasks(func(t *core.Task) bool {
			return (t.DryRun || t.Worktree != "") && !t.State.Terminal() || t.Worktree != "" && t.KeepWorktree
		}) {
			live[workspace.WorktreeName(t.ID)] = true
		}
		adopt = c.Tasks(func(t *core.Task) bool {
			return t.State == core.Running && t.Phase == core.Executing && d.tmux.Has(t.Agent)
		})
		instances = c.Tasks(func(t *core.Task) bool {
			return t.Worktree != "" && !t.State.Terminal() && d.tmux.Has(t.Agent)
		})
		return nil, nil
	})
	for _, t := range instances {
		// The session a tmux agent works the task in outlived wilco: it
		// is the task's again (not a stray), its conversation kept.
		d.tmux.Adopt(t.Agent, t.ID, t.Worktree)
	}
	for _, t := range adopt {
		d.log.Info("following again the turn of a tmux agent that outlived wilco", "task", t.ID, "agent", t.Agent)
		d.tmux.Resume(t.Agent, core.InboxMessage{ID: t.Delivery, Type: string(core.TypeDelegation), TaskID: t.ID, TaskAttempt: t.Attempt, Worktree: t.Worktree})
	}
	d.endStrays(ctx)
	if err != nil || d.ws == nil {
		return err
	}
	removed, rerr := d.ws.RemoveWorktreesExcept(ctx, func(name string) bool { return live[name] })
	if len(removed) > 0 {
		d.log.Info("removed the worktrees of dry runs and tasks that ended", "worktrees", removed)
	}
	if rerr != nil {
		d.log.Warn("removing orphaned worktrees failed", "err", rerr)
	}
	return nil
}

// KillOrphans stops the exec agents a previous wilco left running (their
// process groups, found from the pid files of their runs). Call it before
// any effect is performed: a turn started since would be taken for one.
func (d *Dispatcher) KillOrphans() {
	if n := d.exec.KillOrphans(); n > 0 {
		d.log.Warn("stopped agents a previous wilco left running", "count", n)
	}
}

// endStrays ends the sessions on wilco's own tmux server of agents that
// no adapter runs any more, and of tasks worked in parallel that ended
// (see tmux's EndStrays).
func (d *Dispatcher) endStrays(ctx context.Context) {
	ended, err := d.tmux.EndStrays(ctx)
	if len(ended) > 0 {
		d.log.Warn("ended the tmux sessions of agents no longer configured, and of tasks that ended while wilco was down: their programs ran unsupervised", "sessions", ended)
	}
	if err != nil {
		d.log.Warn("a tmux session of an agent no longer configured could not be ended", "err", err)
	}
}

// Close stops every agent process group (the executor cancels the
// effects it runs).
func (d *Dispatcher) Close() error { return d.closeAdapters() }
