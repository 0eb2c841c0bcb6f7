package dispatch

import (
	"context"
	"errors"
	"time"

	"wilco/core"
	"wilco/prompt"
	"wilco/workspace"
)

// landPoll is how often a landing that waits for the user's uncommitted
// changes looks again.
const landPoll = time.Second

// landWorktree lands a verified task worked in parallel: its change is
// committed in its worktree, on its branch (what was committed there
// before a restart is not committed again); then, unless it lands as
// none, it goes onto the target: as it is (merge, rebase) or as one commit
// (squash) when the target did not move past its base, the target and the
// checkouts where it is checked out then moving as a fast-forward; else
// its combination with the target's head is made in the worktree and
// reported, to be verified before the core asks for it to land
// (e.Advance). A conflict is reported with its files and the commits that
// landed in between.
func (d *Dispatcher) landWorktree(ctx context.Context, e core.LandTask) (r core.Landed, ok bool) {
	r = core.Landed{TaskID: e.TaskID, RunID: e.RunID, Branch: e.Branch}
	defer func() {
		ok = r.Error == "" && !r.Refused || !interrupted(ctx, d.log, "landing the verified change", e.TaskID)
	}()
	if d.ws == nil {
		r.Error = "landing needs a git work tree"
		return r, ok
	}
	if e.Advance != "" {
		d.advance(ctx, e, e.Onto, e.Advance, &r)
		return r, ok
	}
	ws, err := d.workspaceOf(e.Worktree)
	if err != nil {
		r.Error = err.Error()
		return r, ok
	}
	// A worktree that holds a combination behind a task that did not
	// land goes back to its branch: the task's own change.
	if err := workspace.Attach(ctx, ws.Root(), e.TaskBranch); err != nil {
		r.Error = err.Error()
		return r, ok
	}
	changed, err := ws.ChangedPaths(ctx)
	if err != nil {
		r.Error = err.Error()
		return r, ok
	}
	msg := prompt.CommitMessage(prompt.Commit{Description: e.Description, TaskID: e.TaskID, Agent: e.Agent,
		Summary: prompt.Summary{Files: workspace.Paths(changed), Why: e.Why, RunID: e.RunID, Command: e.Command, Attempts: e.Attempt}})
	head, err := ws.CommitListed(ctx, msg, changed)
	var ce *workspace.CommitError
	switch {
	case errors.As(err, &ce) && ce.Hook:
		r.Refused, r.ExitCode, r.Output = true, ce.ExitCode, ce.Output
		return r, ok
	case err != nil:
		r.Error = err.Error()
		return r, ok
	case head == e.Base:
		d.log.Info("nothing of the verified change to land", "task", e.TaskID)
		return r, ok
	case e.How == core.LandNone:
		r.Commit, r.Branch, r.Files = head, e.TaskBranch, workspace.Paths(changed)
		d.log.Info("the verified change is committed on its branch", "task", e.TaskID, "commit", head, "branch", e.TaskBranch)
		return r, ok
	case e.How == core.LandPR:
		d.landPR(ctx, e, ws.Root(), &r)
		r.Files = d.prFiles(ctx, ws, e, head, changed)
		return r, ok
	}
	// A landing cut short after the target moved (wilco killed) is not
	// made again.
	if done, err := d.ws.Landing(ctx, e.Branch, e.Base, head, e.RunID); err != nil {
		r.Error = err.Error()
		return r, ok
	} else if done != "" {
		r.Commit, r.Files = done, workspace.Paths(changed)
		d.log.Info("the verified change had landed already", "task", e.TaskID, "commit", done, "branch", e.Branch)
		return r, ok
	}
	comb, err := d.ws.CombineOn(ctx, ws.Root(), e.TaskBranch, e.Branch, e.On, e.Base, e.How)
	switch {
	case err != nil:
		r.Error = err.Error()
	case len(comb.Conflict) > 0:
		r.Conflict, r.Between = comb.Conflict, comb.Between
		d.log.Info("the verified change conflicts with the target", "task", e.TaskID, "files", comb.Conflict)
	case comb.Landed:
		r.Commit = comb.Commit
		d.log.Info("the verified change had landed already", "task", e.TaskID, "commit", comb.Commit)
	case comb.Moved:
		r.Combined, r.Onto = comb.Commit, comb.Onto
		d.log.Info("the verified change is combined with the target, to be verified", "task", e.TaskID, "combined", comb.Commit)
	default:
		d.advance(ctx, e, comb.Onto, comb.Commit, &r)
	}
	return r, ok
}

// OnLandStep has fn told of each step of a landing just before it
// (workspace.StepUpdateRef, workspace.StepAfterUpdateRef). Set it before
// any effect is performed.
func (d *Dispatcher) OnLandStep(fn func(step string)) {
	if d.ws != nil {
		d.ws.OnLandStep(fn)
	}
}

// advance moves the target from onto to commit, waiting while the user
// has uncommitted changes in files it changes.
func (d *Dispatcher) advance(ctx context.Context, e core.LandTask, onto, commit string, r *core.Landed) {
	files, err := d.ws.Advance(ctx, e.Branch, onto, commit, landPoll, func(dirty []string) {
		d.log.Info("the landing waits for the user's uncommitted changes", "task", e.TaskID, "files", dirty)
		_, _ = d.report(ctx, "a landing waiting", core.LandWaiting{TaskID: e.TaskID, RunID: e.RunID, Branch: e.Branch, Files: dirty})
	})
	switch {
	case errors.Is(err, workspace.ErrTargetMoved):
		r.Moved = true
	case err != nil:
		r.Error = err.Error()
	default:
		r.Commit, r.Files = commit, files
		d.log.Info("the verified change landed", "task", e.TaskID, "commit", commit, "branch", e.Branch, "files", len(files))
	}
}
