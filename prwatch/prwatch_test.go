package prwatch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/core"
	"wilco/forge"
	"wilco/forge/forgetest"
)

// fakeRuntime has one task waiting on a pull request and keeps what is
// reported.
type fakeRuntime struct {
	mu       sync.Mutex
	task     core.Task
	reported []core.PRObserved
}

func (f *fakeRuntime) Read(fn func(*core.State)) error { return nil }

func (f *fakeRuntime) Report(_ context.Context, o core.Outcome) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reported = append(f.reported, o.(core.PRObserved))
	return nil, nil
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// openPull pushes a branch to the scripted forge and opens its pull
// request; it returns the forge, a client and the head.
func openPull(t *testing.T) (*forgetest.Server, forge.Forge, forge.PullRequest) {
	srv := forgetest.New(t, forgetest.Options{})
	dir := filepath.Join(t.TempDir(), "repo")
	git(t, t.TempDir(), "clone", "--quiet", srv.AuthGitURL(), dir)
	git(t, dir, "checkout", "--quiet", "-b", "wilco/T-1")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "a.txt")
	git(t, dir, "commit", "--quiet", "-m", "a")
	git(t, dir, "push", "--quiet", "origin", "wilco/T-1")
	f, err := forge.New(forge.Options{Kind: forge.GitHub, API: srv.API(forge.GitHub), Repo: srv.Repo, Token: srv.Token})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := f.OpenPullRequest(context.Background(), forge.NewPullRequest{Title: "a", Head: "wilco/T-1", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	return srv, f, pr
}

func TestAPullRequestIsObservedWithItsChecksTheFailedLogsTailAndItsReviewsLineComments(t *testing.T) {
	srv, f, pr := openPull(t)
	long := strings.Repeat("noise line\n", 1000) + "FAIL: the widget is upside down\n"
	srv.SetCheckRun(pr.HeadSHA, forgetest.CheckRun{Name: "test", Status: "completed", Conclusion: "failure", Actions: true, Log: long})
	srv.SetCheckRun(pr.HeadSHA, forgetest.CheckRun{Name: "lint", Status: "in_progress"})
	srv.SetCheckRun(pr.HeadSHA, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})
	id := srv.AddReview(pr.Number, "ana", forge.ReviewChangesRequested, "two things")
	srv.AddReviewComment(pr.Number, id, "ana", "a.txt", 1, "say it in capitals")
	srv.AddReview(pr.Number, "bo", forge.ReviewApproved, "fine")

	w := New(f, &fakeRuntime{}, time.Hour, nil)
	o, err := w.Observe(context.Background(), "T-1", pr.Number)
	if err != nil {
		t.Fatal(err)
	}
	if o.State != core.PROpen || o.Head != pr.HeadSHA || len(o.Checks) != 3 {
		t.Fatalf("observed %+v", o)
	}
	byName := map[string]core.PRCheck{}
	for _, c := range o.Checks {
		byName[c.Name] = c
	}
	if c := byName["test"]; !c.Failed() || len(c.Log) > LogTail || !strings.HasSuffix(c.Log, "FAIL: the widget is upside down\n") {
		t.Fatalf("the failed check: %+v (log %d bytes)", c, len(c.Log))
	}
	if c := byName["lint"]; c.Done() {
		t.Fatalf("a running check is done: %+v", c)
	}
	if c := byName["build"]; !c.Done() || c.Failed() || c.Log != "" {
		t.Fatalf("the passed check: %+v", c)
	}
	if len(o.Reviews) != 2 || o.Reviews[0].State != forge.ReviewChangesRequested || len(o.Reviews[0].Comments) != 1 ||
		o.Reviews[0].Comments[0].Path != "a.txt" || o.Reviews[0].Comments[0].Line != 1 || len(o.Reviews[1].Comments) != 0 {
		t.Fatalf("reviews %+v", o.Reviews)
	}
}

func TestAMergedPullRequestIsObservedWithItsCommit(t *testing.T) {
	_, f, pr := openPull(t)
	sha, err := f.MergePullRequest(context.Background(), pr.Number, forge.Merge{HeadSHA: pr.HeadSHA})
	if err != nil {
		t.Fatal(err)
	}
	o, err := New(f, &fakeRuntime{}, time.Hour, nil).Observe(context.Background(), "T-1", pr.Number)
	if err != nil || o.State != core.PRMerged || o.MergeCommit != sha {
		t.Fatalf("observed %+v, %v; want merged as %s", o, err, sha)
	}
}

func TestAFailingForgeIsAnErrorToTryAgain(t *testing.T) {
	srv, f, pr := openPull(t)
	srv.Fail(forgetest.Fault{Path: "/pulls/", Times: 10, Status: 404})
	if _, err := New(f, &fakeRuntime{}, time.Hour, nil).Observe(context.Background(), "T-1", pr.Number); err == nil {
		t.Fatal("a forge answering 404 was observed")
	}
}
