package core

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRestartKeepsARemoteAgentsAttemptRunning(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("remote", "mailbox", "go")
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	b.c.RecoverTasks(b.now)
	b.collect()
	got := b.task(tk.ID)
	if got.State != Running || got.Phase != Executing || got.Attempt != 1 || len(got.Failures) != 0 {
		t.Fatalf("after the restart: %+v", got)
	}
	reply(b, "remote", got.Delivery, "Status: complete\nDid it.")
	if got := b.task(tk.ID); got.Phase != Verifying || got.Attempt != 1 {
		t.Fatalf("the late report was not taken: %s/%s", got.State, got.Phase)
	}
}

func TestEachFailureTypeHasItsOwnMilestone(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 2)
	if m := b.task(tk.ID).Milestone; strings.Contains(m, "Verification failed") {
		t.Fatalf("after an execution error the milestone says %q", m)
	}
	var texts []string
	for _, e := range b.eventsOf("task.milestone") {
		j, _ := json.Marshal(e.Data)
		texts = append(texts, string(j))
	}
	for _, e := range b.eventsOf("task.state") {
		j, _ := json.Marshal(e.Data)
		texts = append(texts, string(j))
	}
	if j := strings.Join(texts, "\n"); strings.Contains(j, "Verification failed") || !strings.Contains(j, MilestoneExecFailed) {
		t.Fatalf("milestones:\n%s", j)
	}
}

func TestEnvironmentFailureEscalatesAtOnceWithWhatToDo(t *testing.T) {
	t.Parallel()
	for _, r := range []TurnResult{
		{ExitCode: 127, Error: `could not start the agent: exec: "claude": executable file not found in $PATH (PATH searched: /usr/bin:/bin)`},
		{ExitCode: 1, Error: "the agent exited with status 1", Output: "Invalid API key · Please run /login"},
	} {
		b := taskBundle(t)
		tk := submit(b, TaskSpec{Description: "x"})
		r.TaskID, r.Attempt = tk.ID, 1
		_, err := b.c.EndTurn(b.now, r)
		b.ok(err)
		got := b.task(tk.ID)
		if got.State != Escalated || got.Attempt != 1 || len(got.Failures) != 1 || got.Failures[0].FailureType != Environment {
			t.Fatalf("%s attempt %d failures %+v", got.State, got.Attempt, got.Failures)
		}
		if e := got.Escalation; e == nil || !strings.HasPrefix(e.Reason, "environment: ") || !strings.Contains(e.Reason, "To fix:") {
			t.Fatalf("escalation %+v", got.Escalation)
		}
	}
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	_, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, ExitCode: 127, Error: `could not start the agent: exec: "claude": executable file not found in $PATH (PATH searched: /usr/bin:/bin)`})
	b.ok(err)
	if r := b.task(tk.ID).Escalation.Reason; !strings.Contains(r, `"claude"`) || !strings.Contains(r, "PATH searched: /usr/bin:/bin") {
		t.Fatalf("reason %q", r)
	}
}

func TestExecTurnEndingWithoutAckFailsTheAttemptNow(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	first := b.task(tk.ID).Delivery
	_, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, ExitCode: 0, Output: "hello, I did nothing"})
	b.ok(err)
	got := b.task(tk.ID)
	if len(got.Failures) != 1 || got.Failures[0].FailureType != ExecutionError || got.Attempt != 2 ||
		!strings.Contains(got.Failures[0].ExecutorOutput.Error, "without an ACK") || !strings.Contains(got.Failures[0].Details, "did nothing") {
		t.Fatalf("%s attempt %d failures %+v", got.State, got.Attempt, got.Failures)
	}
	if d := b.delivery(first); d.State != Cancelled {
		t.Fatalf("the first delegation is %s", d.State)
	}
}

func TestExecAgentBlockedBeforeItsAckIsBlockedWithItsReason(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	_, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, ExitCode: 0, Status: "blocked", Reason: "the database is down"})
	b.ok(err)
	got := b.task(tk.ID)
	if got.State != Blocked || len(got.Failures) != 0 {
		t.Fatalf("%s failures %+v", got.State, got.Failures)
	}
	if !strings.Contains(got.BlockedBy, "the database is down") {
		t.Fatalf("blocked by %q", got.BlockedBy)
	}
}

func TestTaskWaitingForAnAgentNeverSeenSaysSoAndIsBounded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("remote", "mailbox", "go")
	tk := submit(b, TaskSpec{Description: "x"})
	if m := b.task(tk.ID).Milestone; m != "Waiting for agent remote"+neverSeen {
		t.Fatalf("milestone %q", m)
	}
	b.advance(time.Hour)
	got := b.task(tk.ID)
	if got.State != Escalated || got.Escalation == nil || !strings.Contains(got.Escalation.Reason, "never seen") {
		t.Fatalf("%s %+v", got.State, got.Escalation)
	}
}

func TestFirstPollOfAnAgentTellsTheTaskWaitingForIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("remote", "mailbox", "go")
	tk := submit(b, TaskSpec{Description: "x"})
	_, err := b.c.Cycle(b.now, "remote")
	b.ok(err)
	if m := b.task(tk.ID).Milestone; strings.Contains(m, "never seen") || !strings.Contains(m, MilestoneWaitingAck) {
		t.Fatalf("milestone %q", m)
	}
	_, err = b.c.Cycle(b.now, "remote")
	b.ok(err)
	if n := len(b.eventsOf(TypeAgentSeen)); n != 1 {
		t.Fatalf("%d agent.seen events", n)
	}
	// A later task to the same agent waits without the note.
	b.agent("remote2", "mailbox", "go")
	_, _, err = b.c.CancelTask(b.now, tk.ID)
	b.ok(err)
	tk2 := submit(b, TaskSpec{Description: "y", Agent: "remote"})
	if m := b.task(tk2.ID).Milestone; m != MilestoneWaitingAck {
		t.Fatalf("milestone %q", m)
	}
}

func TestRemoteAgentsFailureReportIsReadForEnvironmentFailures(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("remote", "mailbox", "go")
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	reply(b, "remote", b.task(tk.ID).Delivery, `{"type": "task-complete", "task_id": "`+tk.ID+`", "status": "failure", "error": "OPENAI_API_KEY is not set"}`)
	got := b.task(tk.ID)
	if got.State != Escalated || len(got.Failures) != 1 || got.Failures[0].FailureType != Environment {
		t.Fatalf("%s failures %+v", got.State, got.Failures)
	}
}

func TestPermissionRefusedInATurnThatExitedWellEscalatesWhenTheCheckFails(t *testing.T) {
	t.Parallel()
	refused := "Claude requested permissions to write to file.txt, but you haven't granted it yet."
	// The check fails: the refusal is why, and no retry can do better.
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	_, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, Output: "I could not write the file.\n" + refused})
	b.ok(err)
	verify(b, tk.ID, false)
	got := b.task(tk.ID)
	if got.State != Escalated || got.Attempt != 1 || len(got.Failures) != 1 || got.Failures[0].FailureType != Environment {
		t.Fatalf("%s attempt %d failures %+v", got.State, got.Attempt, got.Failures)
	}
	if r := got.Escalation.Reason; !strings.Contains(r, refused) || !strings.Contains(r, "To fix: grant the permission") {
		t.Fatalf("reason %q", r)
	}
	// The check passes: the agent found another way; the task succeeds.
	b = taskBundle(t)
	tk = submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	_, err = b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, Output: refused + "\nWrote it with the editor instead."})
	b.ok(err)
	verify(b, tk.ID, true)
	if got := b.task(tk.ID); got.State != Success {
		t.Fatalf("%s, want success", got.State)
	}
	// A turn with no such line retries as ever.
	b = taskBundle(t)
	tk = submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	verify(b, tk.ID, false)
	if got := b.task(tk.ID); got.State == Escalated || got.Attempt != 2 {
		t.Fatalf("%s attempt %d, want a retry", got.State, got.Attempt)
	}
}

func TestRemovedAgentGetsNoWorkAndItsTaskGoesToAnother(t *testing.T) {
	t.Parallel()
	b := taskBundle(t) // claude
	b.agent("zed", "exec", "go")
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	if got := b.task(tk.ID); got.Agent != "claude" {
		t.Fatalf("the task went to %s", got.Agent)
	}
	b.ok(b.c.RemoveAgent(b.now, "claude", "removed by the user"))
	got := b.task(tk.ID)
	if got.Agent != "zed" || got.Attempt != 2 || len(got.Failures) != 1 || got.Failures[0].FailureType != ExecutionError ||
		!strings.Contains(got.Failures[0].ExecutorOutput.Error, "agent claude was removed") {
		t.Fatalf("after the removal: agent %s attempt %d failures %+v", got.Agent, got.Attempt, got.Failures)
	}
	if n, _ := b.c.NextTaskAgent(); n == "claude" {
		t.Fatal("the removed agent is still picked")
	}
	if _, err := b.c.SubmitTask(b.now, TaskSpec{Description: "y", Agent: "claude"}); err == nil {
		t.Fatal("a task was given to the removed agent")
	}
	// Only agents from wilco.yaml leave with it; registering brings one back.
	b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: "cfg", Adapter: "mailbox", FromConfig: true}))
	if gone := b.c.RemoveAgentsNotIn(b.now, []string{"zed"}); len(gone) != 1 || gone[0] != "cfg" {
		t.Fatalf("removed at start: %v (zed and claude came from the API)", gone)
	}
	b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: "claude", Adapter: "exec", Capabilities: []string{"go"}}))
	if a, _ := b.c.Agent("claude"); a.Removed {
		t.Fatal("registering a removed agent did not bring it back")
	}
}

func TestTheSameAgentFailureThreeTimesInARowEscalates(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	refused := TurnResult{TaskID: tk.ID, ExitCode: 134, Error: "the agent exited with status 134",
		Output: "fatal error: out of memory allocating heap arena map\nruntime stack:\nruntime.throw"}
	for i := 1; i <= 3; i++ {
		r := refused
		r.Attempt = b.task(tk.ID).Attempt
		_, err := b.c.EndTurn(b.now, r)
		b.ok(err)
	}
	got := b.task(tk.ID)
	if got.State != Escalated || got.Attempt != 3 || got.Escalation == nil || !strings.Contains(got.Escalation.Reason, "the same way 3 times in a row") {
		t.Fatalf("%s attempt %d escalation %+v", got.State, got.Attempt, got.Escalation)
	}
	// Different failures go on through the debug loop.
	b = taskBundle(t)
	tk = submit(b, TaskSpec{Description: "x"})
	for i := 1; i <= 3; i++ {
		_, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: b.task(tk.ID).Attempt, ExitCode: 1, Error: "the agent exited with status 1",
			Output: strings.Repeat("a different crash ", i)})
		b.ok(err)
	}
	if got := b.task(tk.ID); got.State == Escalated {
		t.Fatalf("three different failures escalated: %+v", got.Escalation)
	}
}

// A CLI that refuses a flag of its command line, or to run in a folder it
// does not trust, before it acknowledged: no attempt can do better, the
// task escalates at once naming the fix. Once the agent works, the same
// words in its output are the work's (a command it ran refusing a flag).
func TestARefusedFlagOrUntrustedFolderEscalatesAtOnceNamingTheFix(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ output, cause, fix string }{
		{"error: unexpected argument '--full-auto' found\n\nUsage: codex exec [OPTIONS] [PROMPT]", "refuses a flag of its command line: error: unexpected argument '--full-auto' found", "remove or change the extra arguments"},
		{"error: unknown option '--verbos'", "refuses a flag", "extra arguments"},
		{"Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`…", "does not trust", "GEMINI_CLI_TRUST_WORKSPACE=true"},
	} {
		b := taskBundle(t)
		tk := submit(b, TaskSpec{Description: "x"})
		_, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, ExitCode: 2, Error: "the agent exited with status 2", Output: c.output})
		b.ok(err)
		got := b.task(tk.ID)
		if got.State != Escalated || got.Attempt != 1 || !strings.Contains(got.Escalation.Reason, c.cause) || !strings.Contains(got.Escalation.Reason, c.fix) {
			t.Fatalf("%q: %s attempt %d %+v", c.output, got.State, got.Attempt, got.Escalation)
		}
	}
	// After the ACK, the agent's own commands' errors go through the debug
	// loop.
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	_, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, ExitCode: 1, Error: "the agent exited with status 1",
		Output: "I ran the linter:\nerror: unknown option '--fix-all'\nI could not finish."})
	b.ok(err)
	if got := b.task(tk.ID); got.State == Escalated || got.Attempt != 2 {
		t.Fatalf("after the ACK: %s attempt %d %+v", got.State, got.Attempt, got.Escalation)
	}
}

func TestATurnOverBudgetEscalatesWithWhatWasSpent(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Budget.Task = Budget{MaxCostUSD: 1}
	b.ok(b.c.Configure(b.now, p))
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	_, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, Usage: Usage{InputTokens: 1000, OutputTokens: 200, CostUSD: 1.25}})
	b.ok(err)
	got := b.task(tk.ID)
	if got.State != Escalated || got.Escalation == nil || !strings.Contains(got.Escalation.Reason, "budget: task "+tk.ID+" spent $1.2500, over its max_cost_usd of $1.00") {
		t.Fatalf("%s %+v", got.State, got.Escalation)
	}
	// The day's budget: once crossed, no attempt starts.
	b = taskBundle(t)
	p.Budget = BudgetPolicy{Day: Budget{MaxTokens: 500}}
	b.ok(b.c.Configure(b.now, p))
	first := submit(b, TaskSpec{Description: "one"})
	ackTask(b, first.ID)
	_, err = b.c.EndTurn(b.now, TurnResult{TaskID: first.ID, Attempt: 1, Usage: Usage{InputTokens: 400, OutputTokens: 200}})
	b.ok(err)
	if got := b.task(first.ID); got.State != Escalated || !strings.Contains(got.Escalation.Reason, "today's tasks") {
		t.Fatalf("%s %+v", got.State, got.Escalation)
	}
	// Under the limit, a turn goes on to verification.
	b = taskBundle(t)
	p.Budget = BudgetPolicy{Task: Budget{MaxCostUSD: 5, MaxTokens: 100000}}
	b.ok(b.c.Configure(b.now, p))
	tk = submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	_, err = b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, Usage: Usage{InputTokens: 1000, CostUSD: 0.5}})
	b.ok(err)
	if got := b.task(tk.ID); got.State != Running || got.Phase != Verifying {
		t.Fatalf("under budget: %s/%s", got.State, got.Phase)
	}
}

func TestCrossingTheBudgetMidTurnStopsTheAgentAndEscalatesWithWhatWasSpent(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Budget.Task = Budget{MaxTokens: 1000}
	b.ok(b.c.Configure(b.now, p))
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	// Under the budget: nothing happens.
	stopped, err := b.c.NoteSpend(b.now, tk.ID, 1, Usage{InputTokens: 600, OutputTokens: 100})
	b.ok(err)
	if stopped || b.task(tk.ID).State != Running {
		t.Fatalf("under budget: stopped %v, %s", stopped, b.task(tk.ID).State)
	}
	// A spend of another attempt changes nothing.
	stopped, err = b.c.NoteSpend(b.now, tk.ID, 2, Usage{InputTokens: 6000})
	b.ok(err)
	if stopped {
		t.Fatal("another attempt's spend stopped the turn")
	}
	// Over it, while the turn runs: the agent is stopped, the turn's spend
	// recorded, and the task escalated with it.
	stopped, err = b.c.NoteSpend(b.now, tk.ID, 1, Usage{InputTokens: 900, OutputTokens: 200})
	r := b.ok(err)
	got := b.task(tk.ID)
	if !stopped || got.State != Escalated || !strings.Contains(got.Escalation.Reason, "budget: task "+tk.ID+" used 1100 tokens") ||
		got.Usage.InputTokens != 900 || got.Usage.OutputTokens != 200 {
		t.Fatalf("over budget: stopped %v, %s %+v usage %+v", stopped, got.State, got.Escalation, got.Usage)
	}
	stop := false
	for _, e := range r.Effects {
		if s, ok := e.(StopTurn); ok && s.TaskID == tk.ID {
			stop = true
		}
	}
	if !stop {
		t.Fatalf("the agent was not stopped: %+v", r.Effects)
	}
	// Its turn's end, when the stopped process reports one, is too late.
	_, err = b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, ExitCode: -1})
	if err == nil {
		t.Fatal("the end of the stopped turn was taken")
	}
	b.collect()
}

func TestALateAckOrCompletionOfAnEarlierAttemptNeverCounts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("remote", "mailbox", "go")
	tk := submit(b, TaskSpec{Description: "x"})
	first := b.task(tk.ID).Delivery
	ackTask(b, tk.ID)
	// Attempt 1's turn ends in failure; attempt 2 is delegated.
	_, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, ExitCode: 1, Error: "crashed", Output: "boom"})
	b.ok(err)
	got := b.task(tk.ID)
	if got.Attempt != 2 || got.State != AwaitingAck || got.Delivery == first {
		t.Fatalf("attempt %d %s delivery %s", got.Attempt, got.State, got.Delivery)
	}
	// The first attempt's process, late: its ACK and its completion.
	if in, err := b.c.Reply(b.now, ReplyInput{Agent: "remote", InReplyTo: first, Text: "[ACK] " + tk.ID + " - RECEIVED\nUnderstanding: x"}); err == nil && slices.Contains(in.Acknowledged, got.Delivery) {
		t.Fatalf("a late ACK of attempt 1 acknowledged attempt 2: %+v", in)
	}
	if _, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, Status: "success", Summary: "late"}); err == nil {
		t.Fatal("a late end of attempt 1's turn was taken for attempt 2")
	}
	if got := b.task(tk.ID); got.State != AwaitingAck || got.Attempt != 2 {
		t.Fatalf("after the late replies: %s attempt %d", got.State, got.Attempt)
	}
}

func TestTheCostOfATurnWhoseCLIReportsNoneComesFromThePrices(t *testing.T) {
	t.Parallel()
	b := taskBundle(t) // agent claude
	p := DefaultPolicies()
	p.Prices = map[string]Price{"m1": {InputPerMTok: 2, OutputPerMTok: 10}, "claude": {InputPerMTok: 1, OutputPerMTok: 1}}
	b.ok(b.c.Configure(b.now, p))
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	_, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, Usage: Usage{InputTokens: 1_000_000, OutputTokens: 100_000, Model: "m1"}})
	b.ok(err)
	if u := b.task(tk.ID).Usage; u.CostUSD != 3 || !u.Priced {
		t.Fatalf("by model: %+v", u)
	}
	verify(b, tk.ID, false)
	ackTask(b, tk.ID)
	_, err = b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 2, Usage: Usage{InputTokens: 1_000_000}})
	b.ok(err)
	if u := b.task(tk.ID).Usages[1].Usage; u.CostUSD != 1 || !u.Priced {
		t.Fatalf("by agent: %+v", u)
	}
	verify(b, tk.ID, false)
	ackTask(b, tk.ID)
	_, err = b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 3, Usage: Usage{InputTokens: 1_000_000, CostUSD: 0.5}})
	b.ok(err)
	if u := b.task(tk.ID).Usages[2].Usage; u.CostUSD != 0.5 || u.Priced {
		t.Fatalf("a reported cost is kept: %+v", u)
	}
}
