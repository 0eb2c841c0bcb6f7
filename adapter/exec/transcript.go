package exec

import (
	"encoding/json"
	"os"
	"strings"
	"sync"
	"time"
)

// TranscriptFileName is the file of a run's directory that holds the
// conversation of its agent's turn: one JSON entry per line.
const TranscriptFileName = "transcript.jsonl"

// maxTranscript bounds a transcript file; past it, one entry says so and
// the rest is left out (agent.log keeps the tail of everything).
const maxTranscript = 1 << 20

// maxEntry bounds one entry's text and tool output.
const maxEntry = 16 << 10

// Entry is one step of an agent's conversation: the prompt wilco sent, the
// assistant's text, a tool call with its input, a tool's result, an error.
type Entry struct {
	At    time.Time      `json:"at"`
	Kind  string         `json:"kind"` // prompt, text, tool_call, tool_result, error, note
	Text  string         `json:"text,omitempty"`
	Tool  string         `json:"tool,omitempty"`
	Input map[string]any `json:"input,omitempty"`
}

// transcript appends entries to a run's transcript file, up to
// maxTranscript bytes.
type transcript struct {
	mu      sync.Mutex
	f       *os.File
	written int
	full    bool
}

func openTranscript(path string) *transcript {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil
	}
	st, _ := f.Stat()
	t := &transcript{f: f}
	if st != nil {
		t.written = int(st.Size())
	}
	return t
}

func (t *transcript) add(e Entry) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.full {
		return
	}
	if e.At.IsZero() {
		e.At = time.Now().UTC()
	}
	e.Text = clip(e.Text, maxEntry)
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	if t.written+len(b)+1 > maxTranscript {
		t.full = true
		b, _ = json.Marshal(Entry{At: e.At, Kind: "note", Text: "the transcript is cut here: it reached its size limit (agent.log keeps the tail of the output)"})
	}
	n, _ := t.f.Write(append(b, '\n'))
	t.written += n
}

func (t *transcript) close() {
	if t != nil {
		_ = t.f.Close()
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "… (cut)"
}

// transcriptEntries reads one line of an agent's output as steps of its
// conversation, in the shapes of the presets' formats: Claude Code's
// assistant (text, tool_use) and user (tool_result) messages and its
// result; Codex's agent_message, command_execution (with its output) and
// file_change items; Gemini CLI's assistant message, tool_use and
// tool_result events; opencode's text and tool_use parts. A line that is
// not JSON is text.
func transcriptEntries(line string) []Entry {
	trimmed := strings.TrimSpace(line)
	if trimmed == "" {
		return nil
	}
	if !strings.HasPrefix(trimmed, "{") {
		return []Entry{{Kind: "text", Text: line}}
	}
	var ev map[string]any
	if json.Unmarshal([]byte(trimmed), &ev) != nil {
		return []Entry{{Kind: "text", Text: line}}
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	obj := func(m map[string]any, k string) map[string]any { o, _ := m[k].(map[string]any); return o }
	var out []Entry
	switch typ := str(ev, "type"); typ {
	case "assistant", "user": // Claude Code
		msg := obj(ev, "message")
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			switch str(bm, "type") {
			case "text":
				out = append(out, Entry{Kind: "text", Text: str(bm, "text")})
			case "tool_use":
				out = append(out, Entry{Kind: "tool_call", Tool: str(bm, "name"), Input: obj(bm, "input")})
			case "tool_result":
				out = append(out, Entry{Kind: "tool_result", Text: resultText(bm["content"])})
			}
		}
	case "item.started", "item.completed": // Codex
		item := obj(ev, "item")
		switch str(item, "type") {
		case "agent_message":
			out = append(out, Entry{Kind: "text", Text: str(item, "text")})
		case "command_execution":
			if typ == "item.started" {
				out = append(out, Entry{Kind: "tool_call", Tool: "shell", Input: map[string]any{"command": str(item, "command")}})
			} else {
				out = append(out, Entry{Kind: "tool_result", Tool: "shell", Text: str(item, "aggregated_output")})
			}
		case "file_change":
			out = append(out, Entry{Kind: "tool_call", Tool: "file_change", Input: map[string]any{"changes": item["changes"]}})
		case "error":
			out = append(out, Entry{Kind: "error", Text: str(item, "message")})
		}
	case "message": // Gemini CLI
		if str(ev, "role") == "assistant" {
			out = append(out, Entry{Kind: "text", Text: str(ev, "content")})
		}
	case "tool_use": // Gemini CLI, opencode
		if name := str(ev, "tool_name"); name != "" {
			out = append(out, Entry{Kind: "tool_call", Tool: name, Input: obj(ev, "parameters")})
		} else if part := obj(ev, "part"); part != nil {
			state := obj(part, "state")
			out = append(out, Entry{Kind: "tool_call", Tool: str(part, "tool"), Input: obj(state, "input")},
				Entry{Kind: "tool_result", Tool: str(part, "tool"), Text: firstNonEmpty(str(state, "output"), str(state, "error"))})
		}
	case "tool_result": // Gemini CLI
		out = append(out, Entry{Kind: "tool_result", Text: firstNonEmpty(str(ev, "output"), str(obj(ev, "error"), "message"))})
	case "text": // opencode
		out = append(out, Entry{Kind: "text", Text: str(obj(ev, "part"), "text")})
	case "error", "turn.failed":
		out = append(out, Entry{Kind: "error", Text: trimmed})
	}
	return out
}

// resultText is a tool result's content: a string, or text blocks.
func resultText(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, b := range v {
			if bm, ok := b.(map[string]any); ok {
				if s, ok := bm["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}
