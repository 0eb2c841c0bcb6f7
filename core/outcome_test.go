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
