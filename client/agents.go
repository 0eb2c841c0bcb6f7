package client

import (
	"context"
	"net/http"

	"wilco/wire"
)

// Agents lists the agents: GET /v1/agents.
func (c *Client) Agents(ctx context.Context) ([]wire.Agent, error) {
	agents, _, err := c.AgentsAndNext(ctx)
	return agents, err
}

// AgentsAndNext returns the agents and where the next task that names no
// agent would go: GET /v1/agents.
func (c *Client) AgentsAndNext(ctx context.Context) ([]wire.Agent, wire.NextAgent, error) {
	var out wire.AgentList
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/agents"}, &out)
	return out.Agents, out.Next, err
}

// RemoveAgent takes an agent out of service: DELETE /v1/agents/{name}.
func (c *Client) RemoveAgent(ctx context.Context, name string) (*wire.Agent, error) {
	var a wire.Agent
	if _, err := c.call(ctx, request{method: http.MethodDelete, path: "/v1/agents/" + seg(name)}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// Agent returns one agent: GET /v1/agents/{name}.
func (c *Client) Agent(ctx context.Context, name string) (*wire.Agent, error) {
	var a wire.Agent
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/agents/" + seg(name)}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// CreateAgent registers an agent and returns it with its token:
// POST /v1/agents.
func (c *Client) CreateAgent(ctx context.Context, spec wire.CreateAgent) (*wire.CreatedAgent, error) {
	return one[wire.CreatedAgent](ctx, c, request{method: http.MethodPost, path: "/v1/agents", body: spec})
}

// RotateAgentToken gives an agent a new token; the old one stops working:
// POST /v1/agents/{name}/token.
func (c *Client) RotateAgentToken(ctx context.Context, name string) (string, error) {
	var out wire.Token
	_, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/agents/" + seg(name) + "/token", body: struct{}{}}, &out)
	return out.Token, err
}

// ProbeAgent asks the agent for its context: POST /v1/agents/{name}/probe.
// The answer comes later, in the agent's Context.
func (c *Client) ProbeAgent(ctx context.Context, name string) (*wire.Message, error) {
	var m wire.Message
	if _, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/agents/" + seg(name) + "/probe"}, &m); err != nil {
		return nil, err
	}
	return &m, nil
}
