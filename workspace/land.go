package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
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
	Commit, Onto      string
	Moved, Landed     bool
	Conflict, Between []string
}

// ErrTargetMoved is returned (wrapped) by Advance when the target is no
// longer where its combination was made.
var ErrTargetMoved = errors.New("the target moved")

// Combine makes what a task's branch (checked out in wt, a worktree of
// this repository) lands as on target, by how, from base (the commit its
// branch started from): when the target has not moved past what the
// branch holds, the branch's head (merge, rebase) or one commit of its
// change on the target's head (squash); else its combination with the
// target's head — a merge commit, its commit replayed, or one commit —
// which the worktree's branch is moved to, for it to be verified there.
// Conflicts change nothing. No hook runs.
func (w *Workspace) Combine(ctx context.Context, wt, branch, target, base, how string) (Combination, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var c Combination
	onto, err := revParse(ctx, w.root, "refs/heads/"+target)
	if err != nil {
		return c, fmt.Errorf("workspace: land on %s: %w", target, err)
	}
	head, err := revParse(ctx, wt, "HEAD")
	if err != nil {
		return c, fmt.Errorf("workspace: land %s: %w", branch, err)
	}
	c.Onto = onto
	if landed, err := w.landedAs(ctx, head, onto, base, how); err != nil {
		return c, err
	} else if landed != "" {
		// The branch landed before wilco stopped, and the target may
		// have moved on since: landing it again would add an empty
		// commit.
		c.Commit, c.Landed = landed, true
		return c, nil
	}
	if pending, err := revParse(ctx, w.root, combinationRef(branch)); err == nil && pending == head {
		// The worktree holds the combination made when this landing was
		// asked before wilco stopped, not yet verified: it is reported
		// again while the target is still where it was made — never
		// taken for the task's own change, which would land it
		// unverified. A target that moved since combines it again.
		if parent, err := revParse(ctx, w.root, head+"^1"); err == nil && parent == onto {
			between, err := git(ctx, w.root, nil, nil, "log", "--format=%h %s", base+".."+onto, "--")
			if err != nil {
				return c, fmt.Errorf("workspace: the commits on %s since %s: %w", target, base, err)
			}
			c.Commit, c.Moved, c.Between = head, true, lines(string(between))
			return c, nil
		}
	}
	if isAncestor(ctx, w.root, onto, head) {
		c.Commit = head
		if how == HowSquash && !isParent(ctx, w.root, onto, head) {
			msg, err := git(ctx, w.root, nil, nil, "log", "-1", "--format=%B", head)
			if err != nil {
				return c, fmt.Errorf("workspace: squash %s: %w", branch, err)
			}
			if c.Commit, err = commitTree(ctx, w.root, head+"^{tree}", string(msg), nil, onto); err != nil {
				return c, fmt.Errorf("workspace: squash %s: %w", branch, err)
			}
		}
		return c, nil
	}
	c.Moved = true
	between, err := git(ctx, w.root, nil, nil, "log", "--format=%h %s", base+".."+onto, "--")
	if err != nil {
		return c, fmt.Errorf("workspace: the commits on %s since %s: %w", target, base, err)
	}
	c.Between = lines(string(between))
	tree, conflict, err := mergeTree(ctx, w.root, onto, head)
	if err != nil {
		return c, fmt.Errorf("workspace: combine %s with %s: %w", branch, target, err)
	}
	if len(conflict) > 0 {
		c.Conflict = conflict
		return c, nil
	}
	msg, err := git(ctx, w.root, nil, nil, "log", "-1", "--format=%B", head)
	if err != nil {
		return c, fmt.Errorf("workspace: combine %s: %w", branch, err)
	}
	var author []string
	parents := []string{onto}
	switch how {
	case HowMerge:
		msg = []byte(fmt.Sprintf("Merge branch '%s' into %s\n", branch, target))
		parents = append(parents, head)
	case HowRebase:
		if author, err = authorOf(ctx, w.root, head); err != nil {
			return c, err
		}
	}
	if c.Commit, err = commitTree(ctx, w.root, tree, string(msg), author, parents...); err != nil {
		return c, fmt.Errorf("workspace: combine %s: %w", branch, err)
	}
	// The worktree holds the combination, to be verified there (reset
	// runs no hook); it is noted as such until the branch moves past it.
	if _, err := git(ctx, w.root, nil, nil, "update-ref", combinationRef(branch), c.Commit); err != nil {
		return c, fmt.Errorf("workspace: note the combination of %s: %w", branch, err)
	}
	if _, err := git(ctx, wt, nil, nil, "reset", "--hard", "--quiet", c.Commit); err != nil {
		return c, fmt.Errorf("workspace: check out the combination in %s: %w", wt, err)
	}
	return c, nil
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
// files the landing changed. A target already at commit (an Advance cut
// short after it moved) is left as it is. A target elsewhere is
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
	if cur == commit {
		return true, nil, nil
	}
	if cur != onto {
		return false, nil, fmt.Errorf("workspace: %s is at %s, not %s: %w", ref, cur, onto, ErrTargetMoved)
	}
	checkouts, err := w.checkoutsOf(ctx, ref)
	if err != nil {
		return false, nil, err
	}
	var dirty []string
	for _, dir := range checkouts {
		if len(files) == 0 {
			break
		}
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
	for i, dir := range checkouts {
		// A two-tree read-tree is a fast-forward of the index and the
		// files: what differs between onto and commit, nothing else.
		if _, err := git(ctx, dir, nil, nil, "read-tree", "-m", "-u", onto, commit); err != nil {
			for _, back := range checkouts[:i] {
				_, _ = git(ctx, back, nil, nil, "read-tree", "-m", "-u", commit, onto)
			}
			return false, nil, fmt.Errorf("workspace: update the checkout %s: %w", dir, err)
		}
	}
	if _, err := git(ctx, w.root, nil, nil, "update-ref", "-m", "wilco: land", ref, commit, onto); err != nil {
		for _, back := range checkouts {
			_, _ = git(ctx, back, nil, nil, "read-tree", "-m", "-u", commit, onto)
		}
		return false, nil, fmt.Errorf("workspace: move %s: %w", ref, err)
	}
	return true, nil, nil
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

// CommitAll commits every change of the work tree (the worktree of a task
// worked in parallel holds only the task's) on its branch with message,
// and returns the branch's head: the commit made, or the head as it was
// when there is nothing to commit (committed before a restart). Hooks run
// as for Commit.
func (w *Workspace) CommitAll(ctx context.Context, message string) (string, error) {
	if _, err := git(ctx, w.root, nil, nil, "rev-parse", "--verify", "--quiet", "MERGE_HEAD"); err == nil {
		// A merge the agent resolved and did not commit (a commit of
		// some paths only is refused during a merge): the whole of it.
		return w.commitMerge(ctx, message)
	}
	files, err := w.ChangedPaths(ctx)
	if err != nil {
		return "", err
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

// treeOf is the tree of commit c.
func treeOf(ctx context.Context, dir, c string) (string, error) {
	out, err := git(ctx, dir, nil, nil, "rev-parse", "--verify", "--quiet", c+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("%s names no tree: %w", c, err)
	}
	return strings.TrimSpace(string(out)), nil
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
