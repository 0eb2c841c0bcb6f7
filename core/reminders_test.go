package core

import (
	"strings"
	"testing"
	"time"
)

func startOp(b *testBundle, name string, agents ...string) Operation {
	b.t.Helper()
	o, err := b.c.StartOperation(b.now, OperationRequest{Name: name, Agents: agents, Message: "install the security-audit skill"})
	b.ok(err)
	return o
}

func (b *testBundle) op(id string) Operation {
	o, _ := b.c.Operation(id)
	return o
}

func TestRemindersAtOffsetsWithToneAndTimeRemaining(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("code-impl-auth", "exec")
	o := startOp(b, "skill-install", "code-impl-auth")
	first := b.delivered("code-impl-auth")[0]
	if first.Type != string(TypePreOperation) || !strings.Contains(first.Body, `reply with "ok"`) || !strings.Contains(first.Body, "120 seconds") {
		t.Fatalf("request: %+v", first)
	}
	b.advance(100 * time.Second)
	rem := b.eventsOf(TypeOperationReminder)
	if len(rem) != 3 {
		t.Fatalf("%d reminders", len(rem))
	}
	want := []struct {
		at        time.Duration
		tone      string
		remaining time.Duration
	}{{30 * time.Second, "gentle", 90 * time.Second}, {60 * time.Second, "firm", 60 * time.Second}, {90 * time.Second, "final", 30 * time.Second}}
	msgs := b.delivered("code-impl-auth")[1:]
	for i, w := range want {
		r := rem[i].Data.(OperationReminder)
		if rem[i].Time.Sub(epoch) != w.at || r.Tone != w.tone || r.Remaining != w.remaining || r.Number != i+1 {
			t.Fatalf("reminder %d: at +%s %+v, want %+v", i+1, rem[i].Time.Sub(epoch), r, w)
		}
		if !strings.Contains(msgs[i].Body, seconds(w.remaining)+" remaining") {
			t.Fatalf("reminder %d does not say the time remaining: %q", i+1, msgs[i].Body)
		}
	}
	if b.op(o.ID).RemindersSent != 3 {
		t.Fatal("reminders_sent")
	}
}

func TestRemindersOkProceeds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox")
	o, err := b.c.StartOperation(b.now, OperationRequest{Name: "deploy", Agents: []string{"a"}, Command: []string{"true"}})
	b.ok(err)
	b.advance(25 * time.Second)
	in := reply(b, "a", "", "ok")
	if in.Kind != "operation_reply" || in.Status != "ok" {
		t.Fatalf("%+v", in)
	}
	got := b.op(o.ID)
	if got.State != OpProceeding || got.TimeoutOccurred {
		t.Fatalf("%+v", got)
	}
	var run []RunOperation
	for _, e := range b.effects {
		if r, ok := e.(RunOperation); ok {
			run = append(run, r)
		}
	}
	if len(run) != 1 || run[0].ID != o.ID {
		t.Fatalf("run effects %+v", run)
	}
	_, err = b.c.FinishOperation(b.now, o.ID, 0, "done")
	b.ok(err)
	if b.op(o.ID).State != OpDone {
		t.Fatal("not done")
	}
	_, err = b.c.FinishOperation(b.now, o.ID, 0, "")
	b.refused(err, Conflict)
}

func TestRemindersReplyForms(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]OperationState{"OK": OpDone, "ready": OpDone, "cancel": OpCancelled, "abort": OpCancelled} {
		t.Run(text, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.agent("a", "mailbox")
			o := startOp(b, "deploy", "a")
			reply(b, "a", "", text)
			if got := b.op(o.ID).State; got != want {
				t.Fatalf("%q → %s, want %s", text, got, want)
			}
		})
	}
}

func TestRemindersWaitExtendsOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox")
	o := startOp(b, "skill-install", "a")
	b.advance(45 * time.Second)
	reply(b, "a", "", "wait")
	msgs, _ := b.c.Cycle(b.now, "a")
	b.collect()
	last := msgs[len(msgs)-1]
	if last.Type != string(SendExtension) || !strings.Contains(last.Body, "135 seconds remaining") {
		t.Fatalf("extension: %+v", last)
	}
	in := reply(b, "a", "", "not ready")
	if !strings.Contains(in.Action, "already granted") {
		t.Fatalf("second wait: %+v", in)
	}
	b.advance(134 * time.Second) // +179s: still waiting
	if b.op(o.ID).State != OpWaiting {
		t.Fatal("timed out before the extended deadline")
	}
	b.advance(time.Second) // +180s
	if got := b.op(o.ID); got.State != OpDone || !got.TimeoutOccurred || !got.ProceededAnyway {
		t.Fatalf("%+v", got)
	}
}

func TestRemindersOtherTextIsLoggedWhileWaiting(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox")
	o := startOp(b, "deploy", "a")
	in := reply(b, "a", "", "I am on step 3 of the migration")
	if in.Status != "info" || b.op(o.ID).State != OpWaiting {
		t.Fatalf("%+v", in)
	}
	if r := b.eventsOf(TypeOperationReply); len(r) != 1 || r[0].Data.(OperationReply).Text == "" {
		t.Fatal("the information was not logged")
	}
}

func TestRemindersTimeoutNoticeThenProceed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "exec")
	o := startOp(b, "skill-install", "a")
	b.advance(120 * time.Second)
	msgs := b.delivered("a")
	notice := msgs[len(msgs)-2]
	if notice.Type != string(SendTimeoutNotice) || !strings.Contains(notice.Body, "Proceeding with skill-install now") {
		t.Fatalf("timeout notice: %+v", notice)
	}
	got := b.op(o.ID)
	if got.State != OpDone || !got.TimeoutOccurred || !got.ProceededAnyway {
		t.Fatalf("%+v", got)
	}
}

func TestRemindersTimeoutAbortsWhenConfigured(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "exec")
	p := DefaultOperationPolicy()
	p.ProceedOnTimeout = false
	o, err := b.c.StartOperation(b.now, OperationRequest{Name: "deploy", Agents: []string{"a"}, Policy: &p})
	b.ok(err)
	b.advance(2 * time.Minute)
	if got := b.op(o.ID); got.State != OpAborted || !got.TimeoutOccurred || got.ProceededAnyway {
		t.Fatalf("%+v", got)
	}
}

func TestRemindersQuorumOverSeveralAgents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		quorum Quorum
		oks    int
		want   OperationState
	}{{QuorumAll, 2, OpAborted}, {QuorumMajority, 2, OpDone}, {QuorumMajority, 1, OpAborted}, {"1", 1, OpDone}, {QuorumAll, 3, OpDone}} {
		t.Run(string(tc.quorum), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			for _, n := range []string{"a", "b", "c"} {
				b.agent(n, "mailbox")
			}
			p := DefaultOperationPolicy()
			p.Quorum = tc.quorum
			o, err := b.c.StartOperation(b.now, OperationRequest{Name: "deploy", Agents: []string{"a", "b", "c"}, Policy: &p})
			b.ok(err)
			for _, n := range []string{"a", "b", "c"}[:tc.oks] {
				reply(b, n, "", "ok")
			}
			b.advance(3 * time.Minute)
			if got := b.op(o.ID).State; got != tc.want {
				t.Fatalf("quorum %s with %d ok: %s, want %s", tc.quorum, tc.oks, got, tc.want)
			}
		})
	}
}

func TestRemindersCancelledOperationTellsEveryAgent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "exec")
	b.agent("b", "exec")
	o := startOp(b, "deploy", "a", "b")
	reply(b, "a", "", "ok")
	reply(b, "b", "", "cancel")
	if b.op(o.ID).State != OpCancelled {
		t.Fatal("not cancelled")
	}
	for _, n := range []string{"a", "b"} {
		msgs := b.delivered(n)
		if msgs[len(msgs)-1].Type != string(SendOperationOutcome) {
			t.Fatalf("%s was not told", n)
		}
	}
	_, err := b.c.Reply(b.now, ReplyInput{Agent: "a", InReplyTo: o.Deliveries[0], Text: "ok"})
	b.refused(err, Conflict)
}

func TestOperationBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "exec")
	for _, req := range []OperationRequest{
		{Name: "", Agents: []string{"a"}},
		{Name: "x", Agents: nil},
		{Name: "x", Agents: []string{"a", "a"}},
		{Name: "x", Agents: []string{"a"}, Policy: &OperationPolicy{Timeout: -time.Second}},
	} {
		_, err := b.c.StartOperation(b.now, req)
		b.refused(err, Invalid)
	}
	_, err := b.c.StartOperation(b.now, OperationRequest{Name: "x", Agents: []string{"zed"}})
	b.refused(err, NotFound)
	p := DefaultOperationPolicy()
	p.Quorum = "5"
	_, err = b.c.StartOperation(b.now, OperationRequest{Name: "x", Agents: []string{"a"}, Policy: &p})
	b.refused(err, Invalid)
}

// A duration of one second is said in the singular.
func TestOneSecondIsSaidInTheSingular(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Second: "1 second", 1400 * time.Millisecond: "1 second", 2 * time.Second: "2 seconds", 0: "0 seconds", 90 * time.Second: "90 seconds"} {
		if got := seconds(d); got != want {
			t.Errorf("seconds(%s) = %q, want %q", d, got, want)
		}
	}
}
