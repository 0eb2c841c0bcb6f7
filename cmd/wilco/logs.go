package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"wilco/client"
	"wilco/retrylog"
	"wilco/store"
)

// logLine is one record of the retry log: the text after
// "[<time>] [RETRY] [<key>] " in retry.log, and the fields of its
// retry.jsonl object.
type logLine struct {
	text string
	obj  map[string]any
}

// retryLog turns events into the retry log: the lines of task
// events exactly as the server writes retry.log and retry.jsonl (package
// retrylog decides them), plus lines for deliveries (instructions,
// delegations, operation requests), keyed by the message id when there is
// no task.
type retryLog struct {
	tasks *retrylog.Formatter
}

func newRetryLog() *retryLog { return &retryLog{tasks: retrylog.NewFormatter()} }

// lines returns the records of one event; none for events that are not
// about attempts, retries and outcomes.
func (r *retryLog) lines(ev client.Event) []logLine {
	if strings.HasPrefix(ev.Type, "task.") {
		var out []logLine
		for _, l := range r.tasks.Lines(store.Event{Seq: ev.Seq, Time: ev.Time, Type: ev.Type, TaskID: ev.TaskID, Agent: ev.Agent, Data: ev.Data}) {
			out = append(out, logLine{text: l.Text, obj: l.Fields})
		}
		return out
	}
	d := eventData(ev.Data)
	switch ev.Type {
	case client.EventDeliverySent, client.EventDeliveryRetried:
		status := map[string]string{client.EventDeliverySent: "sent", client.EventDeliveryRetried: "retried"}[ev.Type]
		n, kind := firstInt(d, "attempt"), d.str("kind")
		text := fmt.Sprintf("attempt=%d status=%s kind=%s message=%s", n, status, orDash(kind), d.str("id"))
		obj := map[string]any{"event": "delivery_" + status, "attempt": n, "kind": kind, "message": d.str("id")}
		if t := d.path("message", "type"); t != "" {
			text += " type=" + t
			obj["type"] = t
		}
		if ev.Agent != "" {
			text += " agent=" + ev.Agent
			obj["agent"] = ev.Agent
		}
		return []logLine{{text, obj}}
	case "delivery.deferred":
		return []logLine{{fmt.Sprintf("deferred message=%s reason=%s", d.str("id"), retrylog.Quote(d.str("reason"))),
			map[string]any{"event": "delivery_deferred", "message": d.str("id"), "reason": d.str("reason"), "until": d.str("timer_at")}}}
	case client.EventDeliveryAcknowledged:
		text := fmt.Sprintf("resolved status=acknowledged message=%s by=%s", d.str("id"), orDash(d.str("by")))
		obj := map[string]any{"event": "delivery_resolved", "resolution": "acknowledged", "message": d.str("id"), "by": d.str("by")}
		if s := d.str("status"); s != "" {
			text += " ack=" + s
			obj["ack"] = s
		}
		return []logLine{{text, obj}}
	case "delivery.clarifying":
		return []logLine{{fmt.Sprintf("clarification_needed message=%s questions=%d", d.str("id"), d.len("questions")),
			map[string]any{"event": "delivery_clarifying", "message": d.str("id"), "questions": d.len("questions")}}}
	case client.EventDeliveryFailed:
		n := firstInt(d, "attempts")
		return []logLine{{fmt.Sprintf("resolved status=failed message=%s attempts=%d reason=%s", d.str("id"), n, retrylog.Quote(d.str("reason"))),
			map[string]any{"event": "delivery_resolved", "resolution": "failed", "message": d.str("id"), "attempts": n, "reason": d.str("reason")}}}
	case "delivery.cancelled":
		return []logLine{{fmt.Sprintf("resolved status=cancelled message=%s reason=%s", d.str("id"), retrylog.Quote(d.str("reason"))),
			map[string]any{"event": "delivery_resolved", "resolution": "cancelled", "message": d.str("id"), "reason": d.str("reason")}}}
	case "delivery.reassigned":
		return []logLine{{fmt.Sprintf("reassigning message=%s from=%s to=%s new_message=%s", d.str("id"), d.str("from"), d.str("to"), d.str("new_id")),
			map[string]any{"event": "delivery_reassigned", "message": d.str("id"), "from": d.str("from"), "to": d.str("to"), "new_message": d.str("new_id")}}}
	case "delivery.escalated":
		return []logLine{{fmt.Sprintf("escalating message=%s reason=%s", d.str("id"), retrylog.Quote(d.str("reason"))),
			map[string]any{"event": "delivery_escalated", "message": d.str("id"), "reason": d.str("reason")}}}
	case client.EventOperationReminder:
		n := firstInt(d, "number")
		remaining := ""
		if ns, ok := d.int("remaining"); ok {
			remaining = time.Duration(ns).String()
		}
		return []logLine{{fmt.Sprintf("reminder operation=%s number=%d tone=%s remaining=%s", d.str("id"), n, d.str("tone"), remaining),
			map[string]any{"event": "operation_reminder", "operation": d.str("id"), "number": n, "tone": d.str("tone"), "remaining": remaining, "agent": ev.Agent}}}
	}
	return nil
}

// key is what a retry.log line is about: the task, else the message (or
// operation) id, else the agent.
func logKey(ev client.Event) string {
	if ev.TaskID != "" {
		return ev.TaskID
	}
	if id := eventData(ev.Data).str("id"); id != "" {
		return id
	}
	return ev.Agent
}

func cmdLogs(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	task := fs.String("task", "", "only this task's entries")
	agent := fs.String("agent", "", "only this agent's entries")
	follow := fs.Bool("follow", false, "keep printing entries as they happen (Ctrl-C stops)")
	asJSON := fs.Bool("json", false, "print retry.jsonl objects, one per line")
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	rl := newRetryLog()
	emit := func(ev client.Event) error {
		for _, l := range rl.lines(ev) {
			switch {
			case !*asJSON && l.text != "":
				fmt.Fprint(c.stdout, retrylog.TextLine(ev.Time, logKey(ev), l.text))
			case *asJSON && l.obj != nil:
				b, err := json.Marshal(retrylog.Object(ev.Time, ev.TaskID, l.obj))
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "%s\n", b)
			}
		}
		return nil
	}
	q := client.EventQuery{Task: *task, Agent: *agent, Limit: historyPage}
	err = cl.EachEvent(ctx, q, func(ev client.Event) error {
		q.After = max(q.After, ev.Seq)
		return emit(ev)
	})
	if err != nil || !*follow {
		return c.watchError(err)
	}
	q.Limit = 0
	f := &client.Follower{Client: cl, Query: q, ReconnectDelay: c.reconnectDelay}
	return c.watchError(f.Run(ctx, emit))
}
