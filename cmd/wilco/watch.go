package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"wilco/client"
	"wilco/taskview"
	"wilco/wire"
)

// statusWidth bounds the live status line.
const statusWidth = 120

// status renders a task's one-line status: state, attempt n/max,
// milestone, elapsed.
func status(t *taskview.Task, now time.Time) string {
	parts := []string{t.ID, orDash(stateWithPhase(t.State, t.Phase))}
	if t.Attempt > 0 {
		parts = append(parts, fmt.Sprintf("attempt %d/%d", t.Attempt, t.MaxAttempts))
	}
	if t.Milestone != "" {
		parts = append(parts, oneLine(t.Milestone, 60))
	}
	if !t.Start.IsZero() {
		end := now
		if !t.End.IsZero() {
			end = t.End
		}
		parts = append(parts, fmtElapsed(end.Sub(t.Start)))
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
	view    *taskview.View
	current *taskview.Task
	drawn   bool
	// note is shown after the status line (a reconnection under way).
	note string
	// untilUser also ends the watch when the task waits for the user
	// (escalated, blocked, clarifying): `wilco run` returns then.
	untilUser bool
}

// done reports whether watching a task in this state is over.
func (w *watcher) done(state wire.TaskState) bool {
	if state.Settled() {
		return true
	}
	return w.untilUser && (state == wire.TaskEscalated || state == wire.TaskBlocked || state == wire.TaskClarifying)
}

func newWatcher(c *cli, task string) *watcher {
	return &watcher{c: c, w: c.stdout, tty: c.tty, task: task, view: taskview.New()}
}

// handle renders one event. It returns whether the watched task settled.
func (w *watcher) handle(ev wire.Event) bool {
	if w.json {
		b, _ := json.Marshal(ev)
		fmt.Fprintf(w.w, "%s\n", b)
	}
	t, line := w.view.Apply(ev)
	if t != nil {
		w.current = t
	}
	if !w.json {
		if line.Text != "" {
			subject := ev.TaskID
			if subject == "" {
				subject = orDash(ev.Agent)
			}
			full := fmt.Sprintf("%s  %s  %s", ev.Time.In(w.c.loc).Format("15:04:05"), subject, line.Text)
			if !w.tty {
				fmt.Fprintln(w.w, full)
			} else if line.Important {
				w.clear()
				fmt.Fprintln(w.w, full)
			}
		}
		if w.tty {
			w.draw(ev.Time)
		}
	}
	return w.task != "" && t != nil && t.ID == w.task && w.done(t.State)
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
	fmt.Fprint(w.w, "\r\x1b[K"+status(w.current, now)+optional(" | ", w.note))
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
		fmt.Fprintln(w.w, status(w.current, now))
	}
}

// optional returns prefix+s+suffix, or nothing when s is empty.
func optional(prefix, s string, suffix ...string) string {
	if s == "" {
		return ""
	}
	return prefix + s + strings.Join(suffix, "")
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
	return cl.EachEvent(ctx, *q, func(ev wire.Event) error {
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
func (c *cli) follow(ctx context.Context, cl *client.Client, w *watcher, after uint64, replay bool) (*taskview.Task, error) {
	q := client.EventQuery{Task: w.task, After: after, Limit: historyPage}
	// settled is what the server says of a watched task that has settled.
	var settled *taskview.Task
	if w.task != "" {
		t, err := cl.Task(ctx, w.task)
		var ae *client.APIError
		switch {
		case err == nil:
			w.current = w.view.Load(t)
			if w.done(t.State) {
				said := *w.current
				settled = &said
			}
		case errors.As(err, &ae) && ae.NoRoute():
			// A server without tasks: the events alone tell the story.
		default:
			return nil, err
		}
	}
	defer func() { w.finish(c.now()) }()
	if err := skipOrReplay(ctx, cl, w, &q, replay); err != nil {
		return w.view.Task(w.task), err
	}
	if t := w.view.Task(w.task); t != nil && (settled != nil || w.done(t.State)) {
		if settled != nil {
			// What the server said of the task is the final word.
			*t = *settled
		}
		w.current = t
		return t, nil
	}
	q.Limit = 0
	return c.followLive(ctx, cl, w, q)
}

// followLive renders the live stream from q.After until the watched task
// settles, ctx ends or the server refuses the stream; it says on a
// terminal when the stream is being reconnected.
func (c *cli) followLive(ctx context.Context, cl *client.Client, w *watcher, q client.EventQuery) (*taskview.Task, error) {
	events := make(chan wire.Event)
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
		errc <- f.Run(fctx, func(ev wire.Event) error {
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
				return w.view.Task(w.task), nil
			}
		case <-disconnects:
			w.note = "reconnecting…"
			w.draw(c.now())
		case <-tick:
			w.draw(c.now())
		case err := <-errc:
			return w.view.Task(w.task), err
		}
	}
}
