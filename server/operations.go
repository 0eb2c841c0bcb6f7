package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"wilco/core"
	"wilco/store"
	"wilco/wire"
)

// operationPolicy is the configured operation policy with the request's
// overrides.
func operationPolicy(req wire.StartOperation, p core.OperationPolicy) (core.OperationPolicy, error) {
	var err error
	if req.Timeout != 0 {
		if p.Timeout, err = nonNegative("timeout", req.Timeout); err != nil {
			return p, err
		}
	}
	if req.Reminders != nil {
		p.Reminders = make([]time.Duration, len(req.Reminders))
		for i, v := range req.Reminders {
			if p.Reminders[i], err = nonNegative(fmt.Sprintf("reminders[%d]", i), v); err != nil {
				return p, err
			}
		}
	}
	if req.Extension != 0 {
		if p.Extension, err = nonNegative("extension", req.Extension); err != nil {
			return p, err
		}
	}
	if req.ProceedOnTimeout != nil {
		p.ProceedOnTimeout = *req.ProceedOnTimeout
	}
	if req.Quorum != "" {
		p.Quorum = core.Quorum(req.Quorum)
	}
	return p, nil
}

func (s *Server) startOperation(w http.ResponseWriter, r *http.Request) error {
	var req wire.StartOperation
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	for i, arg := range req.Command {
		if arg == "" {
			return invalidf("command[%d]: must not be empty", i)
		}
	}
	v, err := do(r.Context(), s, func(c *core.State, now time.Time) (wire.Operation, error) {
		p, err := operationPolicy(req, c.Policies().Operation)
		if err != nil {
			return wire.Operation{}, err
		}
		o, err := c.StartOperation(now, core.OperationRequest{
			Name: req.Operation, Agents: req.Agents, Message: req.Message, Command: req.Command, Target: req.Target, Policy: &p,
		})
		if err != nil {
			return wire.Operation{}, err
		}
		return operationView(o, c), nil
	})
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/operations/"+v.ID)
	WriteJSON(w, http.StatusCreated, v)
	return nil
}

func (s *Server) getOperation(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	id := r.PathValue("id")
	var v wire.Operation
	var ok bool
	if err := s.read(func(c *core.State) {
		var o core.Operation
		if o, ok = c.Operation(id); ok {
			v = operationView(o, c)
		}
	}); err != nil {
		return err
	}
	if !ok {
		return notFoundf("no operation %q", id)
	}
	log, err := s.operationLog(r.Context(), v)
	if err != nil {
		return err
	}
	v.Log = log
	WriteJSON(w, http.StatusOK, v)
	return nil
}

// maxLogEvents bounds the events read for one operation's log.
const maxLogEvents = 5000

// operationLog is an operation's round, from the events of the log: its
// start, each agent's request, reminders, answers and notices, its
// changes of state, and what it did to each agent.
func (s *Server) operationLog(ctx context.Context, v wire.Operation) ([]wire.OperationLogEntry, error) {
	var start, last uint64
	var deliveries []string
	if err := s.read(func(c *core.State) {
		if o, ok := c.Operation(v.ID); ok {
			start, last, deliveries = o.StartSeq, o.Version, o.Deliveries
		}
	}); err != nil {
		return nil, err
	}
	if start == 0 {
		return nil, nil
	}
	limit := int(min(last-start+1, maxLogEvents))
	evs, err := s.st.Events(ctx, store.Filter{After: start - 1, Limit: limit})
	if err != nil {
		return nil, err
	}
	agentOf := map[string]string{}
	for i, d := range deliveries {
		if i < len(v.Agents) {
			agentOf[d] = v.Agents[i].Name
		}
	}
	var out []wire.OperationLogEntry
	for _, ev := range evs {
		data, err := core.DecodeEventData(ev.Type, ev.Data)
		if err != nil {
			continue
		}
		e := wire.OperationLogEntry{Seq: ev.Seq, Time: ev.Time, Type: ev.Type, Agent: ev.Agent}
		if d, ok := data.(core.OperationStateChanged); ok {
			if d.ID == v.ID {
				out = append(out, stateLines(e, d)...)
			}
			continue
		}
		text, ok := operationLine(data, v.ID, agentOf)
		if !ok {
			continue
		}
		e.Text = text
		if e.Agent == "" {
			e.Agent = agentOfEvent(data, agentOf)
		}
		out = append(out, e)
	}
	return out, nil
}

// operationLine is an event's line in operation id's log; ok is false for
// an event of another operation, or of a kind the log does not show.
// agentOf maps the operation's deliveries to their agents.
func operationLine(data core.EventData, id string, agentOf map[string]string) (text string, ok bool) {
	switch d := data.(type) {
	case core.OperationStarted:
		if d.Operation.ID != id {
			return "", false
		}
		text = fmt.Sprintf("%s asks %s for \"ok\" (timeout %s, reminders at %s)", d.Operation.Name, strings.Join(d.Operation.Agents, ", "),
			d.Operation.Policy.Timeout, durations(d.Operation.Policy.Reminders))
	case core.DeliverySent:
		if _, ok := agentOf[d.ID]; !ok {
			return "", false
		}
		text = "request sent: " + firstLine(d.Message.Body, 200)
	case core.DeliveryRetried:
		if _, ok := agentOf[d.ID]; !ok {
			return "", false
		}
		text = "reminder sent: " + firstLine(d.Body, 200)
	case core.DeliveryNotice:
		if _, ok := agentOf[d.ID]; !ok {
			return "", false
		}
		text = d.Subject + ": " + firstLine(d.Body, 200)
	case core.OperationReminder:
		if d.ID != id {
			return "", false
		}
		text = fmt.Sprintf("reminder %d (%s): %s remaining", d.Number, d.Tone, d.Remaining.Round(time.Second))
	case core.OperationReply:
		if d.ID != id {
			return "", false
		}
		text = "answered " + d.Answer
		if t := firstLine(d.Text, 200); t != "" && t != d.Answer {
			text += ": " + t
		}
	case core.DeliveryAcknowledged:
		if _, ok := agentOf[d.ID]; !ok {
			return "", false
		}
		text = "acknowledged"
	case core.DeliveryFailed:
		if _, ok := agentOf[d.ID]; !ok {
			return "", false
		}
		text = "no answer: " + d.Reason
	case core.DeliveryCancelled:
		if _, ok := agentOf[d.ID]; !ok {
			return "", false
		}
		text = "request cancelled: " + d.Reason
	case core.AgentStatusChanged:
		if !strings.HasPrefix(d.Reason, id+" ") {
			return "", false
		}
		text = fmt.Sprintf("status %s → %s", d.From, d.To)
	default:
		return "", false
	}
	return text, true
}

// stateLines are the lines of an operation's change of state: the change,
// then a line per agent's result.
func stateLines(e wire.OperationLogEntry, d core.OperationStateChanged) []wire.OperationLogEntry {
	e.Text = fmt.Sprintf("%s → %s", d.From, d.To)
	if d.Reason != "" {
		e.Text += ": " + d.Reason
	}
	out := []wire.OperationLogEntry{e}
	for _, r := range d.Results {
		text := "done: " + r.Action
		if !r.Done {
			text = "failed: " + strings.Join(nonEmpty(r.Error, r.Action), "; ")
		}
		out = append(out, wire.OperationLogEntry{Seq: e.Seq, Time: e.Time, Type: "operation.result", Agent: r.Agent, Text: text})
	}
	return out
}

func agentOfEvent(data core.EventData, agentOf map[string]string) string {
	switch d := data.(type) {
	case core.DeliverySent:
		return agentOf[d.ID]
	case core.DeliveryRetried:
		return agentOf[d.ID]
	case core.DeliveryNotice:
		return agentOf[d.ID]
	}
	return ""
}

func durations(ds []time.Duration) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.String())
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (s *Server) cancelOperation(w http.ResponseWriter, r *http.Request) error {
	var req wire.Reason
	if err := optionalBody(r, &req); err != nil {
		return err
	}
	id := r.PathValue("id")
	v, err := do(r.Context(), s, func(c *core.State, now time.Time) (wire.Operation, error) {
		o, err := c.CancelOperation(now, id, req.Reason)
		if err != nil {
			return wire.Operation{}, err
		}
		return operationView(o, c), nil
	})
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, v)
	return nil
}

// maxListLimit bounds ?limit= of the lists that take the newest n.
const maxListLimit = 10000

// newestLimit reads ?limit= (0 when absent): keep only the newest n.
func newestLimit(r *http.Request) (int, error) {
	if !r.URL.Query().Has("limit") {
		return 0, nil
	}
	n, err := uintParam(r, "limit", 0)
	if err != nil {
		return 0, err
	}
	if n == 0 || n > maxListLimit {
		return 0, invalidf("limit: from 1 to %d, got %d", maxListLimit, n)
	}
	return int(n), nil
}

// newest keeps the last n of a list in order (all of it for n 0).
func newest[T any](list []T, n int) []T {
	if n > 0 && len(list) > n {
		return list[len(list)-n:]
	}
	return list
}

func (s *Server) listOperations(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "state", "agent", "limit"); err != nil {
		return err
	}
	state := core.OperationState(r.URL.Query().Get("state"))
	agent := r.URL.Query().Get("agent")
	switch state {
	case "", core.OpWaiting, core.OpProceeding, core.OpDone, core.OpCancelled, core.OpAborted, core.OpFailed:
	default:
		return invalidf("state %q: must be waiting, proceeding, done, cancelled, aborted or failed", state)
	}
	limit, err := newestLimit(r)
	if err != nil {
		return err
	}
	out := wire.OperationList{Operations: []wire.Operation{}}
	if err := s.read(func(c *core.State) {
		ops := c.Operations(func(o *core.Operation) bool {
			return (state == "" || o.State == state) && (agent == "" || slices.Contains(o.Agents, agent))
		})
		for _, o := range newest(ops, limit) {
			out.Operations = append(out.Operations, operationView(o, c))
		}
	}); err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, out)
	return nil
}
