package chatlog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Claude Code keeps each conversation as a JSONL file,
// <config dir>/projects/<folder>/<session id>.jsonl, where the config dir
// is $CLAUDE_CONFIG_DIR or ~/.claude and <folder> the working folder with
// every character but [A-Za-z0-9] made "-" (cut at 200 characters and a
// hash added when longer). Seen from Claude Code 2.1.331 (the version the
// claude-code preset pins) and read in its bundled program: the functions
// that name the folder (`replace(/[^a-zA-Z0-9]/g,"-")`, 200) and that
// write `{"type":"system","subtype":"turn_duration",…}` once a turn has
// completed (not when it was interrupted).
//
// One JSON object a line, each with "type":
//   - "user" whose message.content is a string (or text blocks): a prompt
//     (promptSource "typed"); text pasted into the input box comes wrapped
//     in <pasted_content id="…">…</pasted_content id="…">. "isMeta"
//     messages are the program's own (a command's expansion), not the
//     user's.
//   - "user" whose content holds tool_result blocks: what tools answered.
//   - "assistant": one line per content block of a model message (text,
//     tool_use, thinking), each with its own uuid.
//   - "system" subtype "turn_duration": the turn is over.
//   - others (mode, attachment, file-history-snapshot, api-request…): not
//     the conversation.
//
// Lines of a sub-agent ("isSidechain": true) are not the agent's own turn.
//
// A Stop hook would tell a turn's end too, but only by adding a setting to
// the user's program; the record's own line tells it as exactly, without.

type claudeFormat struct{}

func init() { register(claudeFormat{}) }

func (claudeFormat) Name() string { return "claude-code" }

// claudeDir is Claude Code's configuration directory.
func claudeDir(w Where) string {
	if d := w.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(w.Home(), ".claude")
}

// ClaudeProjectDir is the folder of Claude Code's records of the
// conversations held in dir.
func ClaudeProjectDir(w Where) string {
	return filepath.Join(claudeDir(w), "projects", claudeFolder(w.Dir))
}

func claudeFolder(dir string) string {
	var b strings.Builder
	for _, r := range dir {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			// JavaScript's replace works on UTF-16 units: a character
			// beyond the BMP becomes two dashes.
			b.WriteByte('-')
			if r > 0xFFFF {
				b.WriteByte('-')
			}
		}
	}
	return b.String()
}

func (f claudeFormat) Open(w Where) (Log, bool, error) {
	path := ""
	if w.Conversation != "" {
		// Found by its id wherever its folder is (a long folder name ends
		// with a hash of its own).
		matches, err := filepath.Glob(filepath.Join(claudeDir(w), "projects", "*", w.Conversation+".jsonl"))
		if err != nil {
			return nil, false, err
		}
		if len(matches) > 0 {
			path = matches[0]
		}
	} else {
		path = newestSince(ClaudeProjectDir(w), ".jsonl", w.Since)
	}
	if path == "" {
		return nil, false, nil
	}
	conv := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	return &jsonlLog{path: path, parse: parseClaudeLine, conv: conv}, true, nil
}

// newestSince is the newest file of dir named *ext modified since t ("":
// none).
func newestSince(dir, ext string, t time.Time) string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	type cand struct {
		path string
		mod  time.Time
	}
	var cs []cand
	for _, de := range des {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ext) {
			continue
		}
		info, err := de.Info()
		if err != nil || info.ModTime().Before(t) {
			continue
		}
		cs = append(cs, cand{filepath.Join(dir, de.Name()), info.ModTime()})
	}
	if len(cs) == 0 {
		return ""
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].mod.After(cs[j].mod) })
	return cs[0].path
}

type claudeLine struct {
	Type        string    `json:"type"`
	Subtype     string    `json:"subtype"`
	UUID        string    `json:"uuid"`
	IsMeta      bool      `json:"isMeta"`
	IsSidechain bool      `json:"isSidechain"`
	Timestamp   time.Time `json:"timestamp"`
	Message     struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type claudeBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`
	Input   map[string]any  `json:"input"`
	Content json.RawMessage `json:"content"`
	IsError bool            `json:"is_error"`
}

// ParseClaudeLine reads one line of a Claude Code record (the n-th): the
// entries it holds.
func ParseClaudeLine(line []byte, n int) []Entry { return parseClaudeLine(line, n) }

func parseClaudeLine(line []byte, n int) []Entry {
	var l claudeLine
	if json.Unmarshal(line, &l) != nil || l.IsSidechain {
		return nil
	}
	id := l.UUID
	if id == "" {
		id = fmt.Sprintf("line-%d", n)
	}
	switch l.Type {
	case "system":
		if l.Subtype == "turn_duration" {
			return []Entry{{ID: id, Kind: TurnEnd, At: l.Timestamp}}
		}
	case "user":
		if l.IsMeta {
			return nil
		}
		var s string
		if json.Unmarshal(l.Message.Content, &s) == nil {
			return []Entry{{ID: id, Kind: Prompt, Text: unpaste(s), At: l.Timestamp}}
		}
		var blocks []claudeBlock
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			return nil
		}
		var out, texts []Entry
		for i, b := range blocks {
			switch b.Type {
			case "tool_result":
				out = append(out, Entry{ID: fmt.Sprintf("%s/%d", id, i), Kind: ToolResult, Text: blockText(b.Content), Error: b.IsError, At: l.Timestamp})
			case "text":
				texts = append(texts, Entry{Text: b.Text})
			}
		}
		if len(out) == 0 && len(texts) > 0 {
			var parts []string
			for _, t := range texts {
				parts = append(parts, t.Text)
			}
			return []Entry{{ID: id, Kind: Prompt, Text: unpaste(strings.Join(parts, "\n")), At: l.Timestamp}}
		}
		return out
	case "assistant":
		var blocks []claudeBlock
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			var s string
			if json.Unmarshal(l.Message.Content, &s) == nil && s != "" {
				return []Entry{{ID: id, Kind: Text, Text: s, At: l.Timestamp}}
			}
			return nil
		}
		var out []Entry
		for i, b := range blocks {
			eid := id
			if len(blocks) > 1 {
				eid = fmt.Sprintf("%s/%d", id, i)
			}
			switch b.Type {
			case "text":
				if strings.TrimSpace(b.Text) != "" {
					out = append(out, Entry{ID: eid, Kind: Text, Text: b.Text, At: l.Timestamp})
				}
			case "tool_use":
				out = append(out, Entry{ID: eid, Kind: ToolCall, Tool: b.Name, Input: b.Input, At: l.Timestamp})
			}
		}
		return out
	}
	return nil
}

// blockText is a tool result's content: a string, or text blocks.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []claudeBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// pasteTag opens or closes what Claude Code records of a paste.
var pasteTag = regexp.MustCompile(`</?pasted_content(?: id="[^"]*")?>`)

// unpaste is a prompt as it was sent: the paste's wrapping taken off.
func unpaste(s string) string {
	return strings.TrimSpace(pasteTag.ReplaceAllString(s, ""))
}
