package client

import (
	"context"
	"net/http"
)

// StartOperation asks the agents for their "ok" before an operation:
// POST /v1/operations.
func (c *Client) StartOperation(ctx context.Context, r OperationRequest) (*Operation, error) {
	return one[Operation](ctx, c, request{method: http.MethodPost, path: "/v1/operations", body: r})
}

// Operation returns one operation: GET /v1/operations/{id}.
func (c *Client) Operation(ctx context.Context, id string) (*Operation, error) {
	return one[Operation](ctx, c, request{method: http.MethodGet, path: "/v1/operations/" + seg(id)})
}

// CancelOperation cancels a waiting operation:
// POST /v1/operations/{id}/cancel (an extra of this server).
func (c *Client) CancelOperation(ctx context.Context, id, reason string) (*Operation, error) {
	body := struct {
		Reason string `json:"reason,omitempty"`
	}{reason}
	return one[Operation](ctx, c, request{method: http.MethodPost, path: "/v1/operations/" + seg(id) + "/cancel", body: body})
}
