package core

import (
	"strings"
	"testing"
	"time"
)

func jsonReply(b *testBundle, agent, typ, data string) (Interpretation, error) {
	b.t.Helper()
	return b.c.Reply(b.now, ReplyInput{Agent: agent, Type: typ, Data: []byte(data)})
}

func TestAnswerReceivedConfirmsAssignment(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{
		"text RECEIVED":  "[ACK] GH-42 - RECEIVED\nUnderstanding: Implementing JWT auth",
		"JSON received":  `{"type":"task-acknowledgment","task_id":"GH-42","status":"received","understanding":"Implementing JWT auth"}`,
		"JSON confirmed": `{"type":"task-acknowledgment","task_id":"GH-42","status":"confirmed","understanding":"JWT with 24h expiry"}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.agent("claude", "mailbox", "go")
			d := delegate(b, "claude", "GH-42")
			in := reply(b, "claude", "", text)
			if b.delivery(d.ID).State != Acknowledged || !strings.Contains(in.Action, "work may begin") {
				t.Fatalf("%+v", in)
			}
			if h, ok := b.c.HoldsTask("GH-42"); !ok || h != d.ID {
				t.Fatal("the acknowledging agent does not hold the task")
			}
		})
	}
}

func TestAnswerClarificationNeededGoesToUserThenConfirmed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("claude", "mailbox", "go")
	d := delegate(b, "claude", "GH-42")
	in, err := jsonReply(b, "claude", "task-acknowledgment", `{"task_id":"GH-42","status":"needs-clarification","questions":["Should JWT tokens expire after 24h or 7 days?","Should we support refresh tokens?"]}`)
	b.ok(err)
	got := b.delivery(d.ID)
	if got.State != Clarifying || len(got.Questions()) != 2 || len(in.Questions) != 2 {
		t.Fatalf("state %s questions %v", got.State, got.Questions())
	}
	if len(b.c.Timers()) != 0 {
		t.Fatal("timers run while the user answers")
	}
	b.advance(time.Hour) // the user takes their time: nothing is resent
	_, err = b.c.Clarify(b.now, d.ID, []string{"24 hours with refresh token support", "Yes, implement refresh tokens"})
	b.ok(err)
	cyc := cycle(b, "claude")
	last := cyc[len(cyc)-1]
	if last.Type != string(SendClarification) || !strings.Contains(last.Body, "24 hours with refresh token support") {
		t.Fatalf("clarification not sent back: %+v", last)
	}
	if b.delivery(d.ID).State != Sent {
		t.Fatal("not waiting for confirmation")
	}
	_, err = jsonReply(b, "claude", "task-acknowledgment", `{"task_id":"GH-42","status":"confirmed","understanding":"JWT with 24h expiry + refresh tokens"}`)
	b.ok(err)
	if b.delivery(d.ID).State != Acknowledged {
		t.Fatal("confirmed did not confirm")
	}
	_, err = b.c.Clarify(b.now, d.ID, []string{"again"})
	b.refused(err, Conflict)
}

func TestAnswerQueuedFollowsUpIfWorkHasNotStarted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("claude", "exec", "go")
	d := delegate(b, "claude", "GH-4-xls-implementation")
	reply(b, "claude", "", "[ACK] GH-4-xls-implementation - QUEUED\nUnderstanding: Directory browser with full CLI flags\nNote: Currently completing GH-3, will start this after current task completes")
	if got := b.delivery(d.ID); got.State != Acknowledged || !got.Queued {
		t.Fatalf("%s queued=%v", got.State, got.Queued)
	}
	b.advance(15 * time.Minute)
	msgs := b.delivered("claude")
	if last := msgs[len(msgs)-1]; last.Type != string(SendFollowup) || b.now.Sub(epoch) != 15*time.Minute {
		t.Fatalf("no follow-up after 15m: %+v", last)
	}
	_, err := jsonReply(b, "claude", "checkpoint-ack", `{"task_id":"GH-4-xls-implementation","checkpoint":1,"status":"completed","summary":"Tests written","next_checkpoint":2}`)
	b.ok(err)
	n := len(b.delivered("claude"))
	b.advance(time.Hour)
	if len(b.delivered("claude")) != n {
		t.Fatal("follow-ups continue after work started")
	}
}

func TestAnswerRejectedReassignsElseEscalates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	b.agent("bob", "exec", "go")
	d := delegate(b, "alice", "GH-42")
	in := reply(b, "alice", "", "[ACK] GH-42 - REJECTED\nNote: I do not work on auth code")
	if in.Action != "reassigned to bob" || b.delivery(d.ID).State != Failed {
		t.Fatalf("%+v", in)
	}
	nd := b.c.Deliveries(func(x *Delivery) bool { return x.To == "bob" })[0]
	in = reply(b, "bob", "", "[ACK] GH-42 - REJECTED")
	if in.Action != "escalated to the user" || b.delivery(nd.ID).State != Failed {
		t.Fatalf("second rejection: %+v", in)
	}
}

func TestAnswerResourceUnavailableWaitsRetryAfterThenResendsOrReassigns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	d := delegate(b, "alice", "GH-42")
	in, err := jsonReply(b, "alice", "task-acknowledgment-error", `{"task_id":"GH-42","error_code":"RESOURCE_UNAVAILABLE","error_message":"Cannot accept task: current load at 95%","retry_after_minutes":15,"alternative_agents":["agent-backend-02"]}`)
	b.ok(err)
	if !strings.Contains(in.Action, "resending in 15m") {
		t.Fatalf("%+v", in)
	}
	if a, _ := b.c.Agent("alice"); a.Status != Busy {
		t.Fatalf("alice is %s", a.Status)
	}
	b.advance(15 * time.Minute)
	msgs := b.delivered("alice")
	if len(msgs) != 2 || msgs[1].Type != string(SendResend) {
		t.Fatalf("no resend after retry_after: %+v", msgs)
	}
	if got := b.delivery(d.ID); got.State != Sent || got.Round != 1 {
		t.Fatalf("%s round %d", got.State, got.Round)
	}
	// With another capable agent available, it is reassigned at once.
	b.agent("bob", "exec", "go")
	_, err = jsonReply(b, "alice", "task-acknowledgment-error", `{"task_id":"GH-42","error_code":"RESOURCE_UNAVAILABLE","error_message":"busy","retry_after_minutes":15}`)
	b.ok(err)
	if len(b.eventsOf(TypeDeliveryReassigned)) != 1 {
		t.Fatal("not reassigned to the available agent")
	}
}

func TestAnswerCapabilityMismatchReassignsNow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	b.agent("bob", "exec", "go")
	delegate(b, "alice", "GH-42")
	_, err := jsonReply(b, "alice", "task-acknowledgment-error", `{"task_id":"GH-42","error_code":"CAPABILITY_MISMATCH","error_message":"no Go toolchain"}`)
	b.ok(err)
	if re := b.eventsOf(TypeDeliveryReassigned); len(re) != 1 || re[0].Time != epoch {
		t.Fatal("capability mismatch did not reassign at once")
	}
}

func TestAnswerAgentShuttingDownMarksOfflineAndReassigns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	b.agent("bob", "exec", "go")
	delegate(b, "alice", "GH-42")
	_, err := jsonReply(b, "alice", "task-acknowledgment-error", `{"task_id":"GH-42","error_code":"AGENT_SHUTTING_DOWN","error_message":"bye"}`)
	b.ok(err)
	if a, _ := b.c.Agent("alice"); a.Status != Offline {
		t.Fatalf("alice is %s", a.Status)
	}
	if len(b.eventsOf(TypeDeliveryReassigned)) != 1 {
		t.Fatal("not reassigned")
	}
}

func TestAnswerNetworkErrorRetriesWithBackoff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	d := delegate(b, "alice", "GH-42")
	_, err := jsonReply(b, "alice", "task-acknowledgment-error", `{"task_id":"GH-42","error_code":"NETWORK_ERROR","error_message":"flaky"}`)
	b.ok(err)
	b.advance(30 * time.Second)
	if got := b.delivery(d.ID); got.Sends != 2 || got.Round != 2 {
		t.Fatalf("sends %d round %d, want a retry after base wait", got.Sends, got.Round)
	}
}

func TestAnswerInvalidTaskFormatEscalates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	b.agent("bob", "exec", "go")
	d := delegate(b, "alice", "GH-42")
	_, err := jsonReply(b, "alice", "task-acknowledgment-error", `{"task_id":"GH-42","error_code":"INVALID_TASK_FORMAT","error_message":"no acceptance criteria"}`)
	b.ok(err)
	if len(b.eventsOf(TypeDeliveryEscalated)) != 1 || len(b.eventsOf(TypeDeliveryReassigned)) != 0 || b.delivery(d.ID).State != Failed {
		t.Fatal("invalid task format must escalate, not reassign")
	}
}

func TestUnderstandingWrongTaskIDResendsNamingTheID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	d := delegate(b, "alice", "GH-42")
	in := reply(b, "alice", d.ID, "[ACK] GH-41 - RECEIVED\nUnderstanding: auth")
	if b.delivery(d.ID).State == Acknowledged {
		t.Fatal("an ACK for the wrong task id was accepted")
	}
	msgs := b.delivered("alice")
	last := msgs[len(msgs)-1]
	if last.Type != string(SendWrongID) || !strings.Contains(last.Body, "GH-42") {
		t.Fatalf("no resend naming the id: %+v (%+v)", last, in)
	}
}

func TestUnderstandingMissingAcceptanceItemsGetsCorrectionThenEscalates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	d := delegate(b, "alice", "GH-4", "directory listing with fs::read_dir", "serde_json formatting", "CLI flags --sort --reverse --format")
	for i := 1; i <= 2; i++ {
		reply(b, "alice", d.ID, "[ACK] GH-4 - RECEIVED\nUnderstanding: Will implement directory listing with fs::read_dir")
		got := b.delivery(d.ID)
		if got.State != Sent || got.Corrections != i {
			t.Fatalf("after wrong understanding %d: %s corrections %d", i, got.State, got.Corrections)
		}
		msgs := b.delivered("alice")
		last := msgs[len(msgs)-1]
		if last.Type != string(SendCorrection) || !strings.Contains(last.Body, "serde_json formatting") {
			t.Fatalf("correction does not quote what is missing: %+v", last)
		}
	}
	reply(b, "alice", d.ID, "[ACK] GH-4 - RECEIVED\nUnderstanding: Will implement directory listing with fs::read_dir")
	if len(b.eventsOf(TypeDeliveryEscalated)) != 1 || b.delivery(d.ID).State != Failed {
		t.Fatal("not escalated after 2 corrections")
	}
}

func TestUnderstandingCoveringEveryItemIsAccepted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	d := delegate(b, "alice", "GH-4", "directory listing with fs::read_dir", "serde_json formatting", "CLI flags --sort --reverse --format")
	reply(b, "alice", d.ID, "[ACK] GH-4 - RECEIVED\nUnderstanding: Will implement directory listing with fs::read_dir, serde_json formatting, and all CLI flags (--sort, --reverse, --format, --verbose, --human)")
	if b.delivery(d.ID).State != Acknowledged {
		t.Fatal("a full understanding was not accepted")
	}
}

func TestSameTaskAcknowledgedByTwoAgentsFirstKeepsIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	b.agent("bob", "exec", "go")
	first := delegate(b, "alice", "GH-42")
	second := delegate(b, "bob", "GH-42")
	reply(b, "alice", first.ID, "[ACK] GH-42 - RECEIVED")
	in := reply(b, "bob", second.ID, "[ACK] GH-42 - RECEIVED")
	if b.delivery(second.ID).State != Cancelled || !strings.Contains(in.Action, "alice holds") {
		t.Fatalf("second ACK: %+v", in)
	}
	msgs := b.delivered("bob")
	if last := msgs[len(msgs)-1]; last.Type != string(SendCancel) {
		t.Fatalf("bob was not sent a cancel: %+v", last)
	}
	if h, _ := b.c.HoldsTask("GH-42"); h != first.ID {
		t.Fatal("the first assignee lost the task")
	}
}

func TestReplyToSomethingSettledChangesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	b.agent("bob", "exec", "go")
	d := delegate(b, "alice", "GH-42")
	reply(b, "alice", d.ID, "[ACK] GH-42 - RECEIVED")
	_, err := b.c.Reply(b.now, ReplyInput{Agent: "alice", InReplyTo: d.ID, Text: "[ACK] GH-42 - RECEIVED"})
	b.refused(err, Conflict) // a duplicate is not counted twice
	_, err = b.c.Reply(b.now, ReplyInput{Agent: "bob", InReplyTo: d.ID, Text: "[ACK] GH-42 - RECEIVED"})
	b.refused(err, PermissionDenied)
	_, err = b.c.Reply(b.now, ReplyInput{Agent: "bob", Text: "[ACK] GH-42 - RECEIVED"})
	b.refused(err, PermissionDenied)
	_, err = b.c.Reply(b.now, ReplyInput{Agent: "alice", InReplyTo: "M-404", Text: "ok"})
	b.refused(err, NotFound)
	_, err = b.c.Reply(b.now, ReplyInput{Agent: "ghost", Text: "ok"})
	b.refused(err, NotFound)
	_, err = b.c.Reply(b.now, ReplyInput{Agent: "alice", Type: "task-acknowledgment", Data: []byte(`{"task_id":`)})
	b.refused(err, Invalid)
	_, err = b.c.Reply(b.now, ReplyInput{Agent: "alice", Text: "   "})
	b.refused(err, Invalid)
	_, err = b.c.Reply(b.now, ReplyInput{Agent: "alice", Text: "[ACK] GH-42 - MAYBE"})
	b.refused(err, Invalid)
	err = b.c.AgentAck(b.now, "alice", d.ID)
	b.refused(err, Conflict)
}

func TestConversationNeedsNoAckTheReplyIsTheAcknowledgment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "mailbox", "go")
	d, err := b.c.Send(b.now, SendRequest{To: "alice", Body: "What do you think of approach B?"})
	b.ok(err)
	if d.Type != TypeConversation || d.Policy != PolicyNone || len(b.c.Timers()) != 0 {
		t.Fatalf("classified %s policy %s", d.Type, d.Policy)
	}
	reply(b, "alice", "", "B is simpler, go with it")
	if b.delivery(d.ID).State != Acknowledged {
		t.Fatal("the reply did not acknowledge the conversation")
	}
}

func TestClassifiedDelegationIsTrackedUnderTheAckPolicy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "mailbox", "go")
	d, err := b.c.Send(b.now, SendRequest{To: "alice", Body: "## Task: GH-42-feature\n\n## Acceptance Criteria\n- [ ] tests pass"})
	b.ok(err)
	if d.Type != TypeDelegation || d.Policy != PolicyBackoff || d.TaskID != "GH-42-feature" {
		t.Fatalf("%+v", d.Message)
	}
	_, err = b.c.Send(b.now, SendRequest{To: "alice", Type: TypeDelegation, Body: "do something"})
	b.refused(err, Invalid)
}
