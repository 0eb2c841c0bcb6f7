package forge_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/forge"
	"wilco/forge/forgetest"
)

// waitClock is a clock whose waits end at once, moving it forward by what
// was waited, and are recorded.
type waitClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func newWaitClock() *waitClock { return &waitClock{now: time.Now()} }

func (c *waitClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *waitClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func (c *waitClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// fixture is a scripted forge, a client of it of one kind, and a clone.
type fixture struct {
	s     *forgetest.Server
	f     forge.Forge
	clock *waitClock
	calls *[]forge.Call
	work  string
}

func newFixture(t *testing.T, kind forge.Kind, o forgetest.Options) *fixture {
	t.Helper()
	o.Kind = kind
	s := forgetest.New(t, o)
	fx := &fixture{s: s, clock: newWaitClock(), calls: &[]forge.Call{}}
	var mu sync.Mutex
	f, err := forge.New(forge.Options{Kind: kind, API: s.API(kind), Repo: s.Repo, Token: s.Token, Clock: fx.clock,
		Observe: func(c forge.Call) { mu.Lock(); *fx.calls = append(*fx.calls, c); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	fx.f = f
	return fx
}

func bothKinds(t *testing.T, run func(t *testing.T, kind forge.Kind)) {
	for _, k := range forge.Kinds {
		t.Run(string(k), func(t *testing.T) { run(t, k) })
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// push commits files on a new branch of a clone and pushes it for real;
// it returns the branch's commit.
func (fx *fixture) push(t *testing.T, branch string, files map[string]string) string {
	t.Helper()
	if fx.work == "" {
		dir := t.TempDir()
		git(t, dir, "clone", "-q", fx.s.AuthGitURL(), "work")
		fx.work = filepath.Join(dir, "work")
	}
	git(t, fx.work, "switch", "-q", "-C", branch, "origin/main")
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(fx.work, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, fx.work, "add", ".")
	git(t, fx.work, "commit", "-q", "-m", "change on "+branch)
	git(t, fx.work, "push", "-q", "-f", "origin", branch)
	return git(t, fx.work, "rev-parse", "HEAD")
}

// openPR pushes a branch changing file and opens its pull request.
func (fx *fixture) openPR(t *testing.T, branch, file string) forge.PullRequest {
	t.Helper()
	fx.push(t, branch, map[string]string{file: "a\n"})
	pr, err := fx.f.OpenPullRequest(context.Background(), forge.NewPullRequest{Title: strings.TrimPrefix(branch, "wilco/"), Body: "why", Head: branch, Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func TestAPullRequestIsOpenedFoundAndMergedForReal(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		ctx := context.Background()
		sha := fx.push(t, "wilco/T-1", map[string]string{"a.txt": "a\n"})
		pr, err := fx.f.OpenPullRequest(ctx, forge.NewPullRequest{Title: "T-1: add a", Body: "why", Head: "wilco/T-1", Base: "main"})
		if err != nil {
			t.Fatal(err)
		}
		if pr.Number == 0 || pr.State != forge.PROpen || pr.HeadSHA != sha || pr.Head != "wilco/T-1" || pr.Base != "main" || pr.URL == "" {
			t.Fatalf("opened %+v", pr)
		}
		found, ok, err := fx.f.FindPullRequest(ctx, "wilco/T-1")
		if err != nil || !ok || found.Number != pr.Number {
			t.Fatalf("find: %+v %v %v", found, ok, err)
		}
		if _, ok, err := fx.f.FindPullRequest(ctx, "wilco/T-2"); ok || err != nil {
			t.Fatalf("found a pull request of a branch that has none: %v %v", ok, err)
		}
		merged, err := fx.f.MergePullRequest(ctx, pr.Number, forge.Merge{HeadSHA: sha})
		if err != nil {
			t.Fatal(err)
		}
		if merged == "" || fx.s.Head("main") != merged {
			t.Fatalf("merged as %q, main is %q", merged, fx.s.Head("main"))
		}
		// A real merge: main has the change and two parents.
		if out := git(t, fx.s.Bare, "show", "main:a.txt"); out != "a" {
			t.Fatalf("main's a.txt: %q", out)
		}
		if parents := strings.Fields(git(t, fx.s.Bare, "rev-list", "--parents", "-n1", "main")); len(parents) != 3 || parents[2] != sha {
			t.Fatalf("the merge's parents: %v", parents)
		}
		got, err := fx.f.PullRequest(ctx, pr.Number)
		if err != nil || got.State != forge.PRMerged || got.MergeSHA != merged {
			t.Fatalf("after the merge: %+v %v", got, err)
		}
		if _, ok, _ := fx.f.FindPullRequest(ctx, "wilco/T-1"); ok {
			t.Fatal("a merged pull request is still found open")
		}
	})
}

// A pull request closed unmerged says who closed it: on GitHub its
// issue's closed_by, on Gitea its timeline's close entry; an open one and
// a merged one say nobody.
func TestAPullRequestClosedUnmergedSaysWhoClosedIt(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		ctx := context.Background()
		pr := fx.openPR(t, "wilco/T-1", "a.txt")
		fx.s.AddComment(pr.Number, "dave", "not this way")
		if got, err := fx.f.PullRequest(ctx, pr.Number); err != nil || got.State != forge.PROpen || got.ClosedBy != "" {
			t.Fatalf("open: %+v %v", got, err)
		}
		fx.s.ClosePull(pr.Number, "carol")
		got, err := fx.f.PullRequest(ctx, pr.Number)
		if err != nil || got.State != forge.PRClosed || got.ClosedBy != "carol" {
			t.Fatalf("closed by carol: %+v %v", got, err)
		}
		// Closed through the API, it is the token's user who closed it.
		pr2 := fx.openPR(t, "wilco/T-2", "b.txt")
		if err := fx.f.ClosePullRequest(ctx, pr2.Number); err != nil {
			t.Fatal(err)
		}
		if got, err := fx.f.PullRequest(ctx, pr2.Number); err != nil || got.ClosedBy != "wilco-bot" {
			t.Fatalf("closed by the token's user: %+v %v", got, err)
		}
	})
}

// A GET asked again is conditional (If-None-Match the ETag of the last
// answer): answered 304 Not Modified — which GitHub does not count against
// the rate limit — it gives the answer kept; changed, the new one.
func TestAnAnswerAskedAgainIsConditionalAndAnUnchangedOneIsTheOneKept(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		ctx := context.Background()
		pr := fx.openPR(t, "wilco/T-1", "a.txt")
		statuses := func() []int {
			var out []int
			for _, c := range *fx.calls {
				if c.Method == "GET" {
					out = append(out, c.Status)
				}
			}
			*fx.calls = nil
			return out
		}
		statuses()
		first, err := fx.f.PullRequest(ctx, pr.Number)
		if err != nil {
			t.Fatal(err)
		}
		again, err := fx.f.PullRequest(ctx, pr.Number)
		if err != nil || again != first {
			t.Fatalf("asked again: %+v %v, first %+v", again, err, first)
		}
		if got := statuses(); !slices.Equal(got, []int{200, 304}) {
			t.Fatalf("the answers to the same GET twice: %v", got)
		}
		if err := fx.f.ClosePullRequest(ctx, pr.Number); err != nil {
			t.Fatal(err)
		}
		statuses()
		closed, err := fx.f.PullRequest(ctx, pr.Number)
		if err != nil || closed.State != forge.PRClosed {
			t.Fatalf("after a change: %+v %v", closed, err)
		}
		if got := statuses(); len(got) == 0 || got[0] != 200 {
			t.Fatalf("a changed answer: %v", got)
		}
	})
}

func TestAMergeIsRefusedWhenTheHeadMovedOrItConflicts(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		ctx := context.Background()
		old := fx.push(t, "wilco/T-1", map[string]string{"README.md": "one\n"})
		pr, err := fx.f.OpenPullRequest(ctx, forge.NewPullRequest{Title: "one", Head: "wilco/T-1", Base: "main"})
		if err != nil {
			t.Fatal(err)
		}
		fx.push(t, "wilco/T-1", map[string]string{"README.md": "one more\n"})
		if _, err := fx.f.MergePullRequest(ctx, pr.Number, forge.Merge{HeadSHA: old}); !errors.Is(err, forge.ErrHeadMoved) {
			t.Fatalf("a merge of a moved head: %v", err)
		}
		// Another change to the same line lands first: a conflict.
		fx.push(t, "other", map[string]string{"README.md": "two\n"})
		other, err := fx.f.OpenPullRequest(ctx, forge.NewPullRequest{Title: "two", Head: "other", Base: "main"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fx.f.MergePullRequest(ctx, other.Number, forge.Merge{Method: "squash"}); err != nil {
			t.Fatal(err)
		}
		if _, err := fx.f.MergePullRequest(ctx, pr.Number, forge.Merge{}); !errors.Is(err, forge.ErrNotMergeable) {
			t.Fatalf("a conflicting merge: %v", err)
		}
		if err := fx.f.ClosePullRequest(ctx, pr.Number); err != nil {
			t.Fatal(err)
		}
		if got, _ := fx.f.PullRequest(ctx, pr.Number); got.State != forge.PRClosed {
			t.Fatalf("closed: %+v", got)
		}
		if _, err := fx.f.PullRequest(ctx, 999); !errors.Is(err, forge.ErrNotFound) {
			t.Fatalf("no such pull request: %v", err)
		}
	})
}

func TestAPullRequestOfABranchNotPushedIsRefused(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		_, err := fx.f.OpenPullRequest(context.Background(), forge.NewPullRequest{Title: "x", Head: "nowhere", Base: "main"})
		var ae *forge.APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusUnprocessableEntity {
			t.Fatalf("got %v", err)
		}
	})
}

func TestTheChecksOfACommitAreItsCheckRunsAndStatuses(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		sha := fx.push(t, "b", map[string]string{"a": "a"})
		want := map[string]string{}
		if kind == forge.GitHub {
			fx.s.SetCheckRun(sha, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})
			fx.s.SetCheckRun(sha, forgetest.CheckRun{Name: "test", Status: "in_progress"})
			fx.s.SetCheckRun(sha, forgetest.CheckRun{Name: "lint", Status: "completed", Conclusion: "timed_out"})
			fx.s.SetCheckRun(sha, forgetest.CheckRun{Name: "docs", Status: "completed", Conclusion: "skipped"})
			want = map[string]string{"build": forge.CheckSuccess, "test": forge.CheckPending, "lint": forge.CheckFailure, "docs": forge.CheckNeutral}
		}
		fx.s.SetStatus(sha, forgetest.Status{Context: "ci/deploy", State: "pending"})
		fx.s.SetStatus(sha, forgetest.Status{Context: "ci/deploy", State: "error", Description: "no space left"})
		fx.s.SetStatus(sha, forgetest.Status{Context: "ci/e2e", State: "success"})
		want["ci/deploy"], want["ci/e2e"] = forge.CheckFailure, forge.CheckSuccess
		checks, err := fx.f.Checks(context.Background(), sha)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, c := range checks {
			got[c.Name] = c.State
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("checks %v, want %v", got, want)
		}
	})
}

func TestAFailedChecksLogIsItsTail(t *testing.T) {
	t.Run("github actions job", func(t *testing.T) {
		fx := newFixture(t, forge.GitHub, forgetest.Options{})
		sha := fx.push(t, "b", map[string]string{"a": "a"})
		log := strings.Repeat("ok line\n", 2000) + "--- FAIL: TestX (0.01s)\n    x_test.go:9: want 1, got 2\n"
		id := fx.s.SetCheckRun(sha, forgetest.CheckRun{Name: "test", Status: "completed", Conclusion: "failure", Actions: true, Log: log})
		checks, err := fx.f.Checks(context.Background(), sha)
		if err != nil || len(checks) != 1 || checks[0].JobID != id {
			t.Fatalf("checks %+v %v", checks, err)
		}
		tail, err := fx.f.CheckLog(context.Background(), checks[0], 200)
		if err != nil {
			t.Fatal(err)
		}
		if len(tail) > 200 || !strings.HasSuffix(tail, "want 1, got 2\n") || !strings.Contains(tail, "--- FAIL: TestX") {
			t.Fatalf("tail %q", tail)
		}
		var redirected bool
		for _, r := range fx.s.Requests() {
			if r.Path == fmt.Sprintf("/api/v3/repos/acme/widget/actions/jobs/%d/logs", id) && r.Status == http.StatusFound {
				redirected = true
			}
		}
		if !redirected {
			t.Fatalf("the log was not asked of the job: %+v", fx.s.Requests())
		}
	})
	t.Run("github check run of another app", func(t *testing.T) {
		fx := newFixture(t, forge.GitHub, forgetest.Options{})
		sha := fx.push(t, "b", map[string]string{"a": "a"})
		fx.s.SetCheckRun(sha, forgetest.CheckRun{Name: "scan", Status: "completed", Conclusion: "failure", Summary: "2 problems", Text: "a.go:3: unused x"})
		checks, _ := fx.f.Checks(context.Background(), sha)
		tail, err := fx.f.CheckLog(context.Background(), checks[0], 0)
		if err != nil || !strings.Contains(tail, "2 problems") || !strings.Contains(tail, "a.go:3: unused x") {
			t.Fatalf("tail %q %v", tail, err)
		}
	})
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		sha := fx.push(t, "b", map[string]string{"a": "a"})
		fx.s.SetStatus(sha, forgetest.Status{Context: "ci", State: "failure", Description: "3 tests failed", TargetURL: "https://ci.example.invalid/7"})
		checks, _ := fx.f.Checks(context.Background(), sha)
		tail, err := fx.f.CheckLog(context.Background(), checks[0], 0)
		if err != nil || tail != "3 tests failed\n\nhttps://ci.example.invalid/7" {
			t.Fatalf("tail %q %v", tail, err)
		}
	})
}

func TestReviewsAndTheirLineComments(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		ctx := context.Background()
		sha := fx.push(t, "b", map[string]string{"a.go": "package a\n"})
		pr, err := fx.f.OpenPullRequest(ctx, forge.NewPullRequest{Title: "t", Head: "b", Base: "main"})
		if err != nil {
			t.Fatal(err)
		}
		r1 := fx.s.AddReview(pr.Number, "alice", forge.ReviewChangesRequested, "please rename")
		fx.s.AddReviewComment(pr.Number, r1, "alice", "a.go", 1, "call it b")
		fx.s.AddReview(pr.Number, "bob", forge.ReviewCommented, "looks fine")
		fx.s.AddReview(pr.Number, "alice", forge.ReviewApproved, "")
		rs, err := fx.f.Reviews(ctx, pr.Number)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rs {
			got = append(got, r.Author+":"+r.State)
			if r.CommitSHA != sha {
				t.Fatalf("review of %q, want %s", r.CommitSHA, sha)
			}
		}
		if want := "[alice:CHANGES_REQUESTED bob:COMMENTED alice:APPROVED]"; fmt.Sprint(got) != want {
			t.Fatalf("reviews %v, want %s", got, want)
		}
		cs, err := fx.f.ReviewComments(ctx, pr.Number)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 || cs[0].Path != "a.go" || cs[0].Line != 1 || cs[0].Body != "call it b" || cs[0].Author != "alice" || cs[0].ReviewID != r1 {
			t.Fatalf("comments %+v", cs)
		}
	})
}

func TestIssuesByLabelAreOpenIssuesOnly(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		ctx := context.Background()
		// More than a page of each forge, so the listing is followed
		// through its Link headers.
		var want []int
		for i := 0; i < 250; i++ {
			labels := []string{"bug"}
			if i%2 == 0 {
				labels = append(labels, "wilco")
			}
			n := fx.s.AddIssue("carol", fmt.Sprintf("issue %d", i), "body", labels...)
			if i%2 == 0 && i != 4 {
				want = append(want, n)
			}
			if i == 4 {
				fx.s.CloseIssue(n)
			}
		}
		fx.push(t, "b", map[string]string{"a": "a"})
		pr, err := fx.f.OpenPullRequest(ctx, forge.NewPullRequest{Title: "t", Head: "b", Base: "main"})
		if err != nil {
			t.Fatal(err)
		}
		fx.s.LabelPull(pr.Number, "wilco")
		is, err := fx.f.Issues(ctx, "wilco")
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, i := range is {
			got = append(got, i.Number)
			if i.Author != "carol" || !strings.HasPrefix(i.Title, "issue ") || i.URL == "" {
				t.Fatalf("issue %+v", i)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("issues %v\nwant %v", got, want)
		}
		pages := 0
		for _, r := range fx.s.Requests() {
			if strings.HasSuffix(r.Path, "/issues") {
				pages++
			}
		}
		if pages < 2 {
			t.Fatalf("the listing took %d pages", pages)
		}
	})
}

func TestAnIssueIsGotOpenOrClosedAndAPullRequestIsNone(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		ctx := context.Background()
		n := fx.s.AddIssue("carol", "Fix it", "the body", "wilco")
		i, err := fx.f.Issue(ctx, n)
		if err != nil || i.State != forge.IssueOpen || i.Title != "Fix it" || i.Body != "the body" || i.Author != "carol" {
			t.Fatalf("issue %+v, %v", i, err)
		}
		fx.s.CloseIssue(n)
		if i, err = fx.f.Issue(ctx, n); err != nil || i.State != forge.IssueClosed {
			t.Fatalf("closed issue %+v, %v", i, err)
		}
		fx.push(t, "b", map[string]string{"a": "a"})
		pr, err := fx.f.OpenPullRequest(ctx, forge.NewPullRequest{Title: "t", Head: "b", Base: "main"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fx.f.Issue(ctx, pr.Number); !errors.Is(err, forge.ErrNotFound) {
			t.Fatalf("a pull request as an issue: %v", err)
		}
		if _, err := fx.f.Issue(ctx, 999); !errors.Is(err, forge.ErrNotFound) {
			t.Fatalf("no such issue: %v", err)
		}
	})
}

func TestIssueCommentsSinceATimeAndAfterAnID(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		ctx := context.Background()
		n := fx.s.AddIssue("carol", "t", "b", "wilco")
		first := fx.s.AddComment(n, "carol", "/wilco retry")
		fx.s.AddComment(n, "mallory", "/wilco abort")
		mine, err := fx.f.CreateComment(ctx, n, "T-3 is worked")
		if err != nil || mine.Author != "wilco-bot" || mine.Body != "T-3 is worked" || mine.ID == 0 {
			t.Fatalf("created %+v %v", mine, err)
		}
		all, err := fx.f.IssueComments(ctx, n, time.Time{}, 0)
		if err != nil || len(all) != 3 {
			t.Fatalf("all: %+v %v", all, err)
		}
		after, err := fx.f.IssueComments(ctx, n, time.Time{}, first)
		if err != nil || len(after) != 2 || after[0].Author != "mallory" {
			t.Fatalf("after %d: %+v %v", first, after, err)
		}
		later, err := fx.f.IssueComments(ctx, n, time.Now().Add(time.Hour), 0)
		if err != nil || len(later) != 0 {
			t.Fatalf("since an hour ahead: %+v %v", later, err)
		}
		q := ""
		for _, r := range fx.s.Requests() {
			if strings.HasSuffix(r.Path, "/comments") && strings.Contains(r.Query, "since=") {
				q = r.Query
			}
		}
		if q == "" {
			t.Fatal("since was not asked of the forge")
		}
		if got := fx.s.Comments(n); len(got) != 3 || got[2].Body != "T-3 is worked" {
			t.Fatalf("the forge has %+v", got)
		}
	})
}

func TestACollaboratorIsToldFromAnyoneElse(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		fx.s.AddCollaborator("carol")
		for user, want := range map[string]bool{"carol": true, "mallory": false, "acme": true} {
			got, err := fx.f.IsCollaborator(context.Background(), user)
			if err != nil || got != want {
				t.Fatalf("%s: %v %v, want %v", user, got, err, want)
			}
		}
	})
}
