package client

import (
	"context"
	"net/http"

	"wilco/wire"
)

// NewLoginLink asks for a new one-time login link to the page: POST
// /v1/session/links.
func (c *Client) NewLoginLink(ctx context.Context) (wire.LoginLink, error) {
	var out wire.LoginLink
	_, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/session/links"}, &out)
	return out, err
}
