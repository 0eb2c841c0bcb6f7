package client

import (
	"context"
	"net/http"
	"net/url"
)

// Send sends a message to an agent: POST /v1/messages.
func (c *Client) Send(ctx context.Context, m MessageRequest) (*Message, error) {
	return one[Message](ctx, c, request{method: http.MethodPost, path: "/v1/messages", body: m})
}

// Message returns one message and where its delivery stands:
// GET /v1/messages/{id}.
func (c *Client) Message(ctx context.Context, id string) (*Message, error) {
	return one[Message](ctx, c, request{method: http.MethodGet, path: "/v1/messages/" + seg(id)})
}

// Instruct queues an instruction, resent once per dispatch cycle until it
// is acknowledged or runs out of retries: POST /v1/instructions.
// Instructions may be sent more than once: they must be idempotent.
func (c *Client) Instruct(ctx context.Context, in InstructionRequest) (*Instruction, error) {
	return one[Instruction](ctx, c, request{method: http.MethodPost, path: "/v1/instructions", body: in})
}

// Acknowledge acknowledges an instruction on the caller's behalf:
// POST /v1/instructions/{id}/ack.
func (c *Client) Acknowledge(ctx context.Context, id string) (*Instruction, error) {
	return one[Instruction](ctx, c, request{method: http.MethodPost, path: "/v1/instructions/" + seg(id) + "/ack", body: struct{}{}})
}

// Instructions lists the instructions f selects:
// GET /v1/instructions?state=&agent=.
func (c *Client) Instructions(ctx context.Context, f InstructionFilter) ([]Instruction, error) {
	q := url.Values{}
	for k, v := range map[string]string{"state": f.State, "agent": f.Agent} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out struct {
		Instructions []Instruction `json:"instructions"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/instructions", query: q}, &out)
	return out.Instructions, err
}

// Instruction returns one instruction: GET /v1/instructions/{id}.
func (c *Client) Instruction(ctx context.Context, id string) (*Instruction, error) {
	return one[Instruction](ctx, c, request{method: http.MethodGet, path: "/v1/instructions/" + seg(id)})
}

// Messages lists messages, instructions included: GET /v1/messages (an
// extra of this server).
func (c *Client) Messages(ctx context.Context, f MessageFilter) ([]Message, error) {
	q := url.Values{}
	for k, v := range map[string]string{"agent": f.Agent, "state": f.State, "type": f.Type, "task": f.Task} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out struct {
		Messages []Message `json:"messages"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/messages", query: q}, &out)
	return out.Messages, err
}

// CancelMessage cancels an open message: POST /v1/messages/{id}/cancel (an
// extra of this server).
func (c *Client) CancelMessage(ctx context.Context, id, reason string) (*Message, error) {
	body := struct {
		Reason string `json:"reason,omitempty"`
	}{reason}
	return one[Message](ctx, c, request{method: http.MethodPost, path: "/v1/messages/" + seg(id) + "/cancel", body: body})
}

// ClarifyMessage answers the questions an agent asked about a delegation:
// POST /v1/messages/{id}/clarify (an extra of this server).
func (c *Client) ClarifyMessage(ctx context.Context, id string, answers []string) (*Message, error) {
	if answers == nil {
		answers = []string{}
	}
	body := struct {
		Answers []string `json:"answers"`
	}{answers}
	return one[Message](ctx, c, request{method: http.MethodPost, path: "/v1/messages/" + seg(id) + "/clarify", body: body})
}
