package core

import (
	"strings"
	"testing"
	"time"
)

// runEffects are the RunOperation effects produced so far.
func (b *testBundle) runEffects() []RunOperation {
	var run []RunOperation
	for _, e := range b.effects {
		if r, ok := e.(RunOperation); ok {
			run = append(run, r)
		}
	}
	return run
}

// An operation on agents that got its "ok" is performed on the agents
// (the effect names the operation, its agents and what it installs), not
// ended at once for want of a command.
func TestAnAgentOperationThatGotItsOkIsPerformedOnItsAgents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "tmux")
	o, err := b.c.StartOperation(b.now, OperationRequest{Name: OpInstallSkill, Agents: []string{"a"}, Target: "/skills/lint"})
	b.ok(err)
	if d := b.delivered("a"); len(d) != 1 || !strings.Contains(d[0].Body, "install the skill lint") || !strings.Contains(d[0].Body, `reply with "ok"`) {
		t.Fatalf("the request: %+v", d)
	}
	reply(b, "a", "", "ok")
	if got := b.op(o.ID); got.State != OpProceeding {
		t.Fatalf("state %s", got.State)
	}
	run := b.runEffects()
	if len(run) != 1 || run[0].Name != OpInstallSkill || run[0].Target != "/skills/lint" || len(run[0].Agents) != 1 || run[0].Agents[0] != "a" {
		t.Fatalf("run effects %+v", run)
	}
}

// Hibernate keeps the agent's conversation id with its status; the wake
// that follows is handed that id, to resume it.
func TestHibernateKeepsTheConversationAndTheWakeResumesIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "tmux")
	o := startOp(b, OpHibernate, "a")
	reply(b, "a", "", "ok")
	_, err := b.c.FinishAgentOperation(b.now, o.ID, []OperationResult{{Agent: "a", Done: true, Action: "hibernated: session ended",
		Status: Hibernating, Conversation: "c0ffee"}}, 0, "")
	b.ok(err)
	a, _ := b.c.Agent("a")
	if a.Status != Hibernating || a.Conversation != "c0ffee" || b.op(o.ID).State != OpDone || len(b.op(o.ID).Results) != 1 {
		t.Fatalf("agent %+v, operation %+v", a, b.op(o.ID))
	}
	b.advance(time.Minute)
	w := startOp(b, OpWake, "a")
	reply(b, "a", "", "ok")
	run := b.runEffects()
	if last := run[len(run)-1]; last.ID != w.ID || last.Conversations["a"] != "c0ffee" {
		t.Fatalf("the wake's effect: %+v", last)
	}
	_, err = b.c.FinishAgentOperation(b.now, w.ID, []OperationResult{{Agent: "a", Done: true, Status: Available, Action: "woken"}}, 0, "")
	b.ok(err)
	if a, _ := b.c.Agent("a"); a.Status != Available {
		t.Fatalf("after the wake: %+v", a)
	}
}

// An agent whose part failed fails the operation, and keeps its status.
func TestAnOperationFailsWhenAnAgentsPartFailed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "tmux")
	b.agent("b", "mailbox")
	o := startOp(b, OpRestart, "a", "b")
	reply(b, "a", "", "ok")
	reply(b, "b", "", "ok")
	_, err := b.c.FinishAgentOperation(b.now, o.ID, []OperationResult{
		{Agent: "a", Done: true, Status: Available, Action: "restarted"},
		{Agent: "b", Error: "restart: not a local agent"},
	}, 0, "")
	b.ok(err)
	got := b.op(o.ID)
	if got.State != OpFailed || !strings.Contains(got.Reason, "1 of 2 agents failed") {
		t.Fatalf("%+v", got)
	}
	_, err = b.c.FinishAgentOperation(b.now, o.ID, nil, 0, "")
	b.refused(err, Conflict)
}

func TestAgentOperationsCheckWhatTheyNeed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "tmux")
	for _, req := range []OperationRequest{
		{Name: OpInstallSkill, Agents: []string{"a"}},
		{Name: OpInstallPlugin, Agents: []string{"a"}, Target: "/p", Command: []string{"true"}},
		{Name: OpMaintenance, Agents: []string{"a"}},
		{Name: OpRestart, Agents: []string{"a"}, Command: []string{"true"}},
		{Name: "deploy", Agents: []string{"a"}, Target: "/p"},
	} {
		_, err := b.c.StartOperation(b.now, req)
		b.refused(err, Invalid)
	}
}

// A permission question of an agent is on record, and the task it works
// on says so in its milestone.
func TestAPermissionQuestionIsAMilestoneAndAnEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "tmux")
	submit(b, TaskSpec{Description: "write the fix"})
	d := b.delivered("a")
	reply(b, "a", d[0].ID, "[ACK] T-1 - RECEIVED\nUnderstanding: write the fix")
	b.ok(b.c.NotePermission(b.now, "a", "T-1", 1, "Write", "Do you want to create file.txt?", ""))
	if m := b.task("T-1").Milestone; !strings.Contains(m, "Waiting for permission: Write") || !strings.Contains(m, "wilco attach a") {
		t.Fatalf("milestone %q", m)
	}
	b.ok(b.c.NotePermission(b.now, "a", "T-1", 1, "Bash", "Run rm -rf?", "denied"))
	if m := b.task("T-1").Milestone; !strings.Contains(m, "denied") {
		t.Fatalf("milestone %q", m)
	}
	if evs := b.eventsOf(TypeAgentPermission); len(evs) != 2 || evs[1].Data.(AgentPermission).Answer != "denied" {
		t.Fatalf("events %+v", evs)
	}
	b.refused(b.c.NotePermission(b.now, "ghost", "", 0, "", "x", ""), NotFound)
}

// A permission question nobody answers for the user (no allow list)
// notifies the hooks that listen for it; one the allow list answered does
// not.
func TestAPermissionQuestionThatWaitsForTheUserIsANotification(t *testing.T) {
	t.Parallel()
	b := notifyBundle(t, hook("h", NotifyPermission))
	b.agent("a", "tmux")
	b.ok(b.c.NotePermission(b.now, "a", "", 0, "Bash", "Do you want to run rm -rf build?", "denied"))
	b.ok(b.c.NotePermission(b.now, "a", "", 0, "Bash", "Do you want to run make?", ""))
	var ns []Notification
	for _, e := range b.eventsOf(TypeNotificationQueued) {
		ns = append(ns, e.Data.(NotificationQueued).Notification)
	}
	if len(ns) != 1 || ns[0].Event != NotifyPermission || ns[0].Agent != "a" || !strings.Contains(ns[0].Reason, "Do you want to run make?") ||
		!strings.Contains(ns[0].Reason, "wilco attach a") {
		t.Fatalf("notifications %+v", ns)
	}
}
