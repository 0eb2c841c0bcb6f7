package test

// Black-box tests of the AI Maestro-compatible routes as a remote agent
// drives them: replies shaped as AI Maestro's own code sends them, and
// the token every route needs.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// maestroMessage is the body of POST /api/messages exactly as AI Maestro
// sends it: SendMessageParams in services/messages-service.ts of
// 23blocks-OS/ai-maestro — from, to, subject, content {type, message,
// context?} with type one of request, response, notification, update;
// priority, inReplyTo, fromHost, toHost, fromAlias, toAlias optional.
func maestroMessage(from, to, subject, typ, message string, context map[string]any) map[string]any {
	content := map[string]any{"type": typ, "message": message}
	if context != nil {
		content["context"] = context
	}
	return map[string]any{"from": from, "to": to, "subject": subject, "content": content,
		"priority": "normal", "fromHost": "local", "toHost": "local", "fromAlias": from, "toAlias": to}
}

// maestroRepo serves a repository with AI Maestro's routes on and two
// mailbox agents, and returns their tokens.
func maestroRepo(t *testing.T) (*blackbox.Instance, map[string]string) {
	t.Helper()
	dir := blackbox.NewRepo(t, "agents:\n  - {name: remote, adapter: mailbox}\n  - {name: other, adapter: mailbox}\n"+blackbox.CheckStep+"compat: {aimaestro: true}\n")
	in := blackbox.ServeRepo(t, dir)
	tokens := map[string]string{}
	for _, a := range []string{"remote", "other"} {
		tokens[a] = strings.TrimSpace(in.Cli("agents", "token", a))
	}
	return in, tokens
}

// A remote agent's replies in AI Maestro's shapes — a free-form type, the
// task id only in the context or only in the text — are read from the
// message text: the ACK (task id from the context), then the completion
// report; the task is verified and succeeds.
func TestAIMaestroRepliesAreReadFromTheMessageText(t *testing.T) {
	t.Parallel()
	in, tok := maestroRepo(t)
	in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt", "agent": "remote"})
	in.WaitTask("T-1", 10*time.Second, "awaiting_ack")
	// The agent's inbox, as its check script lists it.
	if r := in.Call("GET", "/api/messages?agent=remote&box=inbox&status=unread", tok["remote"], nil); r.Status != 200 || !strings.Contains(string(r.Body), "T-1") {
		t.Fatalf("the agent's inbox: %d %s", r.Status, r.Body)
	}

	// The ACK: type "response", no task id in the text, the id in the context.
	r := in.Call("POST", "/api/messages", tok["remote"], maestroMessage("remote", "wilco", "Re: Task T-1", "response",
		"[ACK] RECEIVED\nUnderstanding: Will write the fix into file.txt", map[string]any{"taskId": "T-1"}))
	if r.Status != 201 {
		t.Fatalf("the ACK: %d %s", r.Status, r.Body)
	}
	in.WaitTask("T-1", 10*time.Second, "running")

	// The work, then the completion report as text, typed "update", the
	// task id in the context.
	writeFile(t, in.Dir, "file.txt", "fixed T-1\n")
	r = in.Call("POST", "/api/messages", tok["remote"], maestroMessage("remote", "wilco", "Re: Task T-1", "update",
		"Status: complete\nSummary: wrote the fix into file.txt", map[string]any{"task_id": "T-1"}))
	if r.Status != 201 {
		t.Fatalf("the completion report: %d %s", r.Status, r.Body)
	}
	in.WaitTask("T-1", 30*time.Second, "success")
}

// A structured form named by the type, whose fields are in the text and
// whose task id is only in the context, is read (it was a 400 "task_id
// missing"); a BLOCKED line with its reason blocks the task.
func TestAIMaestroStructuredTypeWithTheTaskIDInTheContext(t *testing.T) {
	t.Parallel()
	in, tok := maestroRepo(t)
	in.Submit(map[string]any{"id": "T-2", "description": "Write the fix into file.txt", "agent": "remote"})
	in.WaitTask("T-2", 10*time.Second, "awaiting_ack")
	r := in.Call("POST", "/api/messages", tok["remote"], maestroMessage("remote", "wilco", "Re: Task T-2", "task-acknowledgment",
		"[ACK] T-2 - RECEIVED\nUnderstanding: Will write the fix into file.txt", map[string]any{"task_id": "T-2"}))
	if r.Status != 201 {
		t.Fatalf("the ACK typed task-acknowledgment: %d %s", r.Status, r.Body)
	}
	in.WaitTask("T-2", 10*time.Second, "running")
	r = in.Call("POST", "/api/messages", tok["remote"], maestroMessage("remote", "wilco", "Re: Task T-2", "response",
		"BLOCKED: the repository needs a database password I do not have", map[string]any{"taskId": "T-2"}))
	if r.Status != 201 {
		t.Fatalf("the blocked report: %d %s", r.Status, r.Body)
	}
	in.WaitTask("T-2", 10*time.Second, "blocked")
	blackbox.MustContain(t, "wilco status T-2", in.Cli("status", "T-2"), "blocked:", "database password")
}

// A forged ACK does not start a task: without a token it is 401, with
// another agent's token 403 (it may not send as the agent), and an ACK
// sent as itself for a task delegated to someone else is refused; the
// task still waits for its agent's ACK.
func TestAIMaestroForgedAckIsRefused(t *testing.T) {
	t.Parallel()
	in, tok := maestroRepo(t)
	in.Submit(map[string]any{"id": "T-3", "description": "Write the fix into file.txt", "agent": "remote"})
	in.WaitTask("T-3", 10*time.Second, "awaiting_ack")
	forged := maestroMessage("remote", "wilco", "Re: Task T-3", "response", "[ACK] T-3 - RECEIVED\nUnderstanding: Will write the fix into file.txt", nil)
	for _, c := range []struct {
		name, token string
		body        map[string]any
		status      int
		want        string
	}{
		{"no token", "", forged, 401, "missing token"},
		{"an unknown token", "forged-token", forged, 401, "unknown token"},
		{"another agent's token", tok["other"], forged, 403, "may not send as remote"},
		{"the admin token", blackbox.AdminToken, forged, 403, "the sending agent's own token"},
		{"another agent acknowledging as itself", tok["other"],
			maestroMessage("other", "wilco", "Re: Task T-3", "response", "[ACK] T-3 - RECEIVED\nUnderstanding: Will write the fix into file.txt", nil), 403, "not delegated to other"},
	} {
		r := in.Call("POST", "/api/messages", c.token, c.body)
		if r.Status != c.status || !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%s: %d %s, want %d saying %q", c.name, r.Status, r.Body, c.status, c.want)
		}
	}
	if got := in.Task("T-3"); got.State != "awaiting_ack" {
		t.Fatalf("a forged ACK moved the task to %s", got.State)
	}
	for _, path := range []string{"/api/messages?agent=remote", "/api/hosts/identity"} {
		if r := in.Call("GET", path, "", nil); r.Status != 401 {
			t.Errorf("GET %s without a token: %d %s", path, r.Status, r.Body)
		}
	}
}

// writeFile writes content into dir/name.
func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A remote agent uses wilco's MCP tools over HTTP (POST /mcp, its token):
// initialize, tools/list, then wilco_ack for the task it holds — the same
// checks as a text ACK: the task starts; another agent's token cannot.
func TestRemoteAgentAcknowledgesThroughMCPOverHTTP(t *testing.T) {
	t.Parallel()
	in, tok := maestroRepo(t)
	in.Submit(map[string]any{"id": "T-9", "description": "Write the fix into file.txt", "agent": "remote"})
	in.WaitTask("T-9", 10*time.Second, "awaiting_ack")
	rpc := func(token string, id int, method string, params any) map[string]any {
		t.Helper()
		r := in.Call("POST", "/mcp", token, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", method, r.Status, r.Body)
		}
		var out map[string]any
		r.Decode(t, &out)
		return out
	}
	if v := rpc(tok["remote"], 1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}); v["result"] == nil {
		t.Fatalf("initialize: %v", v)
	}
	if r := in.Call("POST", "/mcp", tok["remote"], map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); r.Status != 202 {
		t.Fatalf("a notification: %d", r.Status)
	}
	tools := rpc(tok["remote"], 2, "tools/list", nil)["result"].(map[string]any)["tools"].([]any)
	if len(tools) != 4 {
		t.Fatalf("tools %v", tools)
	}
	// Another agent's token acknowledges nothing of this task.
	other := rpc(tok["other"], 3, "tools/call", map[string]any{"name": "wilco_ack", "arguments": map[string]any{"status": "RECEIVED", "understanding": "Will write the fix into file.txt"}})
	if res := other["result"].(map[string]any); res["isError"] != true {
		t.Fatalf("another agent's tool call: %v", other)
	}
	if got := in.Task("T-9"); got.State != "awaiting_ack" {
		t.Fatalf("another agent's tool call moved the task to %s", got.State)
	}
	ack := rpc(tok["remote"], 4, "tools/call", map[string]any{"name": "wilco_ack", "arguments": map[string]any{"status": "RECEIVED", "understanding": "Will write the fix into file.txt"}})
	if res := ack["result"].(map[string]any); res["isError"] == true {
		t.Fatalf("the agent's tool-call ACK: %v", ack)
	}
	in.WaitTask("T-9", 10*time.Second, "running")
	if r := in.Call("POST", "/mcp", "", map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}); r.Status != 401 {
		t.Fatalf("/mcp without a token: %d", r.Status)
	}
}
