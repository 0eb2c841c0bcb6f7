package server

import (
	"testing"
	"time"

	"wilco/config"
	"wilco/core"
	"wilco/wire"
)

// notifyConfig has two hooks that hear of operations.
func notifyConfig() *config.Config {
	cfg := config.Default()
	cfg.Agents = []config.Agent{{Name: "alpha", Adapter: "mailbox", Capabilities: []string{"go"}}}
	ops := []core.NotifyEvent{core.NotifyOperation}
	cfg.Notify.Webhooks = []config.Webhook{{Name: "ops", URL: "http://127.0.0.1:9/", Format: "json", Events: ops}, {Name: "chat", URL: "http://127.0.0.1:9/", Format: "slack", Events: ops}}
	return cfg
}

func TestNotificationsAreListedNewestFirstWithTheirDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: notifyConfig()})
	for range 2 {
		b.must(201, b.call("POST", "/v1/operations", adminToken, map[string]any{"operation": "restart", "agents": []string{"alpha"}}))
	}
	// N-1 (ops) fails once and is delivered; N-2 (chat) fails for good.
	b.do(func(c *core.State, now time.Time) error {
		if _, err := c.EndNotification(now, core.NotificationResult{ID: "N-1", Attempt: 1, Status: 502, Body: "bad gateway"}); err != nil {
			return err
		}
		_, err := c.EndNotification(now, core.NotificationResult{ID: "N-2", Attempt: 1, Error: "gone", Permanent: true})
		return err
	})
	var list struct {
		Notifications []wire.Notification `json:"notifications"`
	}
	b.must(200, b.call("GET", "/v1/notifications", adminToken, nil), &list)
	ns := list.Notifications
	if len(ns) != 4 || ns[0].ID != "N-4" || ns[3].ID != "N-1" {
		t.Fatalf("listing %+v", ns)
	}
	n1 := ns[3]
	if n1.Hook != "ops" || n1.Event != wire.NotifyOperation || n1.TaskID != "" || n1.OperationID != "OP-1" || n1.State != wire.NotificationPending ||
		n1.Attempts != 1 || n1.LastError != "HTTP 502: bad gateway" || n1.LastStatus == nil || *n1.LastStatus != 502 ||
		n1.NextAttemptAt == nil || n1.DeliveredAt != nil || n1.MaxAttempts != core.DefaultNotifyMaxAttempts || n1.TaskState != "waiting" {
		t.Fatalf("N-1 %+v", n1)
	}
	if n2 := ns[2]; n2.State != wire.NotificationFailed || n2.FailedAt == nil || n2.LastStatus != nil || n2.LastError != "gone" {
		t.Fatalf("N-2 %+v", n2)
	}
	b.must(200, b.call("GET", "/v1/notifications?state=failed", adminToken, nil), &list)
	if len(list.Notifications) != 1 || list.Notifications[0].ID != "N-2" {
		t.Fatalf("failed: %+v", list.Notifications)
	}
	b.must(200, b.call("GET", "/v1/notifications?state=pending&limit=2&hook=ops", adminToken, nil), &list)
	if len(list.Notifications) != 2 || list.Notifications[0].ID != "N-3" || list.Notifications[1].ID != "N-1" {
		t.Fatalf("pending of ops: %+v", list.Notifications)
	}
	var one wire.Notification
	b.must(200, b.call("GET", "/v1/notifications/N-2", adminToken, nil), &one)
	if one.ID != "N-2" || one.Hook != "chat" {
		t.Fatalf("one %+v", one)
	}
	for _, bad := range []string{"?state=lost", "?limit=0", "?limit=x", "?event=exploded", "?since=1"} {
		if r := b.call("GET", "/v1/notifications"+bad, adminToken, nil); r.status != 400 || r.code(t) != "invalid_argument" {
			t.Errorf("%s: %d %s", bad, r.status, r.body)
		}
	}
	if r := b.call("GET", "/v1/notifications/N-99", adminToken, nil); r.status != 404 {
		t.Errorf("N-99: %d", r.status)
	}
	if r := b.call("GET", "/v1/notifications", "", nil); r.status != 401 {
		t.Errorf("without a token: %d", r.status)
	}
}
