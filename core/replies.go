package core

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"wilco/ack"
)

// ReplyInput is what an agent sent back: text to be parsed, or one of the
// JSON forms of the ACK protocol (Type and Data).
type ReplyInput struct {
	Agent     string
	InReplyTo string
	Text      string
	Type      string
	Data      []byte
}

// Interpretation kinds of core's own.
//
// They are those of the replies core reads itself, beside the
// acknowledgment language's (ack.Kind).
const (
	KindProbe       = "probe"        // the answer to a context probe
	KindReview      = "review"       // a reviewer's verdict
	KindScoutAnswer = "scout_answer" // a scout's answer to a question
)

// Interpretation says what a reply was taken to mean and what wilco did.
type Interpretation struct {
	Kind          string   `json:"kind"`
	DeliveryID    string   `json:"delivery_id,omitempty"`
	TaskID        string   `json:"task_id,omitempty"`
	OperationID   string   `json:"operation_id,omitempty"`
	Status        string   `json:"status,omitempty"`
	Understanding string   `json:"understanding,omitempty"`
	Questions     []string `json:"questions,omitempty"`
	Action        string   `json:"action"`
	// Acknowledged lists the deliveries this reply acknowledged.
	Acknowledged []string `json:"acknowledged,omitempty"`

	complete *ack.Reply
	// then is the completion report that follows an ACK in the same text.
	then *ack.Reply
}

// Reply interprets an agent's reply with the acknowledgment language and
// acts on it. A reply the rules refuse — to a
// message not sent to this agent, to something already settled, in a
// broken form — changes nothing and says why.
//
// A text that holds an ACK and, after it, the completion report of the same
// task ("[ACK] T-3 - RECEIVED … Status: complete") is both: when the ACK
// lets work begin, the report ends the turn (of any agent but an exec one,
// whose turn ends with its process).
func (s *State) Reply(now time.Time, in ReplyInput) (Interpretation, error) {
	now = norm(now)
	out, err := s.reply(now, in)
	if err != nil {
		return out, err
	}
	s.afterReply(now, out)
	// An exec agent's turn ends with its process, whose whole output is
	// read then: a report in the text of its ACK does not end it early.
	if out.then == nil || !slices.Contains(out.Acknowledged, out.DeliveryID) || s.agents[in.Agent].Adapter == "exec" {
		return out, nil
	}
	d := s.find(out.DeliveryID)
	if out.then.TaskID != "" && out.then.For(d.TaskID) != nil {
		return out, nil
	}
	next, err := s.progress(now, s.agents[in.Agent], d, *out.then)
	if err != nil {
		return out, nil
	}
	s.afterReply(now, next)
	next.Acknowledged = append(out.Acknowledged, next.Acknowledged...)
	next.Understanding, next.Questions = out.Understanding, out.Questions
	return next, nil
}

// afterReply brings the task of an interpreted reply up to date with its
// delegation, and ends the agent's turn on a completion report.
func (s *State) afterReply(now time.Time, out Interpretation) {
	if out.TaskID == "" {
		return
	}
	s.syncTask(now, out.TaskID)
	if out.Kind == string(ack.KindComplete) {
		s.completeTurn(now, out)
	}
}

// completeTurn ends a task's turn when its agent sent its completion
// report.
func (s *State) completeTurn(now time.Time, in Interpretation) {
	t := s.tasks[in.TaskID]
	if t == nil || t.Delivery != in.DeliveryID || in.complete == nil {
		return
	}
	r := in.complete
	summary := r.Summary
	if t := strings.TrimSpace(r.Text); summary == "" && !strings.HasPrefix(t, "{") {
		summary = t // a report in words: what the agent wrote is its summary
	}
	_, _ = s.EndTurn(now, TurnResult{TaskID: t.ID, Attempt: t.Attempt, Status: r.Complete, Summary: summary, Reason: r.Reason,
		Error: r.Error, Files: r.FilesModified})
}

func (s *State) reply(now time.Time, in ReplyInput) (Interpretation, error) {
	a, ok := s.agents[in.Agent]
	if !ok {
		return Interpretation{}, notFoundf("no agent %q", in.Agent)
	}
	var d *Delivery
	if in.InReplyTo != "" {
		var err error
		if d, err = s.addressed(a.Name, in.InReplyTo); err != nil {
			return Interpretation{}, err
		}
	}
	if d == nil && strings.TrimSpace(in.Text) != "" {
		// A reviewer's or a scout's answer that names no message.
		if d = s.onlyOpen(a.Name, TypeReview); d == nil {
			d = s.onlyOpen(a.Name, TypeScoutQuery)
		}
		if p := s.onlyOpen(a.Name, TypeProbe); d == nil && p != nil {
			if _, ok := ParseProbe(in.Text); ok {
				d = p
			}
		}
	}
	switch {
	case d != nil && d.Type == TypeProbe:
		return s.probeAnswer(now, a, d, in.Text)
	case d != nil && d.Type == TypeReview:
		return s.reviewAnswer(now, a, d, in.Text)
	case d != nil && d.Type == TypeScoutQuery:
		return s.scoutAnswer(now, a, d, in.Text)
	}
	r, then, fromText, err := readReply(in)
	if err != nil {
		return Interpretation{}, err
	}
	if d == nil {
		if d, err = s.target(a, r); err != nil {
			// "[DONE] cleanup" from an agent with no task: words, not a
			// report on a task that does not exist.
			if !fromText || r.Kind != ack.KindComplete || CodeOf(err) != NotFound || s.workingOn(a) != nil {
				return Interpretation{}, err
			}
			d = nil
		}
	}
	if fromText && r.Kind == ack.KindComplete && (d == nil || d.Type != TypeDelegation) {
		// Words that read like a completion report, with no task to
		// complete: an answer to a conversation or an instruction.
		r = ack.Reply{Kind: ack.KindMessage, Text: r.Text}
	}
	if d != nil && d.Policy == PolicyReminders {
		answer := r.Answer
		if r.Kind != ack.KindOperationReply {
			answer = ack.ParseOperationReply(r.Text)
		}
		return s.operationAnswer(now, d, answer, r.Text)
	}
	switch r.Kind {
	case ack.KindAck, ack.KindAckError:
		if d == nil {
			return Interpretation{}, notFoundf("no open task delegation was sent to %s", a.Name)
		}
		out, err := s.answer(now, a, d, r)
		out.then = then
		return out, err
	case ack.KindCheckpoint, ack.KindComplete:
		if d == nil {
			return Interpretation{}, notFoundf("no task delegation was sent to %s", a.Name)
		}
		return s.progress(now, a, d, r)
	case ack.KindOperationReply:
		return Interpretation{}, notFoundf("%s has no operation waiting for its answer", a.Name)
	}
	return s.message(now, a, d, r)
}

// readReply reads what an agent sent: type and data (one of the JSON
// forms), or text. When the data are missing or do not parse, the text is
// read for the same forms; a task-complete whose text holds no form is a
// claim of completion with the text as its summary. then is the completion
// report that follows an ACK in the same text; fromText says the reply was
// read from text.
func readReply(in ReplyInput) (r ack.Reply, then *ack.Reply, fromText bool, err error) {
	text := strings.TrimSpace(in.Text) != ""
	if len(in.Data) > 0 {
		r, err = ack.ParseJSON(in.Type, in.Data)
		if err == nil || !text {
			if err != nil {
				return r, nil, false, invalidf("reply: %v", err)
			}
			if r.Kind == ack.KindComplete && r.Complete == ack.CompleteClaimed && text {
				r = completeFromText(r, in.Text)
			}
			if r.Text == "" {
				r.Text = in.Text
			}
			return r, nil, false, nil
		}
		jsonErr := err
		if r, then, err = readText(in.Text); err != nil || r.Kind == ack.KindMessage {
			return r, nil, false, invalidf("reply: %v (and its text holds no reply form)", jsonErr)
		}
		return r, then, true, nil
	}
	if !text {
		if in.Type != "" {
			return r, nil, false, invalidf("reply of type %q has neither data nor text: send the JSON object as data, or the reply's text", in.Type)
		}
		return r, nil, false, invalidf("a reply needs text, or type and data")
	}
	if r, then, err = readText(in.Text); err != nil {
		return r, nil, false, invalidf("reply: %v", err)
	}
	if r.Kind == ack.KindMessage && in.Type != "" {
		switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(in.Type)), "_", "-") {
		case ack.TypeTaskComplete:
			r = ack.Reply{Kind: ack.KindComplete, Summary: strings.TrimSpace(in.Text), Text: in.Text}
		default:
			return r, nil, false, invalidf("reply of type %q has no data, and its text holds no such reply (want the JSON object as data)", in.Type)
		}
	}
	return r, then, true, nil
}

// completeFromText completes a task-complete that gives no status with the
// report its text holds ("Status: blocked", "Reason: …"), when the text
// names the same task or none.
func completeFromText(r ack.Reply, text string) ack.Reply {
	all, _ := ack.ParseAll(text)
	for _, t := range all {
		if t.Kind != ack.KindComplete || t.TaskID != "" && r.TaskID != "" && t.TaskID != r.TaskID {
			continue
		}
		r.Complete = t.Complete
		r.TaskID = firstOf(r.TaskID, t.TaskID)
		r.Reason, r.Error, r.Summary = firstOf(r.Reason, t.Reason), firstOf(r.Error, t.Error), firstOf(r.Summary, t.Summary)
		return r
	}
	return r
}

// readText reads a text reply: its first form, and the completion report
// that follows when the first is an ACK.
func readText(text string) (ack.Reply, *ack.Reply, error) {
	r, err := ack.Parse(text)
	if err != nil || r.Kind != ack.KindAck {
		return r, nil, err
	}
	all, _ := ack.ParseAll(text)
	for _, f := range all[1:] {
		if f.Kind == ack.KindComplete {
			return r, &f, nil
		}
	}
	return r, nil, nil
}

// target finds what a reply without in_reply_to answers.
func (s *State) target(a *Agent, r ack.Reply) (*Delivery, error) {
	switch r.Kind {
	case ack.KindAck, ack.KindAckError, ack.KindCheckpoint, ack.KindComplete:
		if r.TaskID == "" {
			if d := s.latest(a.Name, "", func(d *Delivery) bool { return d.Type == TypeDelegation && !d.State.Terminal() }); d != nil {
				return d, nil
			}
			if r.Kind == ack.KindCheckpoint || r.Kind == ack.KindComplete {
				return s.workingOn(a), nil // progress without a task id: the agent's task
			}
			return nil, nil
		}
		if d := s.latest(a.Name, r.TaskID, func(d *Delivery) bool { return d.Type == TypeDelegation && !d.State.Terminal() }); d != nil {
			return d, nil
		}
		if d := s.latest(a.Name, r.TaskID, func(d *Delivery) bool { return d.Type == TypeDelegation }); d != nil {
			return d, nil
		}
		if s.byTask.find(r.TaskID) != nil {
			return nil, deniedf("task %s was not delegated to %s", r.TaskID, a.Name)
		}
		// An ACK naming a task never delegated: if exactly one delegation
		// is open for this agent, it is the wrong id for that one.
		if d := s.latest(a.Name, "", func(d *Delivery) bool { return d.Type == TypeDelegation && !d.State.Terminal() }); d != nil && r.Kind == ack.KindAck {
			return d, nil
		}
		return nil, notFoundf("no task %s was delegated to %s", r.TaskID, a.Name)
	}
	return s.latest(a.Name, "", func(d *Delivery) bool { return d.Policy == PolicyReminders && d.State == Sent }), nil
}

// workingOn returns the delegation of the task the agent works on: its
// newest open delegation, else the delegation of the task that holds the
// queue when the agent has it; nil for none.
func (s *State) workingOn(a *Agent) *Delivery {
	if d := s.latest(a.Name, "", func(d *Delivery) bool { return d.Type == TypeDelegation && !d.State.Terminal() }); d != nil {
		return d
	}
	if t := s.activeOf(a.Name); t != nil && t.Delivery != "" {
		if d := s.find(t.Delivery); d != nil && d.To == a.Name && d.Type == TypeDelegation {
			return d
		}
	}
	return nil
}

// latest returns the newest delivery to agent (of task, when given) that
// keep accepts. Without a task only open deliveries are looked at.
func (s *State) latest(agent, task string, keep func(*Delivery) bool) *Delivery {
	var best *Delivery
	consider := func(d *Delivery) {
		if d.To == agent && keep(d) && (best == nil || idLess(best.ID, d.ID)) {
			best = d
		}
	}
	if task != "" {
		for _, id := range s.byTask.ids(task) {
			consider(s.find(id))
		}
		return best
	}
	for _, d := range s.open[agent] {
		consider(d)
	}
	return best
}

// openTo returns the open deliveries to agent that keep accepts, oldest
// first.
func (s *State) openTo(agent string, keep func(*Delivery) bool) []*Delivery {
	var out []*Delivery
	for _, d := range s.open[agent] {
		if keep(d) {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return idLess(out[i].ID, out[j].ID) })
	return out
}

// answer acts on an ACK or an ACK error to a delegation.
func (s *State) answer(now time.Time, a *Agent, d *Delivery, r ack.Reply) (Interpretation, error) {
	in := Interpretation{Kind: string(r.Kind), DeliveryID: d.ID, TaskID: d.TaskID, Status: string(r.Status), Understanding: r.Understanding, Questions: r.Questions}
	if r.Kind == ack.KindAckError {
		in.Status = string(r.ErrorCode)
	}
	if d.Type != TypeDelegation {
		if d.State.Terminal() {
			return in, s.settled(d)
		}
		s.emit(now, d.TaskID, d.To, DeliveryAcknowledged{ID: d.ID, By: "agent", Status: string(r.Status), Understanding: r.Understanding})
		in.Action, in.Acknowledged = "acknowledged", []string{d.ID}
		return in, nil
	}
	if d.State.Terminal() {
		return in, s.settled(d)
	}
	if r.TaskID != "" {
		if err := r.For(d.TaskID); err != nil {
			subject, body := ack.WrongID(d.TaskID, r.TaskID)
			in.Action = s.correct(now, d, SendWrongID, subject, body, fmt.Sprintf("the acknowledgment named %s, not %s", r.TaskID, d.TaskID))
			return in, nil
		}
	}
	s.seen(now, a, "replied")
	if r.Kind == ack.KindAckError {
		if d.State == Clarifying && (r.ErrorCode == ack.ResourceUnavailable || r.ErrorCode == ack.NetworkError) {
			// Nothing is resent while the user answers the agent's
			// questions: the answers are the next send.
			s.emit(now, d.TaskID, d.To, DeliveryReply{ID: d.ID, Kind: string(r.Kind), Text: string(r.ErrorCode) + ": " + r.ErrorMessage})
			in.Action = "noted; the delegation waits for the user's answers to the agent's questions"
			return in, nil
		}
		in.Action = s.ackError(now, a, d, r)
		return in, nil
	}
	switch r.Status {
	case ack.Received, ack.Confirmed:
		if holder, ok := s.holder(d.TaskID, d.ID); ok && holder != d.To {
			s.cancel(now, d, fmt.Sprintf("task %s is already held by %s, who acknowledged it first", d.TaskID, holder))
			in.Action = "cancelled: " + holder + " holds this task"
			return in, nil
		}
		if d.Brief != nil && len(d.Brief.AcceptanceCriteria) > 0 {
			// Judged over the conversation: what the agent said with its
			// questions, or before a correction, counts too.
			said := ack.SaidSoFar(d.said(), r)
			v := s.checker.Check(ack.Task{ID: d.TaskID, Description: d.Brief.Description, AcceptanceCriteria: d.Brief.AcceptanceCriteria}, said)
			if !v.OK {
				subject, body := ack.Correction(d.TaskID, v.Missing, strings.ReplaceAll(said.Understanding, "\n", "; "))
				if r.Understanding != "" {
					s.emit(now, d.TaskID, d.To, DeliveryReply{ID: d.ID, Kind: string(r.Kind), Understanding: r.Understanding})
				}
				in.Action = s.correct(now, d, SendCorrection, subject, body, "the understanding misses: "+strings.Join(v.Missing, "; "))
				return in, nil
			}
		}
		s.emit(now, d.TaskID, d.To, DeliveryAcknowledged{ID: d.ID, By: "agent", Status: string(r.Status), Understanding: r.Understanding, Note: r.Note})
		s.holderBusy(now, d)
		in.Action, in.Acknowledged = "acknowledged: work may begin", []string{d.ID}
	case ack.ClarificationNeeded:
		s.emit(now, d.TaskID, d.To, DeliveryClarifying{ID: d.ID, Questions: slices.Clone(r.Questions), Understanding: r.Understanding})
		in.Action = "questions go to the user; the answers will be sent back"
	case ack.Queued:
		s.emit(now, d.TaskID, d.To, DeliveryAcknowledged{ID: d.ID, By: "agent", Status: string(r.Status), Understanding: r.Understanding, Note: r.Note, TimerAt: now.Add(s.policies.Ack.QueuedFollowup)})
		s.holderBusy(now, d)
		in.Action, in.Acknowledged = fmt.Sprintf("acknowledged as queued; follow-up in %s if work has not started", s.policies.Ack.QueuedFollowup), []string{d.ID}
	case ack.Rejected:
		why := "rejected by " + a.Name
		if r.Note != "" {
			why += ": " + r.Note
		}
		s.emit(now, d.TaskID, d.To, DeliveryFailed{ID: d.ID, Reason: why, Attempts: d.Sends})
		in.Action = s.passOn(now, d, why)
	default:
		return in, invalidf("acknowledgment status %q is not one of RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED", r.Status)
	}
	return in, nil
}

// passOn reassigns a failed delegation or escalates it, and says which.
func (s *State) passOn(now time.Time, d *Delivery, why string) string {
	if to := s.reassignOrEscalate(now, d, why); to != "" {
		return "reassigned to " + to
	}
	return "escalated to the user"
}

// correct sends a correction (or a resend naming the right id) and asks for
// a new ACK; after max_corrections it escalates instead.
func (s *State) correct(now time.Time, d *Delivery, kind SendKind, subject, body, why string) string {
	if d.Corrections >= s.policies.Ack.MaxCorrections {
		reason := fmt.Sprintf("still wrong after %d corrections: %s", d.Corrections, why)
		s.emit(now, d.TaskID, d.To, DeliveryFailed{ID: d.ID, Reason: reason, Attempts: d.Sends})
		s.escalate(now, d, reason)
		return "escalated to the user: " + reason
	}
	s.emit(now, d.TaskID, d.To, DeliveryRetried{Send{
		ID: d.ID, Attempt: d.Sends + 1, Kind: kind, Round: 1, Correction: true,
		Subject: subject, Body: body, TimerAt: s.backoffTimer(now, 1),
	}})
	return fmt.Sprintf("%s sent (%d of %d); waiting for a new acknowledgment: %s", kind, d.Corrections, s.policies.Ack.MaxCorrections, why)
}

// ackError acts on a task-acknowledgment-error.
func (s *State) ackError(now time.Time, a *Agent, d *Delivery, r ack.Reply) string {
	why := string(r.ErrorCode)
	if r.ErrorMessage != "" {
		why += ": " + r.ErrorMessage
	}
	switch r.ErrorCode {
	case ack.ResourceUnavailable:
		s.setStatus(now, a, Busy, why)
		if to := s.pickAgent(d); to != "" {
			s.emit(now, d.TaskID, d.To, DeliveryFailed{ID: d.ID, Reason: why, Attempts: d.Sends})
			s.reassign(now, d, to)
			return "reassigned to " + to
		}
		wait := r.RetryAfter
		if wait <= 0 {
			wait = s.policies.Ack.Wait(max(d.Round, 1))
		}
		s.emit(now, d.TaskID, d.To, DeliveryDeferred{ID: d.ID, Reason: why, TimerAt: now.Add(wait), Resend: true})
		return fmt.Sprintf("no other capable agent is available; resending in %s", wait)
	case ack.CapabilityMismatch:
		s.emit(now, d.TaskID, d.To, DeliveryFailed{ID: d.ID, Reason: why, Attempts: d.Sends})
		return s.passOn(now, d, why)
	case ack.AgentShuttingDown:
		s.setStatus(now, a, Offline, why)
		s.emit(now, d.TaskID, d.To, DeliveryFailed{ID: d.ID, Reason: why, Attempts: d.Sends})
		return s.passOn(now, d, why)
	case ack.NetworkError:
		wait := s.policies.Ack.Wait(max(d.Round, 1))
		s.emit(now, d.TaskID, d.To, DeliveryDeferred{ID: d.ID, Reason: why, TimerAt: now.Add(wait)})
		return fmt.Sprintf("retrying with backoff in %s", wait)
	case ack.InvalidTaskFormat:
		s.emit(now, d.TaskID, d.To, DeliveryFailed{ID: d.ID, Reason: why, Attempts: d.Sends})
		s.escalate(now, d, "the task must be fixed: "+why)
		return "escalated to the user: the task must be fixed"
	}
	return "logged"
}

// progress records a checkpoint or a completion. Work showing up proves the
// delegation arrived, so an open delegation is acknowledged by it.
func (s *State) progress(now time.Time, a *Agent, d *Delivery, r ack.Reply) (Interpretation, error) {
	in := Interpretation{Kind: string(r.Kind), DeliveryID: d.ID, TaskID: d.TaskID, Status: r.CheckpointStatus}
	if r.Kind == ack.KindComplete {
		in.Status = string(r.Complete)
	}
	if r.TaskID != "" {
		if err := r.For(d.TaskID); err != nil {
			return in, invalidf("%v", err)
		}
	}
	switch d.State {
	case Failed, Cancelled:
		return in, s.settled(d)
	}
	if err := s.pastTurn(d); err != nil {
		return in, err
	}
	switch d.State {
	case Pending, Sent, Clarifying:
		s.emit(now, d.TaskID, d.To, DeliveryAcknowledged{ID: d.ID, By: "agent", Status: string(ack.Received), Note: "implied by " + string(r.Kind)})
		in.Acknowledged = []string{d.ID}
		s.holderBusy(now, d)
	}
	s.seen(now, a, "replied")
	done := r.Kind == ack.KindComplete
	text := r.Summary
	if text == "" {
		text = r.Text
	}
	s.emit(now, d.TaskID, d.To, DeliveryReply{ID: d.ID, Kind: string(r.Kind), Text: text, Started: true, Released: done})
	if done {
		in.complete = &r
		if a.Status == Busy {
			s.setStatus(now, a, Available, "finished "+d.TaskID)
		}
		in.Action = "task-complete recorded; the agent's turn on " + d.TaskID + " is over"
		if r.Complete == ack.CompleteClaimed {
			in.Action = "completion claimed; the agent's turn on " + d.TaskID + " is over and verification decides"
		}
	} else {
		in.Action = fmt.Sprintf("checkpoint %d recorded", r.Checkpoint)
	}
	return in, nil
}

// pastTurn refuses a report on a task's delegation that no longer carries
// the task's turn: the task ended, or a later attempt (another delegation)
// runs. Such a report comes from an agent that reports on an earlier turn
// (a program that outlived it, or ids kept from it); recording it would
// say the agent finished the task it works on now.
func (s *State) pastTurn(d *Delivery) error {
	t := s.tasks[d.TaskID]
	if d.Type != TypeDelegation || t == nil {
		return nil
	}
	switch {
	case t.State.Terminal():
		return conflictf("task %s is already %s: a report on it changes nothing", t.ID, t.State)
	case t.Delivery != "" && t.Delivery != d.ID:
		return conflictf("%s is the delegation of an earlier attempt of task %s; its attempt %d is %s", d.ID, t.ID, t.Attempt, t.Delivery)
	}
	return nil
}

// message handles plain text: it acknowledges instructions whose matcher it
// satisfies and conversations it answers; anything else is logged.
func (s *State) message(now time.Time, a *Agent, d *Delivery, r ack.Reply) (Interpretation, error) {
	in := Interpretation{Kind: string(ack.KindMessage)}
	if d != nil {
		in.DeliveryID, in.TaskID = d.ID, d.TaskID
		if d.State.Terminal() {
			return in, s.settled(d)
		}
	}
	s.seen(now, a, "replied")
	for _, id := range slices.Clone(a.Unacked) {
		i := s.find(id)
		if s.matches(i.Matcher, r.Text) {
			s.emit(now, i.TaskID, i.To, DeliveryAcknowledged{ID: i.ID, By: "matcher"})
			in.Acknowledged = append(in.Acknowledged, i.ID)
		}
	}
	if d != nil && !d.State.Terminal() {
		switch {
		case d.Policy == PolicyNone, d.Policy == PolicyCycles && d.Matcher == nil:
			s.emit(now, d.TaskID, d.To, DeliveryAcknowledged{ID: d.ID, By: "reply"})
			in.Acknowledged = append(in.Acknowledged, d.ID)
		case d.Policy == PolicyBackoff:
			s.emit(now, d.TaskID, d.To, DeliveryReply{ID: d.ID, Kind: string(ack.KindMessage), Text: r.Text})
			in.Action = "logged; still waiting for [ACK] " + d.TaskID
			return in, nil
		}
	}
	if d == nil {
		// The reply is the acknowledgment of a conversation.
		for _, c := range s.openTo(a.Name, func(c *Delivery) bool { return c.Policy == PolicyNone && c.State == Sent }) {
			s.emit(now, c.TaskID, c.To, DeliveryAcknowledged{ID: c.ID, By: "reply"})
			in.Acknowledged = append(in.Acknowledged, c.ID)
		}
	}
	if len(in.Acknowledged) == 0 {
		s.emit(now, "", a.Name, DeliveryReply{Kind: string(ack.KindMessage), Text: r.Text})
		in.Action = "logged as information"
		return in, nil
	}
	in.Action = "acknowledged " + strings.Join(in.Acknowledged, ", ")
	return in, nil
}
