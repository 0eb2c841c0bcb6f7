package server

import (
	"net/http"
	"time"

	"wilco/config"
	"wilco/core"
	"wilco/store"
	"wilco/wire"
)

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "status"); err != nil {
		return err
	}
	status := core.AgentStatus(r.URL.Query().Get("status"))
	if status != "" && !status.Valid() {
		return invalidf("status %q: must be available, busy, unresponsive, hibernating or offline", status)
	}
	out := wire.AgentList{Agents: []wire.Agent{}}
	if err := s.read(func(c *core.State) {
		var agents []core.Agent
		for _, a := range c.Agents() {
			if status == "" || a.Status == status {
				agents = append(agents, a)
			}
		}
		out.Agents = append(out.Agents, s.agentViews(c, agents...)...)
		out.Next.Agent, out.Next.Why = c.NextTaskAgent()
	}); err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, out)
	return nil
}

// sessionEndWait bounds how long removing an agent waits for the end of
// its session.
const sessionEndWait = 10 * time.Second

func (s *Server) removeAgent(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	name := r.PathValue("name")
	// The end of the agent's session (a tmux agent's) is an effect of the
	// removal; the answer waits for it, for at most sessionEndWait.
	ended, err := s.rt.Subscribe(r.Context(), func(ev store.Event) bool {
		return ev.Type == core.TypeAgentSessionEnded && ev.Agent == name
	}, 1)
	if err != nil {
		return err
	}
	defer ended.Cancel()
	a, err := do(r.Context(), s, func(c *core.State, now time.Time) (core.Agent, error) {
		if err := c.RemoveAgent(now, name, "removed by the user"); err != nil {
			return core.Agent{}, err
		}
		a, _ := c.Agent(name)
		return a, nil
	})
	if err != nil {
		return err
	}
	if a.EndSession {
		select {
		case <-ended.C:
		case <-time.After(sessionEndWait):
		case <-r.Context().Done():
		}
	}
	WriteJSON(w, http.StatusOK, s.agentView(a))
	return nil
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	name := r.PathValue("name")
	var v wire.Agent
	var ok bool
	if err := s.read(func(c *core.State) {
		var a core.Agent
		if a, ok = c.Agent(name); ok {
			v = s.agentViews(c, a)[0]
		}
	}); err != nil {
		return err
	}
	if !ok {
		return notFoundf("no agent %q", name)
	}
	WriteJSON(w, http.StatusOK, v)
	return nil
}

// createAgent registers an agent and gives it its token, in one step: the
// agent exists with its token, or not at all.
func (s *Server) createAgent(w http.ResponseWriter, r *http.Request) error {
	var req wire.CreateAgent
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	a := config.Agent{
		Name: req.Name, Adapter: string(req.Adapter), Capabilities: req.Capabilities, Preset: string(req.Preset), Command: req.Command,
		Prompt: string(req.Prompt), Handshake: string(req.Handshake), Env: req.Env, Role: string(req.Role),
	}
	if req.Role != "" && req.Role != wire.RoleScout {
		return invalidf("role %q: must be scout, or nothing for an agent that takes tasks", req.Role)
	}
	var present []string
	for f, set := range map[string]bool{
		"preset": req.Preset != "", "command": req.Command != nil, "prompt": req.Prompt != "", "handshake": req.Handshake != "",
		"env": req.Env != nil, "timeout": req.Timeout != 0, "idle_timeout": req.IdleTimeout != 0, "tmux": req.Tmux != nil,
	} {
		if set {
			present = append(present, f)
		}
	}
	var err error
	if a.Timeout, err = nonNegative("timeout", req.Timeout); err != nil {
		return err
	}
	if a.IdleTimeout, err = nonNegative("idle_timeout", req.IdleTimeout); err != nil {
		return err
	}
	if t := req.Tmux; t != nil {
		a.Tmux = &config.Tmux{Session: t.Session, Socket: t.Socket, Ready: t.Ready, Busy: t.Busy, Permission: t.Permission,
			Submit: t.Submit, Interrupt: t.Interrupt, Clear: t.Clear, Approve: t.Approve, Deny: t.Deny, Allow: t.Allow,
			Width: t.Width, Height: t.Height, SubmitTries: t.SubmitTries}
		if a.Tmux.Settle, err = nonNegative("tmux.settle", t.Settle); err != nil {
			return err
		}
	}
	if req.Name == s.orch {
		return invalidf("name %q is the orchestrator's name (the name agents write to)", req.Name)
	}
	if err := a.Check(present...); err != nil {
		return invalidf("%v", err)
	}
	token := NewToken()
	created, err := do(r.Context(), s, func(c *core.State, now time.Time) (core.Agent, error) {
		if old, exists := c.Agent(a.Name); exists && !old.Removed {
			return core.Agent{}, Errorf(wire.CodeConflict, "agent %q already exists (POST /v1/agents/%s/token gives it a new token)", a.Name, a.Name)
		}
		spec := a.Spec()
		spec.FromConfig = false // added over the API: it stays when wilco.yaml changes
		if err := c.RegisterAgent(now, spec); err != nil {
			return core.Agent{}, err
		}
		if err := c.SetAgentToken(now, a.Name, TokenHash(token)); err != nil {
			return core.Agent{}, err
		}
		ag, _ := c.Agent(a.Name)
		return ag, nil
	})
	if err != nil {
		return err
	}
	if s.opts.AgentAdded != nil {
		s.opts.AgentAdded(a, token)
	}
	w.Header().Set("Location", "/v1/agents/"+created.Name)
	WriteJSON(w, http.StatusCreated, wire.CreatedAgent{Agent: s.agentView(created), Token: token})
	return nil
}

// rotateToken gives an agent a new token; the old one stops working at
// once (the hash is replaced before the answer goes out).
func (s *Server) rotateToken(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	if err := optionalBody(r, &struct{}{}); err != nil { // no body, or an empty JSON object
		return err
	}
	name := r.PathValue("name")
	token := NewToken()
	_, err := do(r.Context(), s, func(c *core.State, now time.Time) (struct{}, error) {
		return struct{}{}, c.SetAgentToken(now, name, TokenHash(token))
	})
	if err != nil {
		return err
	}
	if s.opts.TokenRotated != nil {
		s.opts.TokenRotated(name, token)
	}
	WriteJSON(w, http.StatusOK, wire.Token{Token: token})
	return nil
}

// probeAgent sends the agent a context probe.
func (s *Server) probeAgent(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	d, err := do(r.Context(), s, func(c *core.State, now time.Time) (core.Delivery, error) {
		return c.ProbeAgent(now, name)
	})
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusAccepted, messageView(d, s.orch))
	return nil
}
