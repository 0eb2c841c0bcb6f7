package core

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAnIssueIsOneTask(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeManual)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout", Issue: 5})
	if tk.Issue != 5 {
		t.Fatalf("issue %d", tk.Issue)
	}
	_, err := b.c.SubmitTask(b.now, TaskSpec{Description: "Fix the login timeout", Issue: 5})
	b.refused(err, Conflict)
	if !strings.Contains(err.Error(), "issue #5 is task "+tk.ID) {
		t.Fatalf("refusal: %v", err)
	}
	_, err = b.c.SubmitTask(b.now, TaskSpec{Description: "x", Issue: -1})
	b.refused(err, Invalid)
}

// issueNotices are the notices asked for the thread of an issue, by event.
func (b *testBundle) issueNotices() []NotifyEvent {
	var out []NotifyEvent
	for _, n := range b.notifies() {
		if n.Notification.Hook == IssueHook {
			out = append(out, n.Notification.Event)
		}
	}
	return out
}

func TestTheThreadOfATasksIssueHearsItsUnderstandingItsPullRequestOnceAndItsEnd(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeManual)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout", Issue: 5})
	other := submit(b, TaskSpec{Description: "No issue"})
	prepared(b, tk.ID, "base")
	prepared(b, other.ID, "base")
	ackTask(b, other.ID)
	toPR(b, tk.ID, prHead1)
	ns := b.notifies()
	if got := b.issueNotices(); len(got) != 2 || got[0] != NotifyAcknowledged || got[1] != NotifyPullRequest {
		t.Fatalf("the issue's thread heard %v", got)
	}
	for _, n := range ns {
		if n.Notification.TaskID == other.ID {
			t.Fatalf("a task of no issue notified its thread: %+v", n)
		}
	}
	if n := ns[0].Notification; n.TaskID != tk.ID || n.Reason != "Fix the login timeout" {
		t.Fatalf("the acknowledgment's notice: %+v", n)
	}
	if n := ns[1].Notification; !strings.Contains(n.Reason, "pull request #7: https://forge.example/o/r/pull/7") {
		t.Fatalf("the pull request's notice: %+v", n)
	}
	// A failed check: the next attempt's acknowledgment is told, its push
	// to the same pull request is not.
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, Checks: []PRCheck{{Name: "test", Status: "completed", Conclusion: "failure"}}})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	verify(b, tk.ID, true)
	const head2 = "2222222222222222222222222222222222222222"
	_, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: last[LandTask](b).RunID, Commit: head2, PR: &PROpened{Number: 7}})
	b.ok(err)
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: head2, State: PRMerged, MergeCommit: head2})
	if got := b.issueNotices(); len(got) != 4 || got[2] != NotifyAcknowledged || got[3] != NotifySuccess {
		t.Fatalf("the issue's thread heard %v", got)
	}
}

func TestTheThreadOfATasksIssueHearsItsEscalation(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeManual)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout", Issue: 5})
	prepared(b, tk.ID, "base")
	toPR(b, tk.ID, prHead1)
	b.advance(DefaultCITimeout)
	if got := b.issueNotices(); len(got) != 3 || got[2] != NotifyEscalated {
		t.Fatalf("the issue's thread heard %v", got)
	}
}

func TestNoHookIsNamedAsTheThreadsOfIssues(t *testing.T) {
	t.Parallel()
	p := DefaultPolicies()
	p.Notify.Hooks = []NotifyHook{{Name: IssueHook, Events: DefaultNotifyEvents()}}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "notify.hooks[0].name") {
		t.Fatalf("a hook named issue: %v", err)
	}
}

func TestTheCommentsReadOfATasksIssueAreRecordedAndNeverGoBack(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeManual)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout", Issue: 5})
	other := submit(b, TaskSpec{Description: "No issue"})
	b.ok(b.c.SeeIssueComments(b.now, tk.ID, 40))
	b.advance(time.Minute)
	b.ok(b.c.SeeIssueComments(b.now, tk.ID, 12))
	b.ok(b.c.SeeIssueComments(b.now, tk.ID, 40))
	if got := b.eventsOf(TypeTaskIssueSeen); len(got) != 1 || got[0].Data.(TaskIssueSeen).Comment != 40 {
		t.Fatalf("seen events %+v", got)
	}
	if got, _ := b.c.Task(tk.ID); got.IssueSeen != 40 {
		t.Fatalf("seen %d", got.IssueSeen)
	}
	b.refused(b.c.SeeIssueComments(b.now, other.ID, 3), Invalid)
	b.refused(b.c.SeeIssueComments(b.now, "T-99", 3), NotFound)
	b.checkReplay()
}

// A task made from an issue and cancelled before it started ends
// cancelled, kept, where another queued task is removed: were it removed,
// its issue, still open with the label, would be taken again as a new task.
func TestACancelledQueuedTaskOfAnIssueIsKeptSoItsIssueIsNotTakenAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("builder", "exec")
	first := submit(b, TaskSpec{Description: "holds the agent"})
	tk := submit(b, TaskSpec{Description: "Fix the login timeout", Issue: 5})
	plain := submit(b, TaskSpec{Description: "no issue"})
	if got := b.task(tk.ID); got.State != Queued || b.task(first.ID).State == Queued {
		t.Fatalf("the issue's task is %s behind %s", got.State, b.task(first.ID).State)
	}
	if _, removed, err := b.c.CancelTask(b.now, tk.ID); err != nil || removed {
		t.Fatalf("cancelled: removed %v, %v", removed, err)
	}
	b.collect()
	got := b.task(tk.ID)
	if got.State != TaskCancelled || got.Issue != 5 || !got.StartedAt.IsZero() {
		t.Fatalf("the issue's task after its cancel: %s issue %d started %v", got.State, got.Issue, got.StartedAt)
	}
	if b.c.TaskOfIssue(5) == nil {
		t.Fatal("issue #5 has no task after its task was cancelled")
	}
	if got := b.issueNotices(); !slices.Equal(got, []NotifyEvent{NotifyEnded}) {
		t.Fatalf("the thread of the issue hears %v", got)
	}
	if _, removed, err := b.c.CancelTask(b.now, plain.ID); err != nil || !removed {
		t.Fatalf("a queued task of no issue is removed: %v %v", removed, err)
	}
	b.collect()
	if b.task(first.ID).State.Terminal() {
		t.Fatalf("the running task ended: %s", b.task(first.ID).State)
	}
}
