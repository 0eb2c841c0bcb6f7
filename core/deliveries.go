package core

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"wilco/ack"
)

// Checker judges an acknowledgment's Understanding against its task. The
// default is ack.TermCoverage; SetChecker replaces it.
type Checker = ack.Checker

func defaultChecker() Checker { return ack.TermCoverage{} }

// SetChecker replaces the understanding check.
func (s *State) SetChecker(c Checker) { s.checker = c }

// Orchestrator is the name wilco signs its messages with (the
// orchestrator key of wilco.yaml).
const Orchestrator = "wilco"

// SendRequest asks the core to send a message to an agent.
type SendRequest struct {
	From    string
	To      string
	Type    MessageType // "": classified: a task delegation or a conversation
	Subject string
	Body    string
	TaskID  string
	// MaxRetries of an instruction; nil: the policy's.
	MaxRetries *int
	Matcher    *Matcher
	// For delegations: what the task needs and asks.
	Capabilities       []string
	AcceptanceCriteria []string
	Description        string
}

// Send creates a delivery. Instructions wait for the agent's next dispatch
// cycle (cycles policy); task delegations are sent now with the ACK request
// block and chased under the backoff policy; conversations are sent now and
// acknowledged by the agent's reply.
func (s *State) Send(now time.Time, req SendRequest) (Delivery, error) {
	now = norm(now)
	a, ok := s.agents[req.To]
	if !ok {
		return Delivery{}, notFoundf("no agent %q", req.To)
	}
	req, err := normalizeSend(req)
	if err != nil {
		return Delivery{}, err
	}
	m := Message{From: req.From, To: a.Name, Type: req.Type, Subject: req.Subject, Body: req.Body, TaskID: req.TaskID}
	if len(req.Capabilities) > 0 || len(req.AcceptanceCriteria) > 0 || req.Description != "" {
		if req.Type != TypeDelegation {
			return Delivery{}, invalidf("capabilities, acceptance criteria and description apply to task delegations only")
		}
		m.Brief = &Brief{Capabilities: slices.Clone(req.Capabilities), AcceptanceCriteria: slices.Clone(req.AcceptanceCriteria), Description: req.Description}
	}
	if req.Matcher != nil && req.Type != TypeInstruction {
		return Delivery{}, invalidf("ack_when applies to instructions only")
	}
	if req.MaxRetries != nil && req.Type != TypeInstruction {
		return Delivery{}, invalidf("max_retries applies to instructions only")
	}
	switch req.Type {
	case TypeInstruction:
		if err := s.instruction(&m, req); err != nil {
			return Delivery{}, err
		}
		m.ID = s.nextID("I")
		s.emit(now, m.TaskID, m.To, DeliveryQueued{Message: m})
	case TypeDelegation:
		if m.TaskID == "" {
			return Delivery{}, invalidf("a task delegation needs a task id (task_id, or a line such as \"## Task: T-1\")")
		}
		m.Policy = PolicyBackoff
		if m.Subject == "" {
			m.Subject = "Task " + m.TaskID
		}
		m.ID = s.nextID("M")
		s.emit(now, m.TaskID, m.To, DeliverySent{Send{ID: m.ID, Attempt: 1, Kind: SendFirst, Round: 1, TimerAt: s.backoffTimer(now, 1), Message: &m}})
	case TypeConversation:
		m.Policy = PolicyNone
		m.ID = s.nextID("M")
		s.emit(now, m.TaskID, m.To, DeliverySent{Send{ID: m.ID, Attempt: 1, Kind: SendFirst, Message: &m}})
	case TypePreOperation:
		return Delivery{}, invalidf("pre-operation requests are sent by starting an operation")
	default:
		return Delivery{}, invalidf("message type %q: must be instruction, task_delegation or conversation", req.Type)
	}
	return s.find(m.ID).copy(), nil
}

// normalizeSend checks a request's body and task id, and fills in its
// sender and, when it names none, its type (classified from the body) and
// task id (from the body's delegation).
func normalizeSend(req SendRequest) (SendRequest, error) {
	if strings.TrimSpace(req.Body) == "" {
		return req, invalidf("the message body is empty")
	}
	if req.From == "" {
		req.From = Orchestrator
	}
	if req.TaskID != "" {
		if err := ack.ValidateTaskID(req.TaskID); err != nil {
			return req, invalidf("task id %q: %v", req.TaskID, err)
		}
	}
	if req.Type == "" {
		c := ack.Classify(req.Body)
		req.Type = TypeConversation
		if c.Type == ack.Delegation || req.TaskID != "" && len(req.AcceptanceCriteria) > 0 {
			req.Type = TypeDelegation
		}
		if req.TaskID == "" && c.TaskID != "" && ack.ValidateTaskID(c.TaskID) == nil {
			req.TaskID = c.TaskID
		}
	}
	return req, nil
}

// instruction makes m an instruction: the cycles policy, its retries and
// the matcher of its acknowledgment.
func (s *State) instruction(m *Message, req SendRequest) error {
	m.Policy = PolicyCycles
	m.MaxRetries = s.policies.MaxRetries
	if req.MaxRetries != nil {
		if *req.MaxRetries < 0 {
			return invalidf("max_retries must not be negative, got %d", *req.MaxRetries)
		}
		m.MaxRetries = *req.MaxRetries
	}
	if req.Matcher != nil {
		if req.Matcher.Contains == "" && req.Matcher.Regex == "" {
			return invalidf("ack_when needs contains or regex")
		}
		if req.Matcher.Regex != "" {
			if _, err := s.regexp(req.Matcher.Regex); err != nil {
				return invalidf("ack_when.regex: %v", err)
			}
		}
		c := *req.Matcher
		m.Matcher = &c
	}
	return nil
}

// backoffTimer is when attempt round of an ACK round, sent now, gives up:
// its timeout, plus the wait before the next attempt when there is one.
func (s *State) backoffTimer(now time.Time, round int) time.Time {
	p := s.policies.Ack
	at := now.Add(p.Timeouts[min(round, len(p.Timeouts))-1])
	if round < len(p.Timeouts) {
		at = at.Add(p.Wait(round))
	}
	return at
}

// Cycle is one dispatch cycle of an agent: it hands over what
// waits in the agent's inbox, then sends every new instruction, then
// retries every instruction still unacknowledged from an earlier cycle; an
// instruction already sent max_retries+1 times fails instead.
func (s *State) Cycle(now time.Time, agent string) ([]InboxMessage, error) {
	return s.cycle(now, agent, true)
}

// Push is the hand-over a transport that pushes an agent's messages runs
// when a message lands for it (package natsbox): what waits in the agent's
// inbox, then its new instructions. It is not the agent asking, so the
// agent is not counted as heard from (an unresponsive agent stays so, a
// pull agent never seen stays unseen), and no unacknowledged instruction
// is sent again: that is what the agent's own cycles do.
func (s *State) Push(now time.Time, agent string) ([]InboxMessage, error) {
	return s.cycle(now, agent, false)
}

func (s *State) cycle(now time.Time, agent string, asked bool) ([]InboxMessage, error) {
	now = norm(now)
	a, ok := s.agents[agent]
	if !ok {
		return nil, notFoundf("no agent %q", agent)
	}
	if asked {
		s.seen(now, a, "dispatch cycle")
	}
	var out []InboxMessage
	if n := len(a.Inbox); n > 0 {
		out = append(out, a.Inbox...)
		s.emit(now, "", a.Name, AgentCycle{Fetched: n})
	}
	earlier := slices.Clone(a.Unacked)
	for _, id := range slices.Clone(a.Pending) {
		d := s.find(id)
		send := Send{ID: id, Attempt: 1, Kind: SendFirst}
		s.emit(now, d.TaskID, d.To, DeliverySent{send})
		out = append(out, s.inboxMessage(d, send, now))
	}
	if !asked {
		return out, nil
	}
	for _, id := range earlier {
		d := s.find(id)
		if d.RetryCount() >= d.MaxRetries {
			s.emit(now, d.TaskID, d.To, DeliveryFailed{ID: id, Reason: fmt.Sprintf("not acknowledged after %d sends (max_retries %d)", d.Sends, d.MaxRetries), Attempts: d.Sends})
			continue
		}
		send := Send{ID: id, Attempt: d.Sends + 1, Kind: SendRetry}
		s.emit(now, d.TaskID, d.To, DeliveryRetried{send})
		out = append(out, s.inboxMessage(d, send, now))
	}
	return out, nil
}

// Acknowledge is the caller's explicit acknowledgment of a delivery.
func (s *State) Acknowledge(now time.Time, id string) (Delivery, error) {
	now = norm(now)
	d, ok := s.findOK(id)
	if !ok {
		return Delivery{}, notFoundf("no delivery %q", id)
	}
	if d.State.Terminal() {
		return Delivery{}, s.settled(d)
	}
	if d.Policy == PolicyReminders {
		return Delivery{}, conflictf("%s belongs to operation %s: its agent answers it", d.ID, d.OperationID)
	}
	s.emit(now, d.TaskID, d.To, DeliveryAcknowledged{ID: d.ID, By: "caller"})
	return d.copy(), nil
}

// AgentAck is an agent's acknowledgment of one delivery by id, the
// simplest positive answer: RECEIVED for a delegation, "ok" for an
// operation, the acknowledgment of an instruction or a conversation. It is
// how simulated agents answer.
func (s *State) AgentAck(now time.Time, agent, id string) error {
	now = norm(now)
	d, err := s.addressed(agent, id)
	if err != nil {
		return err
	}
	if d.State.Terminal() {
		return s.settled(d)
	}
	if d.Policy == PolicyReminders {
		_, err := s.operationAnswer(now, d, ack.AnswerOK, "ok")
		return err
	}
	s.emit(now, d.TaskID, d.To, DeliveryAcknowledged{ID: d.ID, By: "agent", Status: string(ack.Received)})
	s.holderBusy(now, d)
	s.syncTask(now, d.TaskID)
	return nil
}

// addressed finds a delivery an agent may answer.
func (s *State) addressed(agent, id string) (*Delivery, error) {
	if _, ok := s.agents[agent]; !ok {
		return nil, notFoundf("no agent %q", agent)
	}
	d, ok := s.findOK(id)
	if !ok {
		return nil, notFoundf("no message %q", id)
	}
	if d.To != agent {
		return nil, deniedf("message %s was not sent to %s", id, agent)
	}
	return d, nil
}

// holder is the agent whose delivery (other than except) holds the task.
func (s *State) holder(taskID, except string) (string, bool) {
	h, ok := s.byTask.holder(taskID)
	if !ok || h == except {
		return "", false
	}
	return s.find(h).To, true
}

// settled is the refusal of an answer to a delivery that already ended.
func (s *State) settled(d *Delivery) error {
	msg := fmt.Sprintf("%s is already %s (at %s)", d.ID, d.State, d.EndedAt.Format(time.RFC3339))
	if d.Reason != "" {
		msg += ": " + d.Reason
	}
	if d.TaskID != "" {
		if holder, ok := s.holder(d.TaskID, d.ID); ok {
			msg += fmt.Sprintf("; task %s is held by %s", d.TaskID, holder)
		}
	}
	return conflictf("%s", msg)
}

// Clarify sends the user's answers to an agent's questions
// (task-clarification) and waits again for its acknowledgment.
func (s *State) Clarify(now time.Time, id string, answers []string) (Delivery, error) {
	now = norm(now)
	d, ok := s.findOK(id)
	if !ok {
		return Delivery{}, notFoundf("no delivery %q", id)
	}
	if d.State != Clarifying {
		return Delivery{}, conflictf("%s is %s, not waiting for clarification", d.ID, d.State)
	}
	if len(answers) == 0 {
		return Delivery{}, invalidf("answers: give at least one answer")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "type: task-clarification\ntask_id: %s\nanswers:\n", d.TaskID)
	for i, a := range answers {
		if strings.TrimSpace(a) == "" {
			return Delivery{}, invalidf("answers[%d] is empty", i)
		}
		fmt.Fprintf(&b, "%d. %s\n", i+1, a)
	}
	fmt.Fprintf(&b, "\nIf this answers your questions, reply with [ACK] %s - RECEIVED and an Understanding: line (or the JSON task-acknowledgment with status \"confirmed\") before you begin.\n", d.TaskID)
	s.emit(now, d.TaskID, d.To, DeliveryRetried{Send{
		ID: d.ID, Attempt: d.Sends + 1, Kind: SendClarification, Round: 1,
		Subject: "Clarification: " + d.TaskID, Body: b.String(), TimerAt: s.backoffTimer(now, 1),
	}})
	s.syncTask(now, d.TaskID)
	return d.copy(), nil
}

// Cancel ends an open delivery. The agent of a delegation is told to stop.
func (s *State) Cancel(now time.Time, id, reason string) (Delivery, error) {
	now = norm(now)
	d, ok := s.findOK(id)
	if !ok {
		return Delivery{}, notFoundf("no delivery %q", id)
	}
	if d.State.Terminal() {
		return Delivery{}, s.settled(d)
	}
	if d.Policy == PolicyReminders {
		return Delivery{}, conflictf("%s belongs to operation %s: cancel the operation", d.ID, d.OperationID)
	}
	if reason == "" {
		reason = "cancelled by the user"
	}
	s.cancel(now, d, reason)
	return d.copy(), nil
}

func (s *State) cancel(now time.Time, d *Delivery, reason string) {
	wasSent := d.State != Pending
	s.emit(now, d.TaskID, d.To, DeliveryCancelled{ID: d.ID, Reason: reason})
	if wasSent && d.Type == TypeDelegation {
		s.notice(now, d, SendCancel, "CANCEL: "+d.TaskID,
			fmt.Sprintf("Task %s is cancelled (%s). Do not work on it; stop if you started.", d.TaskID, reason))
	}
}

// notice sends something that asks for no answer.
func (s *State) notice(now time.Time, d *Delivery, kind SendKind, subject, body string) {
	s.emit(now, d.TaskID, d.To, DeliveryNotice{Send{ID: d.ID, Attempt: d.Sends, Kind: kind, Subject: subject, Body: body, TimerAt: d.TimerAt}})
}

// Fire is a due timer. A timer that is no longer armed, or not yet due, is
// ignored.
func (s *State) Fire(now time.Time, key string) error {
	now = norm(now)
	if n, ok := s.notifications[key]; ok {
		s.fireNotification(now, n)
		return nil
	}
	if s.fireCI(now, key) {
		return nil
	}
	d, ok := s.findOK(key)
	if !ok || d.TimerAt.IsZero() || now.Before(d.TimerAt) {
		return nil
	}
	switch {
	case d.State == Acknowledged && d.Queued:
		s.followup(now, d)
	case d.State != Sent:
	case d.Type == TypeReview:
		s.reviewFailed(now, d, fmt.Sprintf("did not answer within %s", s.policies.Review.timeout()))
	case d.Type == TypeScoutQuery:
		s.questionFailed(now, d, fmt.Sprintf("the scout %s did not answer within %s", d.To, DefaultScoutTimeout))
	case d.Type == TypeProbe:
		s.probeTimedOut(now, d)
	case d.Policy == PolicyBackoff:
		s.backoffDue(now, d)
		s.syncTask(now, d.TaskID)
	case d.Policy == PolicyReminders:
		s.reminderDue(now, d)
	}
	return nil
}

// backoffDue: the ACK did not come in time.
func (s *State) backoffDue(now time.Time, d *Delivery) {
	p := s.policies.Ack
	switch {
	case d.Resend:
		s.emit(now, d.TaskID, d.To, DeliveryRetried{Send{ID: d.ID, Attempt: d.Sends + 1, Kind: SendResend, Round: 1, TimerAt: s.backoffTimer(now, 1)}})
	case d.Round < len(p.Timeouts):
		subject, body := ack.AckRequired(d.TaskID)
		s.emit(now, d.TaskID, d.To, DeliveryRetried{Send{
			ID: d.ID, Attempt: d.Sends + 1, Kind: SendAckRequest, Round: d.Round + 1,
			Subject: subject, Body: body, TimerAt: s.backoffTimer(now, d.Round+1),
		}})
	default:
		never := s.neverSeenNote(d.To)
		s.emit(now, d.TaskID, d.To, DeliveryFailed{ID: d.ID, Reason: "unresponsive", Attempts: d.Sends})
		if a := s.agents[d.To]; a != nil {
			s.setStatus(now, a, Unresponsive, fmt.Sprintf("no acknowledgment of %s after %d attempts", d.ID, d.Sends))
		}
		if p.OnUnresponsive == Escalate {
			s.escalate(now, d, fmt.Sprintf("%s did not acknowledge %s after %d attempts%s", d.To, d.ID, d.Sends, never))
			return
		}
		s.reassignOrEscalate(now, d, fmt.Sprintf("%s did not acknowledge after %d attempts%s", d.To, d.Sends, never))
	}
}

// followup asks an agent that answered QUEUED whether work has started.
func (s *State) followup(now time.Time, d *Delivery) {
	next := now.Add(s.policies.Ack.QueuedFollowup)
	s.emit(now, d.TaskID, d.To, DeliveryNotice{Send{
		ID: d.ID, Attempt: d.Sends, Kind: SendFollowup, Subject: "Status check: " + d.TaskID, TimerAt: next,
		Body: fmt.Sprintf("You acknowledged task %s as QUEUED. Has your prior task finished? If so, begin %s now and send a checkpoint-ack when you start; if not, reply with what blocks you.", d.TaskID, d.TaskID),
	}})
}

// reassignOrEscalate passes a delegation to another capable agent, or to
// the user when there is none. It returns the agent it passed it to ("" for
// none).
func (s *State) reassignOrEscalate(now time.Time, d *Delivery, why string) string {
	if d.Type != TypeDelegation {
		return ""
	}
	to := s.pickAgent(d)
	if to == "" {
		s.escalate(now, d, why+"; no other capable agent is available")
		return ""
	}
	s.reassign(now, d, to)
	return to
}

func (s *State) reassign(now time.Time, d *Delivery, to string) {
	m := d.Message
	m.ID = s.nextID("M")
	m.To = to
	m.Brief = m.Brief.clone()
	if m.Brief == nil {
		m.Brief = &Brief{}
	}
	m.Brief.Tried = append(m.Brief.Tried, d.To)
	s.emit(now, d.TaskID, d.To, DeliveryReassigned{ID: d.ID, From: d.To, To: to, NewID: m.ID})
	s.emit(now, m.TaskID, to, DeliverySent{Send{ID: m.ID, Attempt: 1, Kind: SendFirst, Round: 1, TimerAt: s.backoffTimer(now, 1), Message: &m}})
}

func (s *State) escalate(now time.Time, d *Delivery, why string) {
	s.emit(now, d.TaskID, d.To, DeliveryEscalated{ID: d.ID, Reason: why})
}

// holderBusy marks the agent that now holds a task busy.
func (s *State) holderBusy(now time.Time, d *Delivery) {
	if d.Type != TypeDelegation {
		return
	}
	if a := s.agents[d.To]; a != nil && a.Status == Available {
		s.setStatus(now, a, Busy, "working on "+d.TaskID)
	}
}

func (s *State) regexp(expr string) (*regexp.Regexp, error) {
	if re, ok := s.regexps[expr]; ok {
		return re, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	s.regexps[expr] = re
	return re, nil
}

func (s *State) matches(m *Matcher, text string) bool {
	if m == nil {
		return false
	}
	if m.Contains != "" && !strings.Contains(text, m.Contains) {
		return false
	}
	if m.Regex != "" {
		re, err := s.regexp(m.Regex)
		if err != nil || !re.MatchString(text) {
			return false
		}
	}
	return true
}
