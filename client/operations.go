package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"wilco/wire"
)

// Operations lists operations, oldest first: GET /v1/operations (state and
// agent filter when set; limit > 0 keeps the newest limit).
func (c *Client) Operations(ctx context.Context, state, agent string, limit int) ([]wire.Operation, error) {
	q := url.Values{}
	if state != "" {
		q.Set("state", state)
	}
	if agent != "" {
		q.Set("agent", agent)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out wire.OperationList
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/operations", query: q}, &out)
	return out.Operations, err
}

// StartOperation asks the agents for their "ok" before an operation:
// POST /v1/operations.
func (c *Client) StartOperation(ctx context.Context, r wire.StartOperation) (*wire.Operation, error) {
	return one[wire.Operation](ctx, c, request{method: http.MethodPost, path: "/v1/operations", body: r})
}

// Operation returns one operation: GET /v1/operations/{id}.
func (c *Client) Operation(ctx context.Context, id string) (*wire.Operation, error) {
	return one[wire.Operation](ctx, c, request{method: http.MethodGet, path: "/v1/operations/" + seg(id)})
}

// CancelOperation cancels a waiting operation:
// POST /v1/operations/{id}/cancel (an extra of this server).
func (c *Client) CancelOperation(ctx context.Context, id, reason string) (*wire.Operation, error) {
	body := wire.Reason{Reason: reason}
	return one[wire.Operation](ctx, c, request{method: http.MethodPost, path: "/v1/operations/" + seg(id) + "/cancel", body: body})
}
