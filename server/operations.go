package server

import (
	"fmt"
	"net/http"
	"time"

	"wilco/core"
)

type operationRequest struct {
	Operation        string    `json:"operation"`
	Agents           []string  `json:"agents"`
	Message          string    `json:"message"`
	Timeout          *string   `json:"timeout"`
	Reminders        *[]string `json:"reminders"`
	Extension        *string   `json:"extension"`
	ProceedOnTimeout *bool     `json:"proceed_on_timeout"`
	Quorum           *string   `json:"quorum"`
	Command          []string  `json:"command"`
}

// policy returns the configured operation policy with the request's
// overrides.
func (req operationRequest) policy(p core.OperationPolicy) (core.OperationPolicy, error) {
	var err error
	if req.Timeout != nil {
		if p.Timeout, err = duration("timeout", *req.Timeout); err != nil {
			return p, err
		}
	}
	if req.Reminders != nil {
		p.Reminders = make([]time.Duration, len(*req.Reminders))
		for i, v := range *req.Reminders {
			if p.Reminders[i], err = duration(fmt.Sprintf("reminders[%d]", i), v); err != nil {
				return p, err
			}
		}
	}
	if req.Extension != nil {
		if p.Extension, err = duration("extension", *req.Extension); err != nil {
			return p, err
		}
	}
	if req.ProceedOnTimeout != nil {
		p.ProceedOnTimeout = *req.ProceedOnTimeout
	}
	if req.Quorum != nil {
		p.Quorum = core.Quorum(*req.Quorum)
	}
	return p, nil
}

func (s *Server) startOperation(w http.ResponseWriter, r *http.Request) error {
	var req operationRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	for i, arg := range req.Command {
		if arg == "" {
			return invalidf("command[%d]: must not be empty", i)
		}
	}
	v, err := do(r.Context(), s, func(c *core.State, now time.Time) (OperationView, error) {
		p, err := req.policy(c.Policies().Operation)
		if err != nil {
			return OperationView{}, err
		}
		o, err := c.StartOperation(now, core.OperationRequest{
			Name: req.Operation, Agents: req.Agents, Message: req.Message, Command: req.Command, Policy: &p,
		})
		if err != nil {
			return OperationView{}, err
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
	var v OperationView
	var ok bool
	s.read(func(c *core.State) {
		var o core.Operation
		if o, ok = c.Operation(id); ok {
			v = operationView(o, c)
		}
	})
	if !ok {
		return notFoundf("no operation %q", id)
	}
	WriteJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) cancelOperation(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Reason string `json:"reason"`
	}
	if err := optionalBody(r, &req); err != nil {
		return err
	}
	id := r.PathValue("id")
	v, err := do(r.Context(), s, func(c *core.State, now time.Time) (OperationView, error) {
		o, err := c.CancelOperation(now, id, req.Reason)
		if err != nil {
			return OperationView{}, err
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
	if err := checkQuery(r, "state", "limit"); err != nil {
		return err
	}
	state := core.OperationState(r.URL.Query().Get("state"))
	switch state {
	case "", core.OpWaiting, core.OpProceeding, core.OpDone, core.OpCancelled, core.OpAborted, core.OpFailed:
	default:
		return invalidf("state %q: must be waiting, proceeding, done, cancelled, aborted or failed", state)
	}
	limit, err := newestLimit(r)
	if err != nil {
		return err
	}
	out := []OperationView{}
	s.read(func(c *core.State) {
		ops := c.Operations(func(o *core.Operation) bool { return state == "" || o.State == state })
		for _, o := range newest(ops, limit) {
			out = append(out, operationView(o, c))
		}
	})
	WriteJSON(w, http.StatusOK, map[string]any{"operations": out})
	return nil
}
