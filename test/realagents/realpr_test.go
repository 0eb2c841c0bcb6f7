package realagents

// The real Claude Code through the whole forge loop: an issue with the
// label becomes a task, Claude Code's change is verified and pushed as a
// pull request, the forge's CI fails with a log, the next attempt — a
// fresh Claude Code turn — reads that log and fixes it, the pull request
// goes green, is approved and merged by wilco, and the issue's thread
// hears each step.

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	execadapter "wilco/adapter/exec"
	"wilco/forge"
	"wilco/forge/forgetest"
	"wilco/modelserver"
	"wilco/test/blackbox"
)

// ciFailure is the distinctive line of the failed check's log.
const ciFailure = "widget_test.go:12: the widget is upside down"

// firstReply is what the scripted model says as it writes the first
// fix: a fresh conversation after the failed check has not heard it.
const firstReply = "Writing the fix."

func TestClaudeCodeTakesAnIssueThroughAFailedCheckToAMergedPullRequest(t *testing.T) {
	t.Parallel()
	claude := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	fs := forgetest.New(t, forgetest.Options{})
	fs.AddCollaborator("alice")

	model := modelserver.NewAnthropic(t, func(turn modelserver.Turn) modelserver.Reply {
		if !strings.Contains(turn.Prompt, "## Task: T-1") {
			return modelserver.Reply{Text: "I do not know this task."}
		}
		ack := "[ACK] T-1 - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n"
		var wd string
		if w := workingDir.FindStringSubmatch(turn.System); w != nil {
			wd = w[1]
		}
		// The retry after the failed check: the check's log is in the
		// prompt, and the fix it asks for goes into widget.txt.
		ciRetry := strings.Contains(turn.Prompt, ciFailure)
		switch {
		case turn.Step == 0 && wd == "":
			return modelserver.Reply{Text: "I was not told where I work."}
		case turn.Step == 0 && !ciRetry:
			return modelserver.Reply{Text: ack + firstReply, Tool: blackbox.WriteTool(filepath.Join(wd, "file.txt"), "fixed T-1\n")}
		case turn.Step == 0:
			return modelserver.Reply{Text: ack + "CI says the widget is upside down; turning it.", Tool: blackbox.WriteTool(filepath.Join(wd, "widget.txt"), "right side up\n")}
		case ciRetry:
			return modelserver.Reply{Text: "Done: widget.txt says the widget is right side up."}
		}
		return modelserver.Reply{Text: "Done: wrote file.txt."}
	})

	yaml := "agents:\n" + fmt.Sprintf("  - {name: claude, adapter: exec, preset: claude-code, command: [%s], timeout: 2m, "+
		"env: {ANTHROPIC_BASE_URL: %s, ANTHROPIC_API_KEY: scripted-key, HOME: %s, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: \"1\", DISABLE_AUTOUPDATER: \"1\"}}\n",
		blackbox.Quoted(claude), blackbox.Quoted(model.URL()), blackbox.Quoted(t.TempDir())) +
		blackbox.CheckStep + "parallel: 2\n" +
		"land: {to: main, how: pr, merge: auto, poll: 1s}\n" +
		"forge: {kind: github, api: " + blackbox.Quoted(fs.API(forge.GitHub)) + ", repo: acme/widget, token: \"${GITHUB_TOKEN}\"}\n" +
		"intake: {label: wilco, poll: 10s}\n"
	dir := blackbox.NewRepo(t, yaml)
	for _, args := range [][]string{{"branch", "-M", "main"}, {"remote", "add", "origin", fs.GitURL()}, {"push", "--quiet", "--force", fs.AuthGitURL(), "main:main"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	issue := fs.AddIssue("alice", "Write the fix into file.txt", "file.txt is broken.\n\n- [ ] file.txt says fixed and the task id\n", "wilco")
	in := blackbox.ServeRepo(t, dir, "GITHUB_TOKEN="+fs.Token)
	t.Cleanup(func() {
		if t.Failed() {
			var asked []string
			for _, r := range model.AgentRequests() {
				asked = append(asked, fmt.Sprintf("step %d: %s", r.Turn.Step, blackbox.Tail(r.Turn.Prompt, 8)))
			}
			t.Logf("the model was asked:\n%s\nwilco said:\n%s", strings.Join(asked, "\n-----\n"), blackbox.Tail(in.Stderr.String(), 40))
		}
	})

	// The issue is a task, and its thread hears Claude Code's
	// understanding.
	comment := func(want ...string) string {
		t.Helper()
		return blackbox.WaitComment(t, fs, issue, 3*time.Minute, want...)
	}
	comment("acknowledged by claude", "> Will write the fix into file.txt")

	// Its verified change is a pull request carrying the proof.
	var pr forge.PullRequest
	if !blackbox.Eventually(3*time.Minute, 50*time.Millisecond, func() bool {
		for n := 1; n <= 3; n++ {
			if p, ok := fs.Pull(n); ok {
				pr = p
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no pull request; the task:\n%s", in.Task("T-1"))
	}
	blackbox.MustContain(t, "the pull request's body", pr.Body, fmt.Sprintf("Fixes #%d", issue), "`T-1-a1`", "Wilco-Task: T-1", "file.txt says fixed and the task id")
	if pr.Head != "wilco/T-1" || pr.Base != "main" {
		t.Fatalf("the pull request: %+v", pr)
	}
	comment(fmt.Sprintf("#%d", pr.Number))
	first := pr.HeadSHA
	blackbox.MustContain(t, "the first commit", blackbox.GitRun(t, fs.Bare, "log", "-1", "--format=%B", first), "Wilco-Task: T-1", "Wilco-Run: T-1-a1", "Wilco-Agent: claude")
	// Claude Code worked in the task's worktree, not in the checkout: its
	// Write is in the commit pushed, and the checkout is as it was.
	task := in.Task("T-1")
	worktree := filepath.Join(dir, filepath.FromSlash(task.Worktree))
	if task.Worktree == "" || task.Branch != "wilco/T-1" {
		t.Fatalf("the task has no worktree of its own:\n%s", task)
	}
	inWorktree := func() {
		t.Helper()
		for _, r := range model.AgentRequests() {
			if w := workingDir.FindStringSubmatch(r.Turn.System); w == nil || !sameDir(w[1], worktree) {
				t.Fatalf("a turn of Claude Code worked elsewhere than the task's worktree %s: %q", worktree, w)
			}
		}
	}
	inWorktree()
	if got := blackbox.GitRun(t, fs.Bare, "show", first+":file.txt"); got != "fixed T-1\n" {
		t.Fatalf("the pushed commit's file.txt: %q", got)
	}
	if got := blackbox.ReadFile(t, filepath.Join(dir, "file.txt")); got != "broken\n" {
		t.Fatalf("the checkout's file.txt changed before the merge: %q", got)
	}
	// The branch went over smart HTTP with the token, which the checkout
	// does not keep.
	pushed := 0
	for _, r := range fs.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/git-receive-pack") && r.Auth != "" && r.Status == 200 {
			pushed++
		}
	}
	if pushed == 0 {
		t.Fatal("the forge saw no authenticated push")
	}
	if cfg := blackbox.ReadFile(t, filepath.Join(dir, ".git", "config")); strings.Contains(cfg, fs.Token) {
		t.Fatalf("the checkout's git config keeps the token:\n%s", cfg)
	}

	// CI fails with a log; the next attempt is a fresh Claude Code turn
	// whose prompt holds the log's tail, and its fix is pushed to the same
	// pull request.
	fs.SetCheckRun(first, forgetest.CheckRun{Name: "test", Status: "completed", Conclusion: "failure", Actions: true,
		Log: strings.Repeat("ok  \twidget/lib\t0.01s\n", 40) + "--- FAIL: TestWidget (0.01s)\n    " + ciFailure + "\nFAIL\n"})
	var second string
	if !blackbox.Eventually(3*time.Minute, 50*time.Millisecond, func() bool {
		p, _ := fs.Pull(pr.Number)
		second = p.HeadSHA
		return second != first
	}) {
		t.Fatalf("no fix pushed after the failed check; the task:\n%s", in.Task("T-1"))
	}
	retried := false
	for _, r := range model.AgentRequests() {
		if strings.Contains(r.Turn.Prompt, ciFailure) && strings.Contains(r.Turn.Prompt, "ci_failed") && r.Turn.Step == 0 {
			retried = true
			// A fresh conversation: the first attempt's is not in it.
			if msgs, _ := json.Marshal(r.Body["messages"]); strings.Contains(string(msgs), firstReply) {
				t.Fatalf("the turn after the failed check carries the first attempt's conversation:\n%s", blackbox.Tail(string(msgs), 20))
			}
		}
	}
	if !retried {
		t.Fatal("no turn of Claude Code was asked with the failed check's log and its failure type")
	}
	inWorktree()
	if got := blackbox.GitRun(t, fs.Bare, "show", second+":widget.txt"); strings.TrimSpace(got) != "right side up" {
		t.Fatalf("the pushed fix's widget.txt: %q", got)
	}
	blackbox.MustContain(t, "the fix's commit", blackbox.GitRun(t, fs.Bare, "log", "-1", "--format=%B", second), "Wilco-Task: T-1", "Wilco-Run: T-1-a2")
	if p, _ := fs.Pull(pr.Number); p.State != forge.PROpen {
		t.Fatalf("the fix went elsewhere than the same open pull request: %+v", p)
	}
	if p, ok := fs.Pull(pr.Number + 1); ok {
		t.Fatalf("a second pull request was opened: %+v", p)
	}
	// Its body becomes the proof of now (once the push is done): the
	// second run, and the first attempt's failed check.
	var body string
	if !blackbox.Eventually(30*time.Second, 20*time.Millisecond, func() bool {
		p, _ := fs.Pull(pr.Number)
		body = p.Body
		return strings.Contains(body, "`T-1-a2`") && strings.Contains(body, "ci_failed") && strings.Contains(body, "Wilco-Run: T-1-a2")
	}) {
		t.Fatalf("the pull request's body after the fix was pushed:\n%s", body)
	}

	// Green and approved: wilco merges it, the task lands, the local main
	// follows and the thread hears it.
	fs.SetCheckRun(second, forgetest.CheckRun{Name: "test", Status: "completed", Conclusion: "success"})
	fs.AddReview(pr.Number, "alice", forge.ReviewApproved, "right side up, thanks")
	done := in.WaitTask("T-1", 3*time.Minute, "success", "escalated", "stuck", "cancelled")
	merged, _ := fs.Pull(pr.Number)
	if done.State != "success" || done.Attempt != 2 || merged.State != forge.PRMerged || done.LandedCommit != merged.MergeSHA || done.Issue != issue {
		t.Fatalf("the task ended:\n%s\nthe pull request: %+v", done, merged)
	}
	// The thread hears where it landed and what the merged change holds:
	// both attempts' files.
	comment("T-1 succeeded", "Landed as "+merged.MergeSHA[:7]+" on main", "- file.txt\n", "- widget.txt\n")
	if done.Summary == nil || strings.Join(done.Summary.Files, " ") != "file.txt widget.txt" {
		t.Fatalf("the task's summary does not name the files its pull request changed:\n%s", done)
	}
	if !blackbox.Eventually(30*time.Second, 50*time.Millisecond, func() bool {
		return strings.TrimSpace(blackbox.GitRun(t, dir, "rev-parse", "main")) == merged.MergeSHA
	}) {
		t.Fatal("the local main did not follow the merge")
	}
	if got := blackbox.ReadFile(t, filepath.Join(dir, "widget.txt")); got != "right side up\n" {
		t.Fatalf("the checkout's widget.txt after the merge: %q", got)
	}
}

// sameDir reports whether a and b name one directory.
func sameDir(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}
