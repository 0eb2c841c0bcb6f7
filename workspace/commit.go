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
	"time"

	"wilco/proc"
)

// Identity is who a commit of wilco's is by when git's configuration
// names no one (user.name, user.email): for that commit only.
const (
	IdentityName  = "wilco"
	IdentityEmail = "wilco@localhost"
)

// CommitError is a commit git refused: its exit status, what it and its
// hooks wrote, and whether the repository has a hook that may refuse a
// commit (pre-commit, prepare-commit-msg, commit-msg), which then most
// likely did.
type CommitError struct {
	ExitCode int
	Output   string
	Hook     bool
}

func (e *CommitError) Error() string {
	what := "git commit"
	if e.Hook {
		what = "git commit (its hooks)"
	}
	out := strings.TrimSpace(e.Output)
	if out == "" {
		out = fmt.Sprintf("exit status %d", e.ExitCode)
	}
	return what + ": " + out
}

// refusingHooks are the hooks that can stop a commit.
var refusingHooks = []string{"pre-commit", "prepare-commit-msg", "commit-msg"}

// Branch is the branch checked out ("" for a detached HEAD).
func (w *Workspace) Branch(ctx context.Context) (string, error) {
	out, err := git(ctx, w.root, nil, nil, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return "", nil
		}
		return "", fmt.Errorf("workspace: the branch checked out: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Head is the commit HEAD names ("" in a repository with no commit yet).
func (w *Workspace) Head(ctx context.Context) (string, error) {
	h, err := head(ctx, w.root)
	if err != nil {
		return "", fmt.Errorf("workspace: HEAD: %w", err)
	}
	return h, nil
}

// Commit records exactly paths — as they are in the working tree: edits,
// new files, deletions — in a new commit on the branch checked out, with
// message, and returns its hash. What else is in the index (what the user
// staged of other files) is neither committed nor changed; the index of
// paths is left as the commit has them. Git's hooks run as for any commit;
// a commit git refuses is a *CommitError, with paths' index as it was.
// When git's configuration names no user.name or user.email, IdentityName
// and IdentityEmail stand in for that commit only (nothing is written to
// the configuration).
func (w *Workspace) Commit(ctx context.Context, paths []string, message string) (string, error) {
	if len(paths) == 0 {
		return "", errors.New("workspace: commit: no file to commit")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var spec bytes.Buffer
	for _, p := range paths {
		spec.WriteString(p)
		spec.WriteByte(0)
	}
	// A new file is not known to git until added; `commit --only` then
	// takes exactly these paths from the working tree.
	if _, err := git(ctx, w.root, spec.Bytes(), nil, "--literal-pathspecs", "add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
		return "", fmt.Errorf("workspace: commit: %w", err)
	}
	msg, err := os.CreateTemp("", "wilco-commit-*.txt")
	if err != nil {
		return "", w.unstage(ctx, spec.Bytes(), fmt.Errorf("workspace: commit: %w", err))
	}
	defer os.Remove(msg.Name())
	if _, err := msg.WriteString(message); err != nil {
		msg.Close()
		return "", w.unstage(ctx, spec.Bytes(), fmt.Errorf("workspace: commit: %w", err))
	}
	if err := msg.Close(); err != nil {
		return "", w.unstage(ctx, spec.Bytes(), fmt.Errorf("workspace: commit: %w", err))
	}
	args := append(w.identity(ctx), "--literal-pathspecs", "commit", "--only", "--no-edit", "--cleanup=whitespace", "-F", msg.Name(),
		"--pathspec-from-file=-", "--pathspec-file-nul")
	if code, out, err := w.run(ctx, spec.Bytes(), args...); err != nil {
		return "", w.unstage(ctx, spec.Bytes(), fmt.Errorf("workspace: commit: %w", err))
	} else if code != 0 {
		return "", w.unstage(ctx, spec.Bytes(), &CommitError{ExitCode: code, Output: out, Hook: w.hasRefusingHook(ctx)})
	}
	h, err := head(ctx, w.root)
	if err != nil {
		return "", fmt.Errorf("workspace: the commit made: %w", err)
	}
	return h, nil
}

// unstage puts the index of paths back as HEAD has them (as it was: they
// had no change before), after a commit that failed with err.
func (w *Workspace) unstage(ctx context.Context, spec []byte, err error) error {
	if h, herr := head(ctx, w.root); herr == nil && h != "" {
		_, _ = git(context.WithoutCancel(ctx), w.root, spec, nil, "--literal-pathspecs", "reset", "--quiet", "--pathspec-from-file=-", "--pathspec-file-nul")
	} else if herr == nil {
		_, _ = git(context.WithoutCancel(ctx), w.root, spec, nil, "--literal-pathspecs", "rm", "--cached", "--quiet", "-r", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul")
	}
	return err
}

// identity is the -c options that name wilco as the author and committer
// when git's configuration names no user (read in one git command: a
// landing runs one at a time, and every command it saves is time the
// landings behind it do not wait).
func (w *Workspace) identity(ctx context.Context) []string {
	// The last value of a key is the one git uses, as config --get says.
	set := map[string]string{}
	if b, err := git(ctx, w.root, nil, nil, "config", "--null", "--get-regexp", `^user\.(name|email)$`); err == nil {
		for _, e := range splitZ(b) {
			key, val, _ := strings.Cut(e, "\n")
			set[strings.ToLower(key)] = val
		}
	}
	var out []string
	for _, kv := range [][2]string{{"user.name", IdentityName}, {"user.email", IdentityEmail}} {
		if strings.TrimSpace(set[kv[0]]) == "" {
			out = append(out, "-c", kv[0]+"="+kv[1])
		}
	}
	return out
}

// run runs git in the work tree with stdin, in a process group of its
// own (a hook may start processes: the end of ctx kills them all), and
// returns its exit status and its output and its hooks' (stdout and
// stderr together, as a user sees them); err is for git that could not
// run at all, or was cut short by ctx.
func (w *Workspace) run(ctx context.Context, stdin []byte, args ...string) (int, string, error) {
	cmd := exec.Command("git", append([]string{"-C", w.root}, args...)...)
	cmd.Env = gitEnv(nil)
	cmd.Stdin = bytes.NewReader(stdin)
	var out bytes.Buffer
	g, err := proc.Start(ctx, cmd, &out)
	if err != nil {
		return -1, "", fmt.Errorf("git: %w", err)
	}
	exit, err := g.Wait()
	// A process a hook left running must not hold the output open.
	g.Drain(5 * time.Second)
	g.Close()
	switch {
	case ctx.Err() != nil:
		return -1, out.String(), fmt.Errorf("git: %w", ctx.Err())
	case err != nil:
		return -1, out.String(), err
	}
	return exit.Code, out.String(), nil
}

// hasRefusingHook reports whether the repository has a hook that can
// refuse a commit: an executable pre-commit, prepare-commit-msg or
// commit-msg in core.hooksPath, else in the repository's hooks folder.
func (w *Workspace) hasRefusingHook(ctx context.Context) bool {
	dir := ""
	if b, err := git(ctx, w.root, nil, nil, "config", "--get", "core.hooksPath"); err == nil {
		dir = strings.TrimSpace(string(b))
		if strings.HasPrefix(dir, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				dir = filepath.Join(home, dir[2:])
			}
		}
	}
	if dir == "" {
		b, err := git(ctx, w.root, nil, nil, "rev-parse", "--git-path", "hooks")
		if err != nil {
			return false
		}
		dir = strings.TrimSpace(string(b))
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(w.root, dir)
	}
	for _, h := range refusingHooks {
		if fi, err := os.Stat(filepath.Join(dir, h)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// FindCommit looks on branch, among the commits since (a commit; "" for
// all of the branch's history), for the commit whose trailers hold every
// key with its value (as CommitMessage writes them), and returns its hash
// and the files it changed; "" when there is none (or no such branch).
func (w *Workspace) FindCommit(ctx context.Context, branch, since string, trailers map[string]string) (string, []string, error) {
	ref := "refs/heads/" + branch
	if _, err := git(ctx, w.root, nil, nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}"); err != nil {
		var ge *GitError
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return "", nil, nil
		}
		return "", nil, fmt.Errorf("workspace: branch %s: %w", branch, err)
	}
	rng := ref
	if since != "" {
		rng = since + ".." + ref
	}
	out, err := git(ctx, w.root, nil, nil, "log", "--format=%x00%H%n%(trailers:only,unfold)", rng, "--")
	if err != nil {
		return "", nil, fmt.Errorf("workspace: the commits of %s: %w", branch, err)
	}
	for _, rec := range strings.Split(string(out), "\x00") {
		hash, body, ok := strings.Cut(rec, "\n")
		if !ok || hash == "" || !hasTrailers(body, trailers) {
			continue
		}
		files, err := git(ctx, w.root, nil, nil, "diff-tree", "--no-commit-id", "--name-only", "--no-renames", "-r", "-z", "--root", hash)
		if err != nil {
			return "", nil, fmt.Errorf("workspace: the files of %s: %w", hash, err)
		}
		return hash, splitZ(files), nil
	}
	return "", nil, nil
}

// hasTrailers reports whether the trailer lines of a commit hold every
// key: value of want.
func hasTrailers(lines string, want map[string]string) bool {
	have := map[string]bool{}
	for l := range strings.SplitSeq(lines, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok {
			have[strings.ToLower(strings.TrimSpace(k))+"\x00"+strings.TrimSpace(v)] = true
		}
	}
	for k, v := range want {
		if !have[strings.ToLower(k)+"\x00"+v] {
			return false
		}
	}
	return len(want) > 0
}
