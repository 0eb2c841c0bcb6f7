package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/wire"
)

const testToken = "admin-secret"

// testBundle is a fake wilco server speaking the HTTP API.s JSON, and a
// client of it.
type testBundle struct {
	srv    *httptest.Server
	client *Client
	mux    *http.ServeMux

	mu       sync.Mutex
	requests []recorded
}

type recorded struct {
	Method, Path, Query, Body, Auth string
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{mux: http.NewServeMux()}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.requests = append(b.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, string(body), r.Header.Get("Authorization")})
		b.mu.Unlock()
		if r.URL.Path != "/healthz" && r.Header.Get("Authorization") != "Bearer "+testToken {
			writeError(w, http.StatusUnauthorized, "unauthenticated", "bad token")
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		b.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(b.srv.Close)
	b.client = New(b.srv.URL, testToken)
	return b
}

func (b *testBundle) last() recorded {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.requests[len(b.requests)-1]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func TestNewNormalizesAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                       DefaultAddr,
		"127.0.0.1:9000":         "http://127.0.0.1:9000",
		"http://localhost:7777/": "http://localhost:7777",
		"https://wilco.example":  "https://wilco.example",
	} {
		if got := New(in, "").Addr(); got != want {
			t.Errorf("New(%q).Addr() = %q, want %q", in, got, want)
		}
	}
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestFromEnvironToken(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".wilco"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".wilco", "token"), []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}

	c, err := FromEnviron(env(nil), deep)
	if err != nil {
		t.Fatal(err)
	}
	if c.token != "from-file" || c.Addr() != DefaultAddr {
		t.Errorf("token %q addr %q, want from-file and the default address", c.token, c.Addr())
	}

	// A running server's address file is used when WILCO_ADDR is not set.
	if err := os.WriteFile(filepath.Join(root, ".wilco", "addr"), []byte("http://127.0.0.1:4242\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err = FromEnviron(env(nil), deep); err != nil || c.Addr() != "http://127.0.0.1:4242" {
		t.Errorf("addr %q, %v: want the one in .wilco/addr", c.Addr(), err)
	}

	c, err = FromEnviron(env(map[string]string{EnvToken: "from-env", EnvAddr: "10.0.0.1:1"}), deep)
	if err != nil {
		t.Fatal(err)
	}
	if c.token != "from-env" || c.Addr() != "http://10.0.0.1:1" {
		t.Errorf("token %q addr %q, want WILCO_TOKEN and WILCO_ADDR", c.token, c.Addr())
	}

	if _, err := FromEnviron(env(nil), t.TempDir()); !errors.Is(err, ErrNoToken) {
		t.Errorf("without a token: err = %v, want ErrNoToken", err)
	}
}

func TestAgentFromEnviron(t *testing.T) {
	t.Parallel()
	if _, err := AgentFromEnviron(env(nil)); !errors.Is(err, ErrNoAgentToken) {
		t.Errorf("err = %v, want ErrNoAgentToken", err)
	}
	c, err := AgentFromEnviron(env(map[string]string{EnvAgentToken: "agent", EnvURL: "http://h:1", EnvAddr: "http://other:2"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.token != "agent" || c.Addr() != "http://h:1" {
		t.Errorf("token %q addr %q: WILCO_URL should win over WILCO_ADDR", c.token, c.Addr())
	}
}

func TestAPIErrorFromTheErrorBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mux.HandleFunc("GET /v1/agents/{name}", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no agent "+r.PathValue("name"))
	})
	_, err := b.client.Agent(context.Background(), "ghost")
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %T %v, want *APIError", err, err)
	}
	if ae.Status != 404 || ae.Code != "not_found" || ae.Message != "no agent ghost" || ae.NoRoute() {
		t.Errorf("got %+v", ae)
	}
	if !IsNotFound(err) || err.Error() != "not_found: no agent ghost" {
		t.Errorf("IsNotFound %v, Error() %q", IsNotFound(err), err.Error())
	}
}

func TestAPIErrorWithoutBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// No route registered: the mux answers its own plain-text 404.
	_, err := b.client.Tasks(context.Background(), "")
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want *APIError", err)
	}
	if ae.Code != wire.CodeNotFound || !ae.NoRoute() || ae.Method != "GET" || ae.Path != "/v1/tasks" {
		t.Errorf("got %+v, want a not_found without a route", ae)
	}

	bad := New(b.srv.URL, "wrong")
	_, err = bad.Agents(context.Background())
	if !IsCode(err, wire.CodeUnauthenticated) {
		t.Errorf("wrong token: err = %v, want unauthenticated", err)
	}
}

func TestTransportError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	_, err := New(addr, "x").Health(context.Background())
	var te *TransportError
	if !errors.As(err, &te) || te.Addr != addr {
		t.Errorf("err = %v, want a TransportError for %s", err, addr)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mux.Handle("GET /healthz", reply(200, `{"status":"ok","seq":42}`))
	h, err := New(b.srv.URL, "").Health(context.Background())
	if err != nil || h.Status != "ok" || h.Seq != 42 {
		t.Fatalf("Health = %+v, %v", h, err)
	}
	if a := b.last().Auth; a != "" {
		t.Errorf("Authorization %q, want none", a)
	}
}

func TestAgents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mux.Handle("GET /v1/agents", reply(200, `{"agents":[{"name":"claude","adapter":"exec","capabilities":["go"],"status":"available"}]}`))
	b.mux.Handle("POST /v1/agents", reply(201, `{"agent":{"name":"remote-1","adapter":"mailbox","capabilities":[],"status":"available"},"token":"tok-1"}`))
	b.mux.Handle("POST /v1/agents/remote-1/token", reply(200, `{"token":"tok-2"}`))
	ctx := context.Background()

	agents, err := b.client.Agents(ctx)
	if err != nil || len(agents) != 1 || agents[0].Name != "claude" || agents[0].Status != wire.AgentAvailable {
		t.Fatalf("Agents = %+v, %v", agents, err)
	}
	created, err := b.client.CreateAgent(ctx, wire.CreateAgent{Name: "remote-1", Adapter: "mailbox", Timeout: wire.Duration(30 * time.Minute)})
	if err != nil || created.Token != "tok-1" || created.Agent.Adapter != "mailbox" {
		t.Fatalf("CreateAgent = %+v, %v", created, err)
	}
	if got := b.last().Body; !strings.Contains(got, `"timeout":"30m0s"`) || strings.Contains(got, "idle_timeout") {
		t.Errorf("body %s: durations go as strings, zero ones not at all", got)
	}
	tok, err := b.client.RotateAgentToken(ctx, "remote-1")
	if err != nil || tok != "tok-2" {
		t.Fatalf("RotateAgentToken = %q, %v", tok, err)
	}
}

func TestMessagesAndInstructions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mux.Handle("POST /v1/messages", reply(201, `{"id":"M-1","from":"wilco","to":"claude","type":"conversation","subject":"","body":"hi","state":"sent","attempts":1,"created_at":"2026-01-26T14:30:00.123456789Z","acknowledged_at":null}`))
	b.mux.Handle("POST /v1/instructions", reply(201, `{"id":"I-1","agent":"claude","content":"check","state":"pending","retry_count":0,"max_retries":5,"sent_at":null,"acknowledged_at":null,"failed_at":null}`))
	b.mux.Handle("POST /v1/instructions/I-1/ack", reply(200, `{"id":"I-1","agent":"claude","content":"check","state":"acknowledged","retry_count":1,"max_retries":5,"sent_at":"2026-01-26T14:30:00Z","acknowledged_at":"2026-01-26T14:31:00Z","failed_at":null}`))
	b.mux.Handle("GET /v1/instructions", reply(200, `{"instructions":[{"id":"I-2","agent":"claude","content":"x","state":"failed","retry_count":3,"max_retries":3}]}`))
	ctx := context.Background()

	m, err := b.client.Send(ctx, wire.SendMessage{To: "claude", Body: "hi"})
	if err != nil || m.ID != "M-1" || m.CreatedAt.Nanosecond() != 123456789 || m.AcknowledgedAt != nil {
		t.Fatalf("Send = %+v, %v", m, err)
	}
	if got := b.last().Body; got != `{"to":"claude","body":"hi"}` {
		t.Errorf("send body %s", got)
	}

	n := 5
	in, err := b.client.Instruct(ctx, wire.CreateInstruction{Agent: "claude", Content: "check", MaxRetries: &n, AckWhen: &wire.Matcher{Regex: "^ok"}})
	if err != nil || in.ID != "I-1" || in.MaxRetries != 5 {
		t.Fatalf("Instruct = %+v, %v", in, err)
	}
	if got := b.last().Body; got != `{"agent":"claude","content":"check","max_retries":5,"ack_when":{"regex":"^ok"}}` {
		t.Errorf("instruct body %s", got)
	}

	in, err = b.client.Acknowledge(ctx, "I-1")
	if err != nil || in.State != wire.DeliveryAcknowledged || in.AcknowledgedAt == nil {
		t.Fatalf("Acknowledge = %+v, %v", in, err)
	}

	list, err := b.client.Instructions(ctx, InstructionFilter{State: "failed"})
	if err != nil || len(list) != 1 || list[0].RetryCount != 3 {
		t.Fatalf("Instructions = %+v, %v", list, err)
	}
	if q := b.last().Query; q != "state=failed" {
		t.Errorf("query %q", q)
	}
	if _, err := b.client.Instructions(ctx, InstructionFilter{State: "failed", Agent: "claude"}); err != nil {
		t.Fatal(err)
	}
	if q := b.last().Query; q != "agent=claude&state=failed" {
		t.Errorf("query %q", q)
	}
	if _, err := b.client.Instructions(ctx, InstructionFilter{}); err != nil {
		t.Fatal(err)
	}
	if q := b.last().Query; q != "" {
		t.Errorf("query %q, want none", q)
	}
}

func TestInboxAndReply(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mux.HandleFunc("GET /v1/inbox", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("wait") != "30s" {
			writeError(w, 400, "invalid_argument", "wait "+r.URL.Query().Get("wait"))
			return
		}
		writeJSON(w, 200, map[string]any{"messages": []map[string]any{{
			"id": "S-1", "from": "wilco", "type": "task_delegation", "subject": "T-3", "body": "Do it",
			"task_id": "T-3", "attempt": 1, "created_at": "2026-01-26T14:30:00Z",
		}}})
	})
	b.mux.Handle("POST /v1/inbox/replies", reply(202, `{"interpreted":{"kind":"ack","task_id":"T-3","status":"RECEIVED","action":"confirmed","acknowledged":["D-1"]}}`))
	ctx := context.Background()

	msgs, err := b.client.Inbox(ctx, 30*time.Second)
	if err != nil || len(msgs) != 1 || msgs[0].TaskID != "T-3" || msgs[0].Attempt != 1 {
		t.Fatalf("Inbox = %+v, %v", msgs, err)
	}
	in, err := b.client.Reply(ctx, wire.Reply{InReplyTo: "S-1", Text: "[ACK] T-3 - RECEIVED"})
	if err != nil || in.Kind != wire.KindAck || in.Status != "RECEIVED" || len(in.Acknowledged) != 1 {
		t.Fatalf("Reply = %+v, %v", in, err)
	}
	if got := b.last().Body; got != `{"in_reply_to":"S-1","text":"[ACK] T-3 - RECEIVED"}` {
		t.Errorf("reply body %s", got)
	}
	_, err = b.client.Reply(ctx, wire.Reply{Type: "task-complete", Data: json.RawMessage(`{"task_id":"T-3"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.last().Body; got != `{"type":"task-complete","data":{"task_id":"T-3"}}` {
		t.Errorf("reply body %s", got)
	}
}

func TestInboxLongPollHonoursContext(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	entered := make(chan struct{})
	b.mux.HandleFunc("GET /v1/inbox", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-entered; cancel() }()
	_, err := b.client.Inbox(ctx, time.Minute)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestOperations(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mux.Handle("POST /v1/operations", reply(201, `{"id":"O-1","operation":"restart","state":"waiting","agents":[{"name":"a","response":"","responded_at":null,"extended":false}],"reminders_sent":0,"acknowledgment_received":false,"timeout_occurred":false,"proceeded_anyway":false,"created_at":"2026-01-26T14:30:00Z","finished_at":null}`))
	b.mux.Handle("GET /v1/operations/O-1", reply(200, `{"id":"O-1","operation":"restart","state":"done","agents":[{"name":"a","response":"ok","responded_at":"2026-01-26T14:30:10Z","extended":false}],"reminders_sent":1,"acknowledgment_received":true,"timeout_occurred":false,"proceeded_anyway":false,"created_at":"2026-01-26T14:30:00Z","finished_at":"2026-01-26T14:30:11Z","exit_code":0}`))
	ctx := context.Background()
	no := false
	op, err := b.client.StartOperation(ctx, wire.StartOperation{Operation: "restart", Agents: []string{"a"}, Timeout: wire.Duration(90 * time.Second), Reminders: []wire.Duration{wire.Duration(30 * time.Second)}, ProceedOnTimeout: &no, Quorum: "all", Command: []string{"true"}})
	if err != nil || op.ID != "O-1" || op.State != wire.OperationWaiting {
		t.Fatalf("StartOperation = %+v, %v", op, err)
	}
	want := `{"operation":"restart","agents":["a"],"timeout":"1m30s","reminders":["30s"],"proceed_on_timeout":false,"quorum":"all","command":["true"]}`
	if got := b.last().Body; got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	op, err = b.client.Operation(ctx, "O-1")
	if err != nil || !op.State.Terminal() || op.Agents[0].Response == nil || *op.Agents[0].Response != "ok" || op.ExitCode == nil || *op.ExitCode != 0 {
		t.Fatalf("Operation = %+v, %v", op, err)
	}
}

func TestTasks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := `{"id":"T-3","description":"fix","constraints":[],"non_goals":[],"boundaries":[],"acceptance_criteria":[],"state":"queued","phase":"","dry_run":true,"agent":"claude","position":1,"attempt":0,"consecutive_failures":0,"total_verify_loops":0,"replans":0,"milestone":"","questions":[],"escalation":null,"failures":[],"summary":null,"stuck_report":null,"created_at":"2026-01-26T14:30:00Z","started_at":null,"finished_at":null}`
	b.mux.Handle("POST /v1/tasks", reply(201, task))
	b.mux.Handle("GET /v1/tasks/T-3", reply(200, task))
	b.mux.Handle("GET /v1/tasks", reply(200, `{"tasks":[`+task+`]}`))
	b.mux.Handle("GET /v1/queue", reply(200, `{"tasks":[{"id":"T-3","position":1,"description":"fix"}]}`))
	b.mux.HandleFunc("POST /v1/tasks/T-3/cancel", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	b.mux.Handle("POST /v1/tasks/T-4/cancel", reply(200, strings.Replace(task, `"queued"`, `"cancelled"`, 1)))
	b.mux.Handle("POST /v1/tasks/T-3/clarify", reply(200, task))
	b.mux.Handle("POST /v1/tasks/T-3/respond", reply(200, task))
	b.mux.HandleFunc("GET /v1/tasks/T-3/diff", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/x-diff")
		_, _ = io.WriteString(w, "--- a/x\n+++ b/x\n")
	})
	b.mux.Handle("POST /v1/tasks/T-3/resume", reply(201, strings.Replace(task, `"T-3"`, `"T-5"`, 1)))
	b.mux.HandleFunc("GET /v1/runs/R-1/log", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	b.mux.Handle("POST /v1/plans", reply(201, `{"id":"03-01","state":"queued","tasks":[],"summary":null}`))
	b.mux.Handle("GET /v1/plans/03-01", reply(200, `{"id":"03-01","state":"done","tasks":[`+task+`],"summary":{"total_tasks":1}}`))
	ctx := context.Background()

	got, err := b.client.Submit(ctx, wire.SubmitTask{Description: "fix", Constraints: []string{"keep API"}, DryRun: true, ID: "T-3"})
	if err != nil || got.ID != "T-3" || got.Position == nil || *got.Position != 1 || !got.DryRun {
		t.Fatalf("Submit = %+v, %v", got, err)
	}
	if body := b.last().Body; body != `{"description":"fix","constraints":["keep API"],"dry_run":true,"id":"T-3"}` {
		t.Errorf("submit body %s", body)
	}
	if _, err := b.client.Task(ctx, "T-3"); err != nil {
		t.Fatal(err)
	}
	if list, err := b.client.Tasks(ctx, "queued"); err != nil || len(list) != 1 {
		t.Fatalf("Tasks = %v, %v", list, err)
	}
	if q, err := b.client.Queue(ctx); err != nil || len(q) != 1 || q[0].Position != 1 {
		t.Fatalf("Queue = %v, %v", q, err)
	}
	if tk, err := b.client.Cancel(ctx, "T-3"); err != nil || tk != nil {
		t.Errorf("Cancel of a queued task = %v, %v; want nil, nil (204)", tk, err)
	}
	if tk, err := b.client.Cancel(ctx, "T-4"); err != nil || tk == nil || tk.State != wire.TaskCancelled {
		t.Errorf("Cancel of a running task = %v, %v", tk, err)
	}
	if _, err := b.client.Clarify(ctx, "T-3", []string{"yes"}); err != nil || b.last().Body != `{"answers":["yes"]}` {
		t.Errorf("Clarify: %v, body %s", err, b.last().Body)
	}
	if _, err := b.client.Respond(ctx, "T-3", wire.ActionFix, "use a map"); err != nil || b.last().Body != `{"action":"fix","instruction":"use a map"}` {
		t.Errorf("Respond: %v, body %s", err, b.last().Body)
	}
	if d, err := b.client.Diff(ctx, "T-3"); err != nil || !strings.HasPrefix(d, "--- a/x") {
		t.Errorf("Diff = %q, %v", d, err)
	}
	if tk, err := b.client.Resume(ctx, "T-3"); err != nil || tk.ID != "T-5" {
		t.Errorf("Resume = %v, %v", tk, err)
	}
	if l, err := b.client.RunLog(ctx, "R-1"); err != nil || l != "ok\n" {
		t.Errorf("RunLog = %q, %v", l, err)
	}
	p, err := b.client.SubmitPlan(ctx, wire.SubmitPlan{ID: "03-01", Tasks: []wire.PlanTask{{SubmitTask: wire.SubmitTask{Description: "a"}}, {SubmitTask: wire.SubmitTask{Description: "b"}, DependsOn: []int{1}}}})
	if err != nil || p.ID != "03-01" {
		t.Fatalf("SubmitPlan = %v, %v", p, err)
	}
	if body := b.last().Body; body != `{"id":"03-01","tasks":[{"description":"a"},{"description":"b","depends_on":[1]}]}` {
		t.Errorf("plan body %s", body)
	}
	if p, err := b.client.Plan(ctx, "03-01"); err != nil || len(p.Tasks) != 1 || p.Summary == nil || p.Summary.TotalTasks != 1 {
		t.Errorf("Plan = %+v, %v", p, err)
	}
}
