package dispatch

import (
	"context"
	"errors"
	"path/filepath"

	"wilco/core"
	"wilco/workspace"
)

// PrepareWorktree makes the worktree and branch of a task worked in
// parallel, from the target's head, and reports the commit they start
// from. ok is false when wilco stopping cut it short (the core asks again
// at the next start).
func (d *Dispatcher) PrepareWorktree(ctx context.Context, e core.PrepareWorktree) (r core.WorktreePrepared, ok bool) {
	r = core.WorktreePrepared{TaskID: e.TaskID, Branch: e.Branch}
	if d.ws == nil {
		r.Error = "tasks worked in parallel need a git work tree"
		return r, true
	}
	base, err := d.ws.TaskWorktree(ctx, e.TaskID, e.Dir, e.Branch, e.From)
	if err != nil {
		if interrupted(ctx, d.log, "making the task's worktree", e.TaskID) {
			return r, false
		}
		r.Error = err.Error()
		return r, true
	}
	r.Base = base
	d.log.Info("the task's worktree is made", "task", e.TaskID, "worktree", e.Dir, "branch", e.Branch, "base", base)
	return r, true
}

// RemoveWorktree ends what an ended task's agent ran in its worktree (a
// tmux agent's session: its program must not outlive its folder), then
// removes the worktree, and its branch when its work landed — unless the
// task keeps them.
func (d *Dispatcher) RemoveWorktree(ctx context.Context, e core.RemoveWorktree) {
	if err := d.tmux.EndTask(ctx, e.TaskID); err != nil {
		d.log.Warn("ending the tmux session of an ended task failed: it is ended at the next start", "task", e.TaskID, "err", err)
	}
	if d.ws == nil || e.Keep {
		return
	}
	if err := d.ws.RemoveTaskWorktree(ctx, e.TaskID, e.Branch, e.DeleteBranch); err != nil {
		d.log.Warn("removing the task's worktree failed: it is removed at the next start", "task", e.TaskID, "err", err)
	}
}

// errNoWorktree is the worktree of a task worked in parallel gone missing.
var errNoWorktree = errors.New("the task's worktree is missing")

// workspaceOf is the work tree a task works in: the checkout, or the
// worktree of a task worked in parallel (opened as a work tree of its
// own: what the task changed is what differs there from its branch).
func (d *Dispatcher) workspaceOf(worktree string) (*workspace.Workspace, error) {
	if worktree == "" || d.ws == nil {
		return d.ws, nil
	}
	ws, err := workspace.OpenWorktree(filepath.Join(d.ws.Root(), filepath.FromSlash(worktree)))
	if err != nil {
		return nil, errors.Join(errNoWorktree, err)
	}
	return ws, nil
}
