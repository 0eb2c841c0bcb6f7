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

// Gemini is a scripted Gemini API: POST
// /v1beta/models/{model}:streamGenerateContent (server-sent events with
// ?alt=sse) and :generateContent, as Gemini CLI calls it when
// GOOGLE_GEMINI_BASE_URL points here.
type Gemini struct {
	srv    *httptest.Server
	script Script

	mu       sync.Mutex
	requests []Request
}

// NewGemini starts the server; it stops when the test ends.
func NewGemini(t testing.TB, script Script) *Gemini {
	g := &Gemini{script: script}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

// URL is the base URL (GOOGLE_GEMINI_BASE_URL).
func (g *Gemini) URL() string { return g.srv.URL }

// Requests returns the requests received so far.
func (g *Gemini) Requests() []Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Request(nil), g.requests...)
}

// AgentRequests are the requests that offered tools.
func (g *Gemini) AgentRequests() []Request {
	var out []Request
	for _, r := range g.Requests() {
		if len(r.Turn.Tools) > 0 {
			out = append(out, r)
		}
	}
	return out
}

func (g *Gemini) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	turn := geminiTurn(req)
	g.mu.Lock()
	g.requests = append(g.requests, Request{Path: r.URL.Path, Body: req, Turn: turn})
	g.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 100})
		return
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, ":streamGenerateContent"),
		r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, ":generateContent"):
	default:
		http.Error(w, `{"error":{"code":404,"message":"not served by the scripted model","status":"NOT_FOUND"}}`, http.StatusNotFound)
		return
	}
	reply := Reply{Text: "OK"}
	if len(turn.Tools) > 0 {
		reply = g.script(turn)
	} else if wantsJSON(req) {
		// A side request that asks for JSON (Gemini CLI's routing and
		// next-speaker checks): a value of the schema it gives.
		cfg, _ := req["generationConfig"].(map[string]any)
		schema, _ := cfg["responseJsonSchema"].(map[string]any)
		if schema == nil {
			schema, _ = cfg["responseSchema"].(map[string]any)
		}
		b, _ := json.Marshal(valueOf(schema))
		reply = Reply{Text: string(b)}
	}
	if strings.HasSuffix(r.URL.Path, ":generateContent") {
		writeJSON(w, geminiChunk(reply, true))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	// Text in a few chunks, the function call whole in the last one, as
	// the API streams (a functionCall part is never split).
	parts := chunks(reply.Text, 24)
	for i, c := range parts {
		last := i == len(parts)-1 && reply.Tool == nil
		b, _ := json.Marshal(geminiChunk(Reply{Text: c}, last))
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	if reply.Tool != nil || len(parts) == 0 {
		b, _ := json.Marshal(geminiChunk(Reply{Tool: reply.Tool}, true))
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// valueOf is a small value of a JSON schema (OpenAPI-style types, upper
// or lower case): every property, the first of an enum.
func valueOf(schema map[string]any) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch strings.ToLower(fmt.Sprint(schema["type"])) {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for k, v := range props {
			vm, _ := v.(map[string]any)
			out[k] = valueOf(vm)
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		return 50
	case "boolean":
		return false
	}
	return "scripted"
}

func wantsJSON(req map[string]any) bool {
	cfg, _ := req["generationConfig"].(map[string]any)
	return cfg != nil && cfg["responseMimeType"] == "application/json"
}

// geminiChunk is one GenerateContentResponse.
func geminiChunk(r Reply, last bool) map[string]any {
	var parts []any
	if r.Text != "" {
		parts = append(parts, map[string]any{"text": r.Text})
	}
	if r.Tool != nil {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": r.Tool.Name, "args": r.Tool.Input}})
	}
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if last {
		cand["finishReason"] = "STOP"
	}
	return map[string]any{"candidates": []any{cand},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}}
}

// geminiTurn reads the prompt and the step: the last user content with
// text (not a function response), and how many model contents follow it.
func geminiTurn(req map[string]any) Turn {
	var t Turn
	tools, _ := req["tools"].([]any)
	for _, tl := range tools {
		m, _ := tl.(map[string]any)
		decls, _ := m["functionDeclarations"].([]any)
		for _, d := range decls {
			if dm, ok := d.(map[string]any); ok {
				if n, ok := dm["name"].(string); ok {
					t.Tools = append(t.Tools, n)
				}
			}
		}
	}
	contents, _ := req["contents"].([]any)
	for i := len(contents) - 1; i >= 0; i-- {
		c, _ := contents[i].(map[string]any)
		if c["role"] == "model" {
			t.Step++
			continue
		}
		parts, _ := c["parts"].([]any)
		var texts []string
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			if s, ok := pm["text"].(string); ok {
				texts = append(texts, s)
			}
		}
		if len(texts) > 0 {
			t.Prompt = strings.Join(texts, "\n")
			return t
		}
	}
	return t
}
