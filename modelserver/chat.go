package modelserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Chat is a scripted OpenAI Chat Completions API (POST
// /v1/chat/completions, streamed as server-sent events ending in
// "data: [DONE]"), as OpenAI-compatible clients such as opencode's
// @ai-sdk/openai-compatible provider call it.
type Chat struct {
	srv    *httptest.Server
	script Script

	mu       sync.Mutex
	requests []Request
	nextID   int
}

// NewChat starts the server; it stops when the test ends.
func NewChat(t testing.TB, script Script) *Chat {
	c := &Chat{script: script}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.srv.Close)
	return c
}

// URL is the base URL a provider's baseURL takes (it ends in /v1).
func (c *Chat) URL() string { return c.srv.URL + "/v1" }

// Requests returns the requests received so far.
func (c *Chat) Requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Request(nil), c.requests...)
}

// AgentRequests are the requests that offered tools.
func (c *Chat) AgentRequests() []Request {
	var out []Request
	for _, r := range c.Requests() {
		if len(r.Turn.Tools) > 0 {
			out = append(out, r)
		}
	}
	return out
}

func (c *Chat) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	turn := chatTurn(req)
	c.mu.Lock()
	c.requests = append(c.requests, Request{Path: r.URL.Path, Body: req, Turn: turn})
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		if r.URL.Path == "/v1/models" {
			writeJSON(w, map[string]any{"object": "list", "data": []any{}})
			return
		}
		http.Error(w, `{"error":{"message":"not served by the scripted model","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	reply := Reply{Text: "OK"}
	if len(turn.Tools) > 0 {
		reply = c.script(turn)
	}
	model := req["model"]
	if stream, _ := req["stream"].(bool); !stream {
		msg := map[string]any{"role": "assistant", "content": reply.Text}
		finish := "stop"
		if reply.Tool != nil {
			args, _ := json.Marshal(reply.Tool.Input)
			msg["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%04d", id), "type": "function",
				"function": map[string]any{"name": reply.Tool.Name, "arguments": string(args)}}}
			finish = "tool_calls"
		}
		writeJSON(w, map[string]any{"id": fmt.Sprintf("chatcmpl-%04d", id), "object": "chat.completion", "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": chatUsage()})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(delta map[string]any, finish any, usage any) {
		chunk := map[string]any{"id": fmt.Sprintf("chatcmpl-%04d", id), "object": "chat.completion.chunk", "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	for _, t := range chunks(reply.Text, 24) {
		send(map[string]any{"content": t}, nil, nil)
	}
	finish := "stop"
	if reply.Tool != nil {
		finish = "tool_calls"
		args, _ := json.Marshal(reply.Tool.Input)
		send(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call_%04d", id), "type": "function",
			"function": map[string]any{"name": reply.Tool.Name, "arguments": ""}}}}, nil, nil)
		for _, a := range chunks(string(args), 32) {
			send(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": a}}}}, nil, nil)
		}
	}
	send(map[string]any{}, finish, chatUsage())
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func chatUsage() map[string]any {
	return map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
}

// chatTurn reads the prompt (the last user message) and the step (the
// assistant messages after it).
func chatTurn(req map[string]any) Turn {
	var t Turn
	tools, _ := req["tools"].([]any)
	for _, tl := range tools {
		m, _ := tl.(map[string]any)
		fn, _ := m["function"].(map[string]any)
		if n, ok := fn["name"].(string); ok {
			t.Tools = append(t.Tools, n)
		}
	}
	msgs, _ := req["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		switch m["role"] {
		case "assistant":
			t.Step++
		case "user":
			switch c := m["content"].(type) {
			case string:
				t.Prompt = c
			case []any:
				var parts []string
				for _, p := range c {
					pm, _ := p.(map[string]any)
					if s, ok := pm["text"].(string); ok {
						parts = append(parts, s)
					}
				}
				t.Prompt = strings.Join(parts, "\n")
			}
			return t
		}
	}
	return t
}
