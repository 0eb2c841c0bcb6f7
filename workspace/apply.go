package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// ApplyError is a diff that does not apply to the working tree. File is
// the first file git named (empty when the diff itself is broken).
type ApplyError struct {
	File   string
	Reason string
	// Stderr is what git said.
	Stderr string
}

func (e *ApplyError) Error() string {
	if e.File == "" {
		return "workspace: the diff does not apply: " + e.Reason
	}
	return fmt.Sprintf("workspace: the diff does not apply to %s: %s", e.File, e.Reason)
}

var applyFailedAt = regexp.MustCompile(`^error: patch failed: (.+):(\d+)$`)

// applyReasons are what git apply says of one file.
var applyReasons = []string{
	"patch does not apply", "already exists in working directory", "No such file or directory",
	"does not exist in index", "does not match index", "wrong type", "already exists in index",
}

// applyError reads git apply's complaint.
func applyError(stderr string) *ApplyError {
	e := &ApplyError{Stderr: stderr}
	var first string
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if m := applyFailedAt.FindStringSubmatch(line); m != nil {
			if e.File == "" {
				e.File, e.Reason = m[1], "patch failed at line "+m[2]+" (the file is not what the diff expects)"
			}
			continue
		}
		rest, ok := strings.CutPrefix(line, "error: ")
		if !ok {
			rest, ok = strings.CutPrefix(line, "fatal: ")
		}
		if !ok {
			continue
		}
		if first == "" {
			first = rest
		}
		for _, r := range applyReasons {
			if file, ok := strings.CutSuffix(rest, ": "+r); ok && file != "" {
				if e.File == "" || e.File == file {
					e.File = file
					if !strings.HasPrefix(e.Reason, "patch failed") {
						e.Reason = r
					}
				}
			}
		}
	}
	if e.File == "" {
		e.Reason = first
		if e.Reason == "" {
			e.Reason = strings.TrimSpace(stderr)
		}
	}
	return e
}

// Apply writes a diff (git's unified format, as Diff makes) into the real
// working tree and returns the files it touches. git apply is atomic, so a
// diff that does not apply changes nothing: the error is an *ApplyError naming
// the first failing file. When the diff does not apply as it is (the files
// changed since the dry run), a three-way merge with the diff's base
// blobs is tried on a scratch index; only a merge without conflicts is
// written. The index is not changed; new files are left untracked. An empty
// diff does nothing.
func (w *Workspace) Apply(ctx context.Context, diff []byte) ([]string, error) {
	return w.ApplyDryRun(ctx, "", diff)
}

// EditedError is a dry run's diff refused because the working tree
// changed, since the dry run started, in files the diff touches: applying
// it would overwrite or mix into those edits.
type EditedError struct {
	TaskID string
	Files  []string
}

func (e *EditedError) Error() string {
	return fmt.Sprintf("workspace: the working tree changed since dry run %s started, in %s: applying its diff would overwrite those edits; commit, stash or undo them, then apply again (or discard the dry run)",
		e.TaskID, strings.Join(e.Files, ", "))
}

// ApplyDryRun is Apply of the diff of task's dry run, refused with an
// *EditedError, changing nothing, when any file the diff touches changed
// in the working tree since the dry run's worktree was made. Without the
// worktree (or with taskID ""), the diff is applied as Apply does.
func (w *Workspace) ApplyDryRun(ctx context.Context, taskID string, diff []byte) ([]string, error) {
	if len(bytes.TrimSpace(diff)) == 0 {
		return nil, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out, err := git(ctx, w.root, diff, nil, "apply", "--numstat", "-z", "-")
	if err != nil {
		return nil, asApplyError(err)
	}
	files := numstatFiles(out)
	if taskID != "" {
		edited, err := w.editedSince(ctx, taskID, files)
		switch {
		case errors.Is(err, ErrNoWorktree):
		case err != nil:
			return nil, err
		case len(edited) > 0:
			return nil, &EditedError{TaskID: taskID, Files: edited}
		}
	}
	if _, err := git(ctx, w.root, diff, nil, "apply", "--whitespace=nowarn", "-"); err != nil {
		first := asApplyError(err)
		var ae *ApplyError
		if !errors.As(first, &ae) {
			return nil, first
		}
		merged, err3 := w.threeWay(ctx, diff)
		if err3 != nil {
			ae.Reason += "; a three-way merge did not apply cleanly either"
			return nil, ae
		}
		if _, err := git(ctx, w.root, merged, nil, "apply", "--whitespace=nowarn", "-"); err != nil {
			return nil, asApplyError(err)
		}
	}
	return files, nil
}

// threeWay merges diff into a scratch index holding the working tree as it
// is, and returns the result as a diff against the working tree (which then
// applies without fuzz).
func (w *Workspace) threeWay(ctx context.Context, diff []byte) ([]byte, error) {
	if err := w.ensureStateDir(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Join(w.root, StateDir), "apply-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	tree, err := writeTree(ctx, w.root, index)
	if err != nil {
		return nil, err
	}
	env := []string{"GIT_INDEX_FILE=" + index}
	if _, err := git(ctx, w.root, diff, env, "apply", "--3way", "--cached", "--whitespace=nowarn", "-"); err != nil {
		return nil, err
	}
	return git(ctx, w.root, nil, env, append([]string{"diff", "--cached", "--binary", "--no-renames", "--no-ext-diff",
		"--no-textconv", "--no-color", "--no-relative", "--src-prefix=a/", "--dst-prefix=b/", tree}, excludeState...)...)
}

func asApplyError(err error) error {
	var ge *GitError
	if errors.As(err, &ge) {
		return applyError(ge.Stderr)
	}
	return fmt.Errorf("workspace: apply: %w", err)
}

// numstatFiles reads `git apply --numstat -z`: "added\tdeleted\tpath\0",
// or for a rename "added\tdeleted\t\0old\0new\0".
func numstatFiles(b []byte) []string {
	var files []string
	recs := splitZ(b)
	for i := 0; i < len(recs); i++ {
		parts := strings.SplitN(recs[i], "\t", 3)
		if len(parts) < 3 {
			continue
		}
		if parts[2] != "" {
			files = append(files, parts[2])
			continue
		}
		for j := 1; j <= 2 && i+j < len(recs); j++ {
			files = append(files, recs[i+j])
		}
		i += 2
	}
	return files
}
