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
