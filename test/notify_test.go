package test

// Black-box tests of notifications: the real binary POSTs to webhooks
// served by the test (local HTTP receivers that check every signature),
// and runs a notify-send stand-in that records its arguments.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// hookRequest is one request a receiver got.
type hookRequest struct {
	id, event string
	attempt   int
	signature string
	body      []byte
	status    int       // what the receiver answered
	at        time.Time // when it came
}

// hookReceiver is a webhook: it records every request, checks its
// signature with the hook's secret, and answers as its mode says.
type hookReceiver struct {
	t      testing.TB
	srv    *httptest.Server
	secret string

	mu sync.Mutex
	// failFirst answers 500 to the first failFirst requests of each
	// notification (by its id), then 200.
	failFirst int
	// mode: "" (failFirst, then 200), "down" (503), "hang" (no answer
	// until the client gives up).
	mode string
	// release is closed when the mode changes: requests that hang end.
	release chan struct{}
	got     []hookRequest
	byID    map[string]int
	badSig  []string
	sigs    int
}

func newHookReceiver(t testing.TB, secret string, failFirst int) *hookReceiver {
	h := &hookReceiver{t: t, secret: secret, failFirst: failFirst, byID: map[string]int{}, release: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := hookRequest{id: r.Header.Get("X-Wilco-Notification"), event: r.Header.Get("X-Wilco-Event"),
		signature: r.Header.Get("X-Wilco-Signature"), body: body, at: time.Now()}
	req.attempt, _ = strconv.Atoi(r.Header.Get("X-Wilco-Attempt"))
	h.mu.Lock()
	if h.secret != "" {
		// The receiver's side: HMAC-SHA256 of the body with the secret,
		// compared in constant time.
		mac := hmac.New(sha256.New, []byte(h.secret))
		mac.Write(body)
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		if !hmac.Equal([]byte(req.signature), []byte(want)) {
			h.badSig = append(h.badSig, fmt.Sprintf("%s attempt %d: %q", req.id, req.attempt, req.signature))
		} else {
			h.sigs++
		}
	}
	h.byID[req.id]++
	mode, n, release := h.mode, h.byID[req.id], h.release
	switch {
	case mode == "down":
		req.status = http.StatusServiceUnavailable
	case mode == "hang":
	case n <= h.failFirst:
		req.status = http.StatusInternalServerError
	default:
		req.status = http.StatusOK
	}
	h.got = append(h.got, req)
	h.mu.Unlock()
	if mode == "hang" {
		select {
		case <-r.Context().Done():
		case <-release:
			// The mode changed: this request ends without an answer, as
			// a connection that broke.
			panic(http.ErrAbortHandler)
		}
		return
	}
	w.WriteHeader(req.status)
	fmt.Fprintln(w, http.StatusText(req.status))
}

func (h *hookReceiver) setMode(mode string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mode = mode
	close(h.release)
	h.release = make(chan struct{})
}

func (h *hookReceiver) requests() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// delivered are the notifications answered 200, by id, with the body of
// the request that got it.
func (h *hookReceiver) delivered() map[string]hookRequest {
	out := map[string]hookRequest{}
	for _, r := range h.requests() {
		if r.status == http.StatusOK {
			out[r.id] = r
		}
	}
	return out
}

// find is the first request answered 200 whose body names the task.
func (h *hookReceiver) find(task string) (hookRequest, bool) {
	for _, r := range h.requests() {
		var b webhookBody
		if r.status == http.StatusOK && json.Unmarshal(r.body, &b) == nil && b.TaskID == task {
			return r, true
		}
	}
	return hookRequest{}, false
}

func (h *hookReceiver) checkSignatures() {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.badSig) > 0 {
		h.t.Errorf("%d requests with a wrong signature: %v", len(h.badSig), h.badSig)
	}
	if h.sigs == 0 {
		h.t.Error("no signature checked")
	}
}

// webhookBody is the JSON body of a webhook (docs/NOTIFY.md).
type webhookBody struct {
	ID      string `json:"id"`
	Event   string `json:"event"`
	TaskID  string `json:"task_id"`
	Task    string `json:"task"`
	State   string `json:"state"`
	Reason  string `json:"reason"`
	URL     string `json:"url"`
	Agent   string `json:"agent"`
	OpID    string `json:"operation_id"`
	Hook    string `json:"hook"`
	Attempt int    `json:"attempt"`
	Summary string `json:"summary"`
}

// fakeNotifySend puts a notify-send on a PATH of its own that appends its
// arguments, one per line, and a line "--end--", to a file.
func fakeNotifySend(t *testing.T) (pathVar, record string) {
	t.Helper()
	dir := t.TempDir()
	record = filepath.Join(dir, "notify-send.log")
	script := "#!/bin/sh\n{ for a in \"$@\"; do printf '%s\\n' \"$a\"; done; echo --end--; } >> '" + record + "'\n"
	if err := os.WriteFile(filepath.Join(dir, "notify-send"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), record
}

// TestEveryNotifyEventReachesItsHooksSignedAndRetriedUntilDelivered drives
// tasks to each event — a question, success, blocked, escalated, stuck, an
// unresponsive agent, a malformed task, an operation waiting for "ok" —
// with four hooks: one that hears of everything and answers 500 twice
// before 200 (each notification is delivered on its third attempt, every
// request signed), a Slack one, one that always fails (its notification
// ends failed; the task succeeds all the same) and the desktop.
func TestEveryNotifyEventReachesItsHooksSignedAndRetriedUntilDelivered(t *testing.T) {
	t.Parallel()
	const secret = "the-hooks-secret"
	all := newHookReceiver(t, secret, 2)
	chat := newHookReceiver(t, "", 0)
	dead := newHookReceiver(t, "dead-secret", 1<<30)
	pathVar, desktopLog := fakeNotifySend(t)

	yaml := "agents:\n" +
		execAgent(t, "clarifier", "clarify.sh", nil) +
		execAgent(t, "blocker", "ackl_blocked.sh", nil) +
		execAgent(t, "noop", "noop.sh", nil) +
		"  - {name: ghost, adapter: mailbox}\n" +
		"  - {name: opsagent, adapter: mailbox}\n" +
		blackbox.CheckStep +
		"policy:\n" +
		"  ack: {timeouts: [3s], backoff: {base: 100ms, max: 100ms}, on_unresponsive: escalate}\n" +
		"  loop: {escalate_after: 1, hard_stop: 2}\n" +
		"notify:\n" +
		"  webhooks:\n" +
		"    - {name: all, url: \"" + all.srv.URL + "/hook\", secret: " + secret + ", events: [escalated, stuck, clarification, blocked, unresponsive, operation, success, failed]}\n" +
		"    - {name: chat, url: \"" + chat.srv.URL + "/services/T0/B0/x\", format: slack, events: [escalated, stuck]}\n" +
		"    - {name: dead, url: \"" + dead.srv.URL + "/\", secret: dead-secret, events: [success]}\n" +
		"  desktop: true\n" +
		"  retry: {max_attempts: 3, backoff: {base: 100ms, max: 400ms}, timeout: 5s}\n"
	dir := blackbox.NewRepo(t, yaml)
	in := blackbox.ServeRepo(t, dir, pathVar)

	// T-1 asks a question, is answered and succeeds.
	in.Submit(map[string]any{"id": "T-1", "description": "Fix file.txt", "agent": "clarifier"})
	in.WaitTask("T-1", 30*time.Second, "clarifying")
	in.Must(200, in.Call("POST", "/v1/tasks/T-1/clarify", blackbox.AdminToken, map[string]any{"answers": []string{"the fix line"}}))
	in.WaitTask("T-1", 30*time.Second, "success")
	// T-2 is blocked, and aborted.
	in.Submit(map[string]any{"id": "T-2", "description": "Reach the fixture server", "agent": "blocker"})
	in.WaitTask("T-2", 30*time.Second, "blocked")
	in.Must(200, in.Call("POST", "/v1/tasks/T-2/respond", blackbox.AdminToken, map[string]any{"action": "abort"}))
	// T-3 escalates after one failure; retried, it hits the hard stop.
	in.Submit(map[string]any{"id": "T-3", "description": "Make the check pass", "agent": "noop"})
	in.WaitTask("T-3", 30*time.Second, "escalated")
	in.Must(200, in.Call("POST", "/v1/tasks/T-3/respond", blackbox.AdminToken, map[string]any{"action": "retry"}))
	in.WaitTask("T-3", 30*time.Second, "stuck")
	// T-4's agent never answers: unresponsive, and the task escalates.
	in.Submit(map[string]any{"id": "T-4", "description": "Wait for a ghost", "agent": "ghost"})
	in.WaitTask("T-4", 30*time.Second, "escalated")
	in.Must(200, in.Call("POST", "/v1/tasks/T-4/respond", blackbox.AdminToken, map[string]any{"action": "abort"}))
	// A malformed task of a plan fails at once; an operation waits for "ok".
	in.Must(201, in.Call("POST", "/v1/plans", blackbox.AdminToken, map[string]any{"id": "01-01", "tasks": []any{map[string]any{"description": " "}}}))
	var op struct{ ID string }
	in.Must(201, in.Call("POST", "/v1/operations", blackbox.AdminToken, map[string]any{"operation": "restart", "agents": []string{"opsagent"}, "timeout": "1h"}), &op)

	type key struct{ event, about string }
	want := []key{{"clarification", "T-1"}, {"success", "T-1"}, {"blocked", "T-2"}, {"escalated", "T-3"}, {"stuck", "T-3"},
		{"unresponsive", "T-4"}, {"escalated", "T-4"}, {"failed", "01-01:task-1"}, {"operation", op.ID}}
	waitFor(t, "every notification of the hook all delivered", 60*time.Second, func() bool {
		return len(all.delivered()) >= len(want) && len(in.Notifications("?hook=all&state=pending")) == 0
	})
	all.checkSignatures()
	dead.checkSignatures()
	var got []key
	bodies := map[key]webhookBody{}
	for id, r := range all.delivered() {
		var b webhookBody
		if err := json.Unmarshal(r.body, &b); err != nil {
			t.Fatalf("%s: body %s: %v", id, r.body, err)
		}
		about := b.TaskID
		if b.Event == "operation" {
			about = b.OpID
		}
		k := key{b.Event, about}
		got = append(got, k)
		bodies[k] = b
		if b.ID != id || b.Hook != "all" || r.attempt != 3 || b.Attempt != 3 || r.event != b.Event || b.Reason == "" || b.Summary == "" {
			t.Errorf("%s: delivered on attempt %d (want the third), body %s", id, r.attempt, r.body)
		}
		if b.TaskID != "" && b.URL != in.Url+"/#/tasks/"+b.TaskID {
			t.Errorf("%s: url %q, want %s/#/tasks/%s", id, b.URL, in.Url, b.TaskID)
		}
	}
	for _, k := range want {
		if !slices.Contains(got, k) {
			t.Errorf("the hook all did not get %v; got %v", k, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the hook all got %d notifications, want %d: %v", len(got), len(want), got)
	}
	// Each notification's requests: attempts 1, 2 (500) and 3 (200).
	perID := map[string][]int{}
	for _, r := range all.requests() {
		perID[r.id] = append(perID[r.id], r.attempt)
	}
	for id, attempts := range perID {
		if !slices.Equal(attempts, []int{1, 2, 3}) {
			t.Errorf("%s: attempts %v, want [1 2 3]", id, attempts)
		}
	}
	if b := bodies[key{"escalated", "T-3"}]; b.State != "escalated" || b.Task != "Make the check pass" || b.Agent != "noop" || !strings.Contains(b.Reason, "escalate_after") {
		t.Errorf("escalated T-3: %+v", b)
	}
	if b := bodies[key{"clarification", "T-1"}]; b.State != "clarifying" || !strings.Contains(b.Reason, "Which line goes into file.txt?") {
		t.Errorf("clarification T-1: %+v", b)
	}
	if b := bodies[key{"unresponsive", "T-4"}]; b.State != "unresponsive" || b.Agent != "ghost" {
		t.Errorf("unresponsive: %+v", b)
	}
	if b := bodies[key{"operation", op.ID}]; b.State != "waiting" || b.URL != in.Url+"/#/operations/"+op.ID || !strings.Contains(b.Reason, "opsagent") {
		t.Errorf("operation: %+v", b)
	}
	if b := bodies[key{"stuck", "T-3"}]; !strings.Contains(b.Reason, "hard stop") || b.State != "stuck" {
		t.Errorf("stuck: %+v", b)
	}

	// The store's record agrees: delivered on the third attempt, 200.
	for _, n := range in.Notifications("?hook=all") {
		if n.State != "delivered" || n.Attempts != 3 || n.LastStatus == nil || *n.LastStatus != 200 || n.LastError != "" || n.DeliveredAt == nil {
			t.Errorf("record %+v", n)
		}
	}

	// The Slack hook got {"text": …} for the escalations and the stuck task.
	waitFor(t, "the Slack hook's notifications", 30*time.Second, func() bool { return len(chat.delivered()) == 3 })
	for _, r := range chat.requests() {
		var m map[string]string
		if err := json.Unmarshal(r.body, &m); err != nil || len(m) != 1 || !strings.HasPrefix(m["text"], "*wilco*: T-") || !strings.Contains(m["text"], "<"+in.Url+"/#/tasks/T-") {
			t.Errorf("slack body %s (%v)", r.body, err)
		}
		if r.signature != "" {
			t.Errorf("a hook without a secret got a signature")
		}
	}

	// The hook that always fails: three attempts, then failed; T-1 did not
	// wait for it.
	waitFor(t, "the dead hook's notification failed", 30*time.Second, func() bool {
		ns := in.Notifications("?hook=dead&state=failed")
		return len(ns) == 1
	})
	d := in.Notifications("?hook=dead")[0]
	if d.Event != "success" || d.TaskID != "T-1" || d.Attempts != 3 || d.LastStatus == nil || *d.LastStatus != 500 || !strings.HasPrefix(d.LastError, "HTTP 500") {
		t.Errorf("dead hook's record %+v", d)
	}
	if len(dead.requests()) != 3 {
		t.Errorf("the dead hook got %d requests, want 3", len(dead.requests()))
	}

	// The desktop: notify-send ran for each event but success.
	waitFor(t, "the desktop notifications", 30*time.Second, func() bool {
		return len(in.Notifications("?hook=desktop&state=delivered")) == len(want)-1
	})
	shown := blackbox.ReadFile(t, desktopLog)
	blackbox.MustContain(t, "notify-send's arguments", shown,
		"--app-name=wilco\n--urgency=critical\n--\nwilco: T-3 escalated\nMake the check pass\n",
		"wilco: T-1 needs your answers\n", "wilco: operation "+op.ID+" waits for \"ok\"\n", "wilco: agent ghost is unresponsive\n",
		in.Url+"/#/tasks/T-2\n--end--\n")
	if strings.Contains(shown, "succeeded") {
		t.Errorf("the desktop showed a success, which it does not hear of:\n%s", shown)
	}
	if c := strings.Count(shown, "--end--"); c != len(want)-1 {
		t.Errorf("notify-send ran %d times, want %d", c, len(want)-1)
	}

	// wilco notify log shows them.
	out := in.Cli("notify", "log", "--hook", "dead")
	blackbox.MustContain(t, "wilco notify log", out, "HOOK", "dead", "success", "T-1", "failed", "3/3", "HTTP 500")
	var logged struct {
		Notifications []blackbox.NotificationRecord `json:"notifications"`
	}
	if err := json.Unmarshal([]byte(in.Cli("notify", "log", "--json", "--state", "delivered", "--limit", "1000")), &logged); err != nil {
		t.Fatal(err)
	}
	// Delivered: every one of the hook all, the desktop's (all but
	// success) and the Slack hook's three.
	if n, w := len(logged.Notifications), len(want)+(len(want)-1)+3; n != w {
		t.Errorf("wilco notify log --json --state delivered lists %d, want %d", n, w)
	}
	in.WatchFold("notify")
}

// TestNotificationsPendingAtAKillNineAreSentAfterTheRestart makes
// notifications while the webhook is down or hangs, kills wilco with
// SIGKILL at random moments (attempts waiting for their backoff, attempts
// under way) and starts it again on the same directory; once the webhook
// answers, every notification of every operation any instance accepted is
// received: duplicates are allowed, losses are not.
func TestNotificationsPendingAtAKillNineAreSentAfterTheRestart(t *testing.T) {
	t.Parallel()
	const secret = "crash-secret"
	hook := newHookReceiver(t, secret, 0)
	hook.setMode("down")
	yaml := "agents:\n  - {name: opsagent, adapter: mailbox}\n" +
		"notify:\n  webhooks:\n    - {name: ops, url: \"" + hook.srv.URL + "/\", secret: " + secret + ", events: [operation]}\n" +
		"  retry: {max_attempts: 1000, backoff: {base: 50ms, max: 200ms}, timeout: 30s}\n"
	dir := blackbox.NewRepo(t, yaml)
	seed := uint64(time.Now().UnixNano())
	rng := mrand.New(mrand.NewPCG(seed, 13))
	t.Logf("seed %d", seed)

	var accepted []string // operations answered 201
	in := blackbox.ServeRepo(t, dir)
	const kills = 4
	for k := range kills {
		mode := []string{"down", "hang"}[k%2]
		hook.setMode(mode)
		before := len(hook.requests())
		for range 3 + rng.IntN(5) {
			var op struct{ ID string }
			in.Must(201, in.Call("POST", "/v1/operations", blackbox.AdminToken, map[string]any{"operation": "restart", "agents": []string{"opsagent"}, "timeout": "1h"}), &op)
			accepted = append(accepted, op.ID)
		}
		// Let attempts reach the hook, then kill at a random moment.
		waitFor(t, "attempts reaching the hook", 30*time.Second, func() bool { return len(hook.requests()) > before })
		blackbox.AtRandom(t, time.Duration(rng.IntN(300))*time.Millisecond)
		in.Kill()
		t.Logf("kill %d (%s): %d operations so far, %d requests", k+1, mode, len(accepted), len(hook.requests()))
		in = blackbox.ServeRepo(t, dir)
	}
	// The webhook comes back.
	hook.setMode("")
	waitFor(t, "every notification delivered", 60*time.Second, func() bool {
		return len(in.Notifications("?state=pending&limit=10000")) == 0
	})
	hook.checkSignatures()
	records := in.Notifications("?limit=10000")
	byOp := map[string]blackbox.NotificationRecord{}
	for _, n := range records {
		if n.State != "delivered" {
			t.Errorf("%s is %s: %+v", n.ID, n.State, n)
		}
		byOp[n.OperationID] = n
	}
	received := hook.delivered()
	for _, op := range accepted {
		n, ok := byOp[op]
		if !ok {
			t.Errorf("operation %s was accepted and has no notification", op)
			continue
		}
		r, ok := received[n.ID]
		if !ok {
			t.Errorf("the notification %s of %s was never received with a 200", n.ID, op)
			continue
		}
		var b webhookBody
		if err := json.Unmarshal(r.body, &b); err != nil || b.OpID != op || b.Event != "operation" {
			t.Errorf("%s: body %s (%v)", n.ID, r.body, err)
		}
	}
	if len(records) != len(accepted) {
		t.Errorf("%d notifications for %d operations", len(records), len(accepted))
	}
	dups := 0
	for _, r := range hook.requests() {
		if r.status == http.StatusOK {
			dups++
		}
	}
	t.Logf("%d operations, %d notifications delivered, %d deliveries answered 200 (duplicates allowed), %d requests in all",
		len(accepted), len(received), dups, len(hook.requests()))
}
