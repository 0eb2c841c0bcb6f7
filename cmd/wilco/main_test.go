package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRunUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // a substring of stdout
		stderr string // a substring of stderr
	}{
		{"no verb", nil, exitUsage, "", "usage: wilco <verb>"},
		{"unknown verb", []string{"frobnicate"}, exitUsage, "", `unknown verb "frobnicate"`},
		{"help", []string{"help"}, exitOK, "the agent's side:", ""},
		{"--help", []string{"--help"}, exitOK, "usage: wilco <verb>", ""},
		{"help verb", []string{"help", "instruct"}, exitOK, "-max-retries", ""},
		{"help unknown verb", []string{"help", "nope"}, exitUsage, "", `unknown verb "nope"`},
		{"verb --help", []string{"send", "--help"}, exitOK, "usage: wilco send AGENT", ""},
		{"verb -h", []string{"watch", "-h"}, exitOK, "usage: wilco watch", ""},
		{"bad flag", []string{"agents", "--bogus"}, exitUsage, "", "flag provided but not defined: -bogus"},
		{"send without text", []string{"send", "claude"}, exitUsage, "", "missing arguments"},
		{"send too many", []string{"send", "claude", "a", "b"}, exitUsage, "", "too many arguments: b"},
		{"send empty", []string{"send", "claude", "  "}, exitUsage, "", "the message is empty"},
		{"instruct bad number", []string{"instruct", "claude", "x", "--max-retries", "many"}, exitUsage, "", "invalid value"},
		{"ack without id", []string{"ack"}, exitUsage, "", "usage: wilco ack ID"},
		{"instructions bad state", []string{"instructions", "--state", "lost"}, exitUsage, "", `--state: one of pending, sent, acknowledged, failed, cancelled, got "lost"`},
		{"notify without log", []string{"notify"}, exitUsage, "", "say log"},
		{"notify log bad state", []string{"notify", "log", "--state", "sent"}, exitUsage, "", `--state: one of pending, delivered, failed, got "sent"`},
		{"notify log bad limit", []string{"notify", "log", "--limit", "0"}, exitUsage, "", "--limit: at least 1, got 0"},
		{"inbox bad wait", []string{"inbox", "--wait", "soon"}, exitUsage, "", "invalid value"},
		{"reply nothing", []string{"reply"}, exitUsage, "", "give the reply's text"},
		{"reply type without text or data", []string{"reply", "--type", "task-complete"}, exitUsage, "", "give the reply's text (with --type to name its form), or --data"},
		{"reply bad data", []string{"reply", "--type", "task-complete", "--data", "{"}, exitUsage, "", "not valid JSON"},
		{"op without agent", []string{"op", "restart"}, exitUsage, "", "name at least one --agent"},
		{"op bad reminders", []string{"op", "restart", "--agent", "a", "--reminders", "30s,x"}, exitUsage, "", "--reminders"},
		{"op without operation", []string{"op", "--agent", "a"}, exitUsage, "", "missing arguments"},
		{"watch two ids", []string{"watch", "T-1", "T-2"}, exitUsage, "", "too many arguments"},
		{"status bad state", []string{"status", "--state", "done"}, exitUsage, "", "--state: one of"},
		{"submit without text", []string{"submit"}, exitUsage, "", "missing arguments"},
		{"respond bad action", []string{"respond", "T-1", "panic"}, exitUsage, "", "the answer is one of retry, skip, abort, fix"},
		{"respond fix without instruction", []string{"respond", "T-1", "fix"}, exitUsage, "", "fix needs the instruction"},
		{"respond retry with instruction", []string{"respond", "T-1", "retry", "now"}, exitUsage, "", "only fix takes an instruction"},
		{"clarify without answers", []string{"clarify", "T-1"}, exitUsage, "", "give at least one --answer"},
		{"plan without sub-verb", []string{"plan"}, exitUsage, "", "say submit or show"},
		{"plan show without id", []string{"plan", "show"}, exitUsage, "", "usage: wilco plan show ID"},
		{"agents add without name", []string{"agents", "add"}, exitUsage, "", "usage: wilco agents add NAME"},
		{"init with argument", []string{"init", "here"}, exitUsage, "", "too many arguments"},
		{"serve bad flag", []string{"serve", "--port", "1"}, exitUsage, "", "flag provided but not defined"},
		{"logs with argument", []string{"logs", "T-1"}, exitUsage, "", "too many arguments"},
		{"demo with an argument", []string{"demo", "x"}, exitUsage, "", "unexpected argument"},
		{"bench with an argument", []string{"bench", "x"}, exitUsage, "", "unexpected argument"},
		{"bench bad value", []string{"bench", "--deliveries", "0"}, exitUsage, "", "--deliveries must be positive"},
		{"bench probability out of range", []string{"bench", "--ack-prob", "2"}, exitUsage, "", "--ack-prob must be within 0..1, got 2"},
		{"bench negative open", []string{"bench", "--open", "-5"}, exitUsage, "", "--open must not be negative, got -5"},
		{"bench negative tasks", []string{"bench", "--tasks", "-1"}, exitUsage, "", "--tasks must not be negative, got -1"},
		{"bench no status runs", []string{"bench", "--tasks", "3", "--status-runs", "0"}, exitUsage, "", "--status-runs must be positive, got 0"},
		{"bench open and tasks", []string{"bench", "--open", "5", "--tasks", "5"}, exitUsage, "", "--open and --tasks are two different measurements"},
		{"bench parallel without tasks", []string{"bench", "--parallel", "8"}, exitUsage, "", "--tasks must be positive, got 0"},
		{"bench parallel of one", []string{"bench", "--tasks", "4", "--parallel", "1"}, exitUsage, "", "--parallel must be at least 2, got 1"},
		{"bench too many conflicting", []string{"bench", "--tasks", "4", "--parallel", "2", "--conflicting", "0.7"}, exitUsage, "", "--conflicting must be within 0..0.5"},
		{"bench negative verify", []string{"bench", "--tasks", "4", "--parallel", "2", "--verify", "-1s"}, exitUsage, "", "--verify must not be negative"},
		{"bench work without parallel", []string{"bench", "--tasks", "4", "--work", "1s"}, exitUsage, "", "--parallel must be at least 2, got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			code := run(context.Background(), tc.args, &out, &errb)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout %q does not contain %q", out.String(), tc.stdout)
			}
			if !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stderr %q does not contain %q", errb.String(), tc.stderr)
			}
		})
	}
}

func TestEveryVerbHasHelp(t *testing.T) {
	t.Parallel()
	for _, v := range verbs {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{v.name, "--help"}, &out, &errb); code != exitOK {
			t.Errorf("wilco %s --help: exit %d, stderr %s", v.name, code, errb.String())
		}
		if !strings.Contains(out.String(), "usage: wilco "+v.name) {
			t.Errorf("wilco %s --help printed %q", v.name, out.String())
		}
	}
}

// cliBundle is a fake server speaking wilco's HTTP API, and a cli pointed at it.
type cliBundle struct {
	srv  *httptest.Server
	mux  *http.ServeMux
	c    *cli
	out  *bytes.Buffer
	errb *bytes.Buffer
	env  map[string]string

	mu     sync.Mutex
	bodies map[string]string // "METHOD path" → last request body
	auth   map[string]string // "METHOD path" → last Authorization
}

const (
	adminToken = "admin-tok"
	agentToken = "agent-tok"
)

func setupCLI(t *testing.T) *cliBundle {
	t.Helper()
	b := &cliBundle{mux: http.NewServeMux(), out: &bytes.Buffer{}, errb: &bytes.Buffer{}, bodies: map[string]string{}, auth: map[string]string{}}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		key := r.Method + " " + r.URL.Path
		b.mu.Lock()
		b.bodies[key] = string(body)
		b.auth[key] = r.Header.Get("Authorization")
		b.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		b.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(b.srv.Close)
	b.env = map[string]string{"WILCO_ADDR": b.srv.URL, "WILCO_TOKEN": adminToken, "WILCO_AGENT_TOKEN": agentToken}
	b.c = &cli{
		stdout: b.out, stderr: b.errb, stdin: strings.NewReader(""),
		getenv: func(k string) string { return b.env[k] }, wd: t.TempDir(),
		lookPath: func(string) (string, error) { return "", errors.New("not found") },
		now:      func() time.Time { return time.Date(2026, 1, 26, 14, 31, 0, 0, time.UTC) },
		loc:      time.UTC, pollEvery: time.Millisecond, reconnectDelay: time.Millisecond,
	}
	return b
}

func (b *cliBundle) run(args ...string) int {
	b.out.Reset()
	b.errb.Reset()
	return b.c.main(context.Background(), args)
}

func (b *cliBundle) body(key string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bodies[key]
}

func (b *cliBundle) authOf(key string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.auth[key]
}

func respond(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func apiError(status int, code, msg string) http.HandlerFunc {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
	return respond(status, string(b))
}

func TestAgentsVerb(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.mux.Handle("GET /v1/agents", respond(200, `{"agents":[{"name":"claude","adapter":"exec","capabilities":["go","ts"],"status":"busy","waiting":2}]}`))
	if code := b.run("agents"); code != 0 {
		t.Fatalf("exit %d: %s", code, b.errb)
	}
	want := "NAME    ADAPTER  STATUS  CAPABILITIES  WAITING  UNACKED\nclaude  exec     busy    go,ts         2        0\n"
	if b.out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.out, want)
	}
	if b.authOf("GET /v1/agents") != "Bearer "+adminToken {
		t.Errorf("authorization %q", b.authOf("GET /v1/agents"))
	}
	if code := b.run("agents", "--json"); code != 0 {
		t.Fatal(code)
	}
	var got struct {
		Agents []map[string]any `json:"agents"`
	}
	if err := json.Unmarshal(b.out.Bytes(), &got); err != nil || len(got.Agents) != 1 || got.Agents[0]["status"] != "busy" {
		t.Errorf("--json printed %s (%v)", b.out, err)
	}
}

func TestAPIErrorsExitOne(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.mux.Handle("POST /v1/instructions/{id}/ack", apiError(404, "not_found", "no instruction I-9"))
	if code := b.run("ack", "I-9"); code != exitFailure {
		t.Errorf("exit %d", code)
	}
	if got := b.errb.String(); got != "wilco: not_found: no instruction I-9\n" {
		t.Errorf("stderr %q", got)
	}

	// A route the server does not have (the tasks, until they exist).
	if code := b.run("queue"); code != exitFailure {
		t.Errorf("exit %d", code)
	}
	if got := b.errb.String(); !strings.Contains(got, "wilco: not_found: this server does not serve GET /v1/queue") {
		t.Errorf("stderr %q", got)
	}

	// No server at all.
	b.env["WILCO_ADDR"] = "http://127.0.0.1:1"
	if code := b.run("agents"); code != exitFailure {
		t.Errorf("exit %d", code)
	}
	if got := b.errb.String(); !strings.Contains(got, "wilco: unavailable: cannot reach wilco at http://127.0.0.1:1") {
		t.Errorf("stderr %q", got)
	}

	// No token anywhere.
	delete(b.env, "WILCO_TOKEN")
	if code := b.run("agents"); code != exitFailure || !strings.Contains(b.errb.String(), "wilco init") {
		t.Errorf("exit %d, stderr %q", code, b.errb)
	}
}

func TestSendInstructAck(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.mux.Handle("POST /v1/messages", respond(201, `{"id":"M-1","from":"wilco","to":"claude","type":"task_delegation","subject":"","body":"x","state":"sent","attempts":1,"created_at":"2026-01-26T14:30:00Z","acknowledged_at":null}`))
	b.mux.Handle("GET /v1/messages/M-1", respond(200, `{"id":"M-1","from":"wilco","to":"claude","type":"task_delegation","subject":"","body":"x","state":"acknowledged","attempts":2,"created_at":"2026-01-26T14:30:00Z","acknowledged_at":"2026-01-26T14:30:30Z"}`))
	b.mux.Handle("POST /v1/instructions", respond(201, `{"id":"I-1","agent":"claude","content":"check","state":"pending","retry_count":0,"max_retries":5,"sent_at":null,"acknowledged_at":null,"failed_at":null}`))
	b.mux.Handle("GET /v1/instructions/I-1", respond(200, `{"id":"I-1","agent":"claude","content":"check","state":"failed","retry_count":5,"max_retries":5,"reason":"max retries"}`))
	b.mux.Handle("POST /v1/instructions/I-1/ack", respond(200, `{"id":"I-1","agent":"claude","content":"check","state":"acknowledged","retry_count":1,"max_retries":5}`))
	var instructionsQuery string
	b.mux.HandleFunc("GET /v1/instructions", func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		instructionsQuery = r.URL.RawQuery
		b.mu.Unlock()
		// The server filters by agent, as GET /v1/instructions?agent= does.
		all := map[string]string{
			"claude": `{"id":"I-1","agent":"claude","content":"check   the\nCLI","state":"sent","retry_count":1,"max_retries":3}`,
			"codex":  `{"id":"I-2","agent":"codex","content":"y","state":"sent","retry_count":0,"max_retries":3}`,
		}
		var kept []string
		for _, agent := range []string{"claude", "codex"} {
			if a := r.URL.Query().Get("agent"); a == "" || a == agent {
				kept = append(kept, all[agent])
			}
		}
		respond(200, `{"instructions":[`+strings.Join(kept, ",")+`]}`)(w, r)
	})

	if code := b.run("send", "claude", "Task T-3: fix it", "--task", "T-3", "--subject", "fix"); code != 0 {
		t.Fatalf("send: exit %d: %s", code, b.errb)
	}
	if got := b.body("POST /v1/messages"); got != `{"to":"claude","subject":"fix","body":"Task T-3: fix it","task_id":"T-3"}` {
		t.Errorf("send body %s", got)
	}
	if got := b.out.String(); got != "M-1 to claude: task_delegation, sent (attempt 1)\n" {
		t.Errorf("send printed %q", got)
	}
	if code := b.run("send", "claude", "x", "--wait", "1m"); code != 0 || !strings.Contains(b.out.String(), "acknowledged (attempt 2)") {
		t.Errorf("send --wait: exit %d, %q %q", code, b.out, b.errb)
	}

	if code := b.run("instruct", "claude", "check", "--max-retries", "5", "--ack-contains", "done"); code != 0 {
		t.Fatalf("instruct: exit %d: %s", code, b.errb)
	}
	if got := b.body("POST /v1/instructions"); got != `{"agent":"claude","content":"check","max_retries":5,"ack_when":{"contains":"done"}}` {
		t.Errorf("instruct body %s", got)
	}
	if code := b.run("instruct", "claude", "check", "--wait", "1m"); code != exitFailure || !strings.Contains(b.errb.String(), "I-1 was not acknowledged: failed (max retries)") {
		t.Errorf("instruct --wait on a failed instruction: exit %d, %q", code, b.errb)
	}
	if got := b.body("POST /v1/instructions"); got != `{"agent":"claude","content":"check"}` {
		t.Errorf("instruct without --max-retries sends none: %s", got)
	}

	if code := b.run("ack", "I-1"); code != 0 || b.out.String() != "I-1: acknowledged\n" {
		t.Errorf("ack: exit %d, %q", code, b.out)
	}
	if code := b.run("instructions", "--agent", "claude"); code != 0 {
		t.Fatal(code)
	}
	want := "ID   AGENT   STATE  RETRIES  CONTENT\nI-1  claude  sent   1/3      check the CLI\n"
	if b.out.String() != want {
		t.Errorf("instructions:\n%s\nwant\n%s", b.out, want)
	}
	b.mu.Lock()
	q := instructionsQuery
	b.mu.Unlock()
	if q != "agent=claude" {
		t.Errorf("instructions --agent claude sent query %q, want agent=claude", q)
	}
}

func TestAgentSide(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.mux.HandleFunc("GET /v1/inbox", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+agentToken {
			apiError(401, "unauthenticated", "agent token required")(w, r)
			return
		}
		respond(200, `{"messages":[{"id":"S-1","from":"wilco","type":"task_delegation","subject":"T-3","body":"Fix it.\n","task_id":"T-3","attempt":2,"created_at":"2026-01-26T14:30:00Z"}]}`)(w, r)
	})
	b.mux.Handle("POST /v1/inbox/replies", respond(202, `{"interpreted":{"kind":"ack","task_id":"T-3","status":"RECEIVED","action":"assignment confirmed"}}`))

	if code := b.run("inbox", "--wait", "10s"); code != 0 {
		t.Fatalf("inbox: exit %d: %s", code, b.errb)
	}
	want := "--- S-1  task_delegation  from wilco  task T-3  attempt 2\nSubject: T-3\nFix it.\n"
	if b.out.String() != want {
		t.Errorf("inbox:\n%q\nwant\n%q", b.out, want)
	}
	b.c.stdin = strings.NewReader("[ACK] T-3 - RECEIVED\nUnderstanding: fix it\n")
	if code := b.run("reply", "-", "--to", "S-1"); code != 0 {
		t.Fatalf("reply: exit %d: %s", code, b.errb)
	}
	if got := b.body("POST /v1/inbox/replies"); got != `{"in_reply_to":"S-1","text":"[ACK] T-3 - RECEIVED\nUnderstanding: fix it"}` {
		t.Errorf("reply body %s", got)
	}
	if got := b.out.String(); got != "interpreted as ack RECEIVED (task T-3): assignment confirmed\n" {
		t.Errorf("reply printed %q", got)
	}
	if code := b.run("reply", "--type", "task-complete", "--data", `{"task_id":"T-3"}`); code != 0 {
		t.Fatal(code)
	}
	if got := b.body("POST /v1/inbox/replies"); got != `{"type":"task-complete","data":{"task_id":"T-3"}}` {
		t.Errorf("reply body %s", got)
	}

	delete(b.env, "WILCO_AGENT_TOKEN")
	if code := b.run("inbox"); code != exitFailure || !strings.Contains(b.errb.String(), "WILCO_AGENT_TOKEN") {
		t.Errorf("inbox without an agent token: exit %d, %q", code, b.errb)
	}
}

func TestOpWaitsForTheOutcome(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.mux.Handle("POST /v1/operations", respond(201, `{"id":"OP-1","operation":"restart","state":"waiting","agents":[{"name":"a","response":null},{"name":"b","response":null}],"reminders_sent":0,"created_at":"2026-01-26T14:30:00Z"}`))
	var mu sync.Mutex
	polls := 0
	states := []string{
		`{"id":"OP-1","operation":"restart","state":"waiting","agents":[{"name":"a","response":"ok"},{"name":"b","response":null}],"reminders_sent":1}`,
		`{"id":"OP-1","operation":"restart","state":"waiting","agents":[{"name":"a","response":"ok"},{"name":"b","response":"wait","extended":true}],"reminders_sent":1}`,
		`{"id":"OP-1","operation":"restart","state":"done","agents":[{"name":"a","response":"ok"},{"name":"b","response":"ok"}],"reminders_sent":1,"acknowledgment_received":true,"exit_code":0,"output":"restarted\n"}`,
	}
	b.mux.HandleFunc("GET /v1/operations/OP-1", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		s := states[min(polls, len(states)-1)]
		polls++
		mu.Unlock()
		respond(200, s)(w, r)
	})
	code := b.run("op", "restart", "--agent", "a", "--agent", "b", "--timeout", "90s", "--quorum", "all", "--", "systemctl", "restart", "x")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, b.errb)
	}
	if got := b.body("POST /v1/operations"); got != `{"operation":"restart","agents":["a","b"],"timeout":"1m30s","quorum":"all","command":["systemctl","restart","x"]}` {
		t.Errorf("body %s", got)
	}
	want := `OP-1 restart: waiting for "ok" from a, b
  reminders sent: 1
  a: ok
  b: wait
  b: ok
OP-1 restart: done (every agent answered ok; command exit 0)
restarted
`
	if b.out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.out, want)
	}
}

func TestOpFailsWhenAborted(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.mux.Handle("POST /v1/operations", respond(201, `{"id":"OP-2","operation":"upgrade","state":"waiting","agents":[{"name":"a","response":null}]}`))
	b.mux.Handle("GET /v1/operations/OP-2", respond(200, `{"id":"OP-2","operation":"upgrade","state":"aborted","agents":[{"name":"a","response":"timeout"}],"reminders_sent":3,"timeout_occurred":true,"reason":"no quorum"}`))
	if code := b.run("op", "upgrade", "--agent", "a", "--abort-on-timeout"); code != exitFailure {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(b.body("POST /v1/operations"), `"proceed_on_timeout":false`) {
		t.Errorf("body %s", b.body("POST /v1/operations"))
	}
	if !strings.Contains(b.out.String(), "OP-2 upgrade: aborted (timed out; no quorum)") {
		t.Errorf("got %s", b.out)
	}
}

// wilco status ID --detail prints the questions the task's agent asked
// scouts: who asked whom, when, the question, and the answer, the reason
// there is none, or that it is awaited. Without --detail, their number.
func TestStatusDetailShowsTheScoutsQuestionsAndAnswers(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.mux.Handle("GET /v1/tasks/T-7", respond(200, `{"id":"T-7","description":"Fix the timeout","state":"running","package":"svc/api","agent":"editor","attempt":1,"failures":[],"created_at":"2026-01-26T14:29:00Z",
		"consultations":[
		{"id":"M-4","task_id":"T-7","attempt":1,"from":"editor","scout":"reader","question":"Where is the timeout set?","state":"answered","answer":"config.go:12\nand main.go:40","asked_at":"2026-01-26T14:29:10Z","ended_at":"2026-01-26T14:29:40Z"},
		{"id":"M-6","task_id":"T-7","attempt":1,"from":"editor","scout":"reader","question":"Which test covers it?","state":"failed","error":"the scout reader did not answer within 10m0s","asked_at":"2026-01-26T14:30:00Z","ended_at":"2026-01-26T14:40:00Z"},
		{"id":"M-9","task_id":"T-7","attempt":1,"from":"editor","scout":"reader","question":"Anything else?","state":"pending","asked_at":"2026-01-26T14:41:00Z"}]}`))
	if code := b.run("status", "T-7", "--detail"); code != 0 {
		t.Fatalf("exit %d: %s", code, b.errb)
	}
	mustHave := []string{
		"  package:              svc/api\n",
		"  scout    editor asked reader (attempt 1, M-4): answered\n" +
			"    asked:            2026-01-26 14:29:10\n" +
			"    question:         Where is the timeout set?\n" +
			"    answered:         2026-01-26 14:29:40\n" +
			"    answer:           config.go:12\n" +
			"                      and main.go:40\n",
		"  scout    editor asked reader (attempt 1, M-6): failed\n" +
			"    asked:            2026-01-26 14:30:00\n" +
			"    question:         Which test covers it?\n" +
			"    failed:           2026-01-26 14:40:00\n" +
			"    error:            the scout reader did not answer within 10m0s\n",
		"  scout    editor asked reader (attempt 1, M-9): pending\n" +
			"    asked:            2026-01-26 14:41:00\n" +
			"    question:         Anything else?\n" +
			"    answer:           none yet: the scout is working on it\n",
	}
	for _, want := range mustHave {
		if !strings.Contains(b.out.String(), want) {
			t.Errorf("status --detail does not hold\n%s\ngot:\n%s", want, b.out)
		}
	}
	if code := b.run("status", "T-7"); code != 0 || !strings.Contains(b.out.String(), "scouts:               3 question(s) asked (--detail shows them)") ||
		strings.Contains(b.out.String(), "Where is the timeout set?") {
		t.Errorf("status without --detail: exit %d\n%s", code, b.out)
	}
}

func TestTaskVerbs(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	task := `{"id":"T-3","description":"Fix the login timeout","state":"running","phase":"verifying","agent":"claude","position":null,"attempt":2,"consecutive_failures":1,"total_verify_loops":1,"replans":0,"milestone":"Running verification...","questions":[],"escalation":null,"failures":[{"attempt":1,"timestamp":"2026-01-26T14:30:00Z","failure_type":"verification_failed","run_id":"R-1","executor_output":{"status":"failure","files_modified":["a.go"],"verification":{"command":"go test ./...","exit_code":1,"output_summary":"2 tests failed"}},"root_cause_guess":"nil map","suggested_fix":"make the map"}],"summary":null,"stuck_report":null,"created_at":"2026-01-26T14:29:00Z","started_at":"2026-01-26T14:29:30Z","finished_at":null}`
	b.mux.Handle("POST /v1/tasks", respond(201, `{"id":"T-4","description":"x","state":"queued","position":2,"created_at":"2026-01-26T14:30:00Z"}`))
	b.mux.Handle("GET /v1/tasks/T-3", respond(200, task))
	b.mux.Handle("GET /v1/tasks", respond(200, `{"tasks":[`+task+`]}`))
	b.mux.Handle("GET /v1/queue", respond(200, `{"tasks":[{"id":"T-4","position":1,"description":"Add a flag"},{"id":"T-5","position":2,"description":"Remove it"}]}`))
	b.mux.HandleFunc("POST /v1/tasks/T-4/cancel", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	b.mux.Handle("POST /v1/tasks/T-3/cancel", respond(200, strings.Replace(task, `"running"`, `"cancelled"`, 1)))
	b.mux.Handle("POST /v1/tasks/T-3/respond", respond(200, task))
	b.mux.HandleFunc("GET /v1/tasks/T-3/diff", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/x-diff")
		_, _ = io.WriteString(w, "--- a/x.go\n+++ b/x.go\n")
	})

	if code := b.run("submit", "Add a flag", "--constraint", "keep the API", "--constraint", "no deps", "--criteria", "tests pass", "--dry-run", "--id", "T-4"); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, b.errb)
	}
	if got := b.body("POST /v1/tasks"); got != `{"description":"Add a flag","constraints":["keep the API","no deps"],"acceptance_criteria":["tests pass"],"dry_run":true,"id":"T-4"}` {
		t.Errorf("submit body %s", got)
	}
	if b.out.String() != "T-4 queued (position 2)\n" {
		t.Errorf("submit printed %q", b.out)
	}
	if code := b.run("queue"); code != 0 || b.out.String() != "POS  ID   DESCRIPTION\n1    T-4  Add a flag\n2    T-5  Remove it\n" {
		t.Errorf("queue: exit %d\n%s", code, b.out)
	}
	if code := b.run("status"); code != 0 || !strings.Contains(b.out.String(), "T-3  running/verifying  claude  2        Running verification...  Fix the login timeout") {
		t.Errorf("status: exit %d\n%s", code, b.out)
	}
	if code := b.run("status", "T-3"); code != 0 || !strings.Contains(b.out.String(), "failure  attempt 1: verification_failed (run R-1): 2 tests failed") {
		t.Errorf("status T-3: exit %d\n%s", code, b.out)
	}
	if code := b.run("status", "T-3", "--detail"); code != 0 || !strings.Contains(b.out.String(), "suggested fix:    make the map") ||
		!strings.Contains(b.out.String(), "command:          go test ./... (exit 1)") {
		t.Errorf("status --detail: exit %d\n%s", code, b.out)
	}
	if code := b.run("cancel", "T-4"); code != 0 || b.out.String() != "T-4 removed from the queue\n" {
		t.Errorf("cancel queued: exit %d %q", code, b.out)
	}
	if code := b.run("cancel", "T-3"); code != 0 || b.out.String() != "T-3 cancelled\n" {
		t.Errorf("cancel running: exit %d %q", code, b.out)
	}
	if code := b.run("respond", "T-3", "fix", "use a map"); code != 0 || b.body("POST /v1/tasks/T-3/respond") != `{"action":"fix","instruction":"use a map"}` {
		t.Errorf("respond: exit %d, body %s", code, b.body("POST /v1/tasks/T-3/respond"))
	}
	if code := b.run("diff", "T-3"); code != 0 || b.out.String() != "--- a/x.go\n+++ b/x.go\n" {
		t.Errorf("diff: exit %d %q", code, b.out)
	}
	if code := b.run("stats", "--json"); code != exitFailure {
		// GET /v1/stats is not served by this fake yet: stats fails.
		t.Errorf("stats: exit %d", code)
	}
	b.mux.Handle("GET /v1/stats", respond(200, `{"summary":{"total_tasks":1,"retried_tasks":1,"text":"## Retry Summary for all tasks\n| Retried tasks | 1 (100%) |\n- verification_failed: 1 occurrences\n"},"retry_state":{},"failed_instructions":2,"failed_deliveries":0}`))
	if code := b.run("stats"); code != 0 || !strings.Contains(b.out.String(), "| Retried tasks | 1 (100%) |") ||
		!strings.Contains(b.out.String(), "verification_failed: 1 occurrences") || !strings.Contains(b.out.String(), "failed instructions: 2") {
		t.Errorf("stats: exit %d\n%s", code, b.out)
	}
	if code := b.run("stats", "--json"); code != 0 || !strings.Contains(b.out.String(), `"retried_tasks": 1`) {
		t.Errorf("stats --json: exit %d\n%s", code, b.out)
	}
}

func TestPlanSubmitReadsYAML(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.mux.Handle("POST /v1/plans", respond(201, `{"id":"03-01","state":"queued","tasks":[{"id":"03-01:task-1","state":"queued"},{"id":"03-01:task-2","state":"queued"}]}`))
	plan := "id: \"03-01\"\ntasks:\n  - description: Add the parser\n    acceptance_criteria: [fuzzed]\n  - description: Use it\n    depends_on: [1]\n"
	if err := os.WriteFile(b.c.wd+"/plan.yaml", []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := b.run("plan", "submit", "plan.yaml"); code != 0 {
		t.Fatalf("exit %d: %s", code, b.errb)
	}
	if got := b.body("POST /v1/plans"); got != `{"id":"03-01","tasks":[{"description":"Add the parser","acceptance_criteria":["fuzzed"]},{"description":"Use it","depends_on":[1]}]}` {
		t.Errorf("body %s", got)
	}
	if !strings.Contains(b.out.String(), "plan 03-01 queued: 2 tasks") {
		t.Errorf("printed %s", b.out)
	}
	if err := os.WriteFile(b.c.wd+"/bad.json", []byte(`{"id":"x","tasks":[{"descripton":"typo"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := b.run("plan", "submit", "bad.json"); code != exitFailure || !strings.Contains(b.errb.String(), "descripton") {
		t.Errorf("a plan with an unknown field: exit %d, %q", code, b.errb)
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func TestNotifyLogListsNotificationsAndTheirLastAttempt(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	var query string
	b.mux.HandleFunc("GET /v1/notifications", func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		query = r.URL.RawQuery
		b.mu.Unlock()
		respond(200, `{"notifications":[
 {"id":"N-3","hook":"ops","event":"stuck","task_id":"T-2","task_state":"stuck","reason":"hard stop","state":"pending","attempts":2,"max_attempts":10,
  "last_error":"HTTP 500: oops","last_status":500,"created_at":"2026-01-26T14:31:00Z","next_attempt_at":"2026-01-26T14:31:04Z","delivered_at":null},
 {"id":"N-2","hook":"desktop","event":"operation","task_id":"","operation_id":"OP-1","task_state":"waiting","reason":"r","state":"failed","attempts":10,"max_attempts":10,
  "last_error":"notify-send: exit status 1","last_status":null,"created_at":"2026-01-26T14:30:30Z","delivered_at":null},
 {"id":"N-1","hook":"ops","event":"escalated","task_id":"T-1","task_state":"escalated","reason":"r","state":"delivered","attempts":3,"max_attempts":10,
  "last_error":"","last_status":200,"created_at":"2026-01-26T14:30:00Z","delivered_at":"2026-01-26T14:30:03Z"}]}`)(w, r)
	})
	if code := b.run("notify", "log", "--state", "pending", "--hook", "ops", "--limit", "5"); code != 0 {
		t.Fatalf("exit %d: %s", code, b.errb)
	}
	want := "ID   CREATED              HOOK     EVENT      ABOUT  STATE      ATTEMPTS  LAST\n" +
		"N-3  2026-01-26 14:31:00  ops      stuck      T-2    pending    2/10      HTTP 500: oops; next 2026-01-26 14:31:04\n" +
		"N-2  2026-01-26 14:30:30  desktop  operation  OP-1   failed     10/10     notify-send: exit status 1\n" +
		"N-1  2026-01-26 14:30:00  ops      escalated  T-1    delivered  3/10      delivered (200)\n"
	if b.out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.out, want)
	}
	b.mu.Lock()
	q := query
	b.mu.Unlock()
	if q != "hook=ops&limit=5&state=pending" {
		t.Errorf("query %q", q)
	}
	if code := b.run("notify", "log", "--json"); code != 0 {
		t.Fatal(code)
	}
	var got struct {
		Notifications []map[string]any `json:"notifications"`
	}
	if err := json.Unmarshal(b.out.Bytes(), &got); err != nil || len(got.Notifications) != 3 || got.Notifications[0]["last_status"] != float64(500) {
		t.Errorf("--json printed %s (%v)", b.out, err)
	}
}

// TestOpInstallSendsItsPathFromTheWorkingDirectory: install-skill and
// install-plugin send the path of what they install absolute, a relative
// one taken from the working directory.
func TestOpInstallSendsItsPathFromTheWorkingDirectory(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ arg, want string }{{"skills/review", "/home/me/repo/skills/review"}, {"/opt/skills/../plugins/x", "/opt/plugins/x"}} {
		b := setupCLI(t)
		b.c.wd = "/home/me/repo"
		b.mux.Handle("POST /v1/operations", respond(201, `{"id":"OP-3","operation":"install-skill","state":"waiting","agents":[{"name":"a","response":null}]}`))
		if code := b.run("op", "install-skill", c.arg, "--agent", "a", "--detach"); code != 0 {
			t.Fatalf("exit %d: %s", code, b.errb)
		}
		if got := b.body("POST /v1/operations"); !strings.Contains(got, `"target":"`+c.want+`"`) {
			t.Errorf("%s: body %s", c.arg, got)
		}
	}
}
