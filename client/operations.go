package client

import (
	"context"
	"net/http"
)

// StartOperation asks the agents for their "ok" before an operation:
// POST /v1/operations.
func (c *Client) StartOperation(ctx context.Context, r OperationRequest) (*Operation, error) {
	var out Operation
	if _, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/operations", body: r}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Operation returns one operation: GET /v1/operations/{id}.
func (c *Client) Operation(ctx context.Context, id string) (*Operation, error) {
	var out Operation
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/operations/" + seg(id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CancelOperation cancels a waiting operation:
// POST /v1/operations/{id}/cancel (an extra of this server).
func (c *Client) CancelOperation(ctx context.Context, id, reason string) (*Operation, error) {
	var out Operation
	body := struct {
		Reason string `json:"reason,omitempty"`
	}{reason}
	if _, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/operations/" + seg(id) + "/cancel", body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
