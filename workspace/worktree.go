package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"wilco/core"
)

// ErrNoWorktree is returned (wrapped) by Diff for a task that has no
// dry-run worktree.
var ErrNoWorktree = errors.New("no dry-run worktree")

// worktreesDir is where dry-run worktrees live, under StateDir; their
// bases are recorded in its .base folder (a name no worktree can take:
// WorktreeName never starts with a dot).
const worktreesDir = "worktrees"

// WorktreeName is the directory name of a task's worktree
// (core.WorktreeName): different ids give different names, and no name can
// leave its folder.
func WorktreeName(taskID string) string { return core.WorktreeName(taskID) }

// WorktreeDir is where the dry-run worktree of a task is (or would be):
// <Root>/.wilco/worktrees/<WorktreeName(taskID)>.
func (w *Workspace) WorktreeDir(taskID string) string {
	return filepath.Join(w.root, StateDir, worktreesDir, WorktreeName(taskID))
}

func (w *Workspace) baseFile(taskID string) string {
	return filepath.Join(w.root, StateDir, worktreesDir, ".base", WorktreeName(taskID))
}

// Worktree makes the throw-away git worktree of a task's dry run and
// returns its directory. The worktree is the working tree as it is now —
// committed files, uncommitted changes (staged or not), deletions and
// untracked files that are not ignored; ignored files (build output,
// node_modules) are not carried. Its HEAD is detached at a commit of that
// state (the base, whose parent is HEAD), so Diff shows exactly what was
// done in the worktree afterwards. Nothing in the real working tree or its
// index changes, no branch or ref is made, and no hook runs. Calling
// Worktree again for the same task returns the existing worktree.
func (w *Workspace) Worktree(ctx context.Context, taskID string) (string, error) {
	if taskID == "" {
		return "", errors.New("workspace: worktree: empty task id")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	dir := w.WorktreeDir(taskID)
	if _, err := w.worktreeBase(ctx, taskID); err == nil {
		return dir, nil
	}
	// A remnant of an attempt that did not finish: start again.
	if err := w.remove(ctx, taskID); err != nil {
		return "", fmt.Errorf("workspace: worktree for %s: %w", taskID, err)
	}
	commit, err := w.snapshot(ctx, taskID)
	if err != nil {
		return "", fmt.Errorf("workspace: worktree for %s: snapshot of the working tree: %w", taskID, err)
	}
	if err := os.MkdirAll(filepath.Dir(w.baseFile(taskID)), 0o755); err != nil {
		return "", fmt.Errorf("workspace: worktree for %s: %w", taskID, err)
	}
	// --no-checkout then reset: the checkout would run a post-checkout
	// hook; reset runs none.
	if _, err := git(ctx, w.root, nil, nil, "worktree", "add", "--detach", "--no-checkout", dir, commit); err != nil {
		return "", fmt.Errorf("workspace: worktree for %s: %w", taskID, err)
	}
	if _, err := git(ctx, dir, nil, nil, "reset", "--hard", "--quiet", commit); err != nil {
		_ = w.remove(ctx, taskID)
		return "", fmt.Errorf("workspace: worktree for %s: %w", taskID, err)
	}
	// The base is written last: its presence says the worktree is whole.
	if err := os.WriteFile(w.baseFile(taskID), []byte(commit+"\n"), 0o644); err != nil {
		_ = w.remove(ctx, taskID)
		return "", fmt.Errorf("workspace: worktree for %s: %w", taskID, err)
	}
	return dir, nil
}

// worktreeBase returns the base commit of a task's worktree, or an error
// wrapping ErrNoWorktree when there is no whole worktree.
func (w *Workspace) worktreeBase(ctx context.Context, taskID string) (string, error) {
	dir := w.WorktreeDir(taskID)
	b, err := os.ReadFile(w.baseFile(taskID))
	if err != nil {
		return "", fmt.Errorf("%w for task %s", ErrNoWorktree, taskID)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w for task %s (%s is gone)", ErrNoWorktree, taskID, dir)
	}
	// A directory that is not a worktree resolves to the outer work tree.
	out, err := git(ctx, dir, nil, nil, "rev-parse", "--show-toplevel")
	if err != nil || !sameDir(strings.TrimSpace(string(out)), dir) {
		return "", fmt.Errorf("%w for task %s (%s is not a git worktree)", ErrNoWorktree, taskID, dir)
	}
	return strings.TrimSpace(string(b)), nil
}

// ensureStateDir makes the state directory if it is missing, with the
// .gitignore `wilco init` writes, so that wilco's files never show as
// changes of the repository.
func (w *Workspace) ensureStateDir() error {
	dir := filepath.Join(w.root, StateDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ignore := filepath.Join(dir, ".gitignore")
	if _, err := os.Stat(ignore); errors.Is(err, os.ErrNotExist) {
		return os.WriteFile(ignore, []byte("# wilco's state (database, admin token, logs) stays out of git.\n*\n"), 0o644)
	}
	return nil
}

func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// snapshot records the working tree as it is (tracked changes, deletions,
// untracked files that are not ignored) in a commit whose parent is HEAD,
// through a temporary index: the real index is not touched.
func (w *Workspace) snapshot(ctx context.Context, taskID string) (string, error) {
	if err := w.ensureStateDir(); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Join(w.root, StateDir), "snapshot-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	tree, err := writeTree(ctx, w.root, filepath.Join(tmp, "index"))
	if err != nil {
		return "", err
	}
	h, err := head(ctx, w.root)
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", "--no-gpg-sign", "-m", "wilco: dry-run base of task " + taskID}
	if h != "" {
		args = append(args, "-p", h)
	}
	args = append(args, tree)
	// The commit needs an author; wilco's own, whatever git's config says.
	id := []string{"GIT_AUTHOR_NAME=wilco", "GIT_AUTHOR_EMAIL=wilco@localhost", "GIT_COMMITTER_NAME=wilco", "GIT_COMMITTER_EMAIL=wilco@localhost"}
	out, err := git(ctx, w.root, nil, id, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// writeTree writes the tree of the working tree in dir as it is, using
// index (a path that does not exist yet) as a copy of the real index.
func writeTree(ctx context.Context, dir, index string) (string, error) {
	out, err := git(ctx, dir, nil, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return "", err
	}
	if err := copyFile(strings.TrimSpace(string(out)), index); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	env := []string{"GIT_INDEX_FILE=" + index}
	if err := addAll(ctx, dir, env); err != nil {
		return "", err
	}
	out, err = git(ctx, dir, nil, env, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// Diff returns the unified diff (git's format, with binary files and new
// files) of everything done in a task's worktree since it was made —
// committed there or not — and the files it touches. Files ignored by
// .gitignore are not part of it. The diff applies to the working tree the
// worktree was made from (see Apply).
func (w *Workspace) Diff(ctx context.Context, taskID string) ([]byte, []string, error) {
	base, err := w.worktreeBase(ctx, taskID)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace: diff: %w", err)
	}
	dir := w.WorktreeDir(taskID)
	if err := addAll(ctx, dir, nil); err != nil {
		return nil, nil, fmt.Errorf("workspace: diff of %s: %w", taskID, err)
	}
	common := []string{"diff", "--cached", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color", "--no-relative"}
	diff, err := git(ctx, dir, nil, nil, append(append(common, "--binary", "--src-prefix=a/", "--dst-prefix=b/", base), excludeState...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace: diff of %s: %w", taskID, err)
	}
	names, err := git(ctx, dir, nil, nil, append(append(common, "--name-only", "-z", base), excludeState...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace: diff of %s: %w", taskID, err)
	}
	return diff, splitZ(names), nil
}

// Discard removes a task's worktree and its base. Discarding a task with
// no worktree does nothing.
func (w *Workspace) Discard(ctx context.Context, taskID string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.remove(ctx, taskID); err != nil {
		return fmt.Errorf("workspace: discard %s: %w", taskID, err)
	}
	return nil
}

func (w *Workspace) remove(ctx context.Context, taskID string) error {
	return w.removeNamed(ctx, WorktreeName(taskID))
}

// removeNamed removes the worktree of that directory name and its base.
func (w *Workspace) removeNamed(ctx context.Context, name string) error {
	dir := filepath.Join(w.root, StateDir, worktreesDir, name)
	if _, err := os.Lstat(dir); err == nil {
		// Not an error when dir is not (or no longer) a registered worktree.
		_, _ = git(ctx, w.root, nil, nil, "worktree", "remove", "--force", "--force", dir)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	if _, err := git(ctx, w.root, nil, nil, "worktree", "prune"); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(w.root, StateDir, worktreesDir, ".base", name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// addAll stages everything but the state directory. When .gitignore
// already ignores the state directory, naming it (even to exclude it) makes
// git add fail, so it is named only when it is not ignored.
func addAll(ctx context.Context, dir string, env []string) error {
	args := []string{"add", "--all", "--", "."}
	if _, err := git(ctx, dir, nil, env, "check-ignore", "-q", StateDir); err != nil {
		args = append([]string{"add", "--all"}, excludeState...)
	}
	_, err := git(ctx, dir, nil, env, args...)
	return err
}

// EditedSince returns which of files (paths relative to the root) differ
// in the real working tree from the state a task's dry run started from:
// files the user (or anyone) changed, created or deleted since the dry
// run's worktree was made. Applying the dry run's diff over them would
// mix it into, or overwrite, those edits.
func (w *Workspace) EditedSince(ctx context.Context, taskID string, files []string) ([]string, error) {
	if len(files) == 0 {
		return nil, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.editedSince(ctx, taskID, files)
}

func (w *Workspace) editedSince(ctx context.Context, taskID string, files []string) ([]string, error) {
	base, err := w.worktreeBase(ctx, taskID)
	if err != nil {
		return nil, fmt.Errorf("workspace: edits since the dry run of %s: %w", taskID, err)
	}
	out, err := git(ctx, w.root, nil, nil, append([]string{"ls-tree", "-z", "--full-tree", base, "--"}, files...)...)
	if err != nil {
		return nil, fmt.Errorf("workspace: edits since the dry run of %s: %w", taskID, err)
	}
	then := map[string]string{} // path → blob id in the base
	for _, rec := range splitZ(out) {
		meta, path, ok := strings.Cut(rec, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 {
			then[path] = f[2]
		}
	}
	var edited []string
	for _, f := range files {
		now := "" // absent
		fi, err := os.Lstat(filepath.Join(w.root, f))
		switch {
		case err != nil:
		case fi.Mode().IsRegular():
			// hash-object reads the file as git add would store it.
			h, err := git(ctx, w.root, nil, nil, "hash-object", "--", f)
			if err != nil {
				return nil, fmt.Errorf("workspace: edits since the dry run of %s: %w", taskID, err)
			}
			now = strings.TrimSpace(string(h))
		case fi.Mode()&os.ModeSymlink != 0:
			// git stores a symbolic link as its target.
			target, err := os.Readlink(filepath.Join(w.root, f))
			if err != nil {
				return nil, fmt.Errorf("workspace: edits since the dry run of %s: %w", taskID, err)
			}
			h, err := git(ctx, w.root, []byte(target), nil, "hash-object", "--stdin")
			if err != nil {
				return nil, fmt.Errorf("workspace: edits since the dry run of %s: %w", taskID, err)
			}
			now = strings.TrimSpace(string(h))
		default:
			now = "not a file"
		}
		if now != then[f] {
			edited = append(edited, f)
		}
	}
	return edited, nil
}

// RemoveWorktreesExcept removes every dry-run worktree (and its base)
// whose task id keep rejects: the worktrees of dry runs that ended, or
// of tasks wilco no longer knows, left by a wilco that stopped before it
// could remove them. It returns the directory names it removed.
func (w *Workspace) RemoveWorktreesExcept(ctx context.Context, keep func(name string) bool) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	dir := filepath.Join(w.root, StateDir, worktreesDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: orphaned worktrees: %w", err)
	}
	names := map[string]bool{}
	for _, e := range entries {
		if e.Name() != ".base" {
			names[e.Name()] = true
		}
	}
	if bases, err := os.ReadDir(filepath.Join(dir, ".base")); err == nil {
		for _, e := range bases {
			names[e.Name()] = true
		}
	}
	var removed []string
	for name := range names {
		if keep(name) {
			continue
		}
		if err := w.removeNamed(ctx, name); err != nil {
			return removed, fmt.Errorf("workspace: orphaned worktree %s: %w", name, err)
		}
		removed = append(removed, name)
	}
	return removed, nil
}
