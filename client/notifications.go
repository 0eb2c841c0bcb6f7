package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"wilco/wire"
)

// NotificationFilter selects notifications; zero values select all (up
// to the server's default limit).
type NotificationFilter struct {
	State string
	Hook  string
	Task  string
	Event string
	Limit int
}

// Notifications lists notifications, newest first:
// GET /v1/notifications?state=&limit=&hook=&task=&event=.
func (c *Client) Notifications(ctx context.Context, f NotificationFilter) ([]wire.Notification, error) {
	q := url.Values{}
	for k, v := range map[string]string{"state": f.State, "hook": f.Hook, "task": f.Task, "event": f.Event} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out wire.NotificationList
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/notifications", query: q}, &out)
	return out.Notifications, err
}

// Notification returns one notification: GET /v1/notifications/{id}.
func (c *Client) Notification(ctx context.Context, id string) (*wire.Notification, error) {
	return one[wire.Notification](ctx, c, request{method: http.MethodGet, path: "/v1/notifications/" + seg(id)})
}
