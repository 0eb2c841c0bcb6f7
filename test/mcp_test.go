package test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"wilco/test/blackbox"
)

// mcpSession connects the MCP SDK's own client through transport.
func mcpSession(t *testing.T, transport mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callTool calls one of wilco's tools; it returns the tool's text and
// whether the tool said it failed.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %+v", name, res)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// bearer adds an agent's token to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// The MCP SDK's own streamable HTTP client, with an agent's token, lists
// wilco's tools on POST /mcp (the newest protocol version it speaks) and
// acknowledges the task the agent holds: the task starts. Without a token
// it cannot even connect.
func TestTheMCPClientOfTheSDKAcknowledgesOverHTTP(t *testing.T) {
	t.Parallel()
	in, tok := maestroRepo(t)
	in.Submit(map[string]any{"id": "T-9", "description": "Write the fix into file.txt", "agent": "remote"})
	in.WaitTask("T-9", 10*time.Second, "awaiting_ack")
	cs := mcpSession(t, &mcp.StreamableClientTransport{Endpoint: in.Url + "/mcp", HTTPClient: &http.Client{Transport: bearer(tok["remote"])}})
	if v := cs.InitializeResult().ProtocolVersion; v != mcp.SupportedProtocolVersions()[0] {
		t.Fatalf("protocol version %s, want the newest: %v", v, mcp.SupportedProtocolVersions())
	}
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if strings.Join(names, " ") != "wilco_ack wilco_ask wilco_checkpoint wilco_complete" {
		t.Fatalf("tools %v", names)
	}
	if text, isErr := callTool(t, cs, "wilco_ack", map[string]any{"status": "RECEIVED", "understanding": "Will write the fix into file.txt"}); isErr || !strings.Contains(text, "Go on with the task now") {
		t.Fatalf("wilco_ack: %q", text)
	}
	in.WaitTask("T-9", 10*time.Second, "running")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: in.Url + "/mcp"}, nil); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("a client without a token: %v", err)
	}
}

// wilco mcp runs as long as the agent's program: a TUI starts it once, with
// its first turn's ids. A call that names no task reports on that task;
// once the agent works on another, such a call is refused, saying to name
// the task, and a call naming it (task_id) reports on it: its ACK starts
// it, its completion ends its turn. A report on the task that ended is
// refused too.
func TestWilcoMCPTakesTheTaskACallNames(t *testing.T) {
	t.Parallel()
	in, tok := maestroRepo(t)
	in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt", "agent": "remote"})
	in.WaitTask("T-1", 10*time.Second, "awaiting_ack")
	var first struct {
		Delivery string `json:"delivery"`
	}
	in.Must(200, in.Call("GET", "/v1/tasks/T-1", blackbox.AdminToken, nil), &first)
	cmd := exec.Command(blackbox.WilcoBin, "mcp")
	cmd.Env = append(os.Environ(), "WILCO_URL="+in.Url, "WILCO_AGENT_TOKEN="+tok["remote"], "WILCO_TASK_ID=T-1", "WILCO_MESSAGE_ID="+first.Delivery)
	cs := mcpSession(t, &mcp.CommandTransport{Command: cmd})

	ack := map[string]any{"status": "RECEIVED", "understanding": "Will write the fix into file.txt"}
	if text, isErr := callTool(t, cs, "wilco_ack", ack); isErr || !strings.Contains(text, "Go on with the task now") {
		t.Fatalf("the first turn's ACK: %q", text)
	}
	in.WaitTask("T-1", 10*time.Second, "running")
	writeFile(t, in.Dir, "file.txt", "fixed T-1\n")
	if text, isErr := callTool(t, cs, "wilco_complete", map[string]any{"status": "success", "summary": "wrote the fix"}); isErr {
		t.Fatalf("the first turn's completion: %q", text)
	}
	in.WaitTask("T-1", 30*time.Second, "success")

	in.Submit(map[string]any{"id": "T-2", "description": "Write the next fix into file.txt", "agent": "remote"})
	in.WaitTask("T-2", 10*time.Second, "awaiting_ack")
	if text, isErr := callTool(t, cs, "wilco_ack", ack); !isErr || !strings.Contains(text, "name it: task_id") {
		t.Fatalf("an ACK naming no task, for the task that ended: %q", text)
	}
	ack["task_id"] = "T-2"
	if text, isErr := callTool(t, cs, "wilco_ack", ack); isErr || !strings.Contains(text, "Go on with the task now") {
		t.Fatalf("an ACK naming the agent's task: %q", text)
	}
	in.WaitTask("T-2", 10*time.Second, "running")
	if text, isErr := callTool(t, cs, "wilco_checkpoint", map[string]any{"checkpoint": 1, "summary": "half", "task_id": "T-1"}); !isErr {
		t.Fatalf("a checkpoint of the task that ended: %q", text)
	}
	writeFile(t, in.Dir, "file.txt", "fixed T-2\n")
	if text, isErr := callTool(t, cs, "wilco_complete", map[string]any{"status": "success", "summary": "wrote the fix", "task_id": "T-2"}); isErr {
		t.Fatalf("the completion of T-2: %q", text)
	}
	in.WaitTask("T-2", 30*time.Second, "success")
}
