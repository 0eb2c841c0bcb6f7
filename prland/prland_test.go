package prland

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"wilco/core"
	"wilco/forge"
	"wilco/forge/forgetest"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// setup clones the scripted forge's repository (without credentials) and
// makes a lander for it.
func setup(t *testing.T) (*forgetest.Server, string, *Lander) {
	srv := forgetest.New(t, forgetest.Options{})
	dir := filepath.Join(t.TempDir(), "repo")
	run(t, t.TempDir(), "clone", "--quiet", srv.AuthGitURL(), dir)
	run(t, dir, "remote", "set-url", "origin", srv.GitURL())
	f, err := forge.New(forge.Options{Kind: forge.GitHub, API: srv.API(forge.GitHub), Repo: srv.Repo, Token: srv.Token})
	if err != nil {
		t.Fatal(err)
	}
	return srv, dir, &Lander{Forge: f, Remote: "origin", Token: srv.Token}
}

func commit(t *testing.T, dir, file, text string) string {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "add", file)
	run(t, dir, "commit", "--quiet", "-m", "change "+file)
	return run(t, dir, "rev-parse", "HEAD")
}

func TestAPushedTaskBranchOpensOnePullRequestAndMergesAtItsHead(t *testing.T) {
	srv, dir, l := setup(t)
	ctx := context.Background()
	run(t, dir, "checkout", "--quiet", "-b", "wilco/T-1")
	c1 := commit(t, dir, "a.txt", "one\n")
	head, err := l.Push(ctx, dir, "wilco/T-1")
	if err != nil || head != c1 {
		t.Fatalf("push: %q %v, want %s", head, err, c1)
	}
	pr, err := l.Open(ctx, "wilco/T-1", "main", "Task one", "Run R-1\n\nWilco-Task: T-1")
	if err != nil || pr.Number == 0 {
		t.Fatalf("open: %+v %v", pr, err)
	}
	got, ok := srv.Pull(pr.Number)
	if !ok || got.HeadSHA != c1 || got.Base != "main" || !strings.Contains(got.Body, "Wilco-Task: T-1") {
		t.Fatalf("the forge's pull request: %+v", got)
	}
	// A new attempt amends the branch: it is force-pushed with a lease,
	// and the same pull request is found.
	run(t, dir, "commit", "--quiet", "--amend", "-m", "again")
	c2 := run(t, dir, "rev-parse", "HEAD")
	if head, err = l.Push(ctx, dir, "wilco/T-1"); err != nil || head != c2 {
		t.Fatalf("second push: %q %v", head, err)
	}
	// Found again, it is given the body of now: the proof of both
	// attempts.
	again, err := l.Open(ctx, "wilco/T-1", "main", "Task one", "Run R-1, then R-2\n\nWilco-Task: T-1")
	if err != nil || again.Number != pr.Number {
		t.Fatalf("open again: %+v %v, want #%d", again, err, pr.Number)
	}
	if got, _ := srv.Pull(pr.Number); got.Body != "Run R-1, then R-2\n\nWilco-Task: T-1" || got.Title != "Task one" {
		t.Fatalf("the pull request found again was not given the new body: %+v", got)
	}
	if o := l.Merge(ctx, core.MergePR{TaskID: "T-1", Number: pr.Number, Head: c1}); o.Error == "" {
		t.Fatalf("a merge at an old head: %+v, want the forge's refusal", o)
	}
	o := l.Merge(ctx, core.MergePR{TaskID: "T-1", Number: pr.Number, Head: c2})
	if o.Error != "" || o.State != core.PRMerged || o.MergeCommit == "" {
		t.Fatalf("merge: %+v", o)
	}
	if tip, err := l.Fetch(ctx, dir, "main"); err != nil || tip != o.MergeCommit {
		t.Fatalf("fetch: %q %v, want %s", tip, err, o.MergeCommit)
	}
}

func TestAPushNeverOverwritesABranchThatIsNotWilcos(t *testing.T) {
	_, dir, l := setup(t)
	ctx := context.Background()
	run(t, dir, "checkout", "--quiet", "-b", "feature")
	commit(t, dir, "a.txt", "one\n")
	if _, err := l.Push(ctx, dir, "feature"); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "commit", "--quiet", "--amend", "-m", "rewritten")
	if _, err := l.Push(ctx, dir, "feature"); err == nil {
		t.Fatal("a rewritten branch that is not wilco's was force-pushed")
	}
}

func TestAPushWithAWrongTokenFailsWithoutTheToken(t *testing.T) {
	_, dir, l := setup(t)
	l.Token = "secret-token-value"
	run(t, dir, "checkout", "--quiet", "-b", "wilco/T-2")
	commit(t, dir, "b.txt", "two\n")
	_, err := l.Push(context.Background(), dir, "wilco/T-2")
	if err == nil {
		t.Fatal("a push with a wrong token succeeded")
	}
	if strings.Contains(err.Error(), l.Token) {
		t.Fatalf("the error holds the token: %v", err)
	}
}
