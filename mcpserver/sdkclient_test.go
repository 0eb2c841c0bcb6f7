package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callAck connects the SDK's client through transport, lists the tools and
// acknowledges T-3 with wilco_ack; it returns the tool's text.
func callAck(t *testing.T, transport mcp.Transport) (string, *mcp.InitializeResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if strings.Join(names, " ") != "wilco_ack wilco_ask wilco_checkpoint wilco_complete" {
		t.Fatalf("tools %v", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wilco_ack", Arguments: map[string]any{"status": "RECEIVED", "understanding": "Fix Add"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("wilco_ack: %+v", res)
	}
	return res.Content[0].(*mcp.TextContent).Text, cs.InitializeResult()
}

// The SDK's own client uses the tools over standard input and output.
func TestTheSDKClientCallsTheToolsOverStdio(t *testing.T) {
	t.Parallel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rep := &fakeReplier{}
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), inR, outW, rep, Task{ID: "T-3", MessageID: "M-7"}, "test") }()
	text, init := callAck(t, &mcp.IOTransport{Reader: outR, Writer: inW})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if text != "wilco took it as ack: acknowledged: work may begin. Go on with the task now." || init.ServerInfo.Name != "wilco" {
		t.Fatalf("%q %+v", text, init)
	}
	if got := rep.replies(); len(got) != 1 || got[0].InReplyTo != "M-7" || got[0].Text != "[ACK] T-3 - RECEIVED\nUnderstanding: Fix Add\n" {
		t.Fatalf("replies %+v", got)
	}
}

// The SDK's own streamable HTTP client uses the tools over HTTP, with the
// version it asks for; a plain JSON-RPC POST that accepts JSON only (or
// names nothing) gets one JSON answer, and a notification 202.
func TestTheSDKClientCallsTheToolsOverHTTP(t *testing.T) {
	t.Parallel()
	rep := &fakeReplier{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Handler(rep, Task{ID: r.Header.Get("X-Task"), MessageID: "M-7"}, "test").ServeHTTP(w, r)
	}))
	defer srv.Close()
	hc := &http.Client{Transport: headerTransport{"X-Task", "T-3"}}
	text, init := callAck(t, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc})
	if newest := slices.Max(mcp.SupportedProtocolVersions()); init.ProtocolVersion != newest {
		t.Fatalf("the client asked for %s, got %s", newest, init.ProtocolVersion)
	}
	if text != "wilco took it as ack: acknowledged: work may begin. Go on with the task now." || init.ServerInfo.Name != "wilco" {
		t.Fatalf("%q %+v", text, init)
	}
	if got := rep.replies(); len(got) != 1 || got[0].Text != "[ACK] T-3 - RECEIVED\nUnderstanding: Fix Add\n" {
		t.Fatalf("replies %+v", got)
	}

	post := func(body, accept, version string) (*http.Response, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		if version != "" {
			req.Header.Set("MCP-Protocol-Version", version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return resp, m
	}
	for _, accept := range []string{"", "application/json", "application/json, text/event-stream"} {
		resp, m := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, accept, "")
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || m["result"].(map[string]any)["protocolVersion"] != "2025-03-26" {
			t.Fatalf("initialize accepting %q: %d %s %v", accept, resp.StatusCode, resp.Header.Get("Content-Type"), m)
		}
	}
	if resp, _ := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", "2025-03-26"); resp.StatusCode != 202 {
		t.Fatalf("a notification: %d", resp.StatusCode)
	}
	if resp, m := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "", "2025-06-18"); resp.StatusCode != 200 || len(m["result"].(map[string]any)["tools"].([]any)) != 4 {
		t.Fatalf("tools/list: %d %v", resp.StatusCode, m)
	}
	if resp, _ := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "", "1999-01-01"); resp.StatusCode != 400 {
		t.Fatalf("a version nobody speaks: %d", resp.StatusCode)
	}
}

type headerTransport struct{ k, v string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.k, h.v)
	return http.DefaultTransport.RoundTrip(r)
}
