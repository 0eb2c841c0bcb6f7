package server

import (
	"context"
	"net/http"
	"time"

	"wilco/core"
	"wilco/store"
	"wilco/wire"
)

type askRequest struct {
	Scout    string `json:"scout"`
	Question string `json:"question"`
}

// ask sends the calling agent's question to a scout.
func (s *Server) ask(w http.ResponseWriter, r *http.Request) error {
	var req askRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	c, err := s.askScout(r.Context(), AgentName(r.Context()), req.Scout, req.Question)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusCreated, consultation(c))
	return nil
}

func (s *Server) askScout(ctx context.Context, from, scout, question string) (core.Consultation, error) {
	return do(ctx, s, func(c *core.State, now time.Time) (core.Consultation, error) {
		return c.AskScout(now, from, scout, question)
	})
}

// askResult answers a question's state to the agent that asked it, waiting
// up to ?wait= while it is pending.
func (s *Server) askResult(w http.ResponseWriter, r *http.Request) error {
	wait, err := s.waitParam(r)
	if err != nil {
		return err
	}
	c, err := s.consultation(r.Context(), r.PathValue("id"), AgentName(r.Context()), wait)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, consultation(c))
	return nil
}

// consultation is question id as the agent that asked it sees it, once it
// ended or wait passed.
func (s *Server) consultation(ctx context.Context, id, agent string, wait time.Duration) (core.Consultation, error) {
	get := func() (core.Consultation, error) {
		var c core.Consultation
		var ok bool
		err := s.read(func(st *core.State) { c, ok = st.Consultation(id) })
		switch {
		case err != nil:
			return c, err
		case !ok:
			return c, Errorf(wire.CodeNotFound, "no question %q", id)
		case c.From != agent:
			return c, Errorf(wire.CodePermissionDenied, "question %s was asked by another agent", id)
		}
		return c, nil
	}
	c, err := get()
	if err != nil || c.State != core.ConsultPending || wait <= 0 {
		return c, err
	}
	// Wait for the question's end, told by its task's scout events.
	task := c.TaskID
	sub, err := s.rt.Subscribe(ctx, func(ev store.Event) bool {
		return ev.TaskID == task && (ev.Type == core.TypeScoutAnswered || ev.Type == core.TypeScoutFailed)
	}, 16)
	if err != nil {
		return c, err
	}
	defer sub.Cancel()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	events := sub.C
	for {
		if c, err = get(); err != nil || c.State != core.ConsultPending {
			return c, err
		}
		select {
		case _, open := <-events:
			if !open {
				// Dropped (too slow) or closed: the timer ends the wait.
				events = nil
			}
		case <-timer.C:
			return c, nil
		case <-ctx.Done():
			return c, ctx.Err()
		}
	}
}
