package test

// Black-box tests of tasks landing as pull requests (land.how pr) on a
// scripted forge: the task's branch is pushed, its pull request opened,
// its checks and reviews followed (by polling, or at once on a webhook),
// and it is merged once green and approved.

import (
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wilco/forge"
	"wilco/forge/forgetest"
	"wilco/test/blackbox"
)

// prRepo is a repository on branch main whose origin is a scripted
// forge holding the same main, served with an exec agent running
// pr_agent.sh and landing as pull requests merged by wilco (land.merge
// auto), the forge looked at every poll. It returns the forge, the
// directory of the prompts kept and the instance.
func prRepo(t testing.TB, poll string, hook bool) (*forgetest.Server, string, *blackbox.Instance) {
	t.Helper()
	return prRepoLanding(t, poll, hook, "")
}

// prRepoLanding is prRepo with more keys of the land section (land, as
// ", key: value").
func prRepoLanding(t testing.TB, poll string, hook bool, land string) (*forgetest.Server, string, *blackbox.Instance) {
	t.Helper()
	srv := forgetest.New(t, forgetest.Options{})
	prompts := t.TempDir()
	yaml := "agents:\n" + execAgent(t, "builder", "pr_agent.sh", nil, "PR_PROMPTS="+prompts) +
		blackbox.CheckStep + "parallel: 2\n" +
		"land: {to: main, how: pr, merge: auto, poll: " + poll + land + "}\n" +
		"forge: {kind: github, api: " + blackbox.Quoted(srv.API(forge.GitHub)) + ", repo: acme/widget, token: \"${GITHUB_TOKEN}\", webhook_secret: \"${WILCO_WEBHOOK_SECRET}\"}\n"
	dir := blackbox.NewRepo(t, yaml)
	for _, args := range [][]string{{"branch", "-M", "main"}, {"remote", "add", "origin", srv.GitURL()}, {"push", "--quiet", "--force", srv.AuthGitURL(), "main:main"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	const secret = "a-webhook-secret"
	in := blackbox.ServeRepo(t, dir, "GITHUB_TOKEN="+srv.Token, "WILCO_WEBHOOK_SECRET="+secret)
	if hook {
		srv.SetWebhook(in.Url+"/v1/forge/webhook", secret)
	}
	return srv, prompts, in
}

// prOf waits for the task's pull request to be opened and returns it.
func prOf(t *testing.T, srv *forgetest.Server, n int) forge.PullRequest {
	t.Helper()
	var pr forge.PullRequest
	waitFor(t, fmt.Sprintf("pull request #%d", n), 60*time.Second, func() bool {
		var ok bool
		pr, ok = srv.Pull(n)
		return ok
	})
	return pr
}

// prompt waits for the agent's n-th prompt and returns it.
func promptN(t *testing.T, dir string, n int) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("prompt-%d.txt", n))
	waitFor(t, fmt.Sprintf("the agent's prompt %d", n), 60*time.Second, func() bool { return blackbox.Exists(path) })
	return blackbox.ReadFile(t, path)
}

// headMoves waits for the pull request's head to be other than old.
func headMoves(t *testing.T, srv *forgetest.Server, n int, old string) string {
	t.Helper()
	var head string
	waitFor(t, "a new head pushed", 60*time.Second, func() bool {
		pr, _ := srv.Pull(n)
		head = pr.HeadSHA
		return head != "" && head != old
	})
	return head
}

// A verified task is pushed and its pull request opened with its run and
// its Wilco-Task trailer; a failed check's log reaches the agent's next
// prompt, whose change is pushed to the same pull request; green checks
// and an approval have wilco merge it, the task ends in success with the
// merge's commit, and the local target follows. Polling alone is enough.
func TestAPullRequestIsOpenedFixedAfterAFailedCheckAndMergedWhenGreenAndApproved(t *testing.T) {
	t.Parallel()
	srv, prompts, in := prRepo(t, "1s", false)
	task := in.Submit(map[string]any{"description": "fix file.txt", "agent": "builder"})
	pr := prOf(t, srv, 1)
	if pr.Base != "main" || pr.Head != "wilco/"+task.ID || !strings.Contains(pr.Body, "Wilco-Task: "+task.ID) || !strings.Contains(pr.Body, "run `"+task.ID+"-a1`") {
		t.Fatalf("pull request %+v of task %s", pr, task.ID)
	}
	first := pr.HeadSHA
	srv.SetCheckRun(first, forgetest.CheckRun{Name: "ci", Status: "completed", Conclusion: "failure", Actions: true,
		Log: "compiling\nFAIL: TestWidget (0.01s)\n    widget_test.go:12: the widget is upside down\n"})
	p2 := promptN(t, prompts, 2)
	if !strings.Contains(p2, "the widget is upside down") {
		t.Fatalf("the second prompt does not hold the failed check's log:\n%s", p2)
	}
	second := headMoves(t, srv, 1, first)
	srv.SetCheckRun(second, forgetest.CheckRun{Name: "ci", Status: "completed", Conclusion: "success"})
	srv.AddReview(1, "reviewer", forge.ReviewApproved, "looks right")
	done := in.WaitTask(task.ID, 60*time.Second, "success")
	merged, _ := srv.Pull(1)
	if merged.State != forge.PRMerged || merged.MergeSHA == "" || done.LandedCommit != merged.MergeSHA {
		t.Fatalf("pull request %+v, task %s", merged, done)
	}
	waitFor(t, "the local main to follow the merge", 30*time.Second, func() bool {
		return strings.TrimSpace(blackbox.GitRun(t, in.Dir, "rev-parse", "main")) == merged.MergeSHA
	})
}

// A review's comment on a line reaches the agent's next prompt with its
// file and line.
func TestAReviewCommentOnALineIsQuotedWithItsFileAndLine(t *testing.T) {
	t.Parallel()
	srv, prompts, in := prRepo(t, "1s", false)
	in.Submit(map[string]any{"description": "fix file.txt", "agent": "builder"})
	prOf(t, srv, 1)
	srv.AddReview(1, "reviewer", forge.ReviewChangesRequested, "one thing", forgetest.LineComment{Path: "file.txt", Line: 1, Body: "say it in capitals"})
	p2 := promptN(t, prompts, 2)
	if !strings.Contains(p2, "file.txt:1") || !strings.Contains(p2, "say it in capitals") {
		t.Fatalf("the second prompt does not quote the line comment with file.txt:1:\n%s", p2)
	}
}

// A pull request closed unmerged cancels its task, saying who closed it.
func TestAPullRequestClosedUnmergedCancelsItsTask(t *testing.T) {
	t.Parallel()
	srv, _, in := prRepo(t, "1s", false)
	task := in.Submit(map[string]any{"description": "fix file.txt", "agent": "builder"})
	prOf(t, srv, 1)
	srv.ClosePull(1, "carol")
	got := in.WaitTask(task.ID, 60*time.Second, "cancelled")
	if !strings.Contains(got.Milestone+got.String(), "closed unmerged by carol") {
		t.Fatalf("the cancelled task does not say who closed its pull request: %s", got)
	}
}

// A webhook that is not signed with the secret is refused and changes
// nothing; a signed one is taken.
func TestAForgedForgeWebhookIsRefused(t *testing.T) {
	t.Parallel()
	_, _, in := prRepo(t, "1h", false)
	body := []byte(`{"action":"completed","check_run":{"id":1,"head_sha":"abc","name":"ci","status":"completed","conclusion":"success"}}`)
	for _, sig := range []string{"", forge.Sign(forge.GitHub, "not-the-secret", body)} {
		req, _ := http.NewRequest("POST", in.Url+"/v1/forge/webhook", strings.NewReader(string(body)))
		req.Header.Set("X-GitHub-Event", "check_run")
		if sig != "" {
			req.Header.Set("X-Hub-Signature-256", sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a webhook signed %q answered %d, want 401", sig, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("POST", in.Url+"/v1/forge/webhook", strings.NewReader(string(body)))
	req.Header.Set("X-GitHub-Event", "check_run")
	req.Header.Set("X-Hub-Signature-256", forge.Sign(forge.GitHub, "a-webhook-secret", body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("a signed webhook answered %d, want 204", resp.StatusCode)
	}
}

// With a webhook, a failed check starts the next turn although the poll
// is an hour away.
func TestAWebhookHasTheFailedCheckSeenWithoutWaitingForThePoll(t *testing.T) {
	t.Parallel()
	srv, prompts, in := prRepo(t, "1h", true)
	task := in.Submit(map[string]any{"description": "fix file.txt", "agent": "builder"})
	pr := prOf(t, srv, 1)
	// The round that follows the pull request's opening has looked at it
	// (with no check yet): from now on only the webhook can have the
	// failed check seen before the hour's poll.
	waitFor(t, "the round after the opening", 60*time.Second, func() bool {
		if p := in.Task(task.ID).Phase; p == nil || *p != "pull_request" {
			return false
		}
		for _, r := range srv.Requests() {
			if r.Method == "GET" && strings.HasSuffix(r.Path, "/commits/"+pr.HeadSHA+"/check-runs") {
				return true
			}
		}
		return false
	})
	srv.SetCheckRun(pr.HeadSHA, forgetest.CheckRun{Name: "ci", Status: "completed", Conclusion: "failure", Summary: "lint failed", Text: "main.go:3: unused import"})
	p2 := promptN(t, prompts, 2)
	if !strings.Contains(p2, "unused import") {
		t.Fatalf("the second prompt does not hold the failed check's output:\n%s", p2)
	}
}

// The page follows a task's pull request live, in a real browser: its
// number linking to the forge, its checks as they end, the milestone
// waiting for CI, and the task's success once wilco merged it.
func TestThePageShowsATasksPullRequestAndItsChecksLive(t *testing.T) {
	t.Parallel()
	srv, _, in := prRepo(t, "1s", false)
	b := openBrowser(t)
	b.navigate(in.LoginLink())
	b.waitFor("the task list", `document.querySelector('#task-rows') !== null`, 30*time.Second)
	task := in.Submit(map[string]any{"description": "fix file.txt", "agent": "builder"})
	pr := prOf(t, srv, 1)
	b.goTo("#/tasks/" + task.ID)
	dd := func(key string) string {
		return `((document.querySelector('#overview dd[data-key="` + key + `"]') || {}).textContent || '')`
	}
	b.waitFor("the pull request on the task's page", dd("pull request")+` === '#1'`, 30*time.Second)
	if href := b.str(`document.querySelector('#overview dd[data-key="pull request"] a').href`); href != pr.URL {
		t.Fatalf("the pull request links to %q, not %q", href, pr.URL)
	}
	srv.SetCheckRun(pr.HeadSHA, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})
	srv.SetCheckRun(pr.HeadSHA, forgetest.CheckRun{Name: "test", Status: "in_progress"})
	b.waitFor("one of two checks ended", dd("checks")+` === '1 of 2 ended'`, 30*time.Second)
	b.waitFor("the milestone waiting for CI", `document.getElementById('overview').textContent.includes('Waiting for CI: 1 of 2 checks')`, 30*time.Second)
	srv.SetCheckRun(pr.HeadSHA, forgetest.CheckRun{Name: "test", Status: "completed", Conclusion: "success"})
	b.waitFor("both checks ended", dd("checks")+`.startsWith('2 of 2 ended')`, 30*time.Second)
	srv.AddReview(1, "reviewer", forge.ReviewApproved, "looks right")
	b.waitFor("the task's success on its page", dd("state")+` === 'success'`, 60*time.Second)
	b.noExceptions()
}

// land.merge_method is how wilco merges: squash makes one commit of the
// pull request on the target, with one parent.
func TestAPullRequestIsMergedWithTheConfiguredMethod(t *testing.T) {
	t.Parallel()
	srv, _, in := prRepoLanding(t, "1s", false, ", merge_method: squash")
	task := in.Submit(map[string]any{"description": "fix file.txt", "agent": "builder"})
	pr := prOf(t, srv, 1)
	before := srv.Head("main")
	srv.SetCheckRun(pr.HeadSHA, forgetest.CheckRun{Name: "ci", Status: "completed", Conclusion: "success"})
	srv.AddReview(1, "reviewer", forge.ReviewApproved, "looks right")
	done := in.WaitTask(task.ID, 60*time.Second, "success")
	merged, _ := srv.Pull(1)
	if merged.State != forge.PRMerged || done.LandedCommit != merged.MergeSHA || srv.Head("main") != merged.MergeSHA {
		t.Fatalf("pull request %+v, task %s, main at %s", merged, done, srv.Head("main"))
	}
	parents := strings.Fields(strings.TrimSpace(blackbox.GitRun(t, srv.Bare, "rev-list", "--parents", "-n1", merged.MergeSHA)))
	if len(parents) != 2 || parents[1] != before {
		t.Fatalf("the squashed commit's parents are %v, not only main's head before it %s", parents[1:], before)
	}
}
