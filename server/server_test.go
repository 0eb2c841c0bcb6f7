package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"wilco/config"
	"wilco/core"
	"wilco/runtime"
	"wilco/wire"
)

func TestHealthzNeedsNoToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.must(200, b.call("GET", "/healthz", "", nil))
	if r.json(t)["status"] != "ok" {
		t.Fatalf("healthz %s", r.body)
	}
}

func TestErrorTableMapsEveryKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err    error
		status int
		code   wire.Code
	}{
		{&core.Error{Code: core.Invalid, Msg: "x"}, 400, wire.CodeInvalidArgument},
		{&core.Error{Code: core.NotFound, Msg: "x"}, 404, wire.CodeNotFound},
		{&core.Error{Code: core.Conflict, Msg: "x"}, 409, wire.CodeConflict},
		{&core.Error{Code: core.PermissionDenied, Msg: "x"}, 403, wire.CodePermissionDenied},
		{fmt.Errorf("wrapped: %w", &core.Error{Code: core.Conflict, Msg: "x"}), 409, wire.CodeConflict},
		{Errorf(wire.CodeUnauthenticated, "x"), 401, wire.CodeUnauthenticated},
		{Errorf(wire.CodePermissionDenied, "x"), 403, wire.CodePermissionDenied},
		{invalidf("x"), 400, wire.CodeInvalidArgument},
		{&http.MaxBytesError{Limit: MaxBody}, 413, wire.CodeTooLarge},
		{Errorf(wire.CodeMethodNotAllowed, "x"), 405, wire.CodeMethodNotAllowed},
		{runtime.ErrClosed, 503, wire.CodeUnavailable},
		{fmt.Errorf("%w: %w", runtime.ErrStopped, errors.New("runtime: commit: disk I/O error")), 503, wire.CodeUnavailable},
		{context.Canceled, 503, wire.CodeUnavailable},
		{errors.New("disk on fire"), 500, wire.CodeInternal},
	}
	for _, tt := range tests {
		status, code := classify(tt.err)
		if status != tt.status || code != tt.code {
			t.Errorf("%v: got %d %s, want %d %s", tt.err, status, code, tt.status, tt.code)
		}
	}
	if msg := message(errors.New("/secret/path: driver said no"), wire.CodeInternal); strings.Contains(msg, "secret") {
		t.Errorf("an internal error leaks its text: %q", msg)
	}
	if msg := message(fmt.Errorf("%w: %w", runtime.ErrStopped, errors.New("/secret/path: disk I/O error")), wire.CodeUnavailable); strings.Contains(msg, "secret") {
		t.Errorf("a stopped loop's failure leaks its text: %q", msg)
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	b := setup(t)
	agentTok := b.agent("alpha")
	tests := []struct {
		name, method, path string
		header             []string
		status             int
		code               string
	}{
		{"no token", "GET", "/v1/agents", nil, 401, "unauthenticated"},
		{"unknown token", "GET", "/v1/agents", []string{"Authorization", "Bearer nope"}, 401, "unauthenticated"},
		{"basic auth", "GET", "/v1/agents", []string{"Authorization", "Basic " + adminToken}, 401, "unauthenticated"},
		{"bearer without token", "GET", "/v1/agents", []string{"Authorization", "Bearer "}, 401, "unauthenticated"},
		{"agent token on control API", "GET", "/v1/agents", []string{"Authorization", "Bearer " + agentTok}, 403, "permission_denied"},
		{"admin token on the agent's side", "GET", "/v1/inbox", []string{"Authorization", "Bearer " + adminToken}, 403, "permission_denied"},
		{"agent token on metrics", "GET", "/metrics", []string{"Authorization", "Bearer " + agentTok}, 403, "permission_denied"},
		{"no token on inbox", "GET", "/v1/inbox", nil, 401, "unauthenticated"},
		{"admin", "GET", "/v1/agents", []string{"Authorization", "bearer " + adminToken}, 200, ""},
		{"agent", "GET", "/v1/inbox", []string{"Authorization", "Bearer " + agentTok}, 200, ""},
		{"openapi is public", "GET", "/openapi.json", nil, 200, ""},
	}
	for _, tt := range tests {
		r := b.call(tt.method, tt.path, "", nil, tt.header...)
		if r.status != tt.status {
			t.Errorf("%s: status %d, want %d: %s", tt.name, r.status, tt.status, r.body)
			continue
		}
		if tt.code != "" && r.code(t) != tt.code {
			t.Errorf("%s: code %q, want %q", tt.name, r.code(t), tt.code)
		}
		if tt.status == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: 401 without WWW-Authenticate", tt.name)
		}
	}
}

// TestAValidTokenOfAStoppedLoopIsUnavailableNotUnknown: once the
// runtime's loop stopped — a commit the store refused, or wilco shutting
// down — an agent's valid token is answered 503 unavailable, as the admin
// token is, never 401 "unknown token" (an agent told so may give up or
// get a new token); and reads answer 503, not an empty list or a 404.
func TestAValidTokenOfAStoppedLoopIsUnavailableNotUnknown(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, b *testBundle, agentTok, want string) {
		t.Helper()
		for _, c := range []struct{ method, path, token string }{
			{"GET", "/v1/inbox", agentTok},
			{"POST", "/v1/inbox/replies", agentTok},
			{"POST", "/mcp", agentTok},
			{"GET", "/v1/agents/alpha", adminToken},
			{"GET", "/v1/agents", adminToken},
			{"GET", "/v1/tasks", adminToken},
			{"GET", "/v1/tasks/T-1", adminToken},
			{"GET", "/v1/queue", adminToken},
			{"GET", "/v1/messages", adminToken},
			{"GET", "/v1/instructions", adminToken},
			{"GET", "/v1/operations", adminToken},
			{"GET", "/v1/notifications", adminToken},
			{"GET", "/v1/stats", adminToken},
			{"GET", "/v1/stats/daily", adminToken},
		} {
			var body any
			if c.method == "POST" {
				body = map[string]any{"in_reply_to": "M-1", "text": "ok"}
			}
			r := b.call(c.method, c.path, c.token, body)
			if r.status != 503 || r.code(t) != "unavailable" || !strings.Contains(r.text(), want) {
				t.Errorf("%s %s: %d %s, want 503 unavailable saying %q", c.method, c.path, r.status, r.body, want)
			}
		}
		// Without the loop no token but the admin's can be told apart:
		// one nobody has is not called unknown either.
		if r := b.call("GET", "/v1/tasks", "nope", nil); r.status != 503 {
			t.Errorf("a token nobody has: %d %s, want 503 (the agents' tokens cannot be read)", r.status, r.body)
		}
	}
	t.Run("a failed commit", func(t *testing.T) {
		t.Parallel()
		b := setup(t, setupOpts{breakable: true})
		tok := b.agent("alpha")
		b.must(201, b.call("POST", "/v1/tasks", adminToken, map[string]any{"id": "T-1", "description": "x"}))
		b.must(200, b.call("GET", "/v1/inbox", tok, nil))
		b.broken.broken.Store(true)
		r := b.call("POST", "/v1/tasks", adminToken, map[string]any{"id": "T-2", "description": "y"})
		if r.status != 503 {
			t.Fatalf("the failing commit: %d %s, want 503", r.status, r.body)
		}
		if strings.Contains(string(r.body), errBroken.Error()) {
			t.Errorf("the failure's own text reached the client: %s", r.body)
		}
		check(t, b, tok, "loop stopped")
		if r := b.call("GET", "/healthz", "", nil); r.status != 503 {
			t.Errorf("/healthz of a stopped loop: %d %s", r.status, r.body)
		}
	})
	t.Run("a closed runtime", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tok := b.agent("alpha")
		b.must(201, b.call("POST", "/v1/tasks", adminToken, map[string]any{"id": "T-1", "description": "x"}))
		if err := b.rt.Close(); err != nil {
			t.Fatal(err)
		}
		check(t, b, tok, "shutting down")
	})
}

func TestTokenRotationStopsTheOldTokenAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	old := b.agent("alpha")
	b.must(200, b.call("GET", "/v1/inbox", old, nil))
	var out struct{ Token string }
	b.must(200, b.call("POST", "/v1/agents/alpha/token", adminToken, nil), &out)
	if out.Token == "" || out.Token == old {
		t.Fatalf("new token %q", out.Token)
	}
	if r := b.call("GET", "/v1/inbox", old, nil); r.status != 401 {
		t.Fatalf("old token still works: %d %s", r.status, r.body)
	}
	b.must(200, b.call("GET", "/v1/inbox", out.Token, nil))
	a := b.must(200, b.call("GET", "/v1/agents/alpha", adminToken, nil)).json(t)
	if _, leaked := a["token_hash"]; leaked || a["has_token"] != true {
		t.Fatalf("agent view %v", a)
	}
	if r := b.call("POST", "/v1/agents/nobody/token", adminToken, nil); r.status != 404 || r.code(t) != "not_found" {
		t.Fatalf("rotate unknown agent: %d %s", r.status, r.body)
	}
}

func TestCreateAgent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var out wire.CreatedAgent
	r := b.must(201, b.call("POST", "/v1/agents", adminToken, map[string]any{"name": "remote-1", "adapter": "mailbox", "capabilities": []string{"go"}}), &out)
	if out.Agent.Status != wire.AgentAvailable || !out.Agent.Pull || out.Agent.Capabilities[0] != "go" || len(out.Token) < 32 {
		t.Fatalf("created %+v", out)
	}
	if r.header.Get("Location") != "/v1/agents/remote-1" {
		t.Errorf("Location %q", r.header.Get("Location"))
	}
	b.must(201, b.call("POST", "/v1/agents", adminToken, map[string]any{"name": "cc", "adapter": "exec", "preset": "claude-code", "timeout": "30m"}))
	bad := []struct {
		body any
		want string
	}{
		{map[string]any{"name": "remote-1", "adapter": "mailbox"}, "already exists"},
		{map[string]any{"name": "x", "adapter": "ssh"}, "adapter: must be one of exec, mailbox, tmux"},
		{map[string]any{"name": "x y", "adapter": "mailbox"}, "name \"x y\""},
		{map[string]any{"name": "x", "adapter": "mailbox", "command": []string{"a"}}, "command: applies to adapter exec and tmux only"},
		{map[string]any{"name": "x", "adapter": "exec"}, "command: required"},
		{map[string]any{"name": "wilco", "adapter": "mailbox"}, "orchestrator"},
		{map[string]any{"name": "x", "adapter": "exec", "command": []string{"a"}, "timeout": "soon"}, "timeout: want a Go duration"},
		{map[string]any{"name": "x", "adapter": "mailbox", "capability": []string{"go"}}, `unknown field "capability"`},
	}
	for _, tt := range bad {
		r := b.call("POST", "/v1/agents", adminToken, tt.body)
		if r.status/100 != 4 || !strings.Contains(r.text(), tt.want) {
			t.Errorf("%v: %d %s, want %q", tt.body, r.status, r.body, tt.want)
		}
	}
	var list struct{ Agents []wire.Agent }
	b.must(200, b.call("GET", "/v1/agents", adminToken, nil), &list)
	if len(list.Agents) != 2 {
		t.Fatalf("agents %+v", list.Agents)
	}
}

func TestStrictJSON(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alpha")
	tests := []struct {
		name, body string
		status     int
		want       string
	}{
		{"malformed", `{"agent": "alpha", "content": `, 400, "malformed JSON"},
		{"syntax", `{"agent": "alpha" "content": "x"}`, 400, "malformed JSON at byte"},
		{"unknown field", `{"agent": "alpha", "content": "x", "priority": 1}`, 400, `unknown field "priority"`},
		{"trailing data", `{"agent": "alpha", "content": "x"} {}`, 400, "data after its JSON object"},
		{"trailing garbage", `{"agent": "alpha", "content": "x"}x`, 400, "data after"},
		{"wrong type", `{"agent": "alpha", "content": 5}`, 400, `field "content": want a string, got number`},
		{"array", `[{"agent": "alpha"}]`, 400, "must be a JSON object"},
		{"null", `null`, 400, "must be a JSON object"},
		{"empty", ``, 400, "empty"},
		{"oversize", `{"agent": "alpha", "content": "` + strings.Repeat("x", MaxBody) + `"}`, 413, "larger than"},
	}
	for _, tt := range tests {
		before := b.head()
		r := b.call("POST", "/v1/instructions", adminToken, tt.body)
		if r.status != tt.status || !strings.Contains(r.text(), tt.want) {
			t.Errorf("%s: %d %s, want %d %q", tt.name, r.status, r.body, tt.status, tt.want)
		}
		if b.head() != before {
			t.Errorf("%s: the refused request changed the state", tt.name)
		}
	}
}

func TestUnknownRoutesAndMethods(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("GET", "/v1/nope", adminToken, nil)
	if r.status != 404 || r.code(t) != "not_found" {
		t.Fatalf("unknown route: %d %s", r.status, r.body)
	}
	r = b.call("DELETE", "/v1/agents", adminToken, nil)
	if r.status != 405 || r.code(t) != "method_not_allowed" || !strings.Contains(r.header.Get("Allow"), "GET") {
		t.Fatalf("wrong method: %d %v %s", r.status, r.header, r.body)
	}
	if r := b.call("GET", "/v1/agents?stauts=busy", adminToken, nil); r.status != 400 || !strings.Contains(string(r.body), "stauts") {
		t.Fatalf("unknown query parameter: %d %s", r.status, r.body)
	}
}

// An instruction is sent once per dispatch cycle: max_retries 2 is three
// sends, and at the next cycle it fails.
func TestInstructionRetriedEachCycleThenFailed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tok := b.agent("alpha")
	var ins wire.Instruction
	b.must(201, b.call("POST", "/v1/instructions", adminToken, map[string]any{"agent": "alpha", "content": "List the openspec directory", "max_retries": 2}), &ins)
	if ins.State != wire.DeliveryPending || ins.MaxRetries != 2 {
		t.Fatalf("created %+v", ins)
	}
	for attempt := 1; attempt <= 3; attempt++ {
		msgs := b.inbox(tok)
		if len(msgs) != 1 || msgs[0].InstructionID != ins.ID || msgs[0].Attempt != attempt || msgs[0].Body != "List the openspec directory" {
			t.Fatalf("cycle %d: %+v", attempt, msgs)
		}
	}
	if msgs := b.inbox(tok); len(msgs) != 0 {
		t.Fatalf("fourth cycle sent %+v", msgs)
	}
	var list struct{ Instructions []wire.Instruction }
	b.must(200, b.call("GET", "/v1/instructions?state=failed", adminToken, nil), &list)
	if len(list.Instructions) != 1 || list.Instructions[0].RetryCount != 2 || list.Instructions[0].FailedAt == nil {
		t.Fatalf("failed instructions %+v", list.Instructions)
	}
	if r := b.call("POST", "/v1/instructions/"+ins.ID+"/ack", adminToken, nil); r.status != 409 || r.code(t) != "conflict" {
		t.Fatalf("ack of a failed instruction: %d %s", r.status, r.body)
	}
	if r := b.call("GET", "/v1/instructions?state=waiting", adminToken, nil); r.status != 400 {
		t.Fatalf("bad state filter: %d", r.status)
	}
}

func TestInstructionAcknowledgedByMatcherAndByCaller(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tok := b.agent("alpha")
	var a, c wire.Instruction
	b.must(201, b.call("POST", "/v1/instructions", adminToken, map[string]any{"agent": "alpha", "content": "Is the openspec CLI there?", "ack_when": map[string]string{"contains": "openspec"}}), &a)
	b.must(201, b.call("POST", "/v1/instructions", adminToken, map[string]any{"agent": "alpha", "content": "Report the OS"}), &c)
	if got := b.inbox(tok); len(got) != 2 {
		t.Fatalf("inbox %+v", got)
	}
	var out struct{ Interpreted core.Interpretation }
	b.must(202, b.call("POST", "/v1/inbox/replies", tok, map[string]any{"text": "found openspec 1.2 in PATH"}), &out)
	if len(out.Interpreted.Acknowledged) != 1 || out.Interpreted.Acknowledged[0] != a.ID {
		t.Fatalf("interpreted %+v", out.Interpreted)
	}
	b.must(200, b.call("POST", "/v1/instructions/"+c.ID+"/ack", adminToken, nil), &c)
	if c.State != wire.DeliveryAcknowledged || c.AcknowledgedAt == nil {
		t.Fatalf("acked %+v", c)
	}
	if r := b.call("POST", "/v1/instructions/M-1/ack", adminToken, nil); r.status != 404 {
		t.Fatalf("ack of a non-instruction: %d %s", r.status, r.body)
	}
}

func TestInboxLongPollWakesOnNewMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tok := b.agent("alpha")
	type result struct {
		r   response
		dur time.Duration
	}
	for _, kind := range []string{"message", "instruction"} {
		done := make(chan result, 1)
		start := time.Now()
		go func() {
			r := b.call("GET", "/v1/inbox?wait=20s", tok, nil)
			done <- result{r, time.Since(start)}
		}()
		// The poll is waiting once its empty cycle is committed: no event,
		// so wait for the poller to be parked on the signal instead.
		eventually(t, "the long-poll to wait", func() bool { return b.srv.waiting("alpha") })
		if kind == "message" {
			b.must(201, b.call("POST", "/v1/messages", adminToken, map[string]any{"to": "alpha", "body": "How is it going?"}))
		} else {
			b.must(201, b.call("POST", "/v1/instructions", adminToken, map[string]any{"agent": "alpha", "content": "Report the OS"}))
		}
		res := <-done
		var out struct{ Messages []core.InboxMessage }
		b.must(200, res.r, &out)
		if len(out.Messages) != 1 || res.dur > 15*time.Second {
			t.Fatalf("%s: woke after %s with %+v", kind, res.dur, out.Messages)
		}
	}
	r := b.must(200, b.call("GET", "/v1/inbox?wait=30ms", b.agent("quiet"), nil))
	if !strings.Contains(string(r.body), `"messages":[]`) {
		t.Fatalf("empty poll %s", r.body)
	}
	for _, q := range []string{"wait=forever", "wait=-1s", "wait=1h"} {
		if r := b.call("GET", "/v1/inbox?"+q, tok, nil); r.status != 400 {
			t.Errorf("%s: %d", q, r.status)
		}
	}
}

func TestReplyOnlyToOwnMessages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	alpha, beta := b.agent("alpha"), b.agent("beta")
	var m wire.Message
	b.must(201, b.call("POST", "/v1/messages", adminToken, map[string]any{"to": "alpha", "type": "task_delegation", "task_id": "T-1", "body": "Add a --json flag."}), &m)
	before := b.head()
	r := b.call("POST", "/v1/inbox/replies", beta, map[string]any{"in_reply_to": m.ID, "text": "[ACK] T-1 - RECEIVED\nUnderstanding: add the flag"})
	if r.status != 403 || r.code(t) != "permission_denied" || b.head() != before {
		t.Fatalf("beta answering alpha's message: %d %s (head %d → %d)", r.status, r.body, before, b.head())
	}
	r = b.call("POST", "/v1/inbox/replies", beta, map[string]any{"text": "[ACK] T-1 - RECEIVED\nUnderstanding: add the flag"})
	if r.status != 403 || b.head() != before {
		t.Fatalf("beta acknowledging alpha's task: %d %s", r.status, r.body)
	}
	var out struct{ Interpreted core.Interpretation }
	b.must(202, b.call("POST", "/v1/inbox/replies", alpha, map[string]any{"text": "[ACK] T-1 - RECEIVED\nUnderstanding: add a --json flag"}), &out)
	if out.Interpreted.Kind != "ack" || out.Interpreted.DeliveryID != m.ID {
		t.Fatalf("interpreted %+v", out.Interpreted)
	}
	if got := b.delivery(m.ID); got.State != core.Acknowledged {
		t.Fatalf("state %s", got.State)
	}
	bad := []map[string]any{
		{},
		{"type": "task-acknowledgment"},
		{"type": "task-acknowledgment", "data": []int{1}},
		{"type": "task-acknowledgment", "data": map[string]any{"task_id": "T-1", "status": "maybe"}},
		{"text": "[ACK] T-1 - RECEIVED", "extra": true},
	}
	for _, body := range bad {
		before := b.head()
		if r := b.call("POST", "/v1/inbox/replies", alpha, body); r.status != 400 || b.head() != before {
			t.Errorf("%v: %d %s", body, r.status, r.body)
		}
	}
}

func TestClarificationRoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tok := b.agent("alpha")
	var m wire.Message
	b.must(201, b.call("POST", "/v1/messages", adminToken, map[string]any{"to": "alpha", "body": "## Task: GH-42\nImplement JWT auth.\n\n## Acceptance Criteria\n- [ ] login endpoint"}), &m)
	if m.Type != wire.TypeDelegation || m.TaskID != "GH-42" || m.Policy != wire.PolicyBackoff {
		t.Fatalf("classified %+v", m)
	}
	msgs := b.inbox(tok)
	if len(msgs) != 1 || !strings.Contains(msgs[0].Body, "ACKNOWLEDGMENT REQUIRED: Reply with [ACK] GH-42 - RECEIVED") {
		t.Fatalf("delegation %+v", msgs)
	}
	b.must(202, b.call("POST", "/v1/inbox/replies", tok, map[string]any{"type": "task-acknowledgment",
		"data": map[string]any{"task_id": "GH-42", "status": "needs-clarification", "questions": []string{"24h or 7 days?"}}}))
	b.must(200, b.call("GET", "/v1/messages/"+m.ID, adminToken, nil), &m)
	if m.State != wire.DeliveryClarifying || len(m.Questions) != 1 {
		t.Fatalf("after questions %+v", m)
	}
	if r := b.call("POST", "/v1/messages/"+m.ID+"/clarify", adminToken, map[string]any{"answers": []string{}}); r.status != 400 {
		t.Fatalf("empty answers: %d", r.status)
	}
	b.must(200, b.call("POST", "/v1/messages/"+m.ID+"/clarify", adminToken, map[string]any{"answers": []string{"24 hours"}}))
	msgs = b.inbox(tok)
	if len(msgs) != 1 || msgs[0].Type != string(core.SendClarification) || !strings.Contains(msgs[0].Body, "24 hours") {
		t.Fatalf("clarification %+v", msgs)
	}
	b.must(202, b.call("POST", "/v1/inbox/replies", tok, map[string]any{"text": "[ACK] GH-42 - RECEIVED\nUnderstanding: JWT auth with a login endpoint, 24 hours"}))
	b.must(200, b.call("GET", "/v1/messages/"+m.ID, adminToken, nil), &m)
	if m.State != wire.DeliveryAcknowledged {
		t.Fatalf("after answers %+v", m)
	}
	if r := b.call("POST", "/v1/messages/"+m.ID+"/clarify", adminToken, map[string]any{"answers": []string{"x"}}); r.status != 409 {
		t.Fatalf("clarify an acknowledged message: %d %s", r.status, r.body)
	}
}

func TestOperationWaitsForOK(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tok := b.agent("alpha")
	var op wire.Operation
	b.must(201, b.call("POST", "/v1/operations", adminToken, map[string]any{"operation": "skill-install", "agents": []string{"alpha"},
		"message": "install the security-audit skill", "timeout": "1m", "reminders": []string{"20s"}}), &op)
	if op.State != wire.OperationWaiting || op.Timeout.String() != "1m0s" || len(op.Agents) != 1 || op.Agents[0].Response != nil {
		t.Fatalf("started %+v", op)
	}
	msgs := b.inbox(tok)
	if len(msgs) != 1 || msgs[0].OperationID != op.ID || msgs[0].Type != string(core.TypePreOperation) {
		t.Fatalf("pre-operation %+v", msgs)
	}
	var out struct{ Interpreted core.Interpretation }
	b.must(202, b.call("POST", "/v1/inbox/replies", tok, map[string]any{"text": "ok"}), &out)
	if out.Interpreted.Kind != "operation_reply" || out.Interpreted.Status != "ok" {
		t.Fatalf("interpreted %+v", out.Interpreted)
	}
	b.must(200, b.call("GET", "/v1/operations/"+op.ID, adminToken, nil), &op)
	if op.State != wire.OperationDone || !op.AcknowledgmentReceived || op.Agents[0].Response == nil || *op.Agents[0].Response != "ok" || op.FinishedAt == nil {
		t.Fatalf("after ok %+v", op)
	}
	if r := b.call("POST", "/v1/operations/"+op.ID+"/cancel", adminToken, nil); r.status != 409 {
		t.Fatalf("cancel a done operation: %d", r.status)
	}
	bad := []map[string]any{
		{"operation": "restart", "agents": []string{}},
		{"operation": "restart", "agents": []string{"ghost"}},
		{"operation": "restart", "agents": []string{"alpha"}, "timeout": "2 minutes"},
		{"operation": "restart", "agents": []string{"alpha"}, "reminders": []string{"3m"}},
		{"operation": "restart", "agents": []string{"alpha"}, "quorum": "most"},
	}
	for _, body := range bad {
		before := b.head()
		if r := b.call("POST", "/v1/operations", adminToken, body); r.status/100 != 4 || b.head() != before {
			t.Errorf("%v: %d %s", body, r.status, r.body)
		}
	}
}

func TestAgentsListFiltersByStatus(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: func() *config.Config {
		c := config.Default()
		c.Agents = []config.Agent{{Name: "cfg-1", Adapter: "mailbox"}}
		return c
	}()})
	b.agent("alpha")
	var list struct{ Agents []wire.Agent }
	b.must(200, b.call("GET", "/v1/agents?status=available", adminToken, nil), &list)
	if len(list.Agents) != 2 || list.Agents[0].Name != "alpha" || list.Agents[1].HasToken {
		t.Fatalf("agents %+v", list.Agents)
	}
	b.must(200, b.call("GET", "/v1/agents?status=busy", adminToken, nil), &list)
	if len(list.Agents) != 0 {
		t.Fatalf("busy %+v", list.Agents)
	}
}
