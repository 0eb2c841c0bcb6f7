package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// StateDir is wilco's state directory inside the work tree.
// Git commands of this package never see it: it is not a change of the
// repository, and the dry-run worktrees live under it.
const StateDir = ".wilco"

// excludeState is the pathspec that keeps StateDir out of every listing,
// diff and snapshot.
var excludeState = []string{"--", ".", ":(exclude)" + StateDir}

// Workspace is the git work tree wilco serves. It is safe for concurrent
// use; operations that create, apply or remove are serialised.
type Workspace struct {
	root string
	mu   sync.Mutex // Worktree, Apply, Discard and Commit
	// step is told each step of a landing as it is about to happen
	// (OnLandStep).
	step func(string)
}

// Open returns the work tree that contains root (any directory inside it;
// Root is its top level). It fails with a clear error when git is missing
// or root is not inside a git work tree.
func Open(root string) (*Workspace, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("workspace: git is not installed (not on PATH): %w", err)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace: %s: %w", root, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("workspace: %s is not a directory", abs)
	}
	out, err := git(context.Background(), abs, nil, nil, "rev-parse", "--is-inside-work-tree", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("workspace: %s is not a git work tree: %w", abs, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] != "true" || lines[1] == "" {
		return nil, fmt.Errorf("workspace: %s is not a git work tree", abs)
	}
	return &Workspace{root: filepath.Clean(lines[1])}, nil
}

// OpenWorktree opens a linked worktree of a repository (a task's): dir is
// its top level when it holds a .git file naming a git directory that has
// a HEAD — read without running git, for a task's worktree is opened for
// each of its checks and for its landing. Anything else is opened as Open
// does.
func OpenWorktree(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %s: %w", dir, err)
	}
	if b, err := os.ReadFile(filepath.Join(abs, ".git")); err == nil {
		if gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); ok {
			if !filepath.IsAbs(gitdir) {
				gitdir = filepath.Join(abs, gitdir)
			}
			if fi, err := os.Stat(filepath.Join(gitdir, "HEAD")); err == nil && fi.Mode().IsRegular() {
				return &Workspace{root: filepath.Clean(abs)}, nil
			}
		}
	}
	return Open(abs)
}

// Root is the top level of the work tree.
func (w *Workspace) Root() string { return w.root }

// GitError is a git command that failed: its arguments, exit status and
// what it wrote on stderr.
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.ExitCode)
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

// gitEnvDrop are variables that would point git somewhere else or change
// how it reads pathspecs; wilco's commands must see the work tree they are
// run in, as it is.
var gitEnvDrop = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
	"GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
	"GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "LC_ALL", "LANG", "LANGUAGE",
}

func gitEnv(extra []string) []string {
	env := make([]string, 0, len(os.Environ())+len(extra)+2)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, d := range gitEnvDrop {
			if name == d {
				drop = true
				break
			}
		}
		if !drop {
			env = append(env, kv)
		}
	}
	// Messages in English (they are parsed), and never a prompt.
	env = append(env, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	return append(env, extra...)
}

// git runs git in dir and returns its stdout; a failure is a *GitError.
func git(ctx context.Context, dir string, stdin []byte, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitEnv(env)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), ctx.Err())
		}
		ge := &GitError{Args: args, ExitCode: -1, Stderr: stderr.String()}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			ge.ExitCode = exit.ExitCode()
		} else if ge.Stderr == "" {
			ge.Stderr = err.Error()
		}
		return stdout.Bytes(), ge
	}
	return stdout.Bytes(), nil
}

// head returns the commit HEAD names, or "" in a repository with no commit
// yet.
func head(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, nil, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// emptyTree returns the id of the empty tree in this repository's hash.
func emptyTree(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, []byte{}, nil, "hash-object", "-t", "tree", "--stdin")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// base returns what the work tree in dir is compared with: HEAD, or the
// empty tree before the first commit.
func base(ctx context.Context, dir string) (string, error) {
	h, err := head(ctx, dir)
	if err != nil || h != "" {
		return h, err
	}
	return emptyTree(ctx, dir)
}

// splitZ splits NUL-terminated git output.
func splitZ(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}
