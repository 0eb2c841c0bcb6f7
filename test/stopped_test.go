package test

// A node whose loop stopped: a commit the disk refused. Agents with valid
// tokens are told the node is unavailable, never that their token is
// unknown; reads say unavailable, never an empty list.

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"wilco/test/blackbox"
)

// TestAFailedNodeAnswersAValidAgentToken503NotUnknown makes the disk
// refuse every write of a running `wilco serve` (its file size limit set to
// one byte: SQLite's next commit fails), so that its loop stops. An
// agent's valid token then gets 503 unavailable, as the admin token does —
// not 401 "unknown token", after which an agent may stop or get a new token
// — and the admin's reads get 503, not an empty list or a 404.
func TestAFailedNodeAnswersAValidAgentToken503NotUnknown(t *testing.T) {
	t.Parallel()
	in := blackbox.Serve(t, "agents: []\n")
	tok := in.Agent("alpha", "go")
	in.Inbox(tok, 0)

	lim := unix.Rlimit{Cur: 1, Max: 1}
	if err := unix.Prlimit(in.Cmd.Process.Pid, unix.RLIMIT_FSIZE, &lim, nil); err != nil {
		t.Fatalf("limit the server's file size: %v", err)
	}
	defer in.Kill() // its loop stopped: no clean shutdown to wait for
	if r := in.Call("POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"description": "never stored"}); r.Status != 503 {
		t.Errorf("the commit the disk refused: %d %s, want 503", r.Status, r.Body)
	}
	if r := in.Call("GET", "/healthz", "", nil); r.Status != 503 {
		t.Errorf("/healthz of a node whose loop stopped: %d %s, want 503", r.Status, r.Body)
	}
	for _, c := range []struct {
		what, method, path, token string
		body                      any
	}{
		{"the agent's inbox", "GET", "/v1/inbox", tok, nil},
		{"the agent's inbox, long-polled", "GET", "/v1/inbox?wait=5s", tok, nil},
		{"the agent's reply", "POST", "/v1/inbox/replies", tok, map[string]any{"in_reply_to": "M-1", "text": "ok"}},
		{"the agent's MCP tools", "POST", "/mcp", tok, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}},
		{"the agents", "GET", "/v1/agents", blackbox.AdminToken, nil},
		{"one agent", "GET", "/v1/agents/alpha", blackbox.AdminToken, nil},
		{"the tasks", "GET", "/v1/tasks", blackbox.AdminToken, nil},
	} {
		r := in.Call(c.method, c.path, c.token, c.body)
		if r.Status != 503 || r.ErrorCode() != "unavailable" || !strings.Contains(string(r.Body), "loop stopped") {
			t.Errorf("%s (%s %s): %d %s, want 503 unavailable saying the loop stopped", c.what, c.method, c.path, r.Status, r.Body)
		}
	}
}
