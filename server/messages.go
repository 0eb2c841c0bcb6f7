package server

import (
	"net/http"
	"strings"
	"time"

	"wilco/core"
	"wilco/wire"
)

// messageTypes are the types POST /v1/messages takes (instructions have
// their own route).
var messageTypes = map[wire.MessageType]core.MessageType{
	wire.TypeDelegation:   core.TypeDelegation,
	wire.TypeConversation: core.TypeConversation,
}

func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request) error {
	var req wire.SendMessage
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.To == "" {
		return invalidf("to: name the agent")
	}
	var typ core.MessageType
	if req.Type != "" {
		var ok bool
		if typ, ok = messageTypes[req.Type]; !ok {
			if req.Type == wire.TypeInstruction {
				return invalidf("type %q: instructions are sent with POST /v1/instructions", req.Type)
			}
			return invalidf("type %q: must be task_delegation or conversation (or leave it out to classify the body)", req.Type)
		}
	}
	d, err := do(r.Context(), s, func(c *core.State, now time.Time) (core.Delivery, error) {
		return c.Send(now, core.SendRequest{
			From: s.orch, To: req.To, Type: typ, Subject: req.Subject, Body: req.Body, TaskID: req.TaskID,
			Capabilities: req.Capabilities, AcceptanceCriteria: req.AcceptanceCriteria, Description: req.Description,
		})
	})
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/messages/"+d.ID)
	WriteJSON(w, http.StatusCreated, messageView(d, s.orch))
	return nil
}

func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "agent", "state", "type", "task"); err != nil {
		return err
	}
	q := r.URL.Query()
	state, err := deliveryState(q.Get("state"))
	if err != nil {
		return err
	}
	agent, typ, task := q.Get("agent"), q.Get("type"), q.Get("task")
	out := wire.MessageList{Messages: []wire.Message{}}
	if err := s.read(func(c *core.State) {
		for _, d := range c.Deliveries(func(d *core.Delivery) bool {
			return (agent == "" || d.To == agent) && (state == "" || d.State == state) &&
				(typ == "" || string(d.Type) == typ) && (task == "" || d.TaskID == task)
		}) {
			out.Messages = append(out.Messages, messageView(d, s.orch))
		}
	}); err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getMessage(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	d, err := s.delivery(r.PathValue("id"), nil)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, messageView(d, s.orch))
	return nil
}

// delivery reads one delivery; keep, when given, says whether it is of the
// kind the route serves (else 404).
func (s *Server) delivery(id string, keep func(core.Delivery) bool) (core.Delivery, error) {
	var d core.Delivery
	var ok bool
	if err := s.read(func(c *core.State) { d, ok = c.Delivery(id) }); err != nil {
		return core.Delivery{}, err
	}
	if !ok || keep != nil && !keep(d) {
		return core.Delivery{}, notFoundf("no %s %q", kindName(keep), id)
	}
	return d, nil
}

func kindName(keep func(core.Delivery) bool) string {
	if keep == nil {
		return "message"
	}
	return "instruction"
}

func isInstruction(d core.Delivery) bool { return d.Policy == core.PolicyCycles }

func (s *Server) cancelMessage(w http.ResponseWriter, r *http.Request) error {
	var req wire.Reason
	if err := optionalBody(r, &req); err != nil {
		return err
	}
	id := r.PathValue("id")
	d, err := do(r.Context(), s, func(c *core.State, now time.Time) (core.Delivery, error) {
		return c.Cancel(now, id, req.Reason)
	})
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, messageView(d, s.orch))
	return nil
}

func (s *Server) clarifyMessage(w http.ResponseWriter, r *http.Request) error {
	var req wire.Clarify
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	id := r.PathValue("id")
	d, err := do(r.Context(), s, func(c *core.State, now time.Time) (core.Delivery, error) {
		return c.Clarify(now, id, req.Answers)
	})
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, messageView(d, s.orch))
	return nil
}

// optionalBody decodes a body that may be left out.
func optionalBody(r *http.Request, v any) error {
	if r.ContentLength == 0 {
		return nil
	}
	if err := DecodeJSON(r, v); err != nil && err != errEmptyBody {
		return err
	}
	return nil
}

func deliveryState(s string) (core.DeliveryState, error) {
	st := core.DeliveryState(s)
	switch st {
	case "", core.Pending, core.Sent, core.Clarifying, core.Acknowledged, core.Failed, core.Cancelled:
		return st, nil
	}
	return "", invalidf("state %q: must be pending, sent, clarifying, acknowledged, failed or cancelled", s)
}

// --- instructions --------------------------------------------------------------

func (s *Server) createInstruction(w http.ResponseWriter, r *http.Request) error {
	var req wire.CreateInstruction
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Agent == "" {
		return invalidf("agent: name the agent")
	}
	if strings.TrimSpace(req.Content) == "" {
		return invalidf("content: the instruction is empty")
	}
	d, err := do(r.Context(), s, func(c *core.State, now time.Time) (core.Delivery, error) {
		return c.Send(now, core.SendRequest{
			From: s.orch, To: req.Agent, Type: core.TypeInstruction, Body: req.Content,
			MaxRetries: req.MaxRetries, Matcher: (*core.Matcher)(req.AckWhen),
		})
	})
	if err != nil {
		return err
	}
	// An agent long-polling its inbox takes the instruction in this cycle.
	s.wakes.wake(d.To)
	w.Header().Set("Location", "/v1/instructions/"+d.ID)
	WriteJSON(w, http.StatusCreated, instructionView(d))
	return nil
}

func (s *Server) listInstructions(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "state", "agent", "limit"); err != nil {
		return err
	}
	limit, err := newestLimit(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	state, err := deliveryState(q.Get("state"))
	if err != nil {
		return err
	}
	if state == core.Clarifying {
		return invalidf("state %q: instructions are pending, sent, acknowledged, failed or cancelled", state)
	}
	agent := q.Get("agent")
	out := wire.InstructionList{Instructions: []wire.Instruction{}}
	if err := s.read(func(c *core.State) {
		for _, d := range newest(c.Deliveries(func(d *core.Delivery) bool {
			return d.Policy == core.PolicyCycles && (state == "" || d.State == state) && (agent == "" || d.To == agent)
		}), limit) {
			out.Instructions = append(out.Instructions, instructionView(d))
		}
	}); err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getInstruction(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	d, err := s.delivery(r.PathValue("id"), isInstruction)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, instructionView(d))
	return nil
}

// ackInstruction is the caller's explicit acknowledgment of an instruction.
func (s *Server) ackInstruction(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	if err := optionalBody(r, &struct{}{}); err != nil { // no body, or an empty JSON object
		return err
	}
	id := r.PathValue("id")
	d, err := do(r.Context(), s, func(c *core.State, now time.Time) (core.Delivery, error) {
		if d, ok := c.Delivery(id); !ok || !isInstruction(d) {
			return core.Delivery{}, notFoundf("no instruction %q", id)
		}
		return c.Acknowledge(now, id)
	})
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, instructionView(d))
	return nil
}
