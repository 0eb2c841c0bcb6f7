package core

import (
	"testing"
	"time"
)

func intp(n int) *int { return &n }

func instruct(b *testBundle, agent, content string, maxRetries *int, m *Matcher) Delivery {
	b.t.Helper()
	d, err := b.c.Send(b.now, SendRequest{To: agent, Type: TypeInstruction, Body: content, MaxRetries: maxRetries, Matcher: m})
	b.ok(err)
	return d
}

func cycle(b *testBundle, agent string) []InboxMessage {
	b.t.Helper()
	msgs, err := b.c.Cycle(b.now, agent)
	b.ok(err)
	return msgs
}

func TestCyclesMaxRetriesThreeMeansFourSends(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox")
	d := instruct(b, "a", "Check if OpenSpec CLI is available", nil, nil)
	if d.State != Pending || d.MaxRetries != DefaultMaxRetries {
		t.Fatalf("new instruction: state %s max_retries %d", d.State, d.MaxRetries)
	}
	for i := 1; i <= 4; i++ {
		msgs := cycle(b, "a")
		if len(msgs) != 1 || msgs[0].ID != d.ID || msgs[0].Attempt != i {
			t.Fatalf("cycle %d: got %+v, want send %d of %s", i, msgs, i, d.ID)
		}
		if got := b.delivery(d.ID); got.State != Sent || got.RetryCount() != i-1 {
			t.Fatalf("cycle %d: state %s retry_count %d", i, got.State, got.RetryCount())
		}
	}
	if n := len(b.eventsOf(TypeDeliverySent)) + len(b.eventsOf(TypeDeliveryRetried)); n != 4 {
		t.Fatalf("sends = %d, want 4", n)
	}
}

func TestCyclesFailedAtNextCycleAfterLastSend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox")
	d := instruct(b, "a", "List contents of openspec/ directory", intp(3), nil)
	for range 4 {
		cycle(b, "a")
	}
	if got := b.delivery(d.ID); got.State != Sent {
		t.Fatalf("after the 4th send the instruction is %s, want still sent", got.State)
	}
	if msgs := cycle(b, "a"); len(msgs) != 0 {
		t.Fatalf("5th cycle sent %+v, want nothing", msgs)
	}
	got := b.delivery(d.ID)
	if got.State != Failed || got.Sends != 4 || got.RetryCount() != 3 {
		t.Fatalf("after the 5th cycle: %s sends %d retry_count %d, want failed 4 3", got.State, got.Sends, got.RetryCount())
	}
	if len(b.eventsOf(TypeDeliveryFailed)) != 1 {
		t.Fatal("no delivery.failed event")
	}
	// Kept for inspection.
	failed := b.c.Deliveries(func(d *Delivery) bool { return d.State == Failed })
	if len(failed) != 1 || failed[0].Body != "List contents of openspec/ directory" {
		t.Fatalf("failed instructions: %+v", failed)
	}
}

func TestCyclesMaxRetriesZeroMeansOneSend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox")
	d := instruct(b, "a", "ping", intp(0), nil)
	cycle(b, "a")
	cycle(b, "a")
	if got := b.delivery(d.ID); got.State != Failed || got.Sends != 1 {
		t.Fatalf("got %s after %d sends", got.State, got.Sends)
	}
}

func TestCyclesNewBeforeRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox")
	old := instruct(b, "a", "old one", nil, nil)
	cycle(b, "a")
	n1 := instruct(b, "a", "new one", nil, nil)
	n2 := instruct(b, "a", "newer one", nil, nil)
	msgs := cycle(b, "a")
	if len(msgs) != 3 || msgs[0].ID != n1.ID || msgs[1].ID != n2.ID || msgs[2].ID != old.ID {
		t.Fatalf("order %v, want new (%s, %s) then retried (%s)", ids(msgs), n1.ID, n2.ID, old.ID)
	}
	if msgs[2].Attempt != 2 || msgs[0].Attempt != 1 {
		t.Fatalf("attempts %d %d", msgs[0].Attempt, msgs[2].Attempt)
	}
}

func ids(msgs []InboxMessage) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.ID)
	}
	return out
}

func TestCyclesAcknowledgedByCaller(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox")
	d := instruct(b, "a", "Check for OpenSpec CLI", nil, nil)
	cycle(b, "a")
	got, err := b.c.Acknowledge(b.now, d.ID)
	b.ok(err)
	if got.State != Acknowledged {
		t.Fatalf("state %s", got.State)
	}
	if msgs := cycle(b, "a"); len(msgs) != 0 {
		t.Fatalf("an acknowledged instruction was sent again: %+v", msgs)
	}
	_, err = b.c.Acknowledge(b.now, d.ID)
	b.refused(err, Conflict)
	_, err = b.c.Acknowledge(b.now, "I-99")
	b.refused(err, NotFound)
}

func TestCyclesAcknowledgedByMatcher(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox")
	byText := instruct(b, "a", "Check for OpenSpec CLI", nil, &Matcher{Contains: "openspec"})
	byRegex := instruct(b, "a", "Tell me the OS", nil, &Matcher{Regex: `(?i)os:\s*\w+`})
	cycle(b, "a")
	in, err := b.c.Reply(b.now, ReplyInput{Agent: "a", Text: "found openspec at /usr/bin"})
	b.ok(err)
	if len(in.Acknowledged) != 1 || in.Acknowledged[0] != byText.ID {
		t.Fatalf("interpretation %+v", in)
	}
	if b.delivery(byRegex.ID).State != Sent {
		t.Fatal("regex matcher acknowledged on unrelated text")
	}
	_, err = b.c.Reply(b.now, ReplyInput{Agent: "a", Text: "OS: linux"})
	b.ok(err)
	if b.delivery(byRegex.ID).State != Acknowledged {
		t.Fatal("regex matcher did not acknowledge")
	}
	if got := b.eventsOf(TypeDeliveryAcknowledged); len(got) != 2 || got[0].Data.(DeliveryAcknowledged).By != "matcher" {
		t.Fatalf("acknowledged events %+v", got)
	}
}

func TestCyclesBadMatcherIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox")
	_, err := b.c.Send(b.now, SendRequest{To: "a", Type: TypeInstruction, Body: "x", Matcher: &Matcher{Regex: "("}})
	b.refused(err, Invalid)
	_, err = b.c.Send(b.now, SendRequest{To: "a", Type: TypeInstruction, Body: "x", Matcher: &Matcher{}})
	b.refused(err, Invalid)
	_, err = b.c.Send(b.now, SendRequest{To: "a", Type: TypeInstruction, Body: "x", MaxRetries: intp(-1)})
	b.refused(err, Invalid)
	_, err = b.c.Send(b.now, SendRequest{To: "a", Type: TypeInstruction, Body: "  "})
	b.refused(err, Invalid)
	_, err = b.c.Send(b.now, SendRequest{To: "nobody", Type: TypeInstruction, Body: "x"})
	b.refused(err, NotFound)
}

func TestCyclesHaveNoTimers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox")
	instruct(b, "a", "x", nil, nil)
	cycle(b, "a")
	if len(b.c.Timers()) != 0 {
		t.Fatalf("timers %v", b.c.Timers())
	}
}

func TestCyclesOnlyTheAgentsOwnInstructions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox")
	b.agent("b", "mailbox")
	instruct(b, "a", "for a", nil, nil)
	if msgs := cycle(b, "b"); len(msgs) != 0 {
		t.Fatalf("b got a's instruction: %+v", msgs)
	}
}

// A push (a transport handing over an agent's messages as they land) is
// not the agent asking: the agent is not counted as heard from, and an
// unacknowledged instruction is not sent again — only the agent's own
// cycles do that.
func TestAPushHandsOverWithoutCountingTheAgentAsHeardFrom(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("gone", "mailbox", "go")
	delegate(b, "gone", "GH-1")
	b.advance(10 * time.Minute) // no ACK: gone is unresponsive
	b.agent("far", "mailbox", "go")
	if a, _ := b.c.Agent("gone"); a.Status != Unresponsive {
		t.Fatalf("gone is %s", a.Status)
	}
	in := instruct(b, "gone", "note the time", nil, nil)
	msgs, err := b.c.Push(b.now, "gone")
	b.ok(err)
	if last := msgs[len(msgs)-1]; last.ID != in.ID || last.Attempt != 1 {
		t.Fatalf("pushed %+v, want the inbox then the instruction", msgs)
	}
	if a, _ := b.c.Agent("gone"); a.Status != Unresponsive {
		t.Fatalf("after a push gone is %s, want still unresponsive", a.Status)
	}

	task := delegate(b, "far", "GH-2")
	msgs, err = b.c.Push(b.now, "far")
	b.ok(err)
	if len(msgs) != 1 || msgs[0].ID != task.ID {
		t.Fatalf("pushed %+v, want the delegation", msgs)
	}
	if a, _ := b.c.Agent("far"); a.Seen || len(b.eventsOf(TypeAgentSeen)) != 0 {
		t.Fatalf("a push counted far as seen: %+v", a)
	}
	note := instruct(b, "far", "check the build", nil, nil)
	if msgs, _ := b.c.Push(b.now, "far"); len(msgs) != 1 || msgs[0].ID != note.ID {
		t.Fatalf("pushed %+v, want the new instruction", msgs)
	}
	if msgs, _ := b.c.Push(b.now, "far"); len(msgs) != 0 {
		t.Fatalf("a second push sent %+v again, want nothing", msgs)
	}
	if got := b.delivery(note.ID); got.Sends != 1 {
		t.Fatalf("the instruction was sent %d times", got.Sends)
	}
	// The agent's own cycle retries it, and counts the agent as seen.
	if msgs := cycle(b, "far"); len(msgs) != 1 || msgs[0].ID != note.ID || msgs[0].Attempt != 2 {
		t.Fatalf("the agent's cycle got %+v", msgs)
	}
	if a, _ := b.c.Agent("far"); !a.Seen {
		t.Fatal("the agent's own cycle did not count it as seen")
	}
	if _, err := b.c.Push(b.now, "nobody"); CodeOf(err) != NotFound {
		t.Fatalf("a push to no agent: %v", err)
	}
	b.checkReplay()
}
