package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"wilco/core"
)

// Defaults.
const (
	// DefaultTimeout bounds one attempt.
	DefaultTimeout = 10 * time.Second
	// DefaultParallel is how many attempts run at once; the others wait
	// their turn (in their own goroutines: nobody else waits).
	DefaultParallel = 8
	// maxAnswer is how much of a refusal's body is kept for its record.
	maxAnswer = 512
)

// Webhook is one place notifications are POSTed to, its URL and secret
// resolved.
type Webhook struct {
	Name   string
	URL    string
	Secret string
	// Format is json or slack.
	Format string
}

// Options configures a Notifier.
type Options struct {
	Webhooks []Webhook
	// Desktop shows notifications with notify-send, when it is on PATH.
	Desktop bool
	// BaseURL starts the links to wilco's page.
	BaseURL string
	// Timeout bounds one attempt (default 10s).
	Timeout time.Duration
	// Parallel bounds the attempts under way (default 8).
	Parallel int
	// LookPath finds notify-send (default exec.LookPath).
	LookPath func(string) (string, error)
	// UserAgent is the webhooks' requests' User-Agent (default "wilco").
	UserAgent string
	Logger    *slog.Logger
}

// Notifier makes the attempts of notifications. It is safe for concurrent
// use: at most Parallel attempts are made at once, the others wait.
type Notifier struct {
	opts       Options
	hooks      map[string]Webhook
	notifySend string // "" when desktop notifications are off
	client     *http.Client
	log        *slog.Logger
	slots      chan struct{}
}

// New returns a notifier. With Desktop and no notify-send on PATH it
// warns once, and the desktop is left out (see Desktop).
func New(o Options) *Notifier {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	if o.LookPath == nil {
		o.LookPath = exec.LookPath
	}
	if o.UserAgent == "" {
		o.UserAgent = "wilco"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	n := &Notifier{
		opts: o, hooks: map[string]Webhook{}, log: o.Logger, slots: make(chan struct{}, o.Parallel),
		client: &http.Client{
			// A redirect is an answer that is not 2xx: a POST is not
			// followed elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	for _, w := range o.Webhooks {
		n.hooks[w.Name] = w
	}
	if o.Desktop {
		if path, err := o.LookPath("notify-send"); err == nil {
			n.notifySend = path
		} else {
			n.log.Warn("desktop notifications are off: notify-send is not on PATH (Debian and Ubuntu: apt-get install libnotify-bin); the webhooks are not affected")
		}
	}
	return n
}

// Desktop reports whether desktop notifications are on: asked for, and
// notify-send found.
func (n *Notifier) Desktop() bool { return n.notifySend != "" }

// Make makes an attempt once one of the Parallel slots is free, logs it
// and returns its result. ok is false when ctx ended first (wilco stops):
// the attempt is not reported, and the next start makes it again.
func (n *Notifier) Make(ctx context.Context, e core.Notify) (_ core.NotificationResult, ok bool) {
	select {
	case n.slots <- struct{}{}:
	case <-ctx.Done():
		return core.NotificationResult{}, false
	}
	r := n.Attempt(ctx, e)
	<-n.slots
	if ctx.Err() != nil {
		return core.NotificationResult{}, false
	}
	level := slog.LevelInfo
	if r.Error != "" || r.Status/100 != 2 && r.Status != 0 {
		level = slog.LevelWarn
	}
	n.log.Log(ctx, level, "notification attempt", "notification", e.Notification.ID, "hook", e.Notification.Hook,
		"event", e.Notification.Event, "task", e.Notification.TaskID, "attempt", e.Attempt, "status", r.Status, "err", r.Error)
	return r, true
}

// Attempt makes one attempt now and returns its result.
func (n *Notifier) Attempt(ctx context.Context, e core.Notify) core.NotificationResult {
	r := core.NotificationResult{ID: e.Notification.ID, Attempt: e.Attempt}
	ctx, cancel := context.WithTimeout(ctx, n.opts.Timeout)
	defer cancel()
	if e.Notification.Hook == core.DesktopHook {
		if n.notifySend == "" {
			r.Error, r.Permanent = "desktop notifications are off (notify-send is not on PATH, or notify.desktop is false)", true
			return r
		}
		r.Error = n.desktop(ctx, e)
		return r
	}
	w, ok := n.hooks[e.Notification.Hook]
	if !ok {
		r.Error, r.Permanent = fmt.Sprintf("no webhook %q is configured (any more)", e.Notification.Hook), true
		return r
	}
	body := JSON(e.Notification, e.Attempt, n.opts.BaseURL)
	if w.Format == "slack" {
		body = Slack(e.Notification, n.opts.BaseURL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		r.Error, r.Permanent = "the webhook's URL: "+withoutURL(err), true
		return r
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", n.opts.UserAgent)
	req.Header.Set(HeaderEvent, string(e.Notification.Event))
	req.Header.Set(HeaderID, e.Notification.ID)
	req.Header.Set(HeaderAttempt, strconv.Itoa(e.Attempt))
	if w.Secret != "" {
		req.Header.Set(HeaderSignature, Sign(w.Secret, body))
	}
	resp, err := n.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			r.Error = fmt.Sprintf("no answer in %s", n.opts.Timeout)
		} else {
			r.Error = withoutURL(err)
		}
		return r
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	r.Status = resp.StatusCode
	if resp.StatusCode/100 != 2 {
		r.Body = string(answer)
	}
	return r
}

// withoutURL is an HTTP client's error without the URL it names: a
// webhook's URL may hold a secret (Slack's do), and the error is kept and
// shown.
func withoutURL(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// desktop shows a notification with notify-send; "" when it did.
func (n *Notifier) desktop(ctx context.Context, e core.Notify) string {
	no := e.Notification
	title := "wilco: " + Headline(no)
	var body []string
	if no.Subject != "" {
		body = append(body, no.Subject)
	}
	if no.Reason != "" {
		body = append(body, no.Reason)
	}
	body = append(body, Link(n.opts.BaseURL, no))
	urgency := "critical" // wilco needs someone
	if no.Event == core.NotifySuccess {
		urgency = "normal"
	}
	// The options of libnotify's notify-send (tools/notify-send.c):
	// --app-name, --urgency; "--" ends them.
	cmd := exec.CommandContext(ctx, n.notifySend, "--app-name=wilco", "--urgency="+urgency, "--", title, strings.Join(body, "\n"))
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil:
		return ""
	case ctx.Err() != nil:
		return fmt.Sprintf("notify-send did not finish in %s", n.opts.Timeout)
	}
	msg := "notify-send: " + err.Error()
	if first := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0]); first != "" {
		msg += ": " + first
	}
	return msg
}
