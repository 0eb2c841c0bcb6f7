package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"wilco/client"
)

// defaultHardStop is the number of verify loops after which a task stops,
// shown as the n/12 of "attempt n/12" until the task or its attempt event
// says what the limit in force is.
const defaultHardStop = 12

// statusWidth bounds the live status line.
const statusWidth = 120

// taskView is what watch knows of one task, built from its events.
type taskView struct {
	id, state, phase, milestone string
	attempt, maxAttempts        int
	start, end                  time.Time
}

// settled reports whether the task waits for nothing more from its agent.
func (t *taskView) settled() bool { return client.TaskSettled(t.state) }

// status renders the one-line status: state, attempt n/max, milestone,
// elapsed.
func (t *taskView) status(now time.Time) string {
	parts := []string{t.id, orDash(stateWithPhase(t.state, t.phase))}
	if t.attempt > 0 {
		parts = append(parts, fmt.Sprintf("attempt %d/%d", t.attempt, t.maxAttempts))
	}
	if t.milestone != "" {
		parts = append(parts, oneLine(t.milestone, 60))
	}
	if !t.start.IsZero() {
		end := now
		if !t.end.IsZero() {
			end = t.end
		}
		parts = append(parts, fmtElapsed(end.Sub(t.start)))
	}
	return oneLine(strings.Join(parts, " | "), statusWidth)
}

func fmtElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Truncate(time.Second)
	if d < time.Minute {
		return d.String()
	}
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	}
	return fmt.Sprintf("%dm%02ds", m, s)
}

// watcher renders the event stream: plain lines, or on a terminal the
// important lines and a status line redrawn in place.
type watcher struct {
	c    *cli
	w    io.Writer
	tty  bool
	json bool
	// task is the task watched ("" for all).
	task    string
	tasks   map[string]*taskView
	current *taskView
	drawn   bool
	// note is shown after the status line (a reconnection under way).
	note string
	// untilUser also ends the watch when the task waits for the user
	// (escalated, blocked, clarifying): `wilco run` returns then.
	untilUser bool
}

// done reports whether watching a task in this state is over.
func (w *watcher) done(state string) bool {
	if client.TaskSettled(state) {
		return true
	}
	return w.untilUser && (state == client.TaskEscalated || state == client.TaskBlocked || state == client.TaskClarifying)
}

func newWatcher(c *cli, task string) *watcher {
	return &watcher{c: c, w: c.stdout, tty: c.tty, task: task, tasks: map[string]*taskView{}}
}

func (w *watcher) view(id string) *taskView {
	t := w.tasks[id]
	if t == nil {
		t = &taskView{id: id, maxAttempts: defaultHardStop}
		w.tasks[id] = t
	}
	return t
}

// seed starts a task's view from what GET /v1/tasks/{id} said.
func (w *watcher) seed(t *client.Task) {
	v := w.view(t.ID)
	v.state, v.phase, v.milestone, v.attempt = t.State, t.Phase, t.Milestone, t.Attempt
	v.start = t.CreatedAt
	if t.StartedAt != nil {
		v.start = *t.StartedAt
	}
	if t.FinishedAt != nil {
		v.end = *t.FinishedAt
	}
	if t.MaxAttempts > 0 {
		v.maxAttempts = t.MaxAttempts
	}
	w.current = v
}

// handle renders one event. It returns whether the watched task settled.
func (w *watcher) handle(ev client.Event) bool {
	if w.json {
		b, _ := json.Marshal(ev)
		fmt.Fprintf(w.w, "%s\n", b)
	}
	var v *taskView
	if ev.TaskID != "" {
		v = w.view(ev.TaskID)
		if v.start.IsZero() {
			v.start = ev.Time
		}
		w.current = v
	}
	line, important := w.apply(v, ev)
	if !w.json {
		if line != "" {
			subject := ev.TaskID
			if subject == "" {
				subject = orDash(ev.Agent)
			}
			full := fmt.Sprintf("%s  %s  %s", ev.Time.In(w.c.loc).Format("15:04:05"), subject, line)
			if !w.tty {
				fmt.Fprintln(w.w, full)
			} else if important {
				w.clear()
				fmt.Fprintln(w.w, full)
			}
		}
		if w.tty {
			w.draw(ev.Time)
		}
	}
	return w.task != "" && v != nil && v.id == w.task && w.done(v.state)
}

// apply updates the task's view with an event and returns the line that
// says what happened; important lines stay on a terminal (the others only
// change the status line).
func (w *watcher) apply(v *taskView, ev client.Event) (string, bool) {
	d := eventData(ev.Data)
	if v != nil {
		if n, ok := d.int("attempt"); ok && n > 0 && strings.HasPrefix(ev.Type, "task.") {
			v.attempt = n
		}
	}
	switch ev.Type {
	case client.EventTaskQueued:
		if v != nil {
			v.state = client.TaskQueued
		}
		desc := d.path("task", "description")
		if desc == "" {
			desc = d.str("description")
		}
		return "queued" + optional(": ", oneLine(desc, 60)), true
	case client.EventTaskState:
		from, to, phase := d.str("from"), d.str("to"), d.str("phase")
		if v != nil {
			if to != "" {
				v.state = to
			}
			v.phase = phase
			if m := d.str("milestone"); m != "" {
				v.milestone = m
			}
			if v.settled() {
				v.end = ev.Time
			}
		}
		line := "state " + orDash(from) + " → " + orDash(to)
		if phase != "" {
			line += " (" + phase + ")"
		}
		return line + optional(": ", d.str("reason")), true
	case client.EventTaskMilestone:
		text := d.str("text")
		if v != nil {
			v.milestone = text
		}
		return text, false
	case "task.attempt":
		if n, ok := d.int("max_attempts"); ok && n > 0 && v != nil {
			v.maxAttempts = n
		}
		line := fmt.Sprintf("attempt %d", firstInt(d, "attempt"))
		if k := d.str("kind"); k != "" && k != "first" {
			line += " (" + k + ")"
		}
		return line + optional(" by ", d.str("agent")), true
	case "task.turn_ended":
		line := fmt.Sprintf("turn %d ended: %s", firstInt(d, "attempt"), orDash(d.str("status")))
		if n, ok := d.int("exit_code"); ok && n != 0 {
			line += fmt.Sprintf(" (exit %d)", n)
		}
		return line + optional(": ", oneLine(d.str("summary"), 60)), false
	case client.EventTaskFailure:
		rec := d.obj("record")
		if len(rec) == 0 {
			rec = d
		}
		line := fmt.Sprintf("attempt %d failed: %s", firstInt(rec, "attempt"), orDash(rec.str("failure_type")))
		if msg := rec.path("executor_output", "error"); msg != "" {
			line += ": " + oneLine(msg, 80)
		} else if msg := rec.path("executor_output", "verification", "output_summary"); msg != "" {
			line += ": " + oneLine(msg, 80)
		}
		return line + optional(" (run ", rec.str("run_id"), ")"), true
	case client.EventTaskReplan:
		return fmt.Sprintf("replan %d after %d failures", firstInt(d, "number"), firstInt(d, "failures")), true
	case "task.escalated":
		return "escalated" + optional(": ", d.str("reason")) + optional(" — ", oneLine(d.str("message"), 80)), true
	case "task.response":
		line := "user response: " + orDash(d.str("action"))
		if in := d.str("instruction"); in != "" {
			line += " " + strconv.Quote(oneLine(in, 80))
		}
		return line, true
	case "task.success":
		return "verified" + optional(": ", oneLine(d.path("summary", "text"), 80)) + optional(" (run ", d.path("summary", "run_id"), ")"), true
	case "task.unverified":
		return "NOT verified: no verify step is configured" + optional(": ", oneLine(d.path("summary", "why"), 60)), true
	case "task.stuck":
		return "hard stop" + optional(": stuck report ", d.path("report", "path")), true
	case "task.proposed":
		return "proposed a diff" + optional(" (run ", d.path("proposal", "run_id"), ")"), true
	case "task.removed":
		if v != nil {
			v.state = client.TaskCancelled
			v.end = ev.Time
		}
		return "removed from the queue", true
	case "task.warning":
		return "warning: " + d.str("text"), true
	case "plan.created":
		return "plan " + orDash(d.path("plan", "id")) + " created", true
	case "plan.state":
		return fmt.Sprintf("plan %s %s → %s", orDash(d.str("id")), orDash(d.str("from")), orDash(d.str("to"))), true
	case "delivery.sent", "delivery.retried", "delivery.notice":
		kind := d.str("kind")
		verb := map[string]string{"delivery.sent": "sent", "delivery.retried": "sent again", "delivery.notice": "notice"}[ev.Type]
		line := fmt.Sprintf("message %s %s", orDash(d.str("id")), verb)
		if n, ok := d.int("attempt"); ok && n > 0 && ev.Type != "delivery.notice" {
			line += fmt.Sprintf(" (attempt %d", n)
			if kind != "" && kind != "first" {
				line += ", " + kind
			}
			line += ")"
		} else if kind != "" {
			line += " (" + kind + ")"
		}
		return line, true
	case client.EventDeliveryAcknowledged:
		return fmt.Sprintf("message %s acknowledged by %s", orDash(d.str("id")), orDash(d.str("by"))) +
			optional(" (", d.str("status"), ")") + optional(": ", oneLine(d.str("understanding"), 60)), true
	case "delivery.clarifying":
		return fmt.Sprintf("message %s: the agent asks %d questions", orDash(d.str("id")), d.len("questions")), true
	case "delivery.deferred":
		return fmt.Sprintf("message %s deferred", orDash(d.str("id"))) + optional(": ", d.str("reason")), true
	case client.EventDeliveryFailed:
		return fmt.Sprintf("message %s failed", orDash(d.str("id"))) + optional(": ", d.str("reason")) + optional(" (", intStr(d, "attempts"), " attempts)"), true
	case "delivery.cancelled":
		return fmt.Sprintf("message %s cancelled", orDash(d.str("id"))) + optional(": ", d.str("reason")), true
	case "delivery.reassigned":
		return fmt.Sprintf("message %s reassigned %s → %s", orDash(d.str("id")), orDash(d.str("from")), orDash(d.str("to"))), true
	case "delivery.escalated":
		return fmt.Sprintf("message %s escalated", orDash(d.str("id"))) + optional(": ", d.str("reason")), true
	case "delivery.reply":
		return fmt.Sprintf("reply (%s)", orDash(d.str("kind"))) + optional(": ", oneLine(d.str("text"), 60)), false
	case "agent.cycle":
		return fmt.Sprintf("agent fetched %d messages", firstInt(d, "fetched")), false
	case client.EventAgentStatus:
		return fmt.Sprintf("agent %s → %s", orDash(d.str("from")), orDash(d.str("to"))) + optional(": ", d.str("reason")), true
	case client.EventOperationReminder:
		return fmt.Sprintf("operation %s: reminder %d", orDash(d.str("id")), firstInt(d, "number")) + optional(" (", d.str("tone"), ")"), true
	case "operation.reply":
		return fmt.Sprintf("operation %s: %s", orDash(d.str("id")), orDash(d.str("answer"))), true
	case client.EventOperationState:
		return fmt.Sprintf("operation %s %s → %s", orDash(d.str("id")), orDash(d.str("from")), orDash(d.str("to"))) + optional(": ", d.str("reason")), true
	case "operation.started":
		return fmt.Sprintf("operation %s started", orDash(d.path("operation", "id"))) + optional(": ", d.path("operation", "operation")), true
	case "notification.queued":
		return fmt.Sprintf("notifying %s: %s (%s)", orDash(d.path("notification", "hook")), orDash(d.path("notification", "event")), orDash(d.path("notification", "id"))), true
	case "notification.retried":
		return fmt.Sprintf("notification %s: attempt %d", orDash(d.str("id")), firstInt(d, "attempt")), false
	case "notification.attempt":
		return fmt.Sprintf("notification %s: attempt %d failed", orDash(d.str("id")), firstInt(d, "attempt")) + optional(": ", oneLine(d.str("error"), 60)), false
	case "notification.delivered":
		return fmt.Sprintf("notification %s delivered (attempt %d)", orDash(d.str("id")), firstInt(d, "attempt")), true
	case "notification.failed":
		return fmt.Sprintf("notification %s failed after %d attempts", orDash(d.str("id")), firstInt(d, "attempts")) + optional(": ", oneLine(d.str("error"), 60)), true
	case "notification.pruned":
		return fmt.Sprintf("%d notifications that ended over 30 days ago pruned", d.len("ids")), false
	}
	return ev.Type + optional(" ", compactJSON(ev.Data, 80)), false
}

// clear removes the status line from the terminal.
func (w *watcher) clear() {
	if w.drawn {
		fmt.Fprint(w.w, "\r\x1b[K")
		w.drawn = false
	}
}

// draw redraws the status line in place.
func (w *watcher) draw(now time.Time) {
	if !w.tty || w.current == nil {
		return
	}
	fmt.Fprint(w.w, "\r\x1b[K"+w.current.status(now)+optional(" | ", w.note))
	w.drawn = true
}

// finish ends the status line with a newline on a terminal, and prints
// the watched task's final status line elsewhere.
func (w *watcher) finish(now time.Time) {
	if w.json || w.current == nil {
		return
	}
	if w.tty {
		w.draw(now)
		fmt.Fprintln(w.w)
		w.drawn = false
		return
	}
	if w.task != "" {
		fmt.Fprintln(w.w, w.current.status(now))
	}
}

// data is an event's payload, decoded loosely.
type data map[string]any

func eventData(raw json.RawMessage) data {
	var d data
	_ = json.Unmarshal(raw, &d)
	return d
}

func (d data) str(k string) string {
	switch v := d[k].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// obj returns a nested object (empty when absent).
func (d data) obj(k string) data {
	m, _ := d[k].(map[string]any)
	return data(m)
}

func (d data) int(k string) (int, bool) {
	v, ok := d[k].(float64)
	return int(v), ok
}

func (d data) len(k string) int {
	v, _ := d[k].([]any)
	return len(v)
}

// path reads a string nested in objects.
func (d data) path(keys ...string) string {
	cur := d
	for i, k := range keys {
		if i == len(keys)-1 {
			return cur.str(k)
		}
		next, ok := cur[k].(map[string]any)
		if !ok {
			return ""
		}
		cur = next
	}
	return ""
}

func firstInt(d data, k string) int {
	n, _ := d.int(k)
	return n
}

func intStr(d data, k string) string {
	if n, ok := d.int(k); ok {
		return strconv.Itoa(n)
	}
	return ""
}

// optional returns prefix+s+suffix, or nothing when s is empty.
func optional(prefix, s string, suffix ...string) string {
	if s == "" {
		return ""
	}
	return prefix + s + strings.Join(suffix, "")
}

func compactJSON(raw json.RawMessage, n int) string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "{}" || s == "null" {
		return ""
	}
	return oneLine(s, n)
}

func cmdWatch(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	after := fs.Uint64("after", 0, "start after this event seq (default: a task's whole history; without ID, from now)")
	asJSON := fs.Bool("json", false, "print each event's API JSON, one per line")
	pos, _, code, ok := c.parse(v, fs, args, 0, 1)
	if !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	task := ""
	if len(pos) == 1 {
		task = pos[0]
	}
	afterSet := false
	fs.Visit(func(f *flag.Flag) { afterSet = afterSet || f.Name == "after" })
	w := newWatcher(c, task)
	if *asJSON {
		w.json, w.tty = true, false
	}
	// A task's history is shown; without a task, watch starts from now.
	replay := task != "" || afterSet
	_, err = c.follow(ctx, cl, w, *after, replay)
	return c.watchError(err)
}

// watchError maps the end of a watch to an exit code: an interrupt (Ctrl-C)
// is a normal end.
func (c *cli) watchError(err error) int {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return exitOK
	}
	return c.fail(err)
}

// historyPage is the page size used to read the stored events.
const historyPage = 1000

// skipOrReplay moves q.After past the stored events: it renders them with
// w when replay is set; otherwise it takes the seq of the last one from
// GET /healthz, without reading the log — or, should the server answer
// /healthz with an error, reads the log to find it.
func skipOrReplay(ctx context.Context, cl *client.Client, w *watcher, q *client.EventQuery, replay bool) error {
	if !replay {
		h, err := cl.Health(ctx)
		var ae *client.APIError
		switch {
		case err == nil:
			q.After = max(q.After, h.Seq)
			return nil
		case !errors.As(err, &ae):
			return err
		}
	}
	return cl.EachEvent(ctx, *q, func(ev client.Event) error {
		q.After = max(q.After, ev.Seq)
		if replay {
			w.handle(ev)
		}
		return nil
	})
}

// follow renders the event stream with w, and returns the watched task's
// view when it settles (w.task set), or when ctx ends.
//
// It renders the stored events after after first when replay is set (or
// skips them otherwise), and then follows the live stream from the last
// one. A watched task that has settled by the end of its stored history
// ends the watch there; one that settles later ends it when its event
// arrives.
func (c *cli) follow(ctx context.Context, cl *client.Client, w *watcher, after uint64, replay bool) (*taskView, error) {
	q := client.EventQuery{Task: w.task, After: after, Limit: historyPage}
	settled := false
	if w.task != "" {
		t, err := cl.Task(ctx, w.task)
		var ae *client.APIError
		switch {
		case err == nil:
			w.seed(t)
			settled = w.done(t.State)
		case errors.As(err, &ae) && ae.NoRoute():
			// A server without tasks: the events alone tell the story.
		default:
			return nil, err
		}
	}
	defer func() { w.finish(c.now()) }()
	var seeded taskView
	if settled {
		seeded = *w.tasks[w.task]
	}
	if err := skipOrReplay(ctx, cl, w, &q, replay); err != nil {
		return w.tasks[w.task], err
	}
	if w.task != "" {
		if settled {
			// What the server said of the task is the final word.
			*w.tasks[w.task] = seeded
			w.current = w.tasks[w.task]
			return w.tasks[w.task], nil
		}
		if v := w.tasks[w.task]; v != nil && w.done(v.state) {
			w.current = v
			return v, nil
		}
	}

	q.Limit = 0
	events := make(chan client.Event)
	disconnects := make(chan error, 1)
	errc := make(chan error, 1)
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := &client.Follower{Client: cl, Query: q, ReconnectDelay: c.reconnectDelay, OnDisconnect: func(err error) {
		select {
		case disconnects <- err:
		default:
		}
	}}
	go func() {
		errc <- f.Run(fctx, func(ev client.Event) error {
			select {
			case events <- ev:
				return nil
			case <-fctx.Done():
				return fctx.Err()
			}
		})
	}()
	var tick <-chan time.Time
	if w.tty {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case ev := <-events:
			w.note = ""
			if w.handle(ev) {
				cancel()
				<-errc
				return w.tasks[w.task], nil
			}
		case <-disconnects:
			w.note = "reconnecting…"
			w.draw(c.now())
		case <-tick:
			w.draw(c.now())
		case err := <-errc:
			return w.tasks[w.task], err
		}
	}
}
