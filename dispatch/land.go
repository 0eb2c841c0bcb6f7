package dispatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"wilco/core"
	"wilco/prompt"
	"wilco/workspace"
)

// baselineHead is the commit HEAD named when a task's baseline was noted
// ("" when there was none yet); ok is false when it was not kept.
func (d *Dispatcher) baselineHead(task string) (head string, ok bool) {
	b, err := os.ReadFile(d.headPath(task))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// LandTask commits a verified task's own changes in the checkout, on the
// target branch: the files it changed that had no uncommitted change when
// it began (its baseline); those that had are left out, uncommitted, and
// named. A commit of the task's run already on the branch since the task
// began (made just before wilco stopped) is reported as it is, not made
// again. A git hook's refusal is reported with its output; any other
// reason the commit cannot be made is the outcome's Error. ok is false
// when wilco stopping cut it short (the core asks again at the next
// start).
func (d *Dispatcher) LandTask(ctx context.Context, e core.LandTask) (r core.Landed, ok bool) {
	r = core.Landed{TaskID: e.TaskID, RunID: e.RunID, Branch: e.Branch}
	defer func() {
		ok = r.Error == "" && !r.Refused || !interrupted(ctx, d.log, "committing the verified change", e.TaskID)
	}()
	switch {
	case d.ws == nil:
		r.Error = "committing needs a git work tree"
		return r, ok
	case e.Branch == "":
		r.Error = "there is no target branch: land.to is not set and wilco started on a detached HEAD"
		return r, ok
	}
	since, noted := d.baselineHead(e.TaskID)
	if !noted {
		d.log.Warn("the commit HEAD named when the task began was not kept: its commit is looked for in all of the branch's history", "task", e.TaskID)
	}
	found, files, err := d.ws.FindCommit(ctx, e.Branch, since, map[string]string{prompt.TrailerTask: e.TaskID, prompt.TrailerRun: e.RunID})
	if err != nil {
		r.Error = err.Error()
		return r, ok
	}
	if found != "" {
		d.log.Info("the verified change was committed before wilco stopped: it is not committed again", "task", e.TaskID, "commit", found)
		r.Commit, r.Files = found, files
		return r, ok
	}
	if err := d.onBranch(ctx, e.Branch); err != nil {
		r.Error = err.Error()
		return r, ok
	}
	base, known := d.baseline(e.TaskID)
	if !known {
		r.Error = "the working tree's changes before the task began were not recorded, so wilco cannot tell the task's changes from others"
		return r, ok
	}
	changed, err := d.changedByTask(ctx, e.TaskID, false)
	if err != nil {
		r.Error = err.Error()
		return r, ok
	}
	var commit []string
	for _, f := range changed {
		if _, dirty := base[f.Path]; dirty {
			r.Left = append(r.Left, f.Path)
		} else {
			commit = append(commit, f.Path)
		}
	}
	if len(commit) == 0 {
		d.log.Info("nothing of the verified change to commit", "task", e.TaskID, "left", r.Left)
		return r, ok
	}
	msg := prompt.CommitMessage(prompt.Commit{Description: e.Description, TaskID: e.TaskID, Agent: e.Agent, Left: r.Left,
		Summary: prompt.Summary{Files: commit, Why: e.Why, RunID: e.RunID, Command: e.Command, Attempts: e.Attempt}})
	h, err := d.ws.Commit(ctx, commit, msg)
	var ce *workspace.CommitError
	switch {
	case errors.As(err, &ce) && ce.Hook:
		r.Refused, r.ExitCode, r.Output = true, ce.ExitCode, ce.Output
		d.log.Info("the repository's git hooks refused the commit of the verified change", "task", e.TaskID, "exit", ce.ExitCode)
	case err != nil:
		r.Error = err.Error()
	default:
		r.Commit, r.Files = h, commit
		d.log.Info("the verified change landed", "task", e.TaskID, "commit", h, "branch", e.Branch, "files", len(commit), "left", len(r.Left))
	}
	return r, ok
}

// onBranch says why the checkout is not on branch (nil when it is): wilco
// commits there and never switches the user's branch.
func (d *Dispatcher) onBranch(ctx context.Context, branch string) error {
	cur, err := d.ws.Branch(ctx)
	switch {
	case err != nil:
		return err
	case cur == "":
		return fmt.Errorf("the checkout is on no branch (a detached HEAD), not on %s (land.to); wilco does not switch branches: check out %s", branch, branch)
	case cur != branch:
		return fmt.Errorf("the checkout is on branch %s, not on %s (land.to); wilco does not switch branches: check out %s", cur, branch, branch)
	}
	return nil
}

// Branch is the branch checked out in the repository ("" for a detached
// HEAD); ok is false when there is no git work tree or it could not be
// read.
func (d *Dispatcher) Branch(ctx context.Context) (branch string, ok bool) {
	if d.ws == nil {
		return "", false
	}
	b, err := d.ws.Branch(ctx)
	if err != nil {
		d.log.Warn("reading the branch checked out failed", "err", err)
		return "", false
	}
	return b, true
}
