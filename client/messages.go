package client

import (
	"context"
	"net/http"
	"net/url"

	"wilco/wire"
)

// Send sends a message to an agent: POST /v1/messages.
func (c *Client) Send(ctx context.Context, m wire.SendMessage) (*wire.Message, error) {
	return one[wire.Message](ctx, c, request{method: http.MethodPost, path: "/v1/messages", body: m})
}

// Message returns one message and where its delivery stands:
// GET /v1/messages/{id}.
func (c *Client) Message(ctx context.Context, id string) (*wire.Message, error) {
	return one[wire.Message](ctx, c, request{method: http.MethodGet, path: "/v1/messages/" + seg(id)})
}

// Instruct queues an instruction, resent once per dispatch cycle until it
// is acknowledged or runs out of retries: POST /v1/instructions.
// Instructions may be sent more than once: they must be idempotent.
func (c *Client) Instruct(ctx context.Context, in wire.CreateInstruction) (*wire.Instruction, error) {
	return one[wire.Instruction](ctx, c, request{method: http.MethodPost, path: "/v1/instructions", body: in})
}

// Acknowledge acknowledges an instruction on the caller's behalf:
// POST /v1/instructions/{id}/ack.
func (c *Client) Acknowledge(ctx context.Context, id string) (*wire.Instruction, error) {
	return one[wire.Instruction](ctx, c, request{method: http.MethodPost, path: "/v1/instructions/" + seg(id) + "/ack", body: struct{}{}})
}

// Instructions lists the instructions f selects:
// GET /v1/instructions?state=&agent=.
func (c *Client) Instructions(ctx context.Context, f InstructionFilter) ([]wire.Instruction, error) {
	q := url.Values{}
	for k, v := range map[string]string{"state": f.State, "agent": f.Agent} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out wire.InstructionList
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/instructions", query: q}, &out)
	return out.Instructions, err
}

// Instruction returns one instruction: GET /v1/instructions/{id}.
func (c *Client) Instruction(ctx context.Context, id string) (*wire.Instruction, error) {
	return one[wire.Instruction](ctx, c, request{method: http.MethodGet, path: "/v1/instructions/" + seg(id)})
}

// Messages lists messages, instructions included: GET /v1/messages (an
// extra of this server).
func (c *Client) Messages(ctx context.Context, f MessageFilter) ([]wire.Message, error) {
	q := url.Values{}
	for k, v := range map[string]string{"agent": f.Agent, "state": f.State, "type": f.Type, "task": f.Task} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out wire.MessageList
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/messages", query: q}, &out)
	return out.Messages, err
}

// CancelMessage cancels an open message: POST /v1/messages/{id}/cancel (an
// extra of this server).
func (c *Client) CancelMessage(ctx context.Context, id, reason string) (*wire.Message, error) {
	body := wire.Reason{Reason: reason}
	return one[wire.Message](ctx, c, request{method: http.MethodPost, path: "/v1/messages/" + seg(id) + "/cancel", body: body})
}

// ClarifyMessage answers the questions an agent asked about a delegation:
// POST /v1/messages/{id}/clarify (an extra of this server).
func (c *Client) ClarifyMessage(ctx context.Context, id string, answers []string) (*wire.Message, error) {
	if answers == nil {
		answers = []string{}
	}
	body := wire.Clarify{Answers: answers}
	return one[wire.Message](ctx, c, request{method: http.MethodPost, path: "/v1/messages/" + seg(id) + "/clarify", body: body})
}

// MessageFilter selects messages: GET /v1/messages (an extra of this
// server). Empty fields select all.
type MessageFilter struct {
	Agent, State, Type, Task string
}

// InstructionFilter selects instructions: GET /v1/instructions. Empty
// fields select all.
type InstructionFilter struct {
	State, Agent string
}
