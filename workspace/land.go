package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"wilco/core"
	"wilco/prompt"
)

// Ways a task's branch lands on the target (land.how).
const (
	HowMerge  = "merge"
	HowRebase = "rebase"
	HowSquash = "squash"
)

// Combination is what landing a task's branch onto the target came to:
// the commit the target is to move to (Commit) from its head (Onto);
// Moved when the target moved since the task's base (Commit is then a
// combination, not yet verified); Landed when the target already holds
// the branch (it landed before wilco stopped): Commit is what it landed
// as, and the target does not move; Conflict the files in conflict (no
// Commit), with the commits that landed in between.
type Combination struct {
	Commit, Onto  string
	Moved, Landed bool
	Conflict      []string
	Between       []core.TargetCommit
}

// ErrTargetMoved is returned (wrapped) by Advance when the target is no
// longer where its combination was made.
var ErrTargetMoved = errors.New("the target moved")

// Combine makes what a task's branch (checked out in wt, a worktree of
// this repository) lands as on target, by how, from base (the commit its
// branch started from). When the target has not moved past what the
// branch holds: the branch's head (merge, and rebase of a branch with no
// merge), or its commits replayed on the target's head one by one
// (rebase of a branch that holds a merge: the target stays linear), or one
// commit of its change on the target's head (squash) — each of the
// branch head's tree. Else its combination with the target's head: a
// merge commit, each of its commits replayed (rebase), or one commit
// (squash), which the worktree's branch is moved to, for it to be
// verified there. Conflicts change nothing, and name the commits that
// landed on target since base. No hook runs.
func (w *Workspace) Combine(ctx context.Context, wt, branch, target, base, how string) (Combination, error) {
	return w.CombineOn(ctx, wt, branch, target, "", base, how)
}

// CombineOn is Combine on the commit on instead of the target's head
// ("" for the head): the combination of a task landing ahead, not landed
// yet. Such a combination is always made (Moved), and the worktree holds
// it detached: its branch stays at the task's own change, which is
// combined again should the one ahead not land.
func (w *Workspace) CombineOn(ctx context.Context, wt, branch, target, on, base, how string) (Combination, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var c Combination
	onto, err := on, error(nil)
	if onto == "" {
		onto, err = revParse(ctx, w.root, "refs/heads/"+target)
	}
	if err != nil {
		return c, fmt.Errorf("workspace: land on %s: %w", target, err)
	}
	head, err := revParse(ctx, wt, "HEAD")
	if err != nil {
		return c, fmt.Errorf("workspace: land %s: %w", branch, err)
	}
	c.Onto = onto
	if on == "" {
		if done, err := w.landingCutShort(ctx, &c, branch, target, base, head, how); err != nil || done {
			return c, err
		}
		if isAncestor(ctx, w.root, onto, head) {
			c.Commit, err = w.landUnmoved(ctx, branch, target, onto, head, how)
			return c, err
		}
	}
	c.Moved = true
	tree, conflict, err := mergeTree(ctx, w.root, onto, head)
	if err != nil {
		return c, fmt.Errorf("workspace: combine %s with %s: %w", branch, target, err)
	}
	if len(conflict) > 0 {
		c.Conflict = conflict
		if c.Between, err = commitsSince(ctx, w.root, onto, base, head); err != nil {
			return c, fmt.Errorf("workspace: the commits on %s since %s: %w", target, base, err)
		}
		return c, nil
	}
	if c.Commit, err = w.combination(ctx, branch, target, tree, onto, head, how); err != nil {
		return c, err
	}
	return c, w.holdCombination(ctx, wt, branch, on, c.Commit)
}

// landingCutShort fills c with what a landing of branch (at head) asked
// before wilco stopped came to, and says whether it did: the commit the
// branch landed as (Landed), or the combination the worktree holds, not
// yet verified, while the target is still where it was made (Moved).
func (w *Workspace) landingCutShort(ctx context.Context, c *Combination, branch, target, base, head, how string) (bool, error) {
	landed, err := w.landedAs(ctx, head, c.Onto, base, how)
	if err != nil {
		return false, err
	}
	if landed != "" {
		// The branch landed before wilco stopped, and the target may
		// have moved on since: landing it again would add an empty
		// commit.
		c.Commit, c.Landed = landed, true
		return true, nil
	}
	if pending, err := revParse(ctx, w.root, combinationRef(branch)); err != nil || pending != head {
		return false, nil
	}
	// The worktree holds the combination made when this landing was
	// asked before wilco stopped, not yet verified: it is reported again
	// while the target is still where it was made — never taken for the
	// task's own change, which would land it unverified. A target that
	// moved since combines it again.
	if parent, err := revParse(ctx, w.root, head+"^1"); err != nil || parent != c.Onto {
		return false, nil
	}
	if c.Between, err = commitsSince(ctx, w.root, c.Onto, base, head); err != nil {
		return false, fmt.Errorf("workspace: the commits on %s since %s: %w", target, base, err)
	}
	c.Commit, c.Moved = head, true
	return true, nil
}

// landUnmoved is the commit branch (at head, which holds onto, the
// target's head) lands as: head itself, or one commit of its change on
// onto (squash, unless head is onto's child already), or its commits
// replayed on onto (rebase of a branch that holds a merge).
func (w *Workspace) landUnmoved(ctx context.Context, branch, target, onto, head, how string) (string, error) {
	switch {
	case how == HowSquash && !isParent(ctx, w.root, onto, head):
		return w.squash(ctx, branch, head+"^{tree}", onto, head)
	case how == HowRebase && hasMerges(ctx, w.root, onto, head):
		commit, err := replay(ctx, w.root, onto, head)
		if err != nil {
			return "", fmt.Errorf("workspace: rebase %s on %s: %w", branch, target, err)
		}
		return commit, nil
	}
	return head, nil
}

// combination makes the commit of branch (at head) combined with onto,
// whose merge is tree, by how: its commits replayed (rebase), a merge
// commit (merge), or one commit (squash).
func (w *Workspace) combination(ctx context.Context, branch, target, tree, onto, head, how string) (string, error) {
	switch how {
	case HowRebase:
		commit, err := replay(ctx, w.root, onto, head)
		if err != nil {
			return "", fmt.Errorf("workspace: rebase %s on %s: %w", branch, target, err)
		}
		return commit, nil
	case HowMerge:
		msg := fmt.Sprintf("Merge branch '%s' into %s\n", branch, target)
		commit, err := commitTree(ctx, w.root, tree, msg, nil, onto, head)
		if err != nil {
			return "", fmt.Errorf("workspace: merge %s into %s: %w", branch, target, err)
		}
		return commit, nil
	default:
		return w.squash(ctx, branch, tree, onto, head)
	}
}

// squash makes one commit of tree on onto, with the message of branch's
// head.
func (w *Workspace) squash(ctx context.Context, branch, tree, onto, head string) (string, error) {
	msg, err := git(ctx, w.root, nil, nil, "log", "-1", "--format=%B", head)
	if err != nil {
		return "", fmt.Errorf("workspace: squash %s: %w", branch, err)
	}
	commit, err := commitTree(ctx, w.root, tree, string(msg), nil, onto)
	if err != nil {
		return "", fmt.Errorf("workspace: squash %s: %w", branch, err)
	}
	return commit, nil
}

// holdCombination checks out commit, a combination of branch, in the
// worktree wt, to be verified there (reset runs no hook): detached when
// it is on a combination not landed (on), else on the branch, where it is
// noted as a combination until the branch moves past it.
func (w *Workspace) holdCombination(ctx context.Context, wt, branch, on, commit string) error {
	reset := []string{"reset", "--hard", "--quiet", commit}
	if on != "" {
		reset = []string{"checkout", "--quiet", "--force", "--detach", commit}
	} else if _, err := git(ctx, w.root, nil, nil, "update-ref", combinationRef(branch), commit); err != nil {
		return fmt.Errorf("workspace: note the combination of %s: %w", branch, err)
	}
	if _, err := git(ctx, wt, nil, nil, reset...); err != nil {
		return fmt.Errorf("workspace: check out the combination in %s: %w", wt, err)
	}
	return nil
}

// Landing finds the commit of target that a landing of a task's branch
// (at head, started from base) cut short after the target moved already
// made: the first commit of target's first-parent line that holds head
// (a merge, or head itself), else the newest one since base whose
// Wilco-Run trailer is run (a squash, or a rebase's last commit). "" when
// the branch has not landed.
func (w *Workspace) Landing(ctx context.Context, target, base, head, run string) (string, error) {
	onto, err := revParse(ctx, w.root, "refs/heads/"+target)
	if err != nil {
		return "", fmt.Errorf("workspace: land on %s: %w", target, err)
	}
	if onto == head {
		return head, nil
	}
	if isAncestor(ctx, w.root, head, onto) {
		out, err := git(ctx, w.root, nil, nil, "rev-list", "--first-parent", "--reverse", onto, "^"+head, "--")
		if err != nil {
			return "", fmt.Errorf("workspace: the commits of %s: %w", target, err)
		}
		for _, c := range lines(string(out)) {
			if isAncestor(ctx, w.root, head, c) {
				return c, nil
			}
		}
		return onto, nil
	}
	format := "--format=%H%x1f%(trailers:key=" + prompt.TrailerRun + ",valueonly,separator=%x2C)%x1e"
	out, err := git(ctx, w.root, nil, nil, "log", "--first-parent", format, onto, "^"+base, "--")
	if err != nil {
		return "", fmt.Errorf("workspace: the commits of %s since %s: %w", target, base, err)
	}
	for rec := range strings.SplitSeq(string(out), "\x1e") {
		f := strings.Split(strings.TrimLeft(rec, "\n"), "\x1f")
		if len(f) == 2 && slices.Contains(strings.Split(strings.TrimSpace(f[1]), ","), run) {
			return f[0], nil
		}
	}
	return "", nil
}

// hasMerges reports whether the first-parent line of head since onto
// holds a merge commit.
func hasMerges(ctx context.Context, dir, onto, head string) bool {
	out, err := git(ctx, dir, nil, nil, "rev-list", "--first-parent", "--merges", "-n", "1", head, "^"+onto, "--")
	return err == nil && strings.TrimSpace(string(out)) != ""
}

// replay makes the commits of head's first-parent line that onto does
// not hold again on onto, oldest first, each with its message and author:
// a linear history, whose last commit has the tree of head merged with
// onto. Each replayed commit holds onto and the branch up to that commit;
// a merge commit (the agent merged the target to resolve a conflict)
// holds what it resolved. A commit that conflicts with onto on its own
// is folded into the next one (the merge that resolved it); one that
// changes nothing is left out, as git rebase does. It touches no work
// tree.
func replay(ctx context.Context, dir, onto, head string) (string, error) {
	out, err := git(ctx, dir, nil, nil, "rev-list", "--first-parent", "--reverse", head, "^"+onto, "--")
	if err != nil {
		return "", err
	}
	chain := lines(string(out))
	cur := onto
	curTree, err := treeOf(ctx, dir, onto)
	if err != nil {
		return "", err
	}
	for i, c := range chain {
		tree, conflict, err := mergeTree(ctx, dir, onto, c)
		if err != nil {
			return "", err
		}
		if len(conflict) > 0 {
			if i == len(chain)-1 {
				return "", fmt.Errorf("%s conflicts with %s in %s", c, onto, strings.Join(conflict, ", "))
			}
			continue // folded into the next
		}
		if tree == curTree {
			continue // nothing of its own
		}
		msg, err := git(ctx, dir, nil, nil, "log", "-1", "--format=%B", c)
		if err != nil {
			return "", err
		}
		author, err := authorOf(ctx, dir, c)
		if err != nil {
			return "", err
		}
		if cur, err = commitTree(ctx, dir, tree, string(msg), author, cur); err != nil {
			return "", err
		}
		curTree = tree
	}
	return cur, nil
}

// treeOf is a commit's tree.
func treeOf(ctx context.Context, dir, commit string) (string, error) {
	out, err := git(ctx, dir, nil, nil, "rev-parse", "--verify", "--quiet", commit+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("the tree of %s: %w", commit, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Steps of a landing that OnLandStep is told of, just before each.
const (
	// StepUpdateRef: the checkouts of the target hold the landing, the
	// target is about to move.
	StepUpdateRef = "land:update-ref"
	// StepAfterUpdateRef: the target moved; the landing ends.
	StepAfterUpdateRef = "land:after-update-ref"
)

// OnLandStep has fn told of each step of a landing (StepUpdateRef,
// StepAfterUpdateRef) just before it: tests of recovery stop wilco there.
// Set it before any landing.
func (w *Workspace) OnLandStep(fn func(step string)) { w.step = fn }

func (w *Workspace) landStep(step string) {
	if w.step != nil {
		w.step(step)
	}
}

// landedAs is the commit a branch at head already landed as on the
// target at onto, "" when it did not: head itself (or a combination the
// worktree held) when the target holds it; for squash, the commit on the
// target since base whose files are exactly the branch's.
func (w *Workspace) landedAs(ctx context.Context, head, onto, base, how string) (string, error) {
	if isAncestor(ctx, w.root, head, onto) {
		return head, nil
	}
	if how != HowSquash {
		return "", nil
	}
	tree, err := treeOf(ctx, w.root, head)
	if err != nil {
		return "", err
	}
	out, err := git(ctx, w.root, nil, nil, "log", "--first-parent", "--format=%H %T", base+".."+onto, "--")
	if err != nil {
		return "", fmt.Errorf("workspace: the commits on the target since %s: %w", base, err)
	}
	for _, l := range lines(string(out)) {
		if c, t, ok := strings.Cut(l, " "); ok && t == tree {
			return c, nil
		}
	}
	return "", nil
}

// combinationRef is where Combine notes the combination it checked out
// on a task's branch, to be verified before it lands.
func combinationRef(branch string) string { return "refs/wilco/combination/" + branch }

// Advance moves target from onto to commit, when it is still at onto, and
// updates every checkout where target is checked out as a fast-forward
// would: only the files that differ, and only while none of them has an
// uncommitted change there — until then it calls wait with those files
// (once for each new set) and looks again every poll. It returns the
// files the landing changed. A landing cut short is finished: a checkout
// whose files already hold commit's (cut short before the target moved)
// is not changed again, and a target already at commit has its checkouts
// still at onto's files brought to commit. A target elsewhere is
// ErrTargetMoved, with nothing changed.
func (w *Workspace) Advance(ctx context.Context, target, onto, commit string, poll time.Duration, wait func(files []string)) ([]string, error) {
	ref := "refs/heads/" + target
	touched, err := git(ctx, w.root, nil, nil, "diff", "--name-only", "--no-renames", "-z", onto, commit, "--")
	if err != nil {
		return nil, fmt.Errorf("workspace: land on %s: %w", target, err)
	}
	files := splitZ(touched)
	var last []string
	for {
		w.mu.Lock()
		done, dirty, err := w.advance(ctx, ref, onto, commit, files)
		w.mu.Unlock()
		if err != nil || done {
			return files, err
		}
		if !slices.Equal(dirty, last) {
			wait(dirty)
			last = dirty
		}
		select {
		case <-ctx.Done():
			return files, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// advance is one try of Advance: done, or the files with uncommitted
// changes that hold it back.
func (w *Workspace) advance(ctx context.Context, ref, onto, commit string, files []string) (bool, []string, error) {
	cur, err := revParse(ctx, w.root, ref)
	if err != nil {
		return false, nil, err
	}
	checkouts, err := w.checkoutsOf(ctx, ref)
	if err != nil {
		return false, nil, err
	}
	if cur == commit {
		// Moved already: a checkout left at onto's files (a landing cut
		// short between the target's move and its checkouts') follows.
		for _, dir := range checkouts {
			if len(files) > 0 && holds(ctx, dir, onto, files) && !holds(ctx, dir, commit, files) {
				if _, err := git(ctx, dir, nil, nil, "read-tree", "-m", "-u", onto, commit); err != nil {
					return false, nil, fmt.Errorf("workspace: update the checkout %s: %w", dir, err)
				}
			}
		}
		return true, nil, nil
	}
	if cur != onto {
		return false, nil, fmt.Errorf("workspace: %s is at %s, not %s: %w", ref, cur, onto, ErrTargetMoved)
	}
	var dirty, stale []string
	for _, dir := range checkouts {
		if len(files) == 0 {
			break
		}
		if holds(ctx, dir, commit, files) {
			continue // updated by a landing cut short before the target moved
		}
		stale = append(stale, dir)
		// --no-optional-locks: looking every poll must not hold the
		// user's index lock (their own git commands would fail).
		args := append([]string{"--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames", "--"}, literal(files)...)
		out, err := git(ctx, dir, nil, nil, args...)
		if err != nil {
			return false, nil, err
		}
		for _, e := range splitZ(out) {
			if len(e) > 3 {
				dirty = append(dirty, e[3:])
			}
		}
	}
	if len(dirty) > 0 {
		slices.Sort(dirty)
		return false, slices.Compact(dirty), nil
	}
	for i, dir := range stale {
		// A two-tree read-tree is a fast-forward of the index and the
		// files: what differs between onto and commit, nothing else.
		if _, err := git(ctx, dir, nil, nil, "read-tree", "-m", "-u", onto, commit); err != nil {
			for _, back := range stale[:i] {
				_, _ = git(ctx, back, nil, nil, "read-tree", "-m", "-u", commit, onto)
			}
			return false, nil, fmt.Errorf("workspace: update the checkout %s: %w", dir, err)
		}
	}
	w.landStep(StepUpdateRef)
	if _, err := git(ctx, w.root, nil, nil, "update-ref", "-m", "wilco: land", ref, commit, onto); err != nil {
		for _, back := range stale {
			_, _ = git(ctx, back, nil, nil, "read-tree", "-m", "-u", commit, onto)
		}
		return false, nil, fmt.Errorf("workspace: move %s: %w", ref, err)
	}
	w.landStep(StepAfterUpdateRef)
	return true, nil, nil
}

// holds reports whether the index and the files of the work tree dir hold
// rev's version of each of files (none of them changed from it, staged or
// not).
func holds(ctx context.Context, dir, rev string, files []string) bool {
	for _, cached := range []bool{true, false} {
		args := []string{"--no-optional-locks", "diff", "--quiet", "--no-renames"}
		if cached {
			args = append(args, "--cached")
		}
		args = append(append(args, rev, "--"), literal(files)...)
		if _, err := git(ctx, dir, nil, nil, args...); err != nil {
			return false
		}
	}
	return true
}

// checkoutsOf are the work trees where ref is checked out.
func (w *Workspace) checkoutsOf(ctx context.Context, ref string) ([]string, error) {
	out, err := git(ctx, w.root, nil, nil, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, fmt.Errorf("workspace: the worktrees: %w", err)
	}
	var dirs []string
	var dir string
	for _, l := range splitZ(out) {
		switch {
		case strings.HasPrefix(l, "worktree "):
			dir = strings.TrimPrefix(l, "worktree ")
		case l == "branch "+ref:
			dirs = append(dirs, dir)
		}
	}
	return dirs, nil
}

// Attach checks a worktree's branch out again when the worktree holds a
// combination detached (CombineOn): its branch holds the task's own
// change. A worktree on its branch is left as it is (read from its files,
// no git command).
func Attach(ctx context.Context, wt, branch string) error {
	if !detached(wt) {
		return nil
	}
	if _, err := git(ctx, wt, nil, nil, "checkout", "--quiet", "--force", branch); err != nil {
		return fmt.Errorf("workspace: check %s out again in %s: %w", branch, wt, err)
	}
	return nil
}

// detached reports whether a worktree's HEAD names a commit rather than
// a branch, read from its git directory ("gitdir: DIR" in its .git file);
// a HEAD it cannot read is taken as detached (checking the branch out
// again is then harmless).
func detached(wt string) bool {
	dotgit, err := os.ReadFile(filepath.Join(wt, ".git"))
	if err != nil {
		return true
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(dotgit)), "gitdir: ")
	if !ok {
		return true
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(wt, dir)
	}
	head, err := os.ReadFile(filepath.Join(dir, "HEAD"))
	return err != nil || !strings.HasPrefix(string(head), "ref: ")
}

// CommitAll commits every change of the work tree (the worktree of a task
// worked in parallel holds only the task's) on its branch with message,
// and returns the branch's head: the commit made, or the head as it was
// when there is nothing to commit (committed before a restart). Hooks run
// as for Commit.
func (w *Workspace) CommitAll(ctx context.Context, message string) (string, error) {
	files, err := w.ChangedPaths(ctx)
	if err != nil {
		return "", err
	}
	return w.CommitListed(ctx, message, files)
}

// CommitListed is CommitAll of the changes ChangedPaths listed (files),
// which it does not list again.
func (w *Workspace) CommitListed(ctx context.Context, message string, files []core.FileState) (string, error) {
	if _, err := git(ctx, w.root, nil, nil, "rev-parse", "--verify", "--quiet", "MERGE_HEAD"); err == nil {
		// A merge the agent resolved and did not commit (a commit of
		// some paths only is refused during a merge): the whole of it.
		return w.commitMerge(ctx, message)
	}
	if len(files) == 0 {
		return w.Head(ctx)
	}
	return w.Commit(ctx, Paths(files), message)
}

// commitMerge commits a merge in progress, with everything of the work
// tree, with message. A file still in conflict is an error.
func (w *Workspace) commitMerge(ctx context.Context, message string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := git(ctx, w.root, nil, nil, "add", "--all"); err != nil {
		return "", fmt.Errorf("workspace: commit the merge: %w", err)
	}
	if out, err := git(ctx, w.root, nil, nil, "diff", "--cached", "--name-only", "--diff-filter=U", "-z"); err == nil && len(splitZ(out)) > 0 {
		return "", fmt.Errorf("workspace: commit the merge: files still in conflict: %s", strings.Join(splitZ(out), ", "))
	}
	if out, err := git(ctx, w.root, nil, nil, "grep", "-l", "-z", "--cached", "-e", "^<<<<<<< ", "-e", "^>>>>>>> "); err == nil && len(splitZ(out)) > 0 {
		return "", fmt.Errorf("workspace: commit the merge: conflict markers left in %s", strings.Join(splitZ(out), ", "))
	}
	args := append(w.identity(ctx), "commit", "--no-edit", "--cleanup=whitespace", "-F", "-")
	if code, out, err := w.run(ctx, []byte(message), args...); err != nil {
		return "", fmt.Errorf("workspace: commit the merge: %w", err)
	} else if code != 0 {
		return "", &CommitError{ExitCode: code, Output: out, Hook: w.hasRefusingHook(ctx)}
	}
	return head(ctx, w.root)
}

func revParse(ctx context.Context, dir, rev string) (string, error) {
	out, err := git(ctx, dir, nil, nil, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%s names no commit: %w", rev, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func isAncestor(ctx context.Context, dir, a, b string) bool {
	_, err := git(ctx, dir, nil, nil, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

func isParent(ctx context.Context, dir, parent, c string) bool {
	out, err := git(ctx, dir, nil, nil, "rev-parse", c+"^@")
	return err == nil && strings.TrimSpace(string(out)) == parent
}

// mergeTree merges b into a without touching any work tree (git
// merge-tree --write-tree, git 2.38): the merged tree, or the files in
// conflict.
func mergeTree(ctx context.Context, dir, a, b string) (string, []string, error) {
	out, err := git(ctx, dir, nil, nil, "merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", a, b)
	var ge *GitError
	switch {
	case err == nil:
		return strings.TrimRight(string(out), "\x00\n"), nil, nil
	case errors.As(err, &ge) && ge.ExitCode == 1:
		parts := splitZ(out)
		var files []string
		for _, p := range parts[min(1, len(parts)):] {
			if p == "" {
				break
			}
			files = append(files, p)
		}
		slices.Sort(files)
		return "", slices.Compact(files), nil
	}
	return "", nil, err
}

// authorOf is the environment that keeps a commit's author on a commit
// made from it.
func authorOf(ctx context.Context, dir, c string) ([]string, error) {
	out, err := git(ctx, dir, nil, nil, "log", "-1", "--format=%an%x00%ae%x00%aI", c)
	if err != nil {
		return nil, fmt.Errorf("workspace: the author of %s: %w", c, err)
	}
	p := strings.Split(strings.TrimRight(string(out), "\n"), "\x00")
	if len(p) != 3 {
		return nil, fmt.Errorf("workspace: the author of %s: %q", c, out)
	}
	return []string{"GIT_AUTHOR_NAME=" + p[0], "GIT_AUTHOR_EMAIL=" + p[1], "GIT_AUTHOR_DATE=" + p[2]}, nil
}

// commitTree makes a commit of tree with parents and message, on no
// branch.
func commitTree(ctx context.Context, dir, tree, message string, env []string, parents ...string) (string, error) {
	w := &Workspace{root: dir}
	args := append(w.identity(ctx), "commit-tree", tree)
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	out, err := git(ctx, dir, []byte(message), env, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// commitsSince are the commits of onto that landed since base and that
// head does not hold (those a resolved merge took in are not what it
// conflicts with), newest first: each one's short hash, subject and the
// task its Wilco-Task trailer names.
func commitsSince(ctx context.Context, dir, onto, base, head string) ([]core.TargetCommit, error) {
	format := "--format=%h%x1f%s%x1f%(trailers:key=" + prompt.TrailerTask + ",valueonly,separator=%x2C)%x1e"
	out, err := git(ctx, dir, nil, nil, "log", format, onto, "^"+base, "^"+head, "--")
	if err != nil {
		return nil, err
	}
	return parseTargetCommits(string(out)), nil
}

// parseTargetCommits reads git log's records of commitsSince's format:
// each "<hash>\x1f<subject>\x1f<tasks>\x1e", a newline between them.
func parseTargetCommits(out string) []core.TargetCommit {
	var cs []core.TargetCommit
	for rec := range strings.SplitSeq(out, "\x1e") {
		f := strings.Split(strings.TrimLeft(rec, "\n"), "\x1f")
		if len(f) != 3 || f[0] == "" {
			continue
		}
		cs = append(cs, core.TargetCommit{Hash: f[0], Subject: f[1], Task: strings.TrimSpace(f[2])})
	}
	return cs
}

func lines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(strings.TrimSpace(s), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// literal makes paths git pathspecs that match only themselves.
func literal(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = ":(literal)" + p
	}
	return out
}
