package core

import (
	"slices"
	"time"
)

// apply is the only place the state changes. It is called for live events
// (emit) and for replayed ones (Replay); effects are produced only when
// live.
func (s *State) apply(ev Event) {
	now := ev.Time
	switch e := ev.Data.(type) {
	case PoliciesSet:
		s.policies = e.Policies
		s.touch(KindMeta, "core")

	case AgentRegistered:
		a, ok := s.agents[e.Name]
		if !ok {
			a = &Agent{Name: e.Name, Status: Available}
			s.agents[e.Name] = a
		}
		a.Adapter, a.Capabilities, a.Pull = e.Adapter, slices.Clone(e.Capabilities), e.Pull
		s.touch(KindAgent, e.Name)

	case AgentStatusChanged:
		if a := s.agents[ev.Agent]; a != nil {
			a.Status = e.To
			s.touch(KindAgent, a.Name)
		}

	case AgentTokenSet:
		if a := s.agents[ev.Agent]; a != nil {
			a.TokenHash = e.TokenHash
			s.touch(KindAgent, a.Name)
		}

	case AgentCycle:
		if a := s.agents[ev.Agent]; a != nil {
			a.Inbox = a.Inbox[min(e.Fetched, len(a.Inbox)):]
			if len(a.Inbox) == 0 {
				a.Inbox = nil
			}
			s.touch(KindAgent, a.Name)
		}

	case DeliveryQueued:
		d := s.create(now, e.Message)
		d.State = Pending
		if a := s.agents[d.To]; a != nil {
			a.Pending = append(a.Pending, d.ID)
			s.touch(KindAgent, a.Name)
		}

	case DeliverySent:
		s.applySend(now, e.Send, true)
	case DeliveryRetried:
		s.applySend(now, e.Send, true)
	case DeliveryNotice:
		s.applySend(now, e.Send, false)

	case DeliveryDeferred:
		if d := s.deliveries[e.ID]; d != nil {
			d.Resend = e.Resend
			s.setTimer(d, e.TimerAt)
			s.touch(KindDelivery, d.ID)
		}

	case DeliveryAcknowledged:
		d := s.deliveries[e.ID]
		if d == nil {
			return
		}
		s.unlist(d)
		d.State, d.AcknowledgedAt = Acknowledged, now
		d.Answer = e.Status
		if e.Understanding != "" {
			d.Understanding = e.Understanding
		}
		d.Queued = e.Status == "queued"
		if d.Type == TypeDelegation && d.TaskID != "" {
			if _, held := s.holds[d.TaskID]; !held {
				d.Holds = true
				s.holds[d.TaskID] = d.ID
			}
		}
		if d.Policy == PolicyReminders {
			d.RespondedAt = now
		}
		s.setTimer(d, e.TimerAt)
		s.touch(KindDelivery, d.ID)

	case DeliveryClarifying:
		if d := s.deliveries[e.ID]; d != nil {
			d.State = Clarifying
			d.Questions = slices.Clone(e.Questions)
			if e.Understanding != "" {
				d.Understanding = e.Understanding
			}
			s.setTimer(d, time.Time{})
			s.touch(KindDelivery, d.ID)
		}

	case DeliveryReply:
		d := s.deliveries[e.ID]
		if d == nil {
			return
		}
		if e.Started && d.Queued {
			d.Queued = false
			s.setTimer(d, time.Time{})
		}
		if e.Released {
			s.release(d)
		}
		s.touch(KindDelivery, d.ID)

	case DeliveryFailed:
		if d := s.deliveries[e.ID]; d != nil {
			s.unlist(d)
			d.State, d.FailedAt, d.Reason = Failed, now, e.Reason
			s.setTimer(d, time.Time{})
			s.touch(KindDelivery, d.ID)
		}

	case DeliveryCancelled:
		if d := s.deliveries[e.ID]; d != nil {
			s.unlist(d)
			s.release(d)
			d.State, d.CancelledAt, d.Reason = Cancelled, now, e.Reason
			d.Queued = false
			s.setTimer(d, time.Time{})
			s.touch(KindDelivery, d.ID)
		}

	case DeliveryReassigned, DeliveryEscalated:
		// On record only: the new delivery's DeliverySent carries the change.

	case OperationStarted:
		o := e.Operation
		o.Agents, o.Deliveries, o.Command = slices.Clone(o.Agents), slices.Clone(o.Deliveries), slices.Clone(o.Command)
		o.Policy.Reminders = slices.Clone(o.Policy.Reminders)
		o.CreatedAt = now
		s.operations[o.ID] = &o
		s.noteID(o.ID)
		s.touch(KindOperation, o.ID)

	case OperationReminder:
		if o := s.operations[e.ID]; o != nil {
			o.RemindersSent++
			s.touch(KindOperation, o.ID)
		}
		if d := s.deliveries[e.Delivery]; d != nil {
			d.Reminded = e.Number
			s.touch(KindDelivery, d.ID)
		}

	case OperationReply:
		d := s.deliveries[e.Delivery]
		if d == nil {
			return
		}
		if !e.Deadline.IsZero() {
			d.Deadline, d.Extended = e.Deadline, true
			s.setTimer(d, s.reminderTimer(d))
		}
		s.touch(KindDelivery, d.ID)

	case OperationStateChanged:
		o := s.operations[e.ID]
		if o == nil {
			return
		}
		o.State = e.To
		if e.Reason != "" {
			o.Reason = e.Reason
		}
		o.TimeoutOccurred = o.TimeoutOccurred || e.TimeoutOccurred
		o.ProceededAnyway = o.ProceededAnyway || e.ProceededAnyway
		if e.ExitCode != nil {
			c := *e.ExitCode
			o.ExitCode = &c
			o.Output = e.Output
		}
		if e.To.Terminal() {
			o.FinishedAt = now
		}
		if e.To == OpProceeding {
			s.effect(RunOperation{ID: o.ID, Command: slices.Clone(o.Command)})
		}
		s.touch(KindOperation, o.ID)
	}
}

// create makes a delivery from its message.
func (s *State) create(now time.Time, m Message) *Delivery {
	m.Capabilities = slices.Clone(m.Capabilities)
	m.AcceptanceCriteria = slices.Clone(m.AcceptanceCriteria)
	m.Tried = slices.Clone(m.Tried)
	if m.Matcher != nil {
		c := *m.Matcher
		m.Matcher = &c
	}
	d := &Delivery{Message: m, CreatedAt: now}
	s.deliveries[m.ID] = d
	s.noteID(m.ID)
	if m.TaskID != "" {
		s.byTask[m.TaskID] = append(s.byTask[m.TaskID], m.ID)
	}
	s.touch(KindDelivery, m.ID)
	return d
}

func (s *State) applySend(now time.Time, e Send, asks bool) {
	d := s.deliveries[e.ID]
	if e.Message != nil && d == nil {
		d = s.create(now, *e.Message)
	}
	if d == nil {
		return
	}
	if asks {
		d.Sends++
		d.Round = e.Round
		d.Resend = false
		if e.Correction {
			d.Corrections++
		}
		if d.SentAt.IsZero() {
			d.SentAt = now
		}
		d.LastSentAt = now
		if d.State == Pending {
			s.moveToUnacked(d)
		}
		if !d.State.Terminal() {
			d.State = Sent
		}
		if d.Policy == PolicyReminders && d.Deadline.IsZero() {
			if o := s.operations[d.OperationID]; o != nil {
				d.Deadline = o.CreatedAt.Add(o.Policy.Timeout)
			}
		}
	}
	s.setTimer(d, e.TimerAt)
	s.touch(KindDelivery, d.ID)

	if d.Policy == PolicyCycles {
		return // handed over in the dispatch cycle's answer
	}
	msg := s.inboxMessage(d, e, now)
	a := s.agents[d.To]
	if a == nil {
		return
	}
	if a.Pull {
		a.Inbox = append(a.Inbox, msg)
		s.touch(KindAgent, a.Name)
		s.effect(Wake{Agent: a.Name})
		return
	}
	s.effect(Deliver{Agent: a.Name, Message: msg})
}

func (s *State) inboxMessage(d *Delivery, e Send, now time.Time) InboxMessage {
	m := InboxMessage{
		ID: d.ID, From: d.From, Type: string(d.Type), Subject: d.Subject, Body: d.Body,
		TaskID: d.TaskID, OperationID: d.OperationID, Attempt: d.Sends, CreatedAt: now,
	}
	if d.Type == TypeInstruction {
		m.InstructionID = d.ID
	}
	if e.Kind != SendFirst && e.Kind != "" {
		m.Type = string(e.Kind)
	}
	if e.Subject != "" || e.Body != "" {
		m.Subject, m.Body = e.Subject, e.Body
	}
	return m
}

// setTimer records the delivery's next timer and asks the runtime to arm it.
func (s *State) setTimer(d *Delivery, at time.Time) {
	if d.TimerAt.Equal(at) {
		return
	}
	d.TimerAt = at
	s.effect(ArmTimer{Key: d.ID, At: at})
}

// moveToUnacked moves an instruction from its agent's pending list to the
// unacknowledged one.
func (s *State) moveToUnacked(d *Delivery) {
	a := s.agents[d.To]
	if a == nil || d.Policy != PolicyCycles {
		return
	}
	if i := slices.Index(a.Pending, d.ID); i >= 0 {
		a.Pending = slices.Delete(a.Pending, i, i+1)
	}
	a.Unacked = append(a.Unacked, d.ID)
	s.touch(KindAgent, a.Name)
}

// unlist removes an instruction from its agent's lists when it ends.
func (s *State) unlist(d *Delivery) {
	a := s.agents[d.To]
	if a == nil || d.Policy != PolicyCycles {
		return
	}
	if i := slices.Index(a.Pending, d.ID); i >= 0 {
		a.Pending = slices.Delete(a.Pending, i, i+1)
	}
	if i := slices.Index(a.Unacked, d.ID); i >= 0 {
		a.Unacked = slices.Delete(a.Unacked, i, i+1)
	}
	if len(a.Pending) == 0 {
		a.Pending = nil
	}
	if len(a.Unacked) == 0 {
		a.Unacked = nil
	}
	s.touch(KindAgent, a.Name)
}

// release ends an agent's hold on its task.
func (s *State) release(d *Delivery) {
	if !d.Holds {
		return
	}
	d.Holds = false
	if s.holds[d.TaskID] == d.ID {
		delete(s.holds, d.TaskID)
	}
}
