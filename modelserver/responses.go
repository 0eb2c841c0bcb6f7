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

// Responses is a scripted OpenAI Responses API (POST /v1/responses,
// streamed as server-sent events), as Codex CLI speaks it with
// wire_api = "responses".
type Responses struct {
	srv    *httptest.Server
	script Script

	mu        sync.Mutex
	requests  []Request
	nextID    int
	onRequest func(body map[string]any)
}

// OnRequest calls fn with the body of each request, before the script
// answers it.
func (s *Responses) OnRequest(fn func(body map[string]any)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onRequest = fn
}

// NewResponses starts the server; it stops when the test ends.
func NewResponses(t testing.TB, script Script) *Responses {
	s := &Responses{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL a provider's base_url takes (it ends in /v1).
func (s *Responses) URL() string { return s.srv.URL + "/v1" }

// Requests returns the requests received so far.
func (s *Responses) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// AgentRequests are the requests that offered tools.
func (s *Responses) AgentRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if len(r.Turn.Tools) > 0 {
			out = append(out, r)
		}
	}
	return out
}

func (s *Responses) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	turn := responsesTurn(req)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Body: req, Turn: turn})
	s.nextID++
	id := s.nextID
	on := s.onRequest
	s.mu.Unlock()
	if on != nil {
		on(req)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		if r.URL.Path == "/v1/models" {
			writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
			return
		}
		http.Error(w, `{"error":{"message":"not served by the scripted model","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	reply := Reply{Text: "OK"}
	if len(turn.Tools) > 0 {
		reply = s.script(turn)
	}
	streamResponses(w, id, req["model"], reply)
}

// responsesTurn reads the prompt and the step from a Responses request:
// the input items after the last user message are the assistant's turns
// (a message, a function call and its output).
func responsesTurn(req map[string]any) Turn {
	var t Turn
	tools, _ := req["tools"].([]any)
	for _, tl := range tools {
		if m, ok := tl.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				t.Tools = append(t.Tools, n)
			}
		}
	}
	items, _ := req["input"].([]any)
	for i := len(items) - 1; i >= 0; i-- {
		m, _ := items[i].(map[string]any)
		typ, _ := m["type"].(string)
		role, _ := m["role"].(string)
		switch {
		case typ == "function_call" || typ == "custom_tool_call" || typ == "local_shell_call" || typ == "tool_search_call":
			t.Step++
		case (typ == "message" || typ == "") && role == "user":
			if text, ok := responsesText(m["content"]); ok {
				t.Prompt = text
				return t
			}
		}
	}
	return t
}

func responsesText(content any) (string, bool) {
	switch c := content.(type) {
	case string:
		return c, true
	case []any:
		var parts []string
		for _, b := range c {
			m, _ := b.(map[string]any)
			if s, ok := m["text"].(string); ok && (m["type"] == "input_text" || m["type"] == "text") {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n"), len(parts) > 0
	}
	return "", false
}

// streamResponses writes a reply as the Responses API streams one:
// response.created, for the text a message item (response.output_item.added,
// response.output_text.delta…, response.output_item.done), for a tool call
// a function_call item (response.output_item.added,
// response.function_call_arguments.delta…, response.output_item.done), then
// response.completed with the usage (the events Codex reads in its SSE
// loop, codex-rs/core/src/client.rs process_sse).
func streamResponses(w http.ResponseWriter, id int, model any, r Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	respID := fmt.Sprintf("resp_%04d", id)
	send(map[string]any{"type": "response.created", "response": map[string]any{"id": respID, "object": "response", "model": model, "status": "in_progress"}})
	index := 0
	if r.Text != "" {
		msgID := fmt.Sprintf("msg_%04d", id)
		send(map[string]any{"type": "response.output_item.added", "output_index": index,
			"item": map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "in_progress", "content": []any{}}})
		for _, c := range chunks(r.Text, 24) {
			send(map[string]any{"type": "response.output_text.delta", "item_id": msgID, "output_index": index, "content_index": 0, "delta": c})
		}
		send(map[string]any{"type": "response.output_item.done", "output_index": index,
			"item": map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}}}})
		index++
	}
	if r.Tool != nil && r.Tool.Search {
		// A client-executed tool search, as Codex's own tests script one
		// (codex-rs/core/tests/common/responses.rs, ev_tool_search_call).
		send(map[string]any{"type": "response.output_item.done", "output_index": index,
			"item": map[string]any{"type": "tool_search_call", "call_id": fmt.Sprintf("ts_%04d", id), "execution": "client", "arguments": r.Tool.Input}})
	} else if r.Tool != nil {
		args, _ := json.Marshal(r.Tool.Input)
		callID, itemID := fmt.Sprintf("call_%04d", id), fmt.Sprintf("fc_%04d", id)
		added := map[string]any{"type": "function_call", "id": itemID, "call_id": callID, "name": r.Tool.Name, "arguments": "", "status": "in_progress"}
		if r.Tool.Namespace != "" {
			added["namespace"] = r.Tool.Namespace
		}
		send(map[string]any{"type": "response.output_item.added", "output_index": index, "item": added})
		for _, c := range chunks(string(args), 32) {
			send(map[string]any{"type": "response.function_call_arguments.delta", "item_id": itemID, "output_index": index, "delta": c})
		}
		done := map[string]any{"type": "function_call", "id": itemID, "call_id": callID, "name": r.Tool.Name, "arguments": string(args), "status": "completed"}
		if r.Tool.Namespace != "" {
			// A tool of a namespace, as ev_function_call_with_namespace
			// (same file) scripts one.
			done["namespace"] = r.Tool.Namespace
		}
		send(map[string]any{"type": "response.output_item.done", "output_index": index, "item": done})
	}
	send(map[string]any{"type": "response.completed", "response": map[string]any{"id": respID, "object": "response", "model": model, "status": "completed",
		"usage": map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 20,
			"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 120}}})
}
