package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/core"
)

var when = time.Date(2026, 1, 26, 14, 0, 0, 0, time.UTC)

func escalation() core.Notification {
	return core.Notification{ID: "N-7", Hook: "ops", Event: core.NotifyEscalated, TaskID: "T-3", Agent: "claude",
		Subject: "Add a --verbose flag", Status: "escalated", Reason: "2 failed attempts <& more>", State: core.NotePending, CreatedAt: when}
}

// receiver is a webhook under test: it records each request and answers
// with the next of its statuses (the last one again when they run out).
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	statuses []int
	got      []request
	hold     chan struct{} // when set, requests wait for it to close
	arrived  chan struct{} // told of each request as it arrives
}

type request struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	rc := &receiver{statuses: statuses, arrived: make(chan struct{}, 64)}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, request{r.Header.Clone(), body})
		status := rc.statuses[0]
		if len(rc.statuses) > 1 {
			rc.statuses = rc.statuses[1:]
		}
		hold := rc.hold
		rc.mu.Unlock()
		select {
		case rc.arrived <- struct{}{}:
		default:
		}
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, http.StatusText(status)+"\nsecond line")
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.got...)
}

func TestSignatureIsTheHexHMACSHA256OfTheBody(t *testing.T) {
	t.Parallel()
	// The HMAC-SHA256 test value of "key" and the pangram.
	body := []byte("The quick brown fox jumps over the lazy dog")
	want := "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
	if got := Sign("key", body); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	if !Verify("key", body, want) || Verify("other", body, want) || Verify("key", append(body, '.'), want) || Verify("key", body, "") {
		t.Fatal("Verify accepts what it must refuse, or refuses the signature")
	}
}

func TestTheJSONBodyTellsEventTaskStateReasonAndLink(t *testing.T) {
	t.Parallel()
	var b map[string]any
	if err := json.Unmarshal(JSON(escalation(), 2, "http://127.0.0.1:7777/"), &b); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": "N-7", "event": "escalated", "task_id": "T-3", "task": "Add a --verbose flag", "state": "escalated",
		"reason": "2 failed attempts <& more>", "url": "http://127.0.0.1:7777/#/tasks/T-3", "agent": "claude", "hook": "ops",
		"attempt": float64(2), "time": "2026-01-26T14:00:00Z",
		"summary": "T-3 escalated: Add a --verbose flag — 2 failed attempts <& more>"}
	for k, v := range want {
		if b[k] != v {
			t.Errorf("%s = %#v, want %#v", k, b[k], v)
		}
	}
	op := core.Notification{ID: "N-8", Event: core.NotifyOperation, OperationID: "OP-2", Subject: "restart", Status: "waiting", Reason: "waiting for the \"ok\" of a"}
	if err := json.Unmarshal(JSON(op, 1, "https://wilco.example.com"), &b); err != nil {
		t.Fatal(err)
	}
	if b["task_id"] != "" || b["url"] != "https://wilco.example.com/#/operations/OP-2" || b["operation_id"] != "OP-2" {
		t.Fatalf("operation body %v", b)
	}
	ag := core.Notification{ID: "N-9", Event: core.NotifyUnresponsive, Agent: "codex", Status: "unresponsive"}
	if l := Link("http://h:1", ag); l != "http://h:1/#/agents/codex" {
		t.Fatalf("agent link %s", l)
	}
}

func TestTheSlackBodyIsTextWithTheLinkAndEscapes(t *testing.T) {
	t.Parallel()
	var m map[string]any
	if err := json.Unmarshal(Slack(escalation(), "http://127.0.0.1:7777"), &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 {
		t.Fatalf("slack body has more than text: %v", m)
	}
	want := "*wilco*: T-3 escalated: Add a --verbose flag — 2 failed attempts &lt;&amp; more&gt;\n<http://127.0.0.1:7777/#/tasks/T-3|open T-3 in wilco>"
	if m["text"] != want {
		t.Fatalf("text %q\nwant %q", m["text"], want)
	}
}

func TestAWebhookAttemptIsSignedAndReportsTheAnswer(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, 500, 204)
	n := New(Options{Webhooks: []Webhook{{Name: "ops", URL: rc.srv.URL + "/hook", Secret: "s3cr3t", Format: "json"}}, BaseURL: "http://w"})
	e := core.Notify{Notification: escalation(), Attempt: 1}
	r := n.Attempt(context.Background(), e)
	if r.ID != "N-7" || r.Attempt != 1 || r.Status != 500 || r.Error != "" || !strings.HasPrefix(r.Body, "Internal Server Error") || r.Permanent {
		t.Fatalf("after a 500: %+v", r)
	}
	e.Attempt = 2
	if r := n.Attempt(context.Background(), e); r.Status != 204 || r.Error != "" || r.Body != "" {
		t.Fatalf("after a 204: %+v", r)
	}
	got := rc.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	for i, req := range got {
		if !Verify("s3cr3t", req.body, req.header.Get(HeaderSignature)) {
			t.Errorf("request %d: the signature %q does not verify", i, req.header.Get(HeaderSignature))
		}
		if req.header.Get(HeaderID) != "N-7" || req.header.Get(HeaderEvent) != "escalated" || req.header.Get(HeaderAttempt) != []string{"1", "2"}[i] ||
			req.header.Get("Content-Type") != "application/json" {
			t.Errorf("request %d headers %v", i, req.header)
		}
	}
	if !bytes.Contains(got[1].body, []byte(`"attempt":2`)) {
		t.Errorf("body %s", got[1].body)
	}
}

func TestAHookWithoutSecretGetsNoSignature(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, 200)
	n := New(Options{Webhooks: []Webhook{{Name: "chat", URL: rc.srv.URL, Format: "slack"}}})
	e := core.Notify{Notification: escalation(), Attempt: 1}
	e.Notification.Hook = "chat"
	if r := n.Attempt(context.Background(), e); r.Status != 200 {
		t.Fatalf("%+v", r)
	}
	req := rc.requests()[0]
	if _, ok := req.header[HeaderSignature]; ok {
		t.Fatal("signed without a secret")
	}
	if !bytes.HasPrefix(req.body, []byte(`{"text":"*wilco*: T-3 escalated`)) {
		t.Fatalf("slack body %s", req.body)
	}
}

func TestAnAttemptWithoutAnswerTimesOut(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, 200)
	rc.hold = make(chan struct{})
	defer close(rc.hold)
	n := New(Options{Webhooks: []Webhook{{Name: "ops", URL: rc.srv.URL}}, Timeout: 100 * time.Millisecond})
	r := n.Attempt(context.Background(), core.Notify{Notification: escalation(), Attempt: 1})
	if r.Error != "no answer in 100ms" || r.Status != 0 || r.Permanent {
		t.Fatalf("%+v", r)
	}
}

func TestARedirectIsNotFollowed(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, 200)
	redirect := httptest.NewServer(http.RedirectHandler(rc.srv.URL, http.StatusFound))
	defer redirect.Close()
	n := New(Options{Webhooks: []Webhook{{Name: "ops", URL: redirect.URL}}})
	if r := n.Attempt(context.Background(), core.Notify{Notification: escalation(), Attempt: 1}); r.Status != 302 {
		t.Fatalf("%+v", r)
	}
	if len(rc.requests()) != 0 {
		t.Fatal("the redirect was followed")
	}
}

func TestAnErrorDoesNotShowTheWebhooksURL(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	n := New(Options{Webhooks: []Webhook{{Name: "chat", URL: "http://" + addr + "/services/T000/B000/XXXXSECRET"}}})
	e := core.Notify{Notification: escalation(), Attempt: 1}
	e.Notification.Hook = "chat"
	r := n.Attempt(context.Background(), e)
	if r.Error == "" || strings.Contains(r.Error, "XXXXSECRET") || !strings.Contains(r.Error, "refused") {
		t.Fatalf("error %q", r.Error)
	}
}

func TestAHookNoLongerConfiguredIsAPermanentError(t *testing.T) {
	t.Parallel()
	n := New(Options{})
	e := core.Notify{Notification: escalation(), Attempt: 3}
	if r := n.Attempt(context.Background(), e); !r.Permanent || !strings.Contains(r.Error, `no webhook "ops"`) {
		t.Fatalf("%+v", r)
	}
	e.Notification.Hook = core.DesktopHook
	if r := n.Attempt(context.Background(), e); !r.Permanent {
		t.Fatalf("desktop off: %+v", r)
	}
}

// fakeNotifySend writes a notify-send that records its arguments, one per
// line, in a file, and exits with code.
func fakeNotifySend(t *testing.T, code int) (path, record string) {
	t.Helper()
	dir := t.TempDir()
	record = filepath.Join(dir, "args")
	path = filepath.Join(dir, "notify-send")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> '" + record + "'\necho 'no notification daemon' >&2\nexit " + string(rune('0'+code)) + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, record
}

func TestTheDesktopNotificationRunsNotifySend(t *testing.T) {
	t.Parallel()
	path, record := fakeNotifySend(t, 0)
	n := New(Options{Desktop: true, BaseURL: "http://127.0.0.1:7777", LookPath: func(name string) (string, error) {
		if name != "notify-send" {
			return "", errors.New("not found")
		}
		return path, nil
	}})
	if !n.Desktop() {
		t.Fatal("desktop off with notify-send found")
	}
	e := core.Notify{Notification: escalation(), Attempt: 1}
	e.Notification.Hook = core.DesktopHook
	if r := n.Attempt(context.Background(), e); r.Error != "" || r.Status != 0 {
		t.Fatalf("%+v", r)
	}
	data, _ := os.ReadFile(record)
	want := "--app-name=wilco\n--urgency=critical\n--\nwilco: T-3 escalated\nAdd a --verbose flag\n2 failed attempts <& more>\nhttp://127.0.0.1:7777/#/tasks/T-3\n"
	if string(data) != want {
		t.Fatalf("notify-send got\n%s\nwant\n%s", data, want)
	}
}

func TestAFailingNotifySendIsAFailedAttempt(t *testing.T) {
	t.Parallel()
	path, _ := fakeNotifySend(t, 1)
	n := New(Options{Desktop: true, LookPath: func(string) (string, error) { return path, nil }})
	e := core.Notify{Notification: escalation(), Attempt: 1}
	e.Notification.Hook = core.DesktopHook
	if r := n.Attempt(context.Background(), e); r.Error != "notify-send: exit status 1: no notification daemon" || r.Permanent {
		t.Fatalf("%+v", r)
	}
}

func TestWithoutNotifySendTheDesktopIsOffWithOneWarning(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	n := New(Options{Desktop: true, LookPath: func(string) (string, error) { return "", errors.New("not found") },
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if n.Desktop() {
		t.Fatal("desktop on without notify-send")
	}
	if c := strings.Count(logs.String(), "notify-send is not on PATH"); c != 1 || !strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("%d warnings:\n%s", c, logs.String())
	}
	if n := New(Options{LookPath: func(string) (string, error) { t.Fatal("looked for notify-send without desktop"); return "", nil }}); n.Desktop() {
		t.Fatal("desktop on")
	}
}

func TestAnAttemptCutShortByTheStopIsNotReported(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, 200)
	n := New(Options{Webhooks: []Webhook{{Name: "ops", URL: rc.srv.URL}}})
	if r, ok := n.Make(context.Background(), core.Notify{Notification: escalation(), Attempt: 1}); !ok || r.Status != 200 || r.ID != "N-7" {
		t.Fatalf("%+v, %v", r, ok)
	}
	rc.mu.Lock()
	rc.hold = make(chan struct{}) // never answers
	rc.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-rc.arrived
		<-rc.arrived
		cancel()
	}()
	if r, ok := n.Make(ctx, core.Notify{Notification: escalation(), Attempt: 2}); ok {
		t.Fatalf("an attempt cut short by the stop has a result to report: %+v", r)
	}
	if r, ok := n.Make(ctx, core.Notify{Notification: escalation(), Attempt: 3}); ok || len(rc.requests()) != 2 {
		t.Fatalf("an attempt was made after the stop: %+v, %d requests", r, len(rc.requests()))
	}
}
