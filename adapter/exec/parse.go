package exec

import (
	"encoding/json"
	"fmt"
	"strings"
)

// outputParser reads an agent's output line by line. It turns each line
// into the text the agent wrote — what is scanned for the ACK, kept as the
// turn's output and, for a message, sent back — and remembers the agent's
// final answer and session id when its format says them.
type outputParser interface {
	// Line reads one line (without its newline). It returns the lines of
	// text it holds, and whether a block of text — one message of the
	// agent — ended with them.
	Line(line string) (text []string, end bool)
	// Flush returns the text still held back at the end of the output.
	Flush() []string
	// Result is the agent's final answer, "" when the format has none.
	Result() string
	// Session is the agent's session id, "" when unknown.
	Session() string
}

// turnEnder is an outputParser whose format says when the agent's turn is
// over (Claude Code's "result" event): what still runs of the program
// after it is not the turn.
type turnEnder interface {
	// Ended reports whether the output said the turn is over, and
	// whether it said it failed.
	Ended() (ended, failed bool)
}

// plainParser reads text output: every line is text.
type plainParser struct{}

func (*plainParser) Line(line string) ([]string, bool) { return []string{line}, false }
func (*plainParser) Flush() []string                   { return nil }
func (*plainParser) Result() string                    { return "" }
func (*plainParser) Session() string                   { return "" }

// object decodes line as a JSON object; ok is false for anything else,
// which the parsers then take as plain text (stderr is merged in).
func object(line string, v any) bool {
	s := strings.TrimSpace(line)
	if !strings.HasPrefix(s, "{") {
		return false
	}
	return json.Unmarshal([]byte(s), v) == nil
}

// lines splits text into its lines, without a trailing empty one.
func lines(text string) []string {
	text = strings.TrimRight(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// claudeParser reads Claude Code's --output-format stream-json (and json):
// "assistant" events carry the message's text blocks, "system" and
// "result" the session_id, "result" the final answer in "result".
type claudeParser struct {
	session string
	result  string
	text    bool // an assistant message had text
	// ended and failed: a "result" event came, and its is_error.
	ended, failed bool
}

func (p *claudeParser) Line(line string) ([]string, bool) {
	var ev struct {
		Type      string          `json:"type"`
		Subtype   string          `json:"subtype"`
		SessionID string          `json:"session_id"`
		Result    *string         `json:"result"`
		IsError   bool            `json:"is_error"`
		Message   json.RawMessage `json:"message"`
		// An api_retry event: {"type":"system","subtype":"api_retry",
		// "attempt":1,"max_retries":10,"error_status":401,
		// "error":"authentication_failed"}.
		Attempt     int    `json:"attempt"`
		MaxRetries  int    `json:"max_retries"`
		ErrorStatus int    `json:"error_status"`
		Error       string `json:"error"`
	}
	if !object(line, &ev) {
		return []string{line}, false
	}
	if ev.SessionID != "" {
		p.session = ev.SessionID
	}
	switch ev.Type {
	case "system":
		if ev.Subtype == "api_retry" && ev.ErrorStatus != 0 {
			return []string{fmt.Sprintf("API Error: %d %s (the CLI retries: attempt %d of %d)", ev.ErrorStatus, ev.Error, ev.Attempt, ev.MaxRetries)}, true
		}
		if ev.Subtype == "api_retry" {
			// No HTTP status: the API did not answer at all.
			return []string{fmt.Sprintf("API Error: no response from the model's API (%s; the CLI retries: attempt %d of %d)", ev.Error, ev.Attempt, ev.MaxRetries)}, true
		}
	case "assistant":
		var m struct {
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(ev.Message, &m) != nil {
			return nil, false
		}
		text := contentText(m.Content)
		if text == "" {
			return nil, false
		}
		p.text = true
		return lines(text), true
	case "result":
		p.ended, p.failed = true, ev.IsError
		if ev.Result == nil {
			return nil, false
		}
		p.result = *ev.Result
		if !p.text {
			// --output-format json: the result is all the text there is.
			return lines(p.result), true
		}
	}
	return nil, false
}

// contentText joins the text blocks of a message's content (an array of
// blocks, or a plain string).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (p *claudeParser) Ended() (bool, bool) { return p.ended, p.failed }

func (*claudeParser) Flush() []string   { return nil }
func (p *claudeParser) Result() string  { return p.result }
func (p *claudeParser) Session() string { return p.session }

// codexParser reads `codex exec --json`: "thread.started" carries the
// thread_id (the session to resume), "item.completed" items of type
// agent_message the agent's text; the last one is the final answer. The
// older form {"msg": {"type": "agent_message", "message": …}} is read too.
type codexParser struct {
	session string
	result  string
}

func (p *codexParser) Line(line string) ([]string, bool) {
	var ev struct {
		Type     string `json:"type"`
		ThreadID string `json:"thread_id"`
		Message  string `json:"message"`
		Item     *struct {
			Type     string `json:"type"`
			ItemType string `json:"item_type"`
			Text     string `json:"text"`
			Message  string `json:"message"`
		} `json:"item"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
		Msg *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"msg"`
	}
	if !object(line, &ev) {
		return []string{line}, false
	}
	switch ev.Type {
	case "thread.started":
		if ev.ThreadID != "" {
			p.session = ev.ThreadID
		}
	case "item.completed":
		if ev.Item == nil {
			break
		}
		switch t := firstNonEmpty(ev.Item.Type, ev.Item.ItemType); t {
		case "agent_message", "assistant_message":
			p.result = ev.Item.Text
			return lines(ev.Item.Text), true
		case "error":
			return []string{"error: " + firstNonEmpty(ev.Item.Message, ev.Item.Text)}, true
		}
	case "turn.failed":
		if ev.Error != nil {
			return []string{"error: " + ev.Error.Message}, true
		}
	case "error":
		return []string{"error: " + ev.Message}, true
	}
	if ev.Msg != nil && ev.Msg.Type == "agent_message" {
		p.result = ev.Msg.Message
		return lines(ev.Msg.Message), true
	}
	return nil, false
}

func (*codexParser) Flush() []string   { return nil }
func (p *codexParser) Result() string  { return p.result }
func (p *codexParser) Session() string { return p.session }

// geminiParser reads Gemini CLI's --output-format stream-json: "init"
// carries the session_id, "message" events of role assistant the text —
// in pieces when "delta" is true — and the last assistant message before
// the end is the final answer. The single object of --output-format json
// ({"response": …}) is read too.
type geminiParser struct {
	session string
	partial string          // a delta's unfinished line
	message strings.Builder // the current assistant message
	result  string
}

func (p *geminiParser) Line(line string) ([]string, bool) {
	var ev struct {
		Type      string  `json:"type"`
		SessionID string  `json:"session_id"`
		Role      string  `json:"role"`
		Content   string  `json:"content"`
		Delta     bool    `json:"delta"`
		Response  *string `json:"response"`
		Message   string  `json:"message"`
		Error     *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if !object(line, &ev) {
		return []string{line}, false
	}
	if ev.SessionID != "" {
		p.session = ev.SessionID
	}
	switch {
	case ev.Type == "message" && ev.Role == "assistant":
		p.message.WriteString(ev.Content)
		if !ev.Delta {
			out := p.flushPartial()
			return append(out, lines(ev.Content)...), true
		}
		p.partial += ev.Content
		i := strings.LastIndexByte(p.partial, '\n')
		if i < 0 {
			return nil, false
		}
		done := strings.TrimSuffix(p.partial[:i], "\r") // a CRLF ends the last line too
		p.partial = p.partial[i+1:]
		return strings.Split(strings.ReplaceAll(done, "\r\n", "\n"), "\n"), false
	case ev.Type == "message":
		return nil, false
	case ev.Type == "" && ev.Response != nil:
		p.result = *ev.Response
		return lines(*ev.Response), true
	}
	// Any other event ends the message in progress.
	out := p.endMessage()
	if ev.Type == "error" {
		msg := ev.Message
		if ev.Error != nil {
			msg = ev.Error.Message
		}
		out = append(out, "error: "+msg)
	}
	return out, len(out) > 0
}

func (p *geminiParser) flushPartial() []string {
	if p.partial == "" {
		return nil
	}
	s := p.partial
	p.partial = ""
	return []string{s}
}

func (p *geminiParser) endMessage() []string {
	out := p.flushPartial()
	if m := strings.TrimSpace(p.message.String()); m != "" {
		p.result = p.message.String()
	}
	p.message.Reset()
	return out
}

func (p *geminiParser) Flush() []string { return p.endMessage() }
func (p *geminiParser) Result() string  { return p.result }
func (p *geminiParser) Session() string { return p.session }

// firstNonEmpty returns the first of s that is not "".
func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// opencodeParser reads `opencode run --format json`: "text" events carry
// the agent's text in part.text (the last is the final answer), every
// event the sessionID, "error" events an error.
type opencodeParser struct {
	session string
	result  string
}

func (p *opencodeParser) Line(line string) ([]string, bool) {
	var ev struct {
		Type      string          `json:"type"`
		SessionID string          `json:"sessionID"`
		Error     json.RawMessage `json:"error"`
		Part      *struct {
			SessionID string `json:"sessionID"`
			Text      string `json:"text"`
		} `json:"part"`
	}
	if !object(line, &ev) {
		return []string{line}, false
	}
	if ev.SessionID != "" {
		p.session = ev.SessionID
	} else if ev.Part != nil && ev.Part.SessionID != "" {
		p.session = ev.Part.SessionID
	}
	switch ev.Type {
	case "text":
		if ev.Part == nil || ev.Part.Text == "" {
			return nil, false
		}
		p.result = ev.Part.Text
		return lines(ev.Part.Text), true
	case "error":
		return []string{"error: " + errorText(ev.Error)}, true
	}
	return nil, false
}

// errorText is the message of an error that may be a string or an object
// with a message (possibly under "data").
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var e struct {
		Name    string `json:"name"`
		Message string `json:"message"`
		Data    struct {
			Message string `json:"message"`
		} `json:"data"`
	}
	if json.Unmarshal(raw, &e) == nil {
		if m := firstNonEmpty(e.Data.Message, e.Message, e.Name); m != "" {
			return m
		}
	}
	return string(raw)
}

func (*opencodeParser) Flush() []string   { return nil }
func (p *opencodeParser) Result() string  { return p.result }
func (p *opencodeParser) Session() string { return p.session }
