package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// DiffOf returns the unified diff (git's format, binary files named, not
// shown) of the given paths of the working tree against HEAD — new files,
// changes and deletions alike — through a temporary index: the real index
// is not touched. A reviewer reads it.
func (w *Workspace) DiffOf(ctx context.Context, paths []string) ([]byte, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	if err := w.ensureStateDir(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Join(w.root, StateDir), "diff-")
	if err != nil {
		return nil, fmt.Errorf("workspace: diff: %w", err)
	}
	defer os.RemoveAll(tmp)
	b, err := base(ctx, w.root)
	if err != nil {
		return nil, fmt.Errorf("workspace: diff: %w", err)
	}
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := git(ctx, w.root, nil, env, "read-tree", b); err != nil {
		return nil, fmt.Errorf("workspace: diff: %w", err)
	}
	pathspec := append([]string{"--"}, paths...)
	if _, err := git(ctx, w.root, nil, env, append([]string{"add", "-A", "--ignore-errors"}, pathspec...)...); err != nil {
		return nil, fmt.Errorf("workspace: diff: %w", err)
	}
	out, err := git(ctx, w.root, nil, env, append([]string{"diff", "--cached", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color",
		"--src-prefix=a/", "--dst-prefix=b/", b}, pathspec...)...)
	if err != nil {
		return nil, fmt.Errorf("workspace: diff: %w", err)
	}
	return out, nil
}
