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
	"time"
)

// ToolUse is a tool call the model makes: the CLI runs it for real.
type ToolUse struct {
	Name  string
	Input map[string]any
	// Namespace is the namespace of a Responses API function call (Codex
	// puts the tools of an MCP server in one, mcp__<server>).
	Namespace string
	// Search makes the call a Responses API tool_search_call (Input its
	// arguments, Name unused): Codex answers it with the deferred tools
	// that match.
	Search bool
}

// Reply is one assistant turn: text, then at most one tool call. A reply
// with a tool call ends with stop_reason "tool_use", else "end_turn".
type Reply struct {
	Text string
	Tool *ToolUse
}

// Turn is what a script sees of a request.
type Turn struct {
	// Prompt is the text of the last user message that is not a tool
	// result.
	Prompt string
	// Step counts the assistant messages after that user message.
	Step int
	// Tools are the names of the tools the request offers.
	Tools []string
	// System is the request's system prompt and the text of its messages
	// of role "system" (Claude Code puts its environment, the working
	// directory among it, in one at the end), joined by newlines.
	System string
}

// Script answers a turn.
type Script func(Turn) Reply

// Request is one recorded request.
type Request struct {
	Path string
	Body map[string]any
	Turn Turn
	// Answered is when the answer was sent whole (zero while it is
	// being sent).
	Answered time.Time
}

// Anthropic is a scripted Anthropic Messages API (POST /v1/messages,
// streamed as server-sent events).
type Anthropic struct {
	t      testing.TB
	srv    *httptest.Server
	script Script

	mu       sync.Mutex
	requests []Request
	nextID   int
	// failStatus, when set, answers every request with that status and
	// the API's error body (failType, failMessage).
	failStatus            int
	failType, failMessage string
}

// FailWith makes every request fail as the Messages API fails one: the
// status, and {"type":"error","error":{"type":…,"message":…}}.
func (a *Anthropic) FailWith(status int, errType, message string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failStatus, a.failType, a.failMessage = status, errType, message
}

// NewAnthropic starts the server; it stops when the test ends.
func NewAnthropic(t testing.TB, script Script) *Anthropic {
	a := &Anthropic{t: t, script: script}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

// Close stops the server now: what was its URL then refuses connections.
func (a *Anthropic) Close() { a.srv.Close() }

// URL is the base URL to give the CLI (ANTHROPIC_BASE_URL).
func (a *Anthropic) URL() string { return a.srv.URL }

// Requests returns the requests received so far.
func (a *Anthropic) Requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Request(nil), a.requests...)
}

// AgentRequests are the requests that offered tools: the agent's own turns.
func (a *Anthropic) AgentRequests() []Request {
	var out []Request
	for _, r := range a.Requests() {
		if len(r.Turn.Tools) > 0 {
			out = append(out, r)
		}
	}
	return out
}

func (a *Anthropic) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	turn := anthropicTurn(req)
	a.mu.Lock()
	a.requests = append(a.requests, Request{Path: r.URL.Path, Body: req, Turn: turn})
	at := len(a.requests) - 1
	a.nextID++
	id := a.nextID
	failStatus, failType, failMessage := a.failStatus, a.failType, a.failMessage
	a.mu.Unlock()

	if failStatus != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(failStatus)
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": failType, "message": failMessage}})
		return
	}

	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		if r.URL.Path == "/v1/messages/count_tokens" {
			writeJSON(w, map[string]any{"input_tokens": 100})
			return
		}
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not served by the scripted model"}}`, http.StatusNotFound)
		return
	}
	reply := Reply{Text: "OK"}
	if len(turn.Tools) > 0 {
		reply = a.script(turn)
	}
	model, _ := req["model"].(string)
	defer func() {
		a.mu.Lock()
		a.requests[at].Answered = time.Now()
		a.mu.Unlock()
	}()
	if stream, _ := req["stream"].(bool); !stream {
		writeJSON(w, anthropicMessage(id, model, reply))
		return
	}
	streamAnthropic(w, id, model, reply)
}

// anthropicTurn reads the prompt, the step, the tools and the system text
// from a Messages request.
func anthropicTurn(req map[string]any) Turn {
	var t Turn
	tools, _ := req["tools"].([]any)
	for _, tl := range tools {
		if m, ok := tl.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				t.Tools = append(t.Tools, n)
			}
		}
	}
	msgs, _ := req["messages"].([]any)
	var system []string
	if text, ok := userText(req["system"]); ok {
		system = append(system, text)
	}
	for _, m := range msgs {
		if m, _ := m.(map[string]any); m["role"] == "system" {
			if text, ok := userText(m["content"]); ok {
				system = append(system, text)
			}
		}
	}
	t.System = strings.Join(system, "\n")
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		role, _ := m["role"].(string)
		if role == "assistant" {
			t.Step++
			continue
		}
		if role != "user" {
			continue // Claude Code puts a "system" message at the end
		}
		if text, ok := userText(m["content"]); ok {
			t.Prompt = text
			return t
		}
	}
	t.Step = 0
	return t
}

// userText is the text of a user message's content, and whether it is
// one (not only tool results).
func userText(content any) (string, bool) {
	switch c := content.(type) {
	case string:
		return c, true
	case []any:
		var parts []string
		for _, b := range c {
			m, _ := b.(map[string]any)
			if m["type"] == "text" {
				if s, ok := m["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n"), len(parts) > 0
	}
	return "", false
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func usage() map[string]any {
	return map[string]any{"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

func anthropicMessage(id int, model string, r Reply) map[string]any {
	var content []any
	if r.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": r.Text})
	}
	stop := "end_turn"
	if r.Tool != nil {
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%04d", id), "name": r.Tool.Name, "input": r.Tool.Input})
		stop = "tool_use"
	}
	return map[string]any{"id": fmt.Sprintf("msg_%04d", id), "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage()}
}

// streamAnthropic writes a reply as the Messages API streams one:
// message_start, for each content block content_block_start, its deltas
// (text_delta, or input_json_delta for a tool call's input) and
// content_block_stop, then message_delta with the stop reason and
// message_stop (the event sequence of the API's streaming documentation,
// "Streaming messages").
func streamAnthropic(w http.ResponseWriter, id int, model string, r Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(event string, data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	msg := anthropicMessage(id, model, Reply{})
	msg["content"], msg["stop_reason"] = []any{}, nil
	msg["usage"] = map[string]any{"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	send("message_start", map[string]any{"type": "message_start", "message": msg})
	index := 0
	if r.Text != "" {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		// Deltas of a few words, as a model streams them.
		for _, chunk := range chunks(r.Text, 24) {
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": chunk}})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	stop := "end_turn"
	if r.Tool != nil {
		stop = "tool_use"
		send("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%04d", id), "name": r.Tool.Name, "input": map[string]any{}}})
		input, _ := json.Marshal(r.Tool.Input)
		for _, chunk := range chunks(string(input), 32) {
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": chunk}})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 20}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// chunks splits s into pieces of at most n bytes, on rune boundaries.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i := min(n, len(s))
		for i < len(s) && i > 0 && (s[i]&0xC0) == 0x80 {
			i--
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}
