package core

import (
	"testing"
	"time"
)

func TestAgentStatusChangesAreEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox", "go")
	if a, _ := b.c.Agent("a"); a.Status != Available {
		t.Fatalf("a new agent is %s", a.Status)
	}
	for _, st := range []AgentStatus{Busy, Hibernating, Offline, Unresponsive, Available} {
		b.ok(b.c.SetAgentStatus(b.now, "a", st, "test"))
		if a, _ := b.c.Agent("a"); a.Status != st {
			t.Fatalf("status %s", a.Status)
		}
	}
	if n := len(b.eventsOf(TypeAgentStatus)); n != 5 {
		t.Fatalf("%d agent.status events", n)
	}
	b.ok(b.c.SetAgentStatus(b.now, "a", Available, "again"))
	if n := len(b.eventsOf(TypeAgentStatus)); n != 5 {
		t.Fatal("setting the same status made an event")
	}
	b.refused(b.c.SetAgentStatus(b.now, "a", "sleepy", ""), Invalid)
	b.refused(b.c.SetAgentStatus(b.now, "zed", Busy, ""), NotFound)
}

func TestAgentUnresponsiveIsAvailableAgainWhenItPolls(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox", "go")
	delegate(b, "a", "T-1")
	b.advance(10 * time.Minute)
	if a, _ := b.c.Agent("a"); a.Status != Unresponsive {
		t.Fatalf("%s", a.Status)
	}
	cycle(b, "a")
	if a, _ := b.c.Agent("a"); a.Status != Available {
		t.Fatalf("after polling: %s", a.Status)
	}
}

func TestAgentRegistrationIsValidatedAndIdempotent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox", "go")
	b.agent("a", "mailbox", "go")
	if n := len(b.eventsOf(TypeAgentRegistered)); n != 1 {
		t.Fatalf("%d registrations for the same agent", n)
	}
	b.refused(b.c.RegisterAgent(b.now, AgentSpec{Name: "bad name", Adapter: "exec"}), Invalid)
	b.refused(b.c.RegisterAgent(b.now, AgentSpec{Name: "x", Adapter: "carrier-pigeon"}), Invalid)
	b.refused(b.c.RegisterAgent(b.now, AgentSpec{Name: "x", Adapter: "exec", Capabilities: []string{""}}), Invalid)
}

func TestPullAgentsGetMessagesInTheirInboxOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("m", "mailbox", "go")
	d := delegate(b, "m", "T-1")
	if len(b.delivered("m")) != 0 {
		t.Fatal("a pull agent was pushed to")
	}
	msgs := cycle(b, "m")
	if len(msgs) != 1 || msgs[0].ID != d.ID || msgs[0].TaskID != "T-1" {
		t.Fatalf("%+v", msgs)
	}
	if msgs := cycle(b, "m"); len(msgs) != 0 {
		t.Fatalf("handed twice: %+v", msgs)
	}
}

func TestTimersIgnoredWhenStale(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "exec", "go")
	d := delegate(b, "a", "T-1")
	at := b.delivery(d.ID).TimerAt
	reply(b, "a", "", "[ACK] T-1 - RECEIVED")
	b.ok(b.c.Fire(at, d.ID)) // the runtime's heap may still hold it
	if b.c.HasReady() {
		t.Fatal("a stale timer changed something")
	}
	b.ok(b.c.Fire(at, "M-404"))
}

func TestAnAgentIsFoundByItsTokenHashAndOnlyByItsCurrentOne(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("a", "mailbox", "go")
	b.agent("b", "mailbox", "go")
	b.agent("c", "mailbox", "go") // no token
	b.ok(b.c.SetAgentToken(b.now, "a", "hash-a1"))
	b.ok(b.c.SetAgentToken(b.now, "b", "hash-b"))
	b.ok(b.c.SetAgentToken(b.now, "a", "hash-a2")) // a new token replaces the old one
	for hash, want := range map[string]string{"hash-a2": "a", "hash-b": "b", "hash-a1": "", "": "", "unknown": ""} {
		got, ok := b.c.AgentWithToken(hash)
		if got != want || ok != (want != "") {
			t.Errorf("AgentWithToken(%q) = %q, %v; want %q", hash, got, ok, want)
		}
	}
	b.refused(b.c.SetAgentToken(b.now, "c", ""), Invalid)
	b.refused(b.c.SetAgentToken(b.now, "zed", "hash-z"), NotFound)
}

func TestARemovedAgentGetsNoTokenUntilItIsRegisteredAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("tui", "tmux", "go")
	b.ok(b.c.SetAgentToken(b.now, "tui", "hash-1"))
	b.ok(b.c.RemoveAgent(b.now, "tui", "no longer in wilco.yaml"))
	b.refused(b.c.SetAgentToken(b.now, "tui", "hash-1"), Conflict)
	if got, ok := b.c.AgentWithToken("hash-1"); ok {
		t.Fatalf("the removed agent's token names %q", got)
	}
	b.agent("tui", "tmux", "go")
	b.ok(b.c.SetAgentToken(b.now, "tui", "hash-2"))
	if got, ok := b.c.AgentWithToken("hash-2"); !ok || got != "tui" {
		t.Fatalf("the token of the agent back in service names %q, %v", got, ok)
	}
}
