package server

import (
	"context"
	"net/http"
	"time"

	"wilco/core"
	"wilco/mcpserver"
	"wilco/wire"
)

// mcp is wilco's MCP server for agents over HTTP (MCP's streamable HTTP
// transport, see mcpserver.Handler): the same tools as `wilco mcp`, for
// the calling agent (its token) and the task it works on.
func (s *Server) mcp(w http.ResponseWriter, r *http.Request) error {
	agent := AgentName(r.Context())
	task := mcpserver.Task{ID: r.Header.Get("X-Wilco-Task")}
	if task.ID == "" {
		// The task the agent works on: the one it holds, if any.
		if err := s.read(func(c *core.State) {
			for _, t := range c.Tasks(func(t *core.Task) bool { return t.Agent == agent && t.State.Holds() }) {
				task = mcpserver.Task{ID: t.ID, MessageID: t.Delivery}
			}
		}); err != nil {
			return err
		}
	}
	mcpserver.Handler(mcpReplier{s: s, r: r, agent: agent}, task, "wilco").ServeHTTP(w, r)
	return nil
}

// mcpReplier sends a tool call as the agent's reply, as POST
// /v1/inbox/replies does.
type mcpReplier struct {
	s     *Server
	r     *http.Request
	agent string
}

// Ask asks a scout as the agent and waits for the answer, as POST /v1/ask
// and GET /v1/ask/{id} do.
func (m mcpReplier) Ask(ctx context.Context, scout, question string, wait time.Duration) (*wire.Consultation, error) {
	c, err := m.s.askScout(ctx, m.agent, scout, question)
	if err != nil {
		return nil, err
	}
	if c, err = m.s.consultation(ctx, c.ID, m.agent, min(wait, m.s.opts.MaxWait)); err != nil {
		return nil, err
	}
	out := consultation(c)
	return &out, nil
}

func (m mcpReplier) Reply(_ context.Context, rep wire.Reply) (*wire.Interpretation, error) {
	in, err := m.s.interpret(m.r, core.ReplyInput{Agent: m.agent, InReplyTo: rep.InReplyTo, Text: rep.Text, Type: string(rep.Type), Data: rep.Data})
	if err != nil {
		return nil, err
	}
	out := interpretation(in)
	return &out, nil
}
