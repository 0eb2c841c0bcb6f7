package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TaskWorktree makes the worktree of a task worked in parallel, at dir
// (relative to the root), on a new branch made from the head of from (""
// for HEAD), and returns the commit it starts from (its base). Unlike a
// dry run's worktree it holds only what is committed: the user's
// uncommitted changes stay in the checkout. No hook runs. A worktree that
// is already whole for the task (made before a restart) is returned as it
// is; a remnant of one that was not finished is made again, its branch
// reset to from's head (the task never worked there: its base was not
// recorded).
func (w *Workspace) TaskWorktree(ctx context.Context, taskID, dir, branch, from string) (string, error) {
	if taskID == "" || branch == "" {
		return "", errors.New("workspace: task worktree: empty task id or branch")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if want := w.WorktreeDir(taskID); !sameDir(filepath.Join(w.root, dir), want) {
		return "", fmt.Errorf("workspace: task worktree for %s: %s is not %s", taskID, dir, want)
	}
	if base, err := w.worktreeBase(ctx, taskID); err == nil {
		return base, nil
	}
	if err := w.remove(ctx, taskID); err != nil {
		return "", fmt.Errorf("workspace: task worktree for %s: %w", taskID, err)
	}
	rev := firstNonEmpty(from, "HEAD")
	out, err := git(ctx, w.root, nil, nil, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("workspace: task worktree for %s: %s names no commit", taskID, rev)
	}
	base := strings.TrimSpace(string(out))
	if err := os.MkdirAll(filepath.Dir(w.baseFile(taskID)), 0o755); err != nil {
		return "", fmt.Errorf("workspace: task worktree for %s: %w", taskID, err)
	}
	// --no-checkout then reset: the checkout would run a post-checkout
	// hook; reset runs none.
	if _, err := git(ctx, w.root, nil, nil, "worktree", "add", "--no-checkout", "-B", branch, w.WorktreeDir(taskID), base); err != nil {
		return "", fmt.Errorf("workspace: task worktree for %s: %w", taskID, err)
	}
	if _, err := git(ctx, w.WorktreeDir(taskID), nil, nil, "reset", "--hard", "--quiet", base); err != nil {
		_ = w.remove(ctx, taskID)
		return "", fmt.Errorf("workspace: task worktree for %s: %w", taskID, err)
	}
	// The base is written last: its presence says the worktree is whole.
	if err := os.WriteFile(w.baseFile(taskID), []byte(base+"\n"), 0o644); err != nil {
		_ = w.remove(ctx, taskID)
		return "", fmt.Errorf("workspace: task worktree for %s: %w", taskID, err)
	}
	return base, nil
}

// RemoveTaskWorktree removes an ended task's worktree, and its branch
// when deleteBranch (its work landed). Removing what is gone does nothing.
func (w *Workspace) RemoveTaskWorktree(ctx context.Context, taskID, branch string, deleteBranch bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.remove(ctx, taskID); err != nil {
		return fmt.Errorf("workspace: remove the worktree of %s: %w", taskID, err)
	}
	if branch != "" {
		if _, err := git(ctx, w.root, nil, nil, "update-ref", "-d", combinationRef(branch)); err != nil {
			return fmt.Errorf("workspace: forget the combination of %s: %w", taskID, err)
		}
	}
	if deleteBranch && branch != "" {
		if _, err := git(ctx, w.root, nil, nil, "show-ref", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
			if _, err := git(ctx, w.root, nil, nil, "branch", "-D", branch); err != nil {
				return fmt.Errorf("workspace: remove the branch of %s: %w", taskID, err)
			}
		}
	}
	return nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
