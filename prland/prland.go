// Package prland lands a verified task as a pull request: it pushes the
// task's branch to the forge's remote with git itself (the token handed to
// git through its environment, never on a command line), finds the open
// pull request of that branch or opens one, and merges it when asked. It
// never force-pushes a branch but wilco's own (wilco/…), and those only
// with --force-with-lease.
package prland

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"

	"wilco/core"
	"wilco/forge"
)

// OwnBranchPrefix starts the branches wilco makes for its tasks: the only
// ones it may force-push.
const OwnBranchPrefix = "wilco/"

// ErrPush: git push failed.
var ErrPush = errors.New("prland: push failed")

// Lander pushes branches of one repository to one forge.
type Lander struct {
	Forge forge.Forge
	// Remote is the git remote the forge's repository is (forge.remote).
	Remote string
	// Token, when set, authenticates git's push; "" leaves it to the
	// user's own credential helper.
	Token  string
	Method string // the merge method ("" is merge)
	Log    *slog.Logger
}

// Push pushes the branch checked out in dir to the remote's branch of
// the same name and returns the commit pushed.
func (l *Lander) Push(ctx context.Context, dir, branch string) (string, error) {
	head, err := l.git(ctx, dir, "rev-parse", "--verify", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return "", err
	}
	head = strings.TrimSpace(head)
	args := []string{"push", "--porcelain"}
	if strings.HasPrefix(branch, OwnBranchPrefix) {
		// The lease is the remote-tracking branch a push updates: a
		// branch someone else pushed to since is never overwritten.
		args = append(args, "--force-with-lease=refs/heads/"+branch)
	}
	args = append(args, l.Remote, "refs/heads/"+branch+":refs/heads/"+branch)
	if _, err := l.git(ctx, dir, args...); err != nil {
		return "", fmt.Errorf("%w: %s to %s: %w", ErrPush, branch, l.Remote, err)
	}
	l.log().Info("pushed the task's branch", "branch", branch, "commit", head, "remote", l.Remote)
	return head, nil
}

// Open finds the open pull request of branch, else opens one against
// target with title and body. One found is given the body (and title)
// of now: a task pushed to it again carries the proof of every attempt.
func (l *Lander) Open(ctx context.Context, branch, target, title, body string) (core.PROpened, error) {
	pr, ok, err := l.Forge.FindPullRequest(ctx, branch)
	if err != nil {
		return core.PROpened{}, fmt.Errorf("prland: finding the pull request of %s: %w", branch, err)
	}
	switch {
	case !ok:
		if pr, err = l.Forge.OpenPullRequest(ctx, forge.NewPullRequest{Title: title, Body: body, Head: branch, Base: target}); err != nil {
			return core.PROpened{}, fmt.Errorf("prland: opening a pull request of %s onto %s: %w", branch, target, err)
		}
		l.log().Info("opened a pull request", "number", pr.Number, "branch", branch, "target", target)
	case pr.Body != body || pr.Title != title:
		if err := l.Forge.EditPullRequest(ctx, pr.Number, title, body); err != nil {
			// The push is done: the pull request is followed as it is.
			l.log().Warn("the pull request's body was not updated", "number", pr.Number, "err", err)
		}
	}
	return core.PROpened{Number: pr.Number, URL: pr.URL}, nil
}

// Merge merges a task's pull request at its head and says what it then
// is: merged with its commit, or the forge's refusal as Error.
func (l *Lander) Merge(ctx context.Context, e core.MergePR) core.PRObserved {
	o := core.PRObserved{TaskID: e.TaskID, Number: e.Number, Head: e.Head, State: core.PROpen}
	sha, err := l.Forge.MergePullRequest(ctx, e.Number, forge.Merge{Method: l.Method, HeadSHA: e.Head})
	if err != nil {
		o.Error = fmt.Sprintf("merging pull request #%d: %v", e.Number, err)
		l.log().Warn("the forge did not merge the pull request", "task", e.TaskID, "number", e.Number, "err", err)
		return o
	}
	o.State, o.MergeCommit = core.PRMerged, sha
	l.log().Info("merged the pull request", "task", e.TaskID, "number", e.Number, "commit", sha)
	return o
}

// Fetch fetches the remote's branch and returns the commit it is at.
func (l *Lander) Fetch(ctx context.Context, dir, branch string) (string, error) {
	if _, err := l.git(ctx, dir, "fetch", "--quiet", l.Remote, "refs/heads/"+branch+":refs/remotes/"+l.Remote+"/"+branch); err != nil {
		return "", err
	}
	out, err := l.git(ctx, dir, "rev-parse", "--verify", "refs/remotes/"+l.Remote+"/"+branch+"^{commit}")
	return strings.TrimSpace(out), err
}

// IsAncestor says whether a is an ancestor of (or is) b in dir.
func (l *Lander) IsAncestor(ctx context.Context, dir, a, b string) bool {
	_, err := l.git(ctx, dir, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

func (l *Lander) log() *slog.Logger {
	if l.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Log
}

// git runs git in dir with the token, if any, given as an HTTP header
// through git's environment (GIT_CONFIG_COUNT…): a command line is seen
// by every user of the machine, the environment only by its owner. Its
// errors never hold the token.
func (l *Lander) git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	if l.Token != "" {
		cmd.Env = append(cmd.Env, authEnv(l.Token)...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if l.Token != "" {
			msg = strings.ReplaceAll(msg, l.Token, "***")
		}
		return "", fmt.Errorf("git %s: %v: %s", args[0], err, msg)
	}
	return stdout.String(), nil
}

// authEnv is the environment that has git send the token as HTTP basic
// authentication's password (the user x-access-token, which GitHub's git
// server asks for; Gitea takes a token as any user's password).
func authEnv(token string) []string {
	cred := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	n := 0
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") {
			fmt.Sscan(strings.TrimPrefix(kv, "GIT_CONFIG_COUNT="), &n)
		}
	}
	return []string{
		fmt.Sprintf("GIT_CONFIG_COUNT=%d", n+1),
		fmt.Sprintf("GIT_CONFIG_KEY_%d=http.extraHeader", n),
		fmt.Sprintf("GIT_CONFIG_VALUE_%d=Authorization: Basic %s", n, cred),
	}
}

// Rev is the commit a revision names in dir.
func (l *Lander) Rev(ctx context.Context, dir, rev string) (string, error) {
	out, err := l.git(ctx, dir, "rev-parse", "--verify", rev+"^{commit}")
	return strings.TrimSpace(out), err
}
