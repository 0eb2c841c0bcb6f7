package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Notification states.
const (
	NotificationPending   = "pending"
	NotificationDelivered = "delivered"
	NotificationFailed    = "failed"
)

// Notification is one notice to a webhook or the desktop, and how its
// delivery went.
type Notification struct {
	ID            string     `json:"id"`
	Hook          string     `json:"hook"`
	Event         string     `json:"event"`
	TaskID        string     `json:"task_id"`
	Agent         string     `json:"agent,omitempty"`
	OperationID   string     `json:"operation_id,omitempty"`
	Subject       string     `json:"subject,omitempty"`
	TaskState     string     `json:"task_state"`
	Reason        string     `json:"reason"`
	State         string     `json:"state"`
	Attempts      int        `json:"attempts"`
	MaxAttempts   int        `json:"max_attempts"`
	LastError     string     `json:"last_error"`
	LastStatus    *int       `json:"last_status"`
	CreatedAt     time.Time  `json:"created_at"`
	LastAttemptAt *time.Time `json:"last_attempt_at"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	DeliveredAt   *time.Time `json:"delivered_at"`
	FailedAt      *time.Time `json:"failed_at"`
}

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
func (c *Client) Notifications(ctx context.Context, f NotificationFilter) ([]Notification, error) {
	q := url.Values{}
	for k, v := range map[string]string{"state": f.State, "hook": f.Hook, "task": f.Task, "event": f.Event} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out struct {
		Notifications []Notification `json:"notifications"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/notifications", query: q}, &out)
	return out.Notifications, err
}

// Notification returns one notification: GET /v1/notifications/{id}.
func (c *Client) Notification(ctx context.Context, id string) (*Notification, error) {
	return one[Notification](ctx, c, request{method: http.MethodGet, path: "/v1/notifications/" + seg(id)})
}
