package core

import (
	"encoding/json"
	"strings"
	"testing"
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
