package client

import (
	"context"
	"net/http"
	"time"
)

// LoginLink is a one-time link that logs a browser in to the page.
type LoginLink struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}

// NewLoginLink asks for a new one-time login link to the page: POST
// /v1/session/links.
func (c *Client) NewLoginLink(ctx context.Context) (LoginLink, error) {
	var out LoginLink
	_, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/session/links"}, &out)
	return out, err
}
