package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"wilco/client"
	"wilco/wire"
)

var notificationStates = wire.NotificationState("").Values()

// cmdNotify is `wilco notify log`: the notifications and how their
// delivery went.
func cmdNotify(ctx context.Context, c *cli, v *verb, args []string) int {
	if len(args) > 0 && args[0] == "log" {
		return cmdNotifyLog(ctx, c, args[1:])
	}
	fs := c.flags(v)
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	return c.usageError(v, fs, "say log")
}

func cmdNotifyLog(ctx context.Context, c *cli, args []string) int {
	v := &verb{name: "notify log", args: "[--state S] [--hook H] [--task ID] [--limit N] [--json]",
		summary: "the notifications to webhooks and the desktop, newest first, with their attempts, last status and last error"}
	fs := c.flags(v)
	state := fs.String("state", "", "only this state: "+strings.Join(notificationStates, ", "))
	hook := fs.String("hook", "", "only this hook's")
	task := fs.String("task", "", "only this task's")
	limit := fs.Int("limit", 100, "at most this many")
	asJSON := fs.Bool("json", false, "print the API JSON")
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	if *state != "" && !slices.Contains(notificationStates, *state) {
		return c.usageError(v, fs, "--state: one of %s, got %q", strings.Join(notificationStates, ", "), *state)
	}
	if *limit < 1 {
		return c.usageError(v, fs, "--limit: at least 1, got %d", *limit)
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	list, err := cl.Notifications(ctx, client.NotificationFilter{State: *state, Hook: *hook, Task: *task, Limit: *limit})
	if err != nil {
		return c.fail(err)
	}
	return printList(c, *asJSON, "notifications", list, "no notifications", "ID\tCREATED\tHOOK\tEVENT\tABOUT\tSTATE\tATTEMPTS\tLAST", func(n wire.Notification) string {
		return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s", n.ID, fmtTime(&n.CreatedAt, c.loc), n.Hook, n.Event, orDash(about(n)),
			n.State, n.Attempts, n.MaxAttempts, oneLine(lastAttempt(n, c), 60))
	})
}

// about is what a notification is about: its task, else its operation or
// agent.
func about(n wire.Notification) string {
	switch {
	case n.TaskID != "":
		return n.TaskID
	case n.OperationID != "":
		return n.OperationID
	}
	return n.Agent
}

// lastAttempt says how the last attempt went, or when the next one is.
func lastAttempt(n wire.Notification, c *cli) string {
	var parts []string
	switch {
	case n.State == wire.NotificationDelivered && n.LastStatus != nil:
		parts = append(parts, fmt.Sprintf("delivered (%d)", *n.LastStatus))
	case n.State == wire.NotificationDelivered:
		parts = append(parts, "delivered")
	case n.LastError != "":
		parts = append(parts, n.LastError)
	}
	if n.NextAttemptAt != nil {
		parts = append(parts, "next "+fmtTime(n.NextAttemptAt, c.loc))
	}
	if len(parts) == 0 && n.State == wire.NotificationPending {
		return "under way"
	}
	return strings.Join(parts, "; ")
}
