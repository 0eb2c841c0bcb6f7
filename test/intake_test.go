package test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"wilco/forge"
	"wilco/forge/forgetest"
	"wilco/test/blackbox"
)

// intakeServe serves a repository whose wilco.yaml has the agents, the
// check step, a forge section naming the scripted forge fs, intake of the
// label wilco polled every 10s (the least intake.poll allows: polling
// alone, no webhook), and extra.
func intakeServe(t *testing.T, fs *forgetest.Server, agents, extra string) *blackbox.Instance {
	t.Helper()
	return intakeServeKind(t, forge.GitHub, fs, agents, extra)
}

// intakeServeKind is intakeServe on a forge of kind.
func intakeServeKind(t *testing.T, kind forge.Kind, fs *forgetest.Server, agents, extra string) *blackbox.Instance {
	t.Helper()
	yaml := "agents:\n" + agents + blackbox.CheckStep +
		"forge: {kind: " + string(kind) + ", api: " + blackbox.Quoted(fs.API(kind)) + ", repo: acme/widget, token: \"${WILCO_TEST_FORGE_TOKEN}\"}\n" +
		"intake: {label: wilco, poll: 10s}\n" + extra
	dir := blackbox.NewRepo(t, yaml)
	return blackbox.ServeRepo(t, dir, "WILCO_TEST_FORGE_TOKEN="+fs.Token)
}

// waitComment waits for a comment of wilco's on the issue containing every
// one of want, and returns it.
func waitComment(t *testing.T, fs *forgetest.Server, issue int, timeout time.Duration, want ...string) string {
	t.Helper()
	return blackbox.WaitComment(t, fs, issue, timeout, want...)
}

// waitIssueTask waits for task id to be made (from an issue) and to be in
// one of states.
func waitIssueTask(t *testing.T, in *blackbox.Instance, id string, timeout time.Duration, states ...string) blackbox.Task {
	t.Helper()
	waitFor(t, "task "+id+" made from an issue", timeout, func() bool {
		return in.Call("GET", "/v1/tasks/"+id, blackbox.AdminToken, nil).Status == 200
	})
	return in.WaitTask(id, timeout, states...)
}

// waitIssuePolls waits for n more lists of the issues, seen by the forge:
// n-1 polls of the intake at least began and ended since the call.
func waitIssuePolls(t *testing.T, fs *forgetest.Server, n int) {
	t.Helper()
	polls := func() int {
		n := 0
		for _, r := range fs.Requests() {
			if r.Method == "GET" && strings.HasSuffix(r.Path, "/issues") {
				n++
			}
		}
		return n
	}
	seen := polls()
	if !blackbox.Eventually(time.Minute, 100*time.Millisecond, func() bool { return polls() >= seen+n }) {
		t.Fatalf("the issues were not polled %d more times: %d polls", n, polls()-seen)
	}
}

// An issue with the label becomes a task (its checklist the acceptance
// criteria), its thread hears the agent's understanding and the
// escalation with how to answer; a non-collaborator's /wilco fix is
// ignored and the log says so, a collaborator's continues the task with
// the instruction in the agent's next prompt, and the thread hears of its
// success. An issue without the label is no task.
func TestAnIssueWithTheLabelIsATaskAnsweredInItsThread(t *testing.T) {
	t.Parallel()
	const fix = "Write fixed and the task id into file.txt"
	fs := forgetest.New(t, forgetest.Options{})
	fs.AddCollaborator("alice")
	n := fs.AddIssue("alice", "Write the fix into file.txt", "file.txt is broken.\n\n- [ ] write the fix\n- [x] the fix goes into file.txt\n", "wilco")
	fs.AddIssue("alice", "Not for wilco", "", "bug")
	in := intakeServe(t, fs, execAgent(t, "fixer", "fix_when.sh", []string{"<user_intervention>", fix}), "policy:\n  loop: {escalate_after: 1}\n")

	got := waitIssueTask(t, in, "T-1", 30*time.Second, "escalated")
	if got.Issue != n || !strings.HasPrefix(got.Description, "Write the fix into file.txt\n\nfile.txt is broken.") ||
		strings.Join(got.AcceptanceCriteria, "|") != "write the fix|the fix goes into file.txt" {
		t.Fatalf("the issue's task:\n%s", got)
	}
	waitComment(t, fs, n, 30*time.Second, "acknowledged by fixer", "> Will do this: Write the fix into file.txt")
	esc := waitComment(t, fs, n, 30*time.Second, "T-1 needs you", "## Task Escalation Required", "`/wilco fix <instruction>`", "`/wilco retry`", "`/wilco skip`", "`/wilco abort`")
	if strings.Contains(esc, "**Your options:**") {
		t.Fatalf("the escalation's comment offers the page's answers:\n%s", esc)
	}

	fs.AddComment(n, "mallory", "/wilco fix "+fix)
	waitFor(t, "the log to say mallory's command was ignored", 30*time.Second, func() bool {
		s := in.Stderr.String()
		return strings.Contains(s, "not a collaborator is ignored") && strings.Contains(s, "mallory")
	})
	if tk := in.Task("T-1"); tk.State != "escalated" || tk.Attempt != 1 {
		t.Fatalf("a non-collaborator's command was taken:\n%s", tk)
	}

	fs.AddComment(n, "alice", "/wilco fix "+fix)
	got = in.WaitTask("T-1", 40*time.Second, "success")
	if got.Attempt != 2 {
		t.Fatalf("success at attempt %d", got.Attempt)
	}
	blackbox.MustContain(t, "the prompt after the fix", in.Prompt("T-1-a2"), "<user_intervention>", "User provided fix: "+fix)
	waitComment(t, fs, n, 30*time.Second, "T-1 succeeded")
	if r := in.Call("GET", "/v1/tasks", blackbox.AdminToken, nil); strings.Contains(string(r.Body), "Not for wilco") {
		t.Fatalf("an issue without the label became a task: %s", r.Body)
	}
	// The thread's commands are acted on once: the polls after it (two
	// more lists of the issues, seen by the forge) take none of them again.
	waitIssuePolls(t, fs, 2)
	if tk := in.Task("T-1"); tk.State != "success" || tk.Attempt != 2 {
		t.Fatalf("after another poll:\n%s", tk)
	}
	if strings.Count(in.Stderr.String(), "a command from the issue was taken") != 1 {
		t.Fatalf("the fix was taken %d times:\n%s", strings.Count(in.Stderr.String(), "a command from the issue was taken"), in.Stderr.String())
	}
}

// The agent's question is asked in the thread and a collaborator's plain
// reply answers it; closing an issue cancels its task.
func TestAQuestionIsAnsweredByAPlainReplyAndAClosedIssueCancelsItsTask(t *testing.T) {
	t.Parallel()
	const answer = "The line is: fixed, a space, the task id"
	fs := forgetest.New(t, forgetest.Options{})
	fs.AddCollaborator("alice")
	n := fs.AddIssue("alice", "Write the fix into file.txt", "", "wilco")
	in := intakeServe(t, fs, execAgent(t, "asker", "clarify.sh", nil), "")

	waitIssueTask(t, in, "T-1", 30*time.Second, "clarifying")
	waitComment(t, fs, n, 30*time.Second, "T-1: asker has questions", "> Which line goes into file.txt?", "Reply to this issue")
	fs.AddComment(n, "alice", answer)
	in.WaitTask("T-1", 40*time.Second, "success")
	blackbox.MustContain(t, "the prompt after the answer", in.Prompt("T-1-a1"), "task-clarification", answer)

	m := fs.AddIssue("alice", "Write another fix", "", "wilco")
	got := waitIssueTask(t, in, "T-2", 30*time.Second, "clarifying")
	if got.Issue != m {
		t.Fatalf("the second issue's task:\n%s", got)
	}
	fs.CloseIssue(m)
	in.WaitTask("T-2", 30*time.Second, "cancelled")
}

// A task made from an issue and cancelled while it waits in the queue
// ends cancelled (its thread hears it), and its issue, still open with the
// label, is not made into a task again at the next polls.
func TestACancelledQueuedTaskOfAnIssueIsNotMadeAgain(t *testing.T) {
	t.Parallel()
	fs := forgetest.New(t, forgetest.Options{})
	in := intakeServe(t, fs, execAgent(t, "asker", "clarify.sh", nil), "")
	// T-1, asking its question, holds the only agent.
	in.Submit(map[string]any{"description": "Write the fix into file.txt"})
	in.WaitTask("T-1", 30*time.Second, "clarifying")
	n := fs.AddIssue("alice", "Write another fix", "", "wilco")
	if got := waitIssueTask(t, in, "T-2", 30*time.Second, "queued"); got.Issue != n {
		t.Fatalf("the issue's task:\n%s", got)
	}
	if r := in.Call("POST", "/v1/tasks/T-2/cancel", blackbox.AdminToken, nil); r.Status != 200 {
		t.Fatalf("cancel T-2: %d %s", r.Status, r.Body)
	}
	if got := in.Task("T-2"); got.State != "cancelled" || got.Issue != n {
		t.Fatalf("T-2 after its cancel:\n%s", got)
	}
	waitComment(t, fs, n, 30*time.Second, "T-2", "cancelled")
	waitIssuePolls(t, fs, 2)
	if r := in.Call("GET", "/v1/tasks/T-3", blackbox.AdminToken, nil); r.Status != 404 {
		t.Fatalf("the issue of a cancelled task was made into another task: %d %s", r.Status, r.Body)
	}
}

// A rate-limited answer to the list of issues is waited out until its
// reset, then the poll goes on.
func TestARateLimitedIssueListIsTriedAgainAfterItsReset(t *testing.T) {
	t.Parallel()
	fs := forgetest.New(t, forgetest.Options{})
	fs.AddIssue("alice", "Write the fix into file.txt", "", "wilco")
	reset := time.Now().Add(3 * time.Second)
	fs.RateLimit(1, reset)
	in := intakeServe(t, fs, execAgent(t, "fixer", "fix_when.sh", nil), "")
	waitIssueTask(t, in, "T-1", 30*time.Second, "success")
	var statuses []int
	for _, r := range fs.Requests() {
		if r.Method == "GET" && strings.HasSuffix(r.Path, "/issues") {
			statuses = append(statuses, r.Status)
		}
	}
	if len(statuses) < 2 || statuses[0] != 403 || statuses[1] != 200 {
		t.Fatalf("the issue lists answered %v", statuses)
	}
	if !time.Now().After(reset) {
		t.Fatal("the task was made before the rate limit's reset")
	}
	// The forge's traffic is on record: the refused list, and the
	// comments wilco wrote; the lists that went well are not.
	var calls []string
	waitFor(t, "the forge's calls in the event log", 10*time.Second, func() bool {
		calls = nil
		for _, e := range in.EventsOf("forge.call") {
			var c struct {
				Method string
				Path   string
				Status int
			}
			json.Unmarshal(e.Data, &c)
			calls = append(calls, fmt.Sprintf("%s %s %d", c.Method, c.Path, c.Status))
		}
		return slices.Contains(calls, "GET /api/v3/repos/acme/widget/issues 403") &&
			slices.Contains(calls, "POST /api/v3/repos/acme/widget/issues/1/comments 201")
	})
	if slices.Contains(calls, "GET /api/v3/repos/acme/widget/issues 200") {
		t.Fatalf("a list that went well is on record: %q", calls)
	}
}

// A command written while wilco is down is taken once it is back, and a
// thread's comments read before a kill are not acted on again after it:
// which were read is recorded with what they did.
func TestACommandWrittenWhileWilcoIsDownIsTakenOnceAfterARestart(t *testing.T) {
	t.Parallel()
	const fix = "Write fixed and the task id into file.txt"
	fs := forgetest.New(t, forgetest.Options{})
	fs.AddCollaborator("alice")
	n := fs.AddIssue("alice", "Write the fix into file.txt", "", "wilco")
	agents := execAgent(t, "fixer", "fix_when.sh", []string{"<user_intervention>", fix})
	yaml := "agents:\n" + agents + blackbox.CheckStep +
		"forge: {kind: github, api: " + blackbox.Quoted(fs.API(forge.GitHub)) + ", repo: acme/widget, token: \"${WILCO_TEST_FORGE_TOKEN}\"}\n" +
		"intake: {label: wilco, poll: 10s}\npolicy:\n  loop: {escalate_after: 1}\n"
	dir := blackbox.NewRepo(t, yaml)
	env := "WILCO_TEST_FORGE_TOKEN=" + fs.Token
	in := blackbox.ServeRepo(t, dir, env)
	waitIssueTask(t, in, "T-1", 30*time.Second, "escalated")
	waitComment(t, fs, n, 30*time.Second, "T-1 needs you")
	// A plain remark is read (and is no answer: nothing asks) before the
	// kill.
	fs.AddComment(n, "alice", "Looking into it.")
	waitFor(t, "the remark read", 30*time.Second, func() bool {
		return strings.Contains(in.Stderr.String(), "a reply while the task asks nothing is read as conversation")
	})
	in.Kill()

	fs.AddComment(n, "alice", "/wilco fix "+fix)
	in = blackbox.ServeRepo(t, dir, env)
	got := in.WaitTask("T-1", 40*time.Second, "success")
	if got.Attempt != 2 {
		t.Fatalf("success at attempt %d", got.Attempt)
	}
	blackbox.MustContain(t, "the prompt after the fix", in.Prompt("T-1-a2"), "User provided fix: "+fix)
	waitComment(t, fs, n, 30*time.Second, "T-1 succeeded")
	log := in.Stderr.String()
	if strings.Count(log, "a command from the issue was taken") != 1 || strings.Contains(log, "read as conversation") {
		t.Fatalf("after the restart, the thread was read again from the start:\n%s", log)
	}
}

// A Gitea (or Forgejo) issue is a task the same way, and its thread hears
// of the task.
func TestAGiteaIssueIsATaskAnsweredInItsThread(t *testing.T) {
	t.Parallel()
	fs := forgetest.New(t, forgetest.Options{Kind: forge.Gitea})
	n := fs.AddIssue("alice", "Write the fix into file.txt", "- [ ] write the fix", "wilco")
	in := intakeServeKind(t, forge.Gitea, fs, execAgent(t, "fixer", "fix_when.sh", nil), "")
	got := waitIssueTask(t, in, "T-1", 30*time.Second, "success")
	if got.Issue != n || strings.Join(got.AcceptanceCriteria, "|") != "write the fix" {
		t.Fatalf("the issue's task:\n%s", got)
	}
	waitComment(t, fs, n, 30*time.Second, "acknowledged by fixer")
	waitComment(t, fs, n, 30*time.Second, "T-1 succeeded")
}
