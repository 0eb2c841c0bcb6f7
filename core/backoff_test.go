package core

import (
	"strings"
	"testing"
	"time"
)

func delegate(b *testBundle, agent, taskID string, criteria ...string) Delivery {
	b.t.Helper()
	d, err := b.c.Send(b.now, SendRequest{
		To: agent, Type: TypeDelegation, TaskID: taskID, Capabilities: []string{"go"},
		Body:               "## Task: " + taskID + "\nImplement user authentication.",
		Description:        "Implement user authentication",
		AcceptanceCriteria: criteria,
	})
	b.ok(err)
	return d
}

func reply(b *testBundle, agent, inReplyTo, text string) Interpretation {
	b.t.Helper()
	in, err := b.c.Reply(b.now, ReplyInput{Agent: agent, InReplyTo: inReplyTo, Text: text})
	b.ok(err)
	return in
}

func TestBackoffDelegationCarriesTheAckRequestBlock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("claude", "exec", "go")
	d := delegate(b, "claude", "GH-42")
	msgs := b.delivered("claude")
	if len(msgs) != 1 || msgs[0].ID != d.ID {
		t.Fatalf("delivered %+v", msgs)
	}
	if !strings.Contains(msgs[0].Body, "ACKNOWLEDGMENT REQUIRED: Reply with [ACK] GH-42 - RECEIVED") {
		t.Fatalf("delegation without the teaching block:\n%s", msgs[0].Body)
	}
}

func TestBackoffPerAttemptTimeoutsAndWaits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("claude", "exec", "go")
	d := delegate(b, "claude", "GH-42")
	// The ACK retry table: attempt 1 at 0, attempt 2 at 5m+30s, attempt 3 at
	// 7m30s+1m, unresponsive at 9m30s.
	want := []time.Duration{0, 5*time.Minute + 30*time.Second, 8*time.Minute + 30*time.Second}
	b.advance(10 * time.Minute)
	var sends []Event
	for _, e := range b.events {
		if (e.Type == TypeDeliverySent || e.Type == TypeDeliveryRetried) && e.Agent == "claude" {
			sends = append(sends, e)
		}
	}
	if len(sends) != 3 {
		t.Fatalf("%d sends, want 3", len(sends))
	}
	for i, s := range sends {
		if got := s.Time.Sub(epoch); got != want[i] {
			t.Fatalf("send %d at +%s, want +%s", i+1, got, want[i])
		}
	}
	failed := b.eventsOf(TypeDeliveryFailed)
	if len(failed) != 1 || failed[0].Time.Sub(epoch) != 9*time.Minute+30*time.Second {
		t.Fatalf("failed %+v, want one at +9m30s", failed)
	}
	if got := b.delivery(d.ID); got.State != Failed || got.Reason != "unresponsive" || got.Sends != 3 {
		t.Fatalf("delivery %s %q sends %d", got.State, got.Reason, got.Sends)
	}
}

func TestBackoffWaitIsMinOfBaseTimesTwoToTheNMinusOneAndMax(t *testing.T) {
	t.Parallel()
	p := DefaultAckPolicy()
	for n, want := range map[int]time.Duration{1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute, 4: 2 * time.Minute, 10: 2 * time.Minute} {
		if got := p.Wait(n); got != want {
			t.Errorf("Wait(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestBackoffRetriesAreExplicitAckRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("claude", "exec", "go")
	delegate(b, "claude", "GH-42")
	b.advance(6 * time.Minute)
	msgs := b.delivered("claude")
	if len(msgs) != 2 {
		t.Fatalf("delivered %d messages", len(msgs))
	}
	r := msgs[1]
	if r.Type != string(SendAckRequest) || r.Subject != "ACK REQUIRED: GH-42" || !strings.Contains(r.Body, "[ACK] GH-42") || r.Attempt != 2 {
		t.Fatalf("retry is not an ACK REQUIRED request: %+v", r)
	}
}

func TestBackoffUnresponsiveAgentIsMarkedAndTaskReassignedToCapableAgent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	b.agent("bob", "exec", "python")
	b.agent("carol", "mailbox", "go", "rust")
	d := delegate(b, "alice", "GH-42")
	b.advance(10 * time.Minute)
	if a, _ := b.c.Agent("alice"); a.Status != Unresponsive {
		t.Fatalf("alice is %s", a.Status)
	}
	re := b.eventsOf(TypeDeliveryReassigned)
	if len(re) != 1 {
		t.Fatalf("reassigned events: %+v", re)
	}
	r := re[0].Data.(DeliveryReassigned)
	if r.ID != d.ID || r.From != "alice" || r.To != "carol" {
		t.Fatalf("reassigned %+v, want to carol (bob lacks go)", r)
	}
	nd := b.delivery(r.NewID)
	if nd.To != "carol" || nd.TaskID != "GH-42" || nd.State != Sent || len(nd.Tried()) != 1 {
		t.Fatalf("new delivery %+v", nd)
	}
	if a, _ := b.c.Agent("carol"); len(a.Inbox) != 1 {
		t.Fatalf("carol's inbox %+v", a.Inbox)
	}
}

func TestBackoffUnresponsiveEscalatesWhenNoCapableAgent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	b.agent("bob", "exec", "python")
	delegate(b, "alice", "GH-42")
	b.advance(10 * time.Minute)
	if len(b.eventsOf(TypeDeliveryEscalated)) != 1 || len(b.eventsOf(TypeDeliveryReassigned)) != 0 {
		t.Fatalf("escalated %d reassigned %d", len(b.eventsOf(TypeDeliveryEscalated)), len(b.eventsOf(TypeDeliveryReassigned)))
	}
}

func TestBackoffOnUnresponsiveEscalatePolicy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := DefaultPolicies()
	p.Ack.OnUnresponsive = Escalate
	b.ok(b.c.Configure(b.now, p))
	b.agent("alice", "exec", "go")
	b.agent("carol", "exec", "go")
	delegate(b, "alice", "GH-42")
	b.advance(10 * time.Minute)
	if len(b.eventsOf(TypeDeliveryEscalated)) != 1 || len(b.eventsOf(TypeDeliveryReassigned)) != 0 {
		t.Fatal("on_unresponsive: escalate did not escalate")
	}
}

func TestBackoffAckStopsTheTimers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("claude", "exec", "go")
	d := delegate(b, "claude", "GH-42")
	b.advance(time.Minute)
	in := reply(b, "claude", "", "[ACK] GH-42 - RECEIVED\nUnderstanding: Implement user authentication")
	if in.Kind != "ack" || in.DeliveryID != d.ID || b.delivery(d.ID).State != Acknowledged {
		t.Fatalf("interpretation %+v state %s", in, b.delivery(d.ID).State)
	}
	if len(b.c.Timers()) != 0 {
		t.Fatalf("timers still armed: %v", b.c.Timers())
	}
	b.advance(time.Hour)
	if n := len(b.delivered("claude")); n != 1 {
		t.Fatalf("%d sends after the ACK", n)
	}
	if a, _ := b.c.Agent("claude"); a.Status != Busy {
		t.Fatalf("agent is %s after acknowledging, want busy", a.Status)
	}
}

func TestBackoffLateAckDuringTheWaitIsAccepted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("claude", "exec", "go")
	d := delegate(b, "claude", "GH-42")
	b.advance(5*time.Minute + 10*time.Second) // attempt 1 timed out, waiting 30s
	reply(b, "claude", d.ID, "[ACK] GH-42 - RECEIVED")
	if b.delivery(d.ID).State != Acknowledged {
		t.Fatal("an ACK during the backoff wait was not taken")
	}
}

func TestBackoffPolicyValuesMustBePositive(t *testing.T) {
	t.Parallel()
	cases := map[string]func(*Policies){
		"zero timeout":     func(p *Policies) { p.Ack.Timeouts = []time.Duration{5 * time.Minute, 0} },
		"negative timeout": func(p *Policies) { p.Ack.Timeouts = []time.Duration{-time.Second} },
		"no timeouts":      func(p *Policies) { p.Ack.Timeouts = nil },
		"zero base":        func(p *Policies) { p.Ack.BackoffBase = 0 },
		"max below base":   func(p *Policies) { p.Ack.BackoffMax = time.Second },
		"unknown on_unr":   func(p *Policies) { p.Ack.OnUnresponsive = "shrug" },
		"neg corrections":  func(p *Policies) { p.Ack.MaxCorrections = -1 },
		"zero followup":    func(p *Policies) { p.Ack.QueuedFollowup = 0 },
		"neg max_retries":  func(p *Policies) { p.MaxRetries = -1 },
		"zero op timeout":  func(p *Policies) { p.Operation.Timeout = 0 },
		"reminder late":    func(p *Policies) { p.Operation.Reminders = []time.Duration{30 * time.Second, 200 * time.Second} },
		"reminders order":  func(p *Policies) { p.Operation.Reminders = []time.Duration{60 * time.Second, 30 * time.Second} },
		"zero extension":   func(p *Policies) { p.Operation.Extension = 0 },
		"bad quorum":       func(p *Policies) { p.Operation.Quorum = "most" },
		"zero quorum":      func(p *Policies) { p.Operation.Quorum = "0" },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			p := DefaultPolicies()
			mutate(&p)
			err := b.c.Configure(b.now, p)
			b.refused(err, Invalid)
			if !strings.Contains(err.Error(), "policy.") {
				t.Fatalf("error does not name the key: %v", err)
			}
		})
	}
}
