package core

import (
	"reflect"
	"testing"
)

func TestRemovingATmuxAgentAsksToEndItsSessionOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("tui", "tmux", "go")
	b.agent("claude", "exec", "go")
	r := b.ok(b.c.RemoveAgent(b.now, "tui", "removed by the user"))
	if !reflect.DeepEqual(r.Effects, []Effect{StopSession{Agent: "tui"}}) {
		t.Fatalf("effects of the removal: %#v", r.Effects)
	}
	// An exec agent keeps no session between turns.
	if r := b.ok(b.c.RemoveAgent(b.now, "claude", "removed by the user")); len(r.Effects) != 0 {
		t.Fatalf("effects of removing an exec agent: %#v", r.Effects)
	}
	// Until its end is recorded, a restart asks for it again.
	b.c.RecoverSessions(b.now)
	if r := b.collect(); !reflect.DeepEqual(r.Effects, []Effect{StopSession{Agent: "tui"}}) || len(r.Events) != 0 {
		t.Fatalf("recovering before the end: %#v", r)
	}
	if _, err := b.c.Report(b.now, SessionEnded{Agent: "tui"}); err != nil {
		t.Fatal(err)
	}
	b.collect()
	b.c.RecoverSessions(b.now)
	if r := b.collect(); len(r.Effects) != 0 {
		t.Fatalf("recovering after the end: %#v", r.Effects)
	}
	if n := len(b.eventsOf(TypeAgentSessionEnded)); n != 1 {
		t.Fatalf("%d session ends recorded", n)
	}
	// A second report (the effect performed again after a restart) records
	// nothing.
	_, err := b.c.Report(b.now, SessionEnded{Agent: "tui"})
	b.refused(err, Conflict)
}

func TestAnAgentRegisteredAgainHasNoSessionToEnd(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("tui", "tmux", "go")
	b.ok(b.c.RemoveAgent(b.now, "tui", "removed by the user"))
	b.agent("tui", "tmux", "go")
	b.c.RecoverSessions(b.now)
	if r := b.collect(); len(r.Effects) != 0 {
		t.Fatalf("recovering an agent back in service: %#v", r.Effects)
	}
}

func TestEveryOutcomeComesInThroughReport(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	if _, err := b.c.Report(b.now, ActivityNoted{TaskID: tk.ID, Attempt: 1, Text: "Editing main.go"}); err != nil {
		t.Fatal(err)
	}
	b.collect()
	if got := b.task(tk.ID); got.Milestone == "" {
		t.Fatalf("the activity did not reach the task: %+v", got)
	}
	v, err := b.c.Report(b.now, TurnResult{TaskID: tk.ID, Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	b.collect()
	if got, ok := v.(Task); !ok || got.ID != tk.ID {
		t.Fatalf("a turn's end answers its task: %#v", v)
	}
	if !Urgent(ReplyInput{}) || !Urgent(VerifyResult{}) || Urgent(OperationEnded{}) || Urgent(NotificationResult{}) {
		t.Fatal("an operation's end and a notification's attempt are the only outcomes that wait their turn")
	}
}

func TestATasksFirstSendAsksForItsBaselineFirstUntilItIsRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("claude", "exec", "go")
	tk, err := b.c.SubmitTask(b.now, TaskSpec{Description: "x"})
	r := b.ok(err)
	var kinds []Effect
	for _, e := range r.Effects {
		switch e.(type) {
		case RecordBaseline, Deliver:
			kinds = append(kinds, e)
		}
	}
	if len(kinds) != 2 || kinds[0] != (RecordBaseline{TaskID: tk.ID}) {
		t.Fatalf("the first send's effects: %#v", kinds)
	}
	if d, ok := kinds[1].(Deliver); !ok || d.Message.TaskID != tk.ID {
		t.Fatalf("the baseline is not followed by the send: %#v", kinds)
	}
	// Handed over again after a restart, before the baseline's end was
	// recorded: asked again, first.
	got := b.c.Resends([]string{tk.Delivery})
	if len(got) != 2 || got[0] != (RecordBaseline{TaskID: tk.ID}) {
		t.Fatalf("resends before the record: %#v", got)
	}
	if _, err := b.c.Report(b.now, BaselineRecorded{TaskID: tk.ID}); err != nil {
		t.Fatal(err)
	}
	b.collect()
	if got := b.c.Resends([]string{tk.Delivery}); len(got) != 1 {
		t.Fatalf("resends after the record: %#v", got)
	}
	_, err = b.c.Report(b.now, BaselineRecorded{TaskID: tk.ID})
	b.refused(err, Conflict)
}

func TestOnlyTheFirstSendOfTheFirstAttemptOfARealRunAsksForTheBaseline(t *testing.T) {
	t.Parallel()
	s := New()
	for _, id := range []string{"T-1", "T-2", "T-3", "T-4", "T-6", "T-7", "T-8"} {
		s.tasks[id] = &Task{ID: id}
	}
	s.tasks["T-8"].Baseline = true
	for _, c := range []struct {
		name string
		msg  InboxMessage
		want bool
	}{
		{"the first send of the first attempt", InboxMessage{ID: "m1", Type: "task_delegation", TaskID: "T-1", TaskAttempt: 1, Attempt: 1}, true},
		{"a later attempt", InboxMessage{ID: "m2", Type: "task_delegation", TaskID: "T-2", TaskAttempt: 2, Attempt: 1}, false},
		{"a send again", InboxMessage{ID: "m3", Type: "task_delegation", TaskID: "T-3", TaskAttempt: 1, Attempt: 2}, false},
		{"a dry run", InboxMessage{ID: "m4", Type: "task_delegation", TaskID: "T-4", TaskAttempt: 1, Attempt: 1, DryRun: true}, false},
		{"a message of no task", InboxMessage{ID: "m5", Type: "task_delegation", TaskAttempt: 1, Attempt: 1}, false},
		{"a review of the task's change", InboxMessage{ID: "m6", Type: "review", TaskID: "T-6", TaskAttempt: 1, Attempt: 1}, false},
		{"a scout's question from the task", InboxMessage{ID: "m7", Type: "scout_query", TaskID: "T-7", TaskAttempt: 1, Attempt: 1}, false},
		{"a task whose baseline is recorded", InboxMessage{ID: "m8", Type: "task_delegation", TaskID: "T-8", TaskAttempt: 1, Attempt: 1}, false},
	} {
		if got := s.needsBaseline(c.msg); got != c.want {
			t.Errorf("%s: asks for the baseline %v, want %v", c.name, got, c.want)
		}
	}
}
