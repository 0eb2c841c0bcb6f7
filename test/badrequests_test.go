package test

import (
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// Every bad request is refused with the documented status and error.code,
// and changes nothing: the event log does not move.
func TestBadRequestsAreRefusedAndChangeNothing(t *testing.T) {
	t.Parallel()
	in := blackbox.Serve(t, `agents:
  - {name: alpha, adapter: mailbox, capabilities: [go]}
compat: {aimaestro: true}
`)
	// Fixtures.
	alpha := in.Rotate("alpha")
	beta := in.Agent("beta")
	gammaOld := in.Agent("gamma")
	in.Rotate("gamma") // gammaOld stops working
	var deleg, conv, ackedIns, failedIns, op struct{ ID string }
	in.Must(201, in.Call("POST", "/v1/messages", blackbox.AdminToken, map[string]any{"to": "alpha", "type": "task_delegation", "task_id": "T-1", "body": "Add a --json flag."}), &deleg)
	in.Must(201, in.Call("POST", "/v1/messages", blackbox.AdminToken, map[string]any{"to": "beta", "body": "How is it going?"}), &conv)
	in.Must(201, in.Call("POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "beta", "content": "Report the OS"}), &ackedIns)
	in.Must(201, in.Call("POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "alpha", "content": "List the repo", "max_retries": 0}), &failedIns)
	var maestro struct {
		Messages []struct{ ID string }
	}
	// alpha's first dispatch cycle through AI Maestro: the delegation and
	// the instruction land in its AI Maestro inbox.
	in.Must(200, in.Call("GET", "/api/messages?agent=alpha", alpha, nil), &maestro)
	if len(maestro.Messages) != 2 {
		t.Fatalf("alpha's AI Maestro inbox %+v", maestro)
	}
	in.Inbox(alpha, 0) // the second cycle: the instruction fails (max_retries 0)
	in.Inbox(beta, 0)
	in.Must(200, in.Call("POST", "/v1/instructions/"+ackedIns.ID+"/ack", blackbox.AdminToken, nil))
	in.Must(201, in.Call("POST", "/v1/operations", blackbox.AdminToken, map[string]any{"operation": "restart", "agents": []string{"beta"}}), &op)
	in.Inbox(beta, 0)
	in.ReplyAs(beta, map[string]any{"text": "ok"}) // the operation proceeds and is done (no command)
	in.ReplyAs(beta, map[string]any{"in_reply_to": conv.ID, "text": "Fine, thanks."})
	// The restart is performed after its "ok", off the request: its end
	// is committed before the requests below count the events.
	in.Until("the restart to be done", 30*time.Second, func() bool {
		var o struct{ State string }
		in.Must(200, in.Call("GET", "/v1/operations/"+op.ID, blackbox.AdminToken, nil), &o)
		return o.State == "done"
	})

	big := `{"name": "x", "adapter": "mailbox", "capabilities": ["` + strings.Repeat("a", 1<<20) + `"]}`
	tests := []struct {
		name, method, path, token string
		body                      any
		status                    int
		code                      string
	}{
		// Malformed JSON and strictness.
		{"malformed JSON", "POST", "/v1/agents", blackbox.AdminToken, `{"name": "x", "adapter": `, 400, "invalid_argument"},
		{"JSON syntax error", "POST", "/v1/messages", blackbox.AdminToken, `{"to": "alpha" "body": "x"}`, 400, "invalid_argument"},
		{"unknown field", "POST", "/v1/agents", blackbox.AdminToken, map[string]any{"name": "x", "adapter": "mailbox", "role": "dev"}, 400, "invalid_argument"},
		{"trailing data", "POST", "/v1/instructions", blackbox.AdminToken, `{"agent": "alpha", "content": "x"} {"again": 1}`, 400, "invalid_argument"},
		{"a JSON array", "POST", "/v1/messages", blackbox.AdminToken, `[{"to": "alpha", "body": "x"}]`, 400, "invalid_argument"},
		{"an empty body", "POST", "/v1/operations", blackbox.AdminToken, ``, 400, "invalid_argument"},
		{"a field of the wrong type", "POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "alpha", "content": "x", "max_retries": "three"}, 400, "invalid_argument"},
		{"an oversize body", "POST", "/v1/agents", blackbox.AdminToken, big, 413, "too_large"},
		// Tokens.
		{"no token", "GET", "/v1/agents", "", nil, 401, "unauthenticated"},
		{"a wrong token", "POST", "/v1/messages", "wrong-token", map[string]any{"to": "alpha", "body": "x"}, 401, "unauthenticated"},
		{"a rotated token", "GET", "/v1/inbox", gammaOld, nil, 401, "unauthenticated"},
		{"a rotated token replying", "POST", "/v1/inbox/replies", gammaOld, map[string]any{"text": "ok"}, 401, "unauthenticated"},
		{"an agent's token on the control API", "POST", "/v1/instructions", alpha, map[string]any{"agent": "beta", "content": "x"}, 403, "permission_denied"},
		{"an agent rotating its own token", "POST", "/v1/agents/alpha/token", alpha, nil, 403, "permission_denied"},
		{"the admin token on the agent's side", "GET", "/v1/inbox", blackbox.AdminToken, nil, 403, "permission_denied"},
		{"metrics without a token", "GET", "/metrics", "", nil, 401, "unauthenticated"},
		// Agents.
		{"a duplicate agent", "POST", "/v1/agents", blackbox.AdminToken, map[string]any{"name": "beta", "adapter": "mailbox"}, 409, "conflict"},
		{"an unknown adapter", "POST", "/v1/agents", blackbox.AdminToken, map[string]any{"name": "x", "adapter": "carrier-pigeon"}, 400, "invalid_argument"},
		{"a bad agent name", "POST", "/v1/agents", blackbox.AdminToken, map[string]any{"name": "x/y", "adapter": "mailbox"}, 400, "invalid_argument"},
		{"the orchestrator's name", "POST", "/v1/agents", blackbox.AdminToken, map[string]any{"name": "wilco", "adapter": "mailbox"}, 400, "invalid_argument"},
		{"an unknown agent", "GET", "/v1/agents/ghost", blackbox.AdminToken, nil, 404, "not_found"},
		{"a new token for an unknown agent", "POST", "/v1/agents/ghost/token", blackbox.AdminToken, nil, 404, "not_found"},
		// Messages.
		{"a message to an unknown agent", "POST", "/v1/messages", blackbox.AdminToken, map[string]any{"to": "ghost", "body": "x"}, 404, "not_found"},
		{"an empty message", "POST", "/v1/messages", blackbox.AdminToken, map[string]any{"to": "alpha", "body": "  "}, 400, "invalid_argument"},
		{"a bad task id", "POST", "/v1/messages", blackbox.AdminToken, map[string]any{"to": "alpha", "type": "task_delegation", "task_id": "T 1", "body": "x"}, 400, "invalid_argument"},
		{"a delegation without a task id", "POST", "/v1/messages", blackbox.AdminToken, map[string]any{"to": "alpha", "type": "task_delegation", "body": "Do it."}, 400, "invalid_argument"},
		{"an unknown message type", "POST", "/v1/messages", blackbox.AdminToken, map[string]any{"to": "alpha", "type": "memo", "body": "x"}, 400, "invalid_argument"},
		{"a bad message id", "GET", "/v1/messages/M-999", blackbox.AdminToken, nil, 404, "not_found"},
		{"cancel an acknowledged message", "POST", "/v1/messages/" + conv.ID + "/cancel", blackbox.AdminToken, nil, 409, "conflict"},
		{"clarify a message that asked nothing", "POST", "/v1/messages/" + deleg.ID + "/clarify", blackbox.AdminToken, map[string]any{"answers": []string{"x"}}, 409, "conflict"},
		// Instructions.
		{"an instruction without agent", "POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"content": "x"}, 400, "invalid_argument"},
		{"an instruction with a bad regex", "POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "alpha", "content": "x", "ack_when": map[string]string{"regex": "("}}, 400, "invalid_argument"},
		{"an instruction with an empty matcher", "POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "alpha", "content": "x", "ack_when": map[string]string{}}, 400, "invalid_argument"},
		{"negative max_retries", "POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "alpha", "content": "x", "max_retries": -1}, 400, "invalid_argument"},
		{"ack a failed instruction", "POST", "/v1/instructions/" + failedIns.ID + "/ack", blackbox.AdminToken, nil, 409, "conflict"},
		{"ack an instruction twice", "POST", "/v1/instructions/" + ackedIns.ID + "/ack", blackbox.AdminToken, nil, 409, "conflict"},
		{"a bad instruction id", "GET", "/v1/instructions/I-999", blackbox.AdminToken, nil, 404, "not_found"},
		{"a message id as an instruction", "GET", "/v1/instructions/" + deleg.ID, blackbox.AdminToken, nil, 404, "not_found"},
		{"a bad state filter", "GET", "/v1/instructions?state=lost", blackbox.AdminToken, nil, 400, "invalid_argument"},
		// The agent's side.
		{"a bad wait", "GET", "/v1/inbox?wait=soon", beta, nil, 400, "invalid_argument"},
		{"a wait too long", "GET", "/v1/inbox?wait=2h", beta, nil, 400, "invalid_argument"},
		{"an agent answering another's message", "POST", "/v1/inbox/replies", beta, map[string]any{"in_reply_to": deleg.ID, "text": "[ACK] T-1 - RECEIVED\nUnderstanding: add the flag"}, 403, "permission_denied"},
		{"an agent acknowledging another's task", "POST", "/v1/inbox/replies", beta, map[string]any{"text": "[ACK] T-1 - RECEIVED\nUnderstanding: add the flag"}, 403, "permission_denied"},
		{"a reply to an unknown message", "POST", "/v1/inbox/replies", alpha, map[string]any{"in_reply_to": "M-999", "text": "done"}, 404, "not_found"},
		{"an empty reply", "POST", "/v1/inbox/replies", alpha, map[string]any{}, 400, "invalid_argument"},
		{"a JSON form without data", "POST", "/v1/inbox/replies", alpha, map[string]any{"type": "task-acknowledgment"}, 400, "invalid_argument"},
		{"data that is not an object", "POST", "/v1/inbox/replies", alpha, map[string]any{"type": "task-acknowledgment", "data": "received"}, 400, "invalid_argument"},
		{"an unknown ACK status", "POST", "/v1/inbox/replies", alpha, map[string]any{"text": "[ACK] T-1 - MAYBE\nUnderstanding: x"}, 400, "invalid_argument"},
		{"a reply to a failed instruction", "POST", "/v1/inbox/replies", alpha, map[string]any{"in_reply_to": failedIns.ID, "text": "done"}, 409, "conflict"},
		{"ok to a finished operation", "POST", "/v1/inbox/replies", beta, map[string]any{"type": "acknowledgment", "data": map[string]any{"message": "ok"}}, 404, "not_found"},
		// Operations.
		{"an operation without agents", "POST", "/v1/operations", blackbox.AdminToken, map[string]any{"operation": "restart", "agents": []string{}}, 400, "invalid_argument"},
		{"an operation for an unknown agent", "POST", "/v1/operations", blackbox.AdminToken, map[string]any{"operation": "restart", "agents": []string{"ghost"}}, 404, "not_found"},
		{"an operation with a bad timeout", "POST", "/v1/operations", blackbox.AdminToken, map[string]any{"operation": "restart", "agents": []string{"beta"}, "timeout": "2 minutes"}, 400, "invalid_argument"},
		{"a reminder after the timeout", "POST", "/v1/operations", blackbox.AdminToken, map[string]any{"operation": "restart", "agents": []string{"beta"}, "timeout": "60s", "reminders": []string{"90s"}}, 400, "invalid_argument"},
		{"an agent named twice", "POST", "/v1/operations", blackbox.AdminToken, map[string]any{"operation": "restart", "agents": []string{"beta", "beta"}}, 400, "invalid_argument"},
		{"cancel a finished operation", "POST", "/v1/operations/" + op.ID + "/cancel", blackbox.AdminToken, nil, 409, "conflict"},
		{"a bad operation id", "GET", "/v1/operations/OP-999", blackbox.AdminToken, nil, 404, "not_found"},
		// Events and routes.
		{"a bad after", "GET", "/v1/events?follow=false&after=yesterday", blackbox.AdminToken, nil, 400, "invalid_argument"},
		{"a zero limit", "GET", "/v1/events?follow=false&limit=0", blackbox.AdminToken, nil, 400, "invalid_argument"},
		{"a bad Last-Event-ID", "GET", "/v1/events", blackbox.AdminToken, nil, 400, "invalid_argument"},
		{"an unknown route", "GET", "/v1/widgets", blackbox.AdminToken, nil, 404, "not_found"},
		{"a method the route does not take", "PUT", "/v1/agents/alpha", blackbox.AdminToken, nil, 405, "method_not_allowed"},
		// AI Maestro.
		{"AI Maestro: answering another agent's message", "POST", "/api/messages", beta, map[string]any{
			"from": "beta", "to": "wilco", "subject": "Re: Task T-1", "inReplyTo": maestro.Messages[0].ID,
			"content": map[string]any{"type": "response", "message": "[ACK] T-1 - RECEIVED\nUnderstanding: add the flag"}}, 403, "permission_denied"},
		{"AI Maestro: missing fields", "POST", "/api/messages", alpha, map[string]any{"from": "alpha", "to": "wilco"}, 400, "invalid_argument"},
		{"AI Maestro: no token", "POST", "/api/messages", "", map[string]any{
			"from": "alpha", "to": "wilco", "subject": "Re: Task T-1",
			"content": map[string]any{"type": "response", "message": "[ACK] T-1 - RECEIVED\nUnderstanding: add the flag"}}, 401, "unauthenticated"},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d bad requests", len(tests))
	}
	for _, tt := range tests {
		before := in.Head()
		var header []string
		if tt.name == "a bad Last-Event-ID" {
			header = []string{"Last-Event-ID", "not-a-number"}
		}
		r := in.Call(tt.method, tt.path, tt.token, tt.body, header...)
		code := r.ErrorCode()
		if tt.path == "/api/messages" {
			var e struct{ Code string }
			r.Decode(t, &e)
			code = e.Code
		}
		if r.Status != tt.status || code != tt.code {
			t.Errorf("%s: %d %s, want %d %s: %s", tt.name, r.Status, code, tt.status, tt.code, short(r.Body))
		}
		if evs, next := in.Events(before); len(evs) != 0 || next != before {
			t.Errorf("%s: the refused request changed the state: %d events after %d (%+v…)", tt.name, len(evs), before, evs[0])
		}
	}
}

func short(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
