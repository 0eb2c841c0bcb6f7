package core

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scouts are read-only helper agents (role: scout) that the agent working
// on a task — the editor — consults: it asks (wilco ask, or the MCP tool
// wilco_ask) and waits for the answer. The question goes to the scout as a
// tracked message; the task's milestone says "Querying Scout <name>...";
// the answer goes back to the editor, and the whole exchange stays in the
// task's detail. A scout's answer is help for the editor, never evidence:
// the stuck report's hypotheses are made from the failures alone.

// TypeScoutQuery is the message that asks a scout a question.
const TypeScoutQuery MessageType = "scout_query"

// DefaultScoutTimeout is how long a scout has to answer.
const DefaultScoutTimeout = 10 * time.Minute

// maxQuestion and maxAnswer bound a consultation's texts.
const (
	maxQuestion = 16 << 10
	maxAnswer   = 64 << 10
)

// Consultation states.
const (
	ConsultPending  = "pending"
	ConsultAnswered = "answered"
	ConsultFailed   = "failed"
)

// Consultation is one question an editor asked a scout, and its answer.
type Consultation struct {
	// ID is the question's message id: the scout answers it.
	ID       string    `json:"id"`
	TaskID   string    `json:"task_id"`
	Attempt  int       `json:"attempt"`
	From     string    `json:"from"`
	Scout    string    `json:"scout"`
	Question string    `json:"question"`
	State    string    `json:"state"`
	Answer   string    `json:"answer,omitempty"`
	Error    string    `json:"error,omitempty"`
	AskedAt  time.Time `json:"asked_at"`
	EndedAt  time.Time `json:"ended_at,omitzero"`
}

// Scout events.
const (
	TypeScoutAsked    = "scout.asked"
	TypeScoutAnswered = "scout.answered"
	TypeScoutFailed   = "scout.failed"
)

// ScoutAsked records a question to a scout.
type ScoutAsked struct {
	Consultation Consultation `json:"consultation"`
}

// ScoutAnswered records a scout's answer.
type ScoutAnswered struct {
	ID     string `json:"id"`
	Answer string `json:"answer"`
}

// ScoutFailed records a question that got no usable answer.
type ScoutFailed struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

func (ScoutAsked) EventType() string    { return TypeScoutAsked }
func (ScoutAnswered) EventType() string { return TypeScoutAnswered }
func (ScoutFailed) EventType() string   { return TypeScoutFailed }

func init() {
	register[ScoutAsked]()
	register[ScoutAnswered]()
	register[ScoutFailed]()
}

// scoutNames are the scouts in service, sorted.
func (s *State) scoutNames() []string {
	var out []string
	for n, a := range s.agents {
		if a.Role == RoleScout && !a.Removed {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// AskScout sends an editor's question to a scout: the editor (from) must
// be working on a task, which the question belongs to.
func (s *State) AskScout(now time.Time, from, scout, question string) (Consultation, error) {
	now = norm(now)
	a, ok := s.agents[from]
	if !ok {
		return Consultation{}, notFoundf("no agent %q", from)
	}
	sc, ok := s.agents[scout]
	if !ok || sc.Removed {
		return Consultation{}, notFoundf("no scout %q (the scouts: %s)", scout, firstOf(strings.Join(s.scoutNames(), ", "), "none"))
	}
	if sc.Role != RoleScout {
		return Consultation{}, invalidf("%s is not a scout (role: scout in wilco.yaml); the scouts: %s", scout, firstOf(strings.Join(s.scoutNames(), ", "), "none"))
	}
	question = strings.TrimSpace(question)
	switch {
	case question == "":
		return Consultation{}, invalidf("question: ask something")
	case len(question) > maxQuestion:
		return Consultation{}, invalidf("question: at most %d bytes", maxQuestion)
	}
	t := s.activeOf(from)
	if t == nil || !(t.State == Running || t.State == AwaitingAck) {
		return Consultation{}, conflictf("%s is working on no task: a scout is consulted from inside a task", a.Name)
	}
	body := fmt.Sprintf("## Question from %s, working on task %s\n\n%s\n\n---\nYou are a scout: a read-only helper. Answer the question from what you can read "+
		"in this repository. Do not change any file: a scout that changes a file has its answer refused.\n", from, t.ID, question)
	m := Message{
		ID: s.nextID("M"), From: Orchestrator, To: scout, Type: TypeScoutQuery, Policy: PolicyNone,
		Subject: fmt.Sprintf("Question from %s (task %s)", from, t.ID), Body: body, TaskID: t.ID, TaskAttempt: t.Attempt,
	}
	c := Consultation{ID: m.ID, TaskID: t.ID, Attempt: t.Attempt, From: from, Scout: scout, Question: question, State: ConsultPending, AskedAt: now}
	s.emit(now, t.ID, scout, ScoutAsked{Consultation: c})
	s.emit(now, t.ID, from, TaskMilestone{Text: fmt.Sprintf("Querying Scout %s...", scout)})
	s.emit(now, t.ID, scout, DeliverySent{Send{ID: m.ID, Attempt: 1, Kind: SendFirst, Round: 1, TimerAt: now.Add(DefaultScoutTimeout), Message: &m}})
	return c, nil
}

// Consultation returns a question to a scout and its answer.
func (s *State) Consultation(id string) (Consultation, bool) {
	d := s.find(id)
	if d == nil || d.Type != TypeScoutQuery {
		return Consultation{}, false
	}
	t := s.tasks[d.TaskID]
	if t == nil {
		return Consultation{}, false
	}
	for _, c := range t.Consultations {
		if c.ID == id {
			return c, true
		}
	}
	return Consultation{}, false
}

// scoutAnswer takes a scout's answer to a question.
func (s *State) scoutAnswer(now time.Time, a *Agent, d *Delivery, text string) (Interpretation, error) {
	in := Interpretation{Kind: KindScoutAnswer, DeliveryID: d.ID, TaskID: d.TaskID}
	if d.State.Terminal() {
		return in, s.settled(d)
	}
	s.seen(now, a, "replied")
	text = strings.TrimSpace(text)
	if len(text) > maxAnswer {
		text = text[:maxAnswer] + "\n… (cut)"
	}
	s.emit(now, d.TaskID, d.To, DeliveryAcknowledged{ID: d.ID, By: "reply"})
	s.emit(now, d.TaskID, d.To, ScoutAnswered{ID: d.ID, Answer: text})
	in.Acknowledged, in.Action = []string{d.ID}, "answered: the answer goes to the agent that asked"
	s.afterConsultation(now, d)
	return in, nil
}

// FailConsultation ends a question its scout could not answer usably: the
// scout changed files (a scout is read-only), or its turn failed.
func (s *State) FailConsultation(now time.Time, id, reason string) error {
	now = norm(now)
	d := s.find(id)
	if d == nil || d.Type != TypeScoutQuery {
		return notFoundf("no question %q", id)
	}
	if d.State.Terminal() {
		return s.settled(d)
	}
	s.questionFailed(now, d, reason)
	return nil
}

// questionFailed ends a question that gets no usable answer.
func (s *State) questionFailed(now time.Time, d *Delivery, reason string) {
	s.emit(now, d.TaskID, d.To, DeliveryFailed{ID: d.ID, Reason: reason, Attempts: d.Sends})
	s.emit(now, d.TaskID, d.To, ScoutFailed{ID: d.ID, Reason: reason})
	s.afterConsultation(now, d)
}

// afterConsultation gives the task its milestone back once no question is
// pending.
func (s *State) afterConsultation(now time.Time, d *Delivery) {
	t := s.tasks[d.TaskID]
	if t == nil || t.State != Running || t.Phase != Executing {
		return
	}
	for _, c := range t.Consultations {
		if c.State == ConsultPending {
			return
		}
	}
	s.emit(now, t.ID, t.Agent, TaskMilestone{Text: MilestoneImplementing})
}

// MessageFailed records that an agent could not answer a message sent to
// it (its turn failed; a scout changed files): a scout's question fails
// with that reason, a review escalates its task at once (no verdict will
// come); other messages wait for their own policies.
func (s *State) MessageFailed(now time.Time, agent, id, reason string) error {
	now = norm(now)
	d := s.find(id)
	if d == nil || d.To != agent {
		return notFoundf("no message %q to %s", id, agent)
	}
	if d.State.Terminal() {
		return nil
	}
	switch d.Type {
	case TypeScoutQuery:
		return s.FailConsultation(now, id, reason)
	case TypeReview:
		s.reviewFailed(now, d, "could not review the change ("+reason+")")
	}
	return nil
}
