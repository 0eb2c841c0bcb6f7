package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"wilco/wire"
)

// Inbox fetches the agent's messages: GET /v1/inbox?wait=. Each call is
// one dispatch cycle: instructions not yet acknowledged are resent in it.
// With wait > 0 the server holds the call up to wait while the inbox is
// empty; the context should allow for that. It needs an agent token.
func (c *Client) Inbox(ctx context.Context, wait time.Duration) ([]wire.InboxMessage, error) {
	var q url.Values
	if wait > 0 {
		q = url.Values{"wait": {durationString(wait)}}
	}
	var out wire.Inbox
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/inbox", query: q}, &out)
	return out.Messages, err
}

// Reply answers as the agent: POST /v1/inbox/replies. It returns how wilco
// interpreted the reply. An agent may answer only what was sent to it.
func (c *Client) Reply(ctx context.Context, r wire.Reply) (*wire.Interpretation, error) {
	var out wire.Interpreted
	if _, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/inbox/replies", body: r}, &out); err != nil {
		return nil, err
	}
	return &out.Interpreted, nil
}

// Ask asks a scout a question as the agent (POST /v1/ask), from inside the
// agent's task, and waits up to wait for the answer (GET /v1/ask/{id},
// long-polled). The consultation comes back answered, failed, or still
// pending when wait passed. It needs an agent token.
func (c *Client) Ask(ctx context.Context, scout, question string, wait time.Duration) (*wire.Consultation, error) {
	var q wire.Consultation
	if _, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/ask", body: wire.Ask{Scout: scout, Question: question}}, &q); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for q.State == wire.ConsultPending {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		step := min(left, 4*time.Minute)
		var next wire.Consultation
		if _, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/ask/" + url.PathEscape(q.ID),
			query: url.Values{"wait": {durationString(step)}}}, &next); err != nil {
			return &q, err
		}
		q = next
	}
	return &q, nil
}
