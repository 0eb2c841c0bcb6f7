package sim

import (
	"fmt"
	"slices"
	"strings"

	"wilco/core"
	"wilco/store"
)

// observe is the runtime's Observe hook: it gets every committed batch.
// Each event is checked against the rules, then replayed into the shadow
// core, which is always the state the durable log describes.
func (w *world) observe(evs []store.Event) {
	for _, se := range evs {
		data, err := core.DecodeEventData(se.Type, se.Data)
		if err != nil {
			w.failf("decode event %d: %v", se.Seq, err)
		}
		ev := core.Event{Seq: se.Seq, Time: se.Time, Type: se.Type, TaskID: se.TaskID, Agent: se.Agent, Data: data}
		w.recent = append(w.recent, fmt.Sprintf("%d +%s %s agent=%s task=%s %s", se.Seq, se.Time.Sub(Epoch), se.Type, se.Agent, se.TaskID, se.Data))
		if w.cfg.Trace != nil {
			w.cfg.Trace(w.recent[len(w.recent)-1])
		}
		if len(w.recent) > 40 {
			w.recent = w.recent[len(w.recent)-40:]
		}
		fmt.Fprintf(w.digest, "%d|%d|%s|%s|%s|%s\n", se.Seq, se.Time.UnixNano(), se.Type, se.TaskID, se.Agent, se.Data)
		if ev.Seq != w.shadow.Seq()+1 {
			w.failf("event %d committed after %d: the log has a gap or a repeat", ev.Seq, w.shadow.Seq())
		}
		if !ev.Time.Equal(w.clock.Now()) {
			w.failf("event %d (%s) has time +%s, the clock says +%s", ev.Seq, ev.Type, ev.Time.Sub(Epoch), w.clock.Now().Sub(Epoch))
		}
		w.checkEvent(ev)
		w.stepEvents = append(w.stepEvents, ev)
	}
}

// deliveryOf is the delivery an event is about, "" for none.
func deliveryOf(data core.EventData) string {
	switch e := data.(type) {
	case core.DeliveryQueued:
		return e.Message.ID
	case core.DeliverySent:
		return e.ID
	case core.DeliveryRetried:
		return e.ID
	case core.DeliveryNotice:
		return e.ID
	case core.DeliveryDeferred:
		return e.ID
	case core.DeliveryAcknowledged:
		return e.ID
	case core.DeliveryClarifying:
		return e.ID
	case core.DeliveryReply:
		return e.ID
	case core.DeliveryFailed:
		return e.ID
	case core.DeliveryCancelled:
		return e.ID
	case core.DeliveryReassigned:
		return e.ID
	case core.DeliveryEscalated:
		return e.ID
	case core.OperationReminder:
		return e.Delivery
	case core.OperationReply:
		return e.Delivery
	}
	return ""
}

func terminalOf(data core.EventData) core.DeliveryState {
	switch data.(type) {
	case core.DeliveryAcknowledged:
		return core.Acknowledged
	case core.DeliveryFailed:
		return core.Failed
	case core.DeliveryCancelled:
		return core.Cancelled
	}
	return ""
}

// checkEvent checks one event against the state before it (the shadow
// core), applies it, and checks the state after it.
func (w *world) checkEvent(ev core.Event) {
	id := deliveryOf(ev.Data)
	before, exists := w.shadow.Delivery(id)
	pol := w.shadow.Policies()
	ended := w.terminal[id]

	// Rule 1: a delivery ends once.
	if id != "" && ended != "" {
		switch e := ev.Data.(type) {
		case core.DeliveryNotice:
		case core.DeliveryReply:
			if ended != core.Acknowledged {
				w.failf("event %d: reply recorded on %s, which is %s", ev.Seq, id, ended)
			}
		case core.DeliveryReassigned, core.DeliveryEscalated:
			if ended != core.Failed {
				w.failf("event %d: %s of %s, which is %s, not failed", ev.Seq, ev.Type, id, ended)
			}
		default:
			if t := terminalOf(e); t != "" {
				w.failf("event %d: %s ends a second time (%s, then %s)", ev.Seq, id, ended, t)
			}
			w.failf("event %d: %s changes %s, which already ended %s", ev.Seq, ev.Type, id, ended)
		}
	}
	if t := terminalOf(ev.Data); t != "" && !exists {
		w.failf("event %d: %s of unknown delivery %s", ev.Seq, ev.Type, id)
	}

	w.checkPolicy(ev, before, pol)
	if w.tw.on && ev.TaskID != "" {
		w.checkTaskEvent(ev)
	}

	if err := w.shadow.Replay(ev); err != nil {
		w.failf("replay event %d: %v", ev.Seq, err)
	}

	after, _ := w.shadow.Delivery(id)
	if t := terminalOf(ev.Data); t != "" {
		w.terminal[id] = t
		ended = t
	}
	if id != "" && ended != "" && after.State != ended {
		w.failf("event %d (%s): %s ended %s but is now %s", ev.Seq, ev.Type, id, ended, after.State)
	}
	w.checkPolicyAfter(ev, before, after, pol)
	w.count(ev, before, after)
}

// checkPolicy checks the sends and timers of an event against the policy in
// force when it happened (rules 3 and 4).
func (w *world) checkPolicy(ev core.Event, d core.Delivery, pol core.Policies) {
	switch e := ev.Data.(type) {
	case core.DeliverySent:
		w.checkDeliverySent(ev, e, d, pol)
	case core.DeliveryRetried:
		w.checkDeliveryRetried(ev, e, d, pol)
	case core.DeliveryFailed:
		w.checkDeliveryFailed(ev, e, d, pol)
	case core.DeliveryAcknowledged:
		if e.Status == "queued" && !e.TimerAt.Equal(ev.Time.Add(pol.Ack.QueuedFollowup)) {
			w.failf("event %d: QUEUED %s follows up at +%s, want %s later", ev.Seq, e.ID, e.TimerAt.Sub(Epoch), pol.Ack.QueuedFollowup)
		}
		if !strings.HasPrefix(w.current, "reply from ") && !strings.HasPrefix(w.current, "agent ack from ") && !strings.HasPrefix(w.current, "acknowledge ") {
			w.failf("event %d: %s acknowledged by %q, which is not an acknowledgment", ev.Seq, e.ID, w.current)
		}
	case core.OperationReminder:
		w.checkOperationReminder(ev, e, d, pol)
	case core.OperationReply:
		w.checkOperationReply(ev, e, d, pol)
	case core.OperationStateChanged:
		w.checkOperation(ev, e)
	case core.DeliveryReassigned:
		a, ok := w.shadow.Agent(e.To)
		switch {
		case !ok || a.Status != core.Available || !a.Capable(d.Capabilities()):
			w.failf("event %d: %s reassigned to %s, which is %s with %v (needs %v)", ev.Seq, d.ID, e.To, a.Status, a.Capabilities, d.Capabilities())
		case e.To == d.To || slices.Contains(d.Tried(), e.To):
			w.failf("event %d: %s reassigned to %s, who had it already (%s, tried %v)", ev.Seq, d.ID, e.To, d.To, d.Tried())
		case !w.mayTakeOver(d, a):
			w.failf("event %d: %s of %s, a task worked in parallel, reassigned to %s, which has no instance free", ev.Seq, d.ID, d.TaskID, e.To)
		}
	case core.DeliveryEscalated:
		if strings.Contains(e.Reason, "no other capable agent") {
			for _, a := range w.shadow.Agents() {
				if a.Name != d.To && !slices.Contains(d.Tried(), a.Name) && a.Status == core.Available && a.Capable(d.Capabilities()) && w.mayTakeOver(d, a) {
					w.failf("event %d: %s escalated for want of an agent, yet %s is available and capable", ev.Seq, d.ID, a.Name)
				}
			}
		}
	case core.DeliveryNotice:
		if e.Kind == core.SendFollowup && !e.TimerAt.Equal(ev.Time.Add(pol.Ack.QueuedFollowup)) {
			w.failf("event %d: follow-up of %s arms +%s, want %s later", ev.Seq, e.ID, e.TimerAt.Sub(Epoch), pol.Ack.QueuedFollowup)
		}
	case core.DeliveryDeferred:
		if strings.HasPrefix(e.Reason, "NETWORK_ERROR") {
			if want := ev.Time.Add(pol.Ack.Wait(max(d.Round, 1))); !e.TimerAt.Equal(want) || e.Resend {
				w.failf("event %d: NETWORK_ERROR defers %s to +%s (resend %v), want +%s", ev.Seq, e.ID, e.TimerAt.Sub(Epoch), e.Resend, want.Sub(Epoch))
			}
		}
	}
}

// mayTakeOver reports whether an agent may take over a delegation: for a
// task worked in parallel, only one with an instance free.
func (w *world) mayTakeOver(d core.Delivery, a core.Agent) bool {
	t, ok := w.shadow.Task(d.TaskID)
	if !ok || t.Worktree == "" {
		return true
	}
	return len(holding(w.shadow)[a.Name]) < max(a.Instances, 1)
}

// checkDeliverySent checks a DeliverySent event.
func (w *world) checkDeliverySent(ev core.Event, e core.DeliverySent, d core.Delivery, pol core.Policies) {
	policy := d.Policy
	if e.Message != nil {
		policy = e.Message.Policy
	}
	switch {
	case policy == core.PolicyCycles:
		if to := d.To; w.current != "cycle of "+to {
			w.failf("event %d: instruction %s sent outside a dispatch cycle of %s (in %q)", ev.Seq, e.ID, to, w.current)
		}
	case policy == core.PolicyBackoff:
		w.checkBackoffSend(ev, e.Send, pol)
	case policy == core.PolicyReminders && e.Message != nil:
		o, _ := w.shadow.Operation(e.Message.OperationID)
		want := ev.Time.Add(o.Policy.Timeout)
		if len(o.Policy.Reminders) > 0 {
			want = ev.Time.Add(o.Policy.Reminders[0])
		}
		if !e.TimerAt.Equal(want) {
			w.failf("event %d: pre-operation request %s arms +%s, want +%s", ev.Seq, e.ID, e.TimerAt.Sub(Epoch), want.Sub(Epoch))
		}
	}
}

// checkDeliveryRetried checks a DeliveryRetried event.
func (w *world) checkDeliveryRetried(ev core.Event, e core.DeliveryRetried, d core.Delivery, pol core.Policies) {
	if d.Policy == core.PolicyBackoff {
		w.checkBackoffSend(ev, e.Send, pol)
		if e.Correction && d.Corrections+1 > pol.Ack.MaxCorrections {
			w.failf("event %d: correction %d of %s, max_corrections %d", ev.Seq, d.Corrections+1, d.ID, pol.Ack.MaxCorrections)
		}
	}
	if d.Policy == core.PolicyCycles && w.current != "cycle of "+d.To {
		w.failf("event %d: instruction %s retried outside a dispatch cycle of %s (in %q)", ev.Seq, d.ID, d.To, w.current)
	}
}

// checkDeliveryFailed checks a DeliveryFailed event.
func (w *world) checkDeliveryFailed(ev core.Event, e core.DeliveryFailed, d core.Delivery, pol core.Policies) {
	switch d.Policy {
	case core.PolicyCycles:
		if w.current != "cycle of "+d.To {
			w.failf("event %d: instruction %s failed outside a dispatch cycle of %s (in %q)", ev.Seq, d.ID, d.To, w.current)
		}
		if d.Sends != d.MaxRetries+1 {
			w.failf("event %d: instruction %s failed after %d sends, max_retries %d", ev.Seq, d.ID, d.Sends, d.MaxRetries)
		}
	case core.PolicyBackoff:
		if e.Reason == "unresponsive" {
			if w.current != "" {
				w.failf("event %d: %s unresponsive outside a timer (in %q)", ev.Seq, d.ID, w.current)
			}
			if d.State != core.Sent || d.Round < len(pol.Ack.Timeouts) || d.Resend {
				w.failf("event %d: %s unresponsive in round %d of %d (state %s, resend %v)", ev.Seq, d.ID, d.Round, len(pol.Ack.Timeouts), d.State, d.Resend)
			}
		}
	case core.PolicyReminders:
		if e.Reason == "timeout" && !ev.Time.Equal(waitOf(d).Deadline) {
			w.failf("event %d: %s timed out at +%s, its deadline is +%s", ev.Seq, d.ID, ev.Time.Sub(Epoch), waitOf(d).Deadline.Sub(Epoch))
		}
	}
}

// checkOperationReminder checks a OperationReminder event.
func (w *world) checkOperationReminder(ev core.Event, e core.OperationReminder, d core.Delivery, pol core.Policies) {
	o, _ := w.shadow.Operation(e.ID)
	if e.Number < 1 || e.Number > len(o.Policy.Reminders) {
		w.failf("event %d: reminder %d of %s, the policy has %d", ev.Seq, e.Number, e.Delivery, len(o.Policy.Reminders))
	}
	if want := o.CreatedAt.Add(o.Policy.Reminders[e.Number-1]); !ev.Time.Equal(want) {
		w.failf("event %d: reminder %d of %s at +%s, want +%s", ev.Seq, e.Number, e.Delivery, ev.Time.Sub(Epoch), want.Sub(Epoch))
	}
	if e.Number != waitOf(d).Reminded+1 {
		w.failf("event %d: reminder %d of %s after %d reminders", ev.Seq, e.Number, e.Delivery, waitOf(d).Reminded)
	}
	if !ev.Time.Before(waitOf(d).Deadline) {
		w.failf("event %d: reminder of %s at or after its deadline", ev.Seq, e.Delivery)
	}
}

// checkOperationReply checks a OperationReply event.
func (w *world) checkOperationReply(ev core.Event, e core.OperationReply, d core.Delivery, pol core.Policies) {
	if !e.Deadline.IsZero() {
		o, _ := w.shadow.Operation(e.ID)
		if waitOf(d).Extended || w.extended[d.ID] > 0 {
			w.failf("event %d: a second extension for %s", ev.Seq, d.ID)
		}
		if want := waitOf(d).Deadline.Add(o.Policy.Extension); !e.Deadline.Equal(want) {
			w.failf("event %d: extension of %s to +%s, want +%s", ev.Seq, d.ID, e.Deadline.Sub(Epoch), want.Sub(Epoch))
		}
		w.extended[d.ID]++
	}
}

// checkBackoffSend checks a send under the backoff policy: its round is
// within the timeouts, and its timer is the table: the round's
// timeout, plus the wait before the next attempt when there is one.
func (w *world) checkBackoffSend(ev core.Event, s core.Send, pol core.Policies) {
	p := pol.Ack
	if s.Round < 1 || s.Round > len(p.Timeouts) {
		w.failf("event %d: %s sent in round %d, the policy has %d timeouts", ev.Seq, s.ID, s.Round, len(p.Timeouts))
	}
	want := ev.Time.Add(p.Timeouts[s.Round-1])
	if s.Round < len(p.Timeouts) {
		want = want.Add(p.Wait(s.Round))
	}
	if !s.TimerAt.Equal(want) {
		w.failf("event %d: %s (round %d) arms +%s, want +%s", ev.Seq, s.ID, s.Round, s.TimerAt.Sub(Epoch), want.Sub(Epoch))
	}
}

// checkOperation checks how an operation was decided against its quorum.
func (w *world) checkOperation(ev core.Event, e core.OperationStateChanged) {
	o, _ := w.shadow.Operation(e.ID)
	if o.State != e.From || o.State.Terminal() {
		w.failf("event %d: operation %s goes %s → %s, it is %s", ev.Seq, e.ID, e.From, e.To, o.State)
	}
	ok, open := 0, 0
	for _, id := range o.Deliveries {
		d, _ := w.shadow.Delivery(id)
		switch d.State {
		case core.Acknowledged:
			ok++
		case core.Sent, core.Pending:
			open++
		}
	}
	n := len(o.Agents)
	need, _ := o.Policy.Quorum.Need(n)
	switch {
	case e.From == core.OpWaiting && e.To == core.OpProceeding && !e.TimeoutOccurred:
		if ok != n {
			w.failf("event %d: operation %s proceeds with %d of %d ok", ev.Seq, e.ID, ok, n)
		}
	case e.From == core.OpWaiting && e.To == core.OpProceeding:
		if open > 0 || !o.Policy.ProceedOnTimeout || n > 1 && ok < need {
			w.failf("event %d: operation %s proceeds on timeout with %d of %d ok (quorum %s, %d open, proceed_on_timeout %v)", ev.Seq, e.ID, ok, n, o.Policy.Quorum, open, o.Policy.ProceedOnTimeout)
		}
	case e.From == core.OpWaiting && e.To == core.OpAborted:
		if open > 0 || o.Policy.ProceedOnTimeout && (n == 1 || ok >= need) {
			w.failf("event %d: operation %s aborted with %d of %d ok (quorum %s, %d open, proceed_on_timeout %v)", ev.Seq, e.ID, ok, n, o.Policy.Quorum, open, o.Policy.ProceedOnTimeout)
		}
	}
}

// checkPolicyAfter checks the counts after an event (rule 3).
func (w *world) checkPolicyAfter(ev core.Event, before, d core.Delivery, pol core.Policies) {
	if d.ID == "" {
		return
	}
	switch d.Policy {
	case core.PolicyCycles:
		if d.Sends > d.MaxRetries+1 {
			w.failf("event %d: instruction %s sent %d times, max_retries %d", ev.Seq, d.ID, d.Sends, d.MaxRetries)
		}
	case core.PolicyBackoff:
		if d.Corrections > before.Corrections && d.Corrections > pol.Ack.MaxCorrections {
			w.failf("event %d: %s has %d corrections, max_corrections %d", ev.Seq, d.ID, d.Corrections, pol.Ack.MaxCorrections)
		}
	case core.PolicyReminders:
		o, _ := w.shadow.Operation(d.OperationID)
		if waitOf(d).Reminded > len(o.Policy.Reminders) {
			w.failf("event %d: %s got %d reminders, the policy has %d", ev.Seq, d.ID, waitOf(d).Reminded, len(o.Policy.Reminders))
		}
	}
}

// count notes which path of the policies an event shows.
func (w *world) count(ev core.Event, before, d core.Delivery) {
	switch e := ev.Data.(type) {
	case core.DeliveryQueued:
		w.hit("cycles.queued")
	case core.DeliverySent:
		w.hit(string(d.Policy) + ".sent")
		if len(d.Tried()) > 0 {
			w.hit("backoff.reassigned_sent")
		}
	case core.DeliveryRetried:
		w.hit(string(d.Policy) + "." + string(e.Kind))
	case core.DeliveryNotice:
		w.hit("notice." + string(e.Kind))
	case core.DeliveryDeferred:
		code, _, _ := strings.Cut(e.Reason, ":")
		w.hit("ackerr." + code + ".deferred")
	case core.DeliveryAcknowledged:
		w.hit(string(d.Policy) + ".ack." + e.By)
		if e.Status != "" {
			w.hit(string(d.Policy) + ".ack.status." + e.Status)
		}
		if before.State == core.Clarifying {
			w.hit("backoff.ack.while_clarifying")
		}
	case core.DeliveryClarifying:
		w.hit("backoff.clarifying")
	case core.DeliveryReply:
		switch {
		case e.Released:
			w.hit("backoff.complete")
		case e.Started:
			w.hit("backoff.checkpoint")
			if before.Queued {
				w.hit("backoff.queued_then_started")
			}
		case e.ID == "":
			w.hit("reply.logged")
		default:
			w.hit("backoff.reply_logged")
		}
	case core.DeliveryFailed:
		w.hit(string(d.Policy) + ".failed." + failureKey(e.Reason))
	case core.DeliveryCancelled:
		switch {
		case strings.Contains(e.Reason, "already held by"):
			w.hit("backoff.cancelled.held_by_other")
		case d.Policy == core.PolicyReminders:
			w.hit("reminders.cancelled")
		default:
			w.hit(string(d.Policy) + ".cancelled")
		}
	case core.DeliveryReassigned:
		w.hit("backoff.reassigned")
	case core.DeliveryEscalated:
		w.hit("backoff.escalated")
	case core.AgentStatusChanged:
		w.hit("agent." + string(e.To))
	case core.OperationStarted:
		w.hit("op.started")
		w.ops = append(w.ops, e.Operation.ID)
		if len(e.Operation.Agents) > 1 {
			w.hit("op.started.several_agents")
		}
	case core.OperationReminder:
		w.hit("op.reminder." + e.Tone)
	case core.OperationReply:
		switch {
		case !e.Deadline.IsZero():
			w.hit("op.extension")
		case e.Answer == "wait":
			w.hit("op.extension_refused")
		default:
			w.hit("op.answer." + e.Answer)
		}
	case core.OperationStateChanged:
		w.hit(opStateKey(e))
	case core.PoliciesSet:
		w.hit("config.policies")
	}
}

// failureKey is the path a delivery's failure reaches, by its reason.
func failureKey(reason string) string {
	switch {
	case strings.HasPrefix(reason, "not acknowledged after"):
		reason = "max_retries"
	case strings.HasPrefix(reason, "still wrong after"):
		reason = "corrections_exhausted"
	case strings.HasPrefix(reason, "rejected by"):
		reason = "rejected"
	default:
		reason, _, _ = strings.Cut(reason, ":")
	}
	return reason
}

// opStateKey is the path an operation's change of state reaches.
func opStateKey(e core.OperationStateChanged) string {
	key := "op." + string(e.To)
	switch {
	case e.To == core.OpProceeding && e.ProceededAnyway:
		key += ".timeout"
	case e.To == core.OpProceeding:
		key += ".all_ok"
	case e.To == core.OpAborted && strings.Contains(e.Reason, "quorum needs"):
		key += ".quorum"
	case e.To == core.OpAborted:
		key += ".proceed_off"
	case e.To == core.OpCancelled && strings.Contains(e.Reason, "at the request of"):
		key += ".by_agent"
	case e.To == core.OpCancelled:
		key += ".by_user"
	case e.To == core.OpDone && strings.Contains(e.Reason, "no command"):
		key += ".no_command"
	}
	return key
}

// RequiredPaths are the paths a long run must reach: every rule of the
// three policies, every answer of the acknowledgment language, every kind
// of misbehaving agent, every kind of restart.
var RequiredPaths = []string{
	// cycles
	"cycles.queued", "cycles.sent", "cycles.retry", "cycles.failed.max_retries",
	"cycles.ack.caller", "cycles.ack.matcher", "cycles.ack.reply", "cycles.ack.agent", "cycles.cancelled",
	// backoff
	"backoff.sent", "backoff.ack_request", "backoff.failed.unresponsive", "agent.unresponsive",
	"backoff.reassigned", "backoff.reassigned_sent", "backoff.escalated",
	"backoff.correction", "backoff.wrong_id", "backoff.failed.corrections_exhausted",
	"backoff.clarifying", "backoff.task_clarification", "backoff.ack.status.confirmed",
	"backoff.ack.status.received", "backoff.ack.status.queued", "notice.followup", "backoff.queued_then_started",
	"backoff.checkpoint", "backoff.complete", "backoff.reply_logged", "backoff.failed.rejected",
	"backoff.cancelled", "backoff.cancelled.held_by_other", "notice.cancel", "backoff.ack.caller",
	"ackerr.RESOURCE_UNAVAILABLE.deferred", "backoff.resend", "backoff.failed.RESOURCE_UNAVAILABLE",
	"backoff.failed.CAPABILITY_MISMATCH", "ackerr.NETWORK_ERROR.deferred", "backoff.failed.INVALID_TASK_FORMAT",
	"backoff.failed.AGENT_SHUTTING_DOWN", "agent.offline", "agent.busy", "agent.available",
	// conversations
	"none.sent", "none.ack.reply", "none.ack.agent", "none.ack.caller", "reply.logged",
	// reminders
	"op.started", "op.started.several_agents", "reminders.sent", "op.reminder.gentle", "op.reminder.firm", "op.reminder.final",
	"op.extension", "op.extension_refused", "notice.extension_granted", "op.answer.info", "op.answer.ok",
	"notice.timeout_notice", "reminders.failed.timeout", "notice.operation_outcome",
	"op.proceeding.all_ok", "op.proceeding.timeout", "op.aborted.proceed_off", "op.aborted.quorum",
	"op.cancelled.by_agent", "op.cancelled.by_user", "reminders.cancelled", "op.run", "op.done", "op.failed", "op.done.no_command",
	// refusals, and answers to what already ended
	"refused.not_found", "refused.conflict", "refused.permission_denied", "refused.invalid_argument",
	"reply.after_acknowledged", "reply.after_failed", "reply.after_cancelled", "reply.after_operation_end",
	// agents
	"agent.silent", "agent.slow", "agent.duplicate", "agent.out_of_order", "agent.wrong_id", "agent.late",
	// timers and restarts
	"timers.fired", "restart.crash", "restart.clean", "restart.fail_before_commit", "restart.crash_after_commit",
	"restart.fault_in_checkpoint", "checkpoint.pack", "checkpoint.own_record_deleted", "restart.from_pack",
	"restart.timers_recovered", "check.replay_all",
}

// Missing returns the required paths that paths never reached.
func Missing(paths map[string]int) []string {
	var out []string
	for _, p := range RequiredPaths {
		if paths[p] == 0 {
			out = append(out, p)
		}
	}
	return out
}

// waitOf is the reminders policy's state of a delivery (zero for others).
func waitOf(d core.Delivery) core.OperationWait {
	if d.Wait == nil {
		return core.OperationWait{}
	}
	return *d.Wait
}
