package exec

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"wilco/ack"
)

// The fuzzers of the agents' output readers. Each feeds any output, line by
// line, to its reader (nothing panics; what comes out is lines; a line that
// is not a JSON object comes out as it is), then writes events of its
// format around a fuzzed text and checks that the text comes out whole, in
// order, and as the final answer. Run one with
//
//	go test -run='^$' -fuzz='^FuzzClaudeParser$' -fuzztime=30s ./adapter/exec

// feedAll feeds each line of raw to p and checks what any reader must do.
func feedAll(t *testing.T, p outputParser, raw string) {
	t.Helper()
	for _, l := range strings.Split(raw, "\n") {
		out, _ := p.Line(l)
		for _, o := range out {
			if strings.Contains(o, "\n") {
				t.Fatalf("line %q gave a text line with a line break: %q", l, o)
			}
		}
		if !strings.HasPrefix(strings.TrimSpace(l), "{") && (len(out) != 1 || out[0] != l) {
			t.Fatalf("the plain line %q came out as %q", l, out)
		}
	}
	for _, o := range p.Flush() {
		if strings.Contains(o, "\n") {
			t.Fatalf("flush gave a text line with a line break: %q", o)
		}
	}
	_, _ = p.Result(), p.Session()
}

// event encodes an event of an agent's JSON output.
func event(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// normalText is text as a reader gives it back, its lines joined: CRLF read
// as LF, trailing line breaks dropped.
func normalText(text string) string {
	return strings.TrimRight(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
}

// lineOut feeds one line and returns its text joined, and whether it ended
// a message.
func lineOut(p outputParser, line string) (string, bool) {
	out, end := p.Line(line)
	return strings.Join(out, "\n"), end
}

func FuzzClaudeParser(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw, text, session string) {
		feedAll(t, &claudeParser{}, raw)
		if !utf8.ValidString(text) || !utf8.ValidString(session) {
			return
		}
		p := &claudeParser{}
		if session != "" {
			p.Line(event(t, map[string]any{"type": "system", "subtype": "init", "session_id": session}))
		}
		msg := event(t, map[string]any{"type": "assistant", "message": map[string]any{"content": []any{
			map[string]any{"type": "tool_use", "name": "Edit"}, map[string]any{"type": "text", "text": text}}}})
		if got, end := lineOut(p, msg); got != normalText(text) || end != (text != "") {
			t.Fatalf("assistant text %q came out as %q (end %v)", text, got, end)
		}
		if got, _ := lineOut(p, event(t, map[string]any{"type": "result", "result": text})); got != "" {
			t.Fatalf("the result was given as text again: %q", got)
		}
		if p.Result() != text || p.Session() != session {
			t.Fatalf("result %q session %q, want %q %q", p.Result(), p.Session(), text, session)
		}
		// --output-format json: the result is the text.
		p = &claudeParser{}
		if got, _ := lineOut(p, event(t, map[string]any{"type": "result", "result": text, "session_id": session})); got != normalText(text) || p.Result() != text {
			t.Fatalf("result %q came out as %q", text, got)
		}
	})
}

func FuzzCodexParser(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw, text, session string) {
		feedAll(t, &codexParser{}, raw)
		if !utf8.ValidString(text) || !utf8.ValidString(session) {
			return
		}
		p := &codexParser{}
		p.Line(event(t, map[string]any{"type": "thread.started", "thread_id": session}))
		p.Line(event(t, map[string]any{"type": "item.completed", "item": map[string]any{"type": "reasoning", "text": "thinking " + text}}))
		got, end := lineOut(p, event(t, map[string]any{"type": "item.completed", "item": map[string]any{"type": "agent_message", "text": text}}))
		if got != normalText(text) || !end || p.Result() != text || p.Session() != session {
			t.Fatalf("agent message %q came out as %q (end %v), result %q, session %q", text, got, end, p.Result(), p.Session())
		}
		p = &codexParser{}
		if got, _ := lineOut(p, event(t, map[string]any{"msg": map[string]any{"type": "agent_message", "message": text}})); got != normalText(text) || p.Result() != text {
			t.Fatalf("old form %q came out as %q", text, got)
		}
	})
}

func FuzzGeminiParser(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw, text string, cut uint) {
		feedAll(t, &geminiParser{}, raw)
		if !utf8.ValidString(text) {
			return
		}
		// The text in two deltas, cut anywhere between two characters.
		k := int(cut % uint(len(text)+1))
		for k > 0 && !utf8.RuneStart(text[k%len(text)]) {
			k--
		}
		p := &geminiParser{}
		p.Line(event(t, map[string]any{"type": "init", "session_id": "g-1"}))
		var out []string
		for _, piece := range []string{text[:k], text[k:]} {
			o, _ := p.Line(event(t, map[string]any{"type": "message", "role": "assistant", "content": piece, "delta": true}))
			out = append(out, o...)
		}
		o, _ := p.Line(event(t, map[string]any{"type": "result", "status": "success"}))
		out = append(out, o...)
		want := strings.TrimSuffix(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
		if got := strings.Join(out, "\n"); got != want {
			t.Fatalf("deltas %q + %q came out as %q, want %q", text[:k], text[k:], got, want)
		}
		wantResult := text
		if strings.TrimSpace(text) == "" {
			wantResult = "" // a blank message is no answer
		}
		if p.Result() != wantResult {
			t.Fatalf("result %q, want %q", p.Result(), wantResult)
		}
		// A whole message, and the single object of --output-format json.
		p = &geminiParser{}
		if got, _ := lineOut(p, event(t, map[string]any{"type": "message", "role": "assistant", "content": text})); got != normalText(text) {
			t.Fatalf("message %q came out as %q", text, got)
		}
		p = &geminiParser{}
		if got, _ := lineOut(p, event(t, map[string]any{"response": text})); got != normalText(text) || p.Result() != text {
			t.Fatalf("response %q came out as %q", text, got)
		}
	})
}

func FuzzOpencodeParser(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw, text, session string) {
		feedAll(t, &opencodeParser{}, raw)
		if !utf8.ValidString(text) || !utf8.ValidString(session) {
			return
		}
		p := &opencodeParser{}
		got, end := lineOut(p, event(t, map[string]any{"type": "text", "sessionID": session, "part": map[string]any{"type": "text", "text": text}}))
		if text == "" {
			if got != "" || end || p.Result() != "" {
				t.Fatalf("an empty text gave %q (end %v)", got, end)
			}
			return
		}
		if got != normalText(text) || !end || p.Result() != text || p.Session() != session {
			t.Fatalf("text %q came out as %q (end %v), result %q, session %q", text, got, end, p.Result(), p.Session())
		}
	})
}

// FuzzTurnOutput reads any output as a turn does: the scanner sends at
// most one acknowledgment, and only a well-formed one; checkpoints are
// checkpoints; the completion report taken is never another task's, from
// the text or from the final answer.
func FuzzTurnOutput(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw string, wantAck bool) {
		feedAll(t, &plainParser{}, raw) // aider's and command agents' output
		s := &scanner{wantAck: wantAck}
		var acks, progress []string
		take := func() {
			a, p := s.take()
			if a != "" {
				acks = append(acks, a)
			}
			progress = append(progress, p...)
		}
		text := &textTail{max: maxText}
		for _, l := range strings.Split(raw, "\n") {
			s.line(l)
			text.add(l)
			take()
		}
		s.flush()
		take()
		if len(acks) > 1 || !wantAck && len(acks) > 0 {
			t.Fatalf("acknowledgments sent: %q (asked: %v)", acks, wantAck)
		}
		for _, a := range acks {
			if r, err := ack.Parse(a); err != nil || r.Kind != ack.KindAck && r.Kind != ack.KindAckError {
				t.Fatalf("sent %q as the acknowledgment: %s, %v", a, r.Kind, err)
			}
		}
		for _, p := range progress {
			if r, err := ack.Parse(p); err != nil || r.Kind != ack.KindCheckpoint {
				t.Fatalf("sent %q as a checkpoint: %s, %v", p, r.Kind, err)
			}
		}
		for _, res := range []procResult{{text: text, complete: s.complete}, {text: &textTail{max: maxText}, result: raw}} {
			c := completion(res, "T-1")
			if c == nil {
				continue
			}
			if c.Kind != ack.KindComplete || c.TaskID != "" && c.TaskID != "T-1" {
				t.Fatalf("took %+v as T-1's report", c)
			}
			if !c.Complete.Valid() && c.Complete != ack.CompleteClaimed {
				t.Fatalf("status %q", c.Complete)
			}
		}
	})
}
