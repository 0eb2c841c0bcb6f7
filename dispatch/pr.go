package dispatch

import (
	"context"
	"time"

	"wilco/core"
	"wilco/workspace"
)

// landPR pushes a verified task's branch, committed in its worktree dir,
// and finds or opens its pull request against the target: the commit
// pushed and the pull request, or the error (never holding the token).
func (d *Dispatcher) landPR(ctx context.Context, e core.LandTask, dir string, r *core.Landed) {
	if d.pr == nil {
		r.Error = "landing as a pull request needs a forge (the forge section of wilco.yaml)"
		return
	}
	head, err := d.pr.Push(ctx, dir, e.TaskBranch)
	if err != nil {
		r.Error = err.Error()
		return
	}
	pr, err := d.pr.Open(ctx, e.TaskBranch, e.Branch, e.Title, e.Body)
	if err != nil {
		r.Error = err.Error()
		return
	}
	r.Commit, r.Branch, r.PR = head, e.TaskBranch, &pr
	d.log.Info("the verified change is in a pull request", "task", e.TaskID, "commit", head, "number", pr.Number, "url", pr.URL)
}

// prFiles are the files a task's pull request changes once head is
// pushed: what its branch changed since its base, earlier attempts' commits
// with this one's (committed, the files of this commit alone when the
// branch's base is unknown or git cannot say).
func (d *Dispatcher) prFiles(ctx context.Context, ws *workspace.Workspace, e core.LandTask, head string, committed []core.FileState) []string {
	if e.Base == "" {
		return workspace.Paths(committed)
	}
	files, err := ws.ChangedBetween(ctx, e.Base, head)
	if err != nil {
		d.log.Warn("the files of the pull request were not listed: its summary names this attempt's", "task", e.TaskID, "err", err)
		return workspace.Paths(committed)
	}
	return files
}

// MergePR merges a task's pull request at its head and says what it then
// is (merged with its commit, or the forge's refusal). A merged one has
// the local target follow: fetched, then moved as a fast-forward with its
// checkout where it is one and no uncommitted change of the user's is in
// the way (else it is left for the user's own pull).
func (d *Dispatcher) MergePR(ctx context.Context, e core.MergePR) (core.PRObserved, bool) {
	if d.pr == nil {
		return core.PRObserved{TaskID: e.TaskID, Number: e.Number, Head: e.Head, State: core.PROpen,
			Error: "no forge is configured"}, true
	}
	o := d.pr.Merge(ctx, e)
	if ctx.Err() != nil {
		return o, false
	}
	if o.State == core.PRMerged && d.ws != nil {
		d.followTarget(ctx, e)
	}
	return o, true
}

// followTarget fetches the target of a merged pull request and moves the
// local one to it when that is a fast-forward.
func (d *Dispatcher) followTarget(ctx context.Context, e core.MergePR) {
	pr, err := d.pr.Forge.PullRequest(ctx, e.Number)
	if err != nil {
		d.log.Warn("the merged pull request's target was not fetched", "task", e.TaskID, "err", err)
		return
	}
	root := d.ws.Root()
	tip, err := d.pr.Fetch(ctx, root, pr.Base)
	if err != nil {
		d.log.Warn("the merged pull request's target was not fetched", "task", e.TaskID, "branch", pr.Base, "err", err)
		return
	}
	local, err := d.pr.Rev(ctx, root, "refs/heads/"+pr.Base)
	if err != nil || local == tip || !d.pr.IsAncestor(ctx, root, local, tip) {
		d.log.Info("the local target does not follow the merge: it is not behind it", "branch", pr.Base, "commit", tip)
		return
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := d.ws.Advance(fctx, pr.Base, local, tip, time.Second, func(dirty []string) {
		d.log.Info("the local target does not follow the merge: uncommitted changes are in the way", "branch", pr.Base, "files", dirty)
		cancel()
	}); err != nil {
		d.log.Info("the local target did not follow the merge", "branch", pr.Base, "err", err)
		return
	}
	d.log.Info("the local target follows the merged pull request", "branch", pr.Base, "commit", tip)
}
