package chatlog

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Gemini CLI keeps each conversation as a JSONL file,
// <home>/.gemini/tmp/<project>/chats/session-<start>-<id8>.jsonl, where
// <home> is $GEMINI_CLI_HOME or the user's home, <project> the short name
// its projects registry (<home>/.gemini/projects.json, and a .project_root
// file in the folder naming the project's root) gives the working folder —
// older versions named it by the sha256 of the folder — <start> the start
// time (UTC, "2006-01-02T15-04") and <id8> the first 8 characters of the
// conversation's id. Read in the program of @google/gemini-cli 0.61.0 (the
// version the gemini preset pins; its bundle holds the modules of
// packages/core: services/chatRecordingService (the records, how they are
// written and loaded), config/storage, config/projectRegistry and
// utils/paths (where)), and seen from the program itself.
//
// One JSON object a line, appended (a whole rewrite only when a resumed
// record could not be read):
//   - the first: {"sessionId", "projectHash", "startTime", "lastUpdated",
//     "kind"};
//   - a message: {"id", "timestamp", "type", "content", …}, written again
//     whole, under the same id, when it changes (its tokens, its tool
//     calls): the later line replaces the earlier one in place;
//   - {"$set": {…}}: metadata; with "messages", the whole conversation
//     as it now is (a cancelled or rolled back request drops messages);
//   - {"$rewindTo": id}: the conversation cut before that message.
//
// Messages of type "user" are what the program was sent: a prompt typed
// (its text; "displayContent" the text shown when the program sent
// something else in its place), the program's own context
// (<session_context>…, <hook_context>…), or tool results (functionResponse
// parts). Messages of type "gemini" with a "model" are the model's
// replies: "content" its text (whole: a reply is recorded once its stream
// has ended) and "toolCalls" the tools it called, each with its "args",
// its "result" and its "status" (success, error, cancelled), added once
// every call of the reply has completed. A "gemini" message without
// "model" is one the program made itself (history it wrote again); "info",
// "warning" and "error" messages are what it showed.
//
// The record never says that a turn is over: a reply without tool calls
// may still be waiting for them (a permission question), so no TurnEnd is
// read from it.

type geminiFormat struct{}

func init() { register(geminiFormat{}) }

func (geminiFormat) Name() string { return "gemini" }

// geminiTmpDirs are the folders Gemini CLI keeps its projects' records in:
// <home>/.gemini/tmp, and <home>/.cache/.gemini/tmp where it runs in its
// macOS sandbox (SANDBOX=sandbox-exec, set by Gemini CLI itself).
func geminiTmpDirs(w Where) []string {
	home := w.Getenv("GEMINI_CLI_HOME")
	if home == "" {
		home = w.Home()
	}
	return []string{filepath.Join(home, ".gemini", "tmp"), filepath.Join(home, ".cache", ".gemini", "tmp")}
}

func (geminiFormat) Open(w Where) (Log, bool, error) {
	var path, conv string
	var err error
	if w.Conversation != "" {
		path, err = geminiByID(geminiTmpDirs(w), w.Conversation)
		conv = w.Conversation
	} else {
		path, conv, err = geminiByFolder(geminiTmpDirs(w), w.Dir, w.Since)
	}
	if err != nil || path == "" {
		return nil, false, err
	}
	p, last := newGeminiParser(), -1
	return &jsonlLog{path: path, conv: conv, parse: func(line []byte, n int) []Entry {
		if n <= last {
			// Read from its start again (rewritten): what it holds now
			// is all there is.
			p = newGeminiParser()
		}
		last = n
		return p.line(line)
	}}, true, nil
}

// geminiUnsafe is what Gemini CLI replaces in a conversation's id to name
// its file (sanitizeFilenamePart).
var geminiUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// geminiMeta is the first line of a record.
type geminiMeta struct {
	SessionID string `json:"sessionId"`
	StartTime string `json:"startTime"`
}

// readGeminiMeta reads the first line of the record at path.
func readGeminiMeta(path string) (geminiMeta, time.Time, bool) {
	var m geminiMeta
	f, err := os.Open(path)
	if err != nil {
		return m, time.Time{}, false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 4096).ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &m) != nil || m.SessionID == "" {
		return m, time.Time{}, false
	}
	start, _ := time.Parse(time.RFC3339Nano, m.StartTime)
	return m, start, true
}

// geminiByID is the record of the conversation id: among the files named
// for it in the project folders, the ones whose first line names id. Resuming a
// conversation, Gemini CLI first starts a record of its own under the same
// id, then goes on writing in the old one: the one started first is the
// conversation.
func geminiByID(tmps []string, id string) (string, error) {
	short := geminiUnsafe.ReplaceAllString(id, "_")
	if len(short) > 8 {
		short = short[:8]
	}
	best, bestStart := "", time.Time{}
	for _, tmp := range tmps {
		matches, err := filepath.Glob(filepath.Join(tmp, "*", "chats", "session-*-"+short+".jsonl"))
		if err != nil {
			return "", err
		}
		for _, m := range matches {
			meta, start, ok := readGeminiMeta(m)
			if !ok || meta.SessionID != id {
				continue
			}
			if best == "" || start.Before(bestStart) {
				best, bestStart = m, start
			}
		}
	}
	return best, nil
}

// geminiByFolder is the record of the conversation started in dir since
// since, when wilco does not know its id: the first one started since;
// else (a conversation resumed) the one written last since. With no since,
// the one written last.
func geminiByFolder(tmps []string, dir string, since time.Time) (path, conv string, err error) {
	type cand struct {
		path, conv string
		start, mod time.Time
	}
	var cs []cand
	for _, project := range geminiProjects(tmps, dir) {
		matches, err := filepath.Glob(filepath.Join(project, "chats", "session-*.jsonl"))
		if err != nil {
			return "", "", err
		}
		for _, m := range matches {
			meta, start, ok := readGeminiMeta(m)
			info, err := os.Stat(m)
			if !ok || err != nil {
				continue
			}
			cs = append(cs, cand{m, meta.SessionID, start, info.ModTime()})
		}
	}
	var pick *cand
	for i := range cs {
		c := &cs[i]
		if !since.IsZero() && !c.start.Before(since) && (pick == nil || c.start.Before(pick.start)) {
			pick = c
		}
	}
	if pick == nil {
		for i := range cs {
			c := &cs[i]
			if !c.mod.Before(since) && (pick == nil || c.mod.After(pick.mod)) {
				pick = c
			}
		}
	}
	if pick == nil {
		return "", "", nil
	}
	return pick.path, pick.conv, nil
}

// geminiProjects are the folders Gemini CLI may keep dir's records in:
// the one its projects registry names, the ones whose .project_root names
// dir, and the one named by dir's sha256 (older versions).
func geminiProjects(tmps []string, dir string) []string {
	roots := []string{}
	if abs, err := filepath.Abs(dir); err == nil {
		roots = append(roots, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			roots = append(roots, real)
		}
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, tmp := range tmps {
		var registry struct {
			Projects map[string]string `json:"projects"`
		}
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(tmp), "projects.json")); err == nil && json.Unmarshal(b, &registry) == nil {
			for _, r := range roots {
				if slug := registry.Projects[r]; slug != "" && !strings.ContainsAny(slug, `/\`) {
					add(filepath.Join(tmp, slug))
				}
			}
		}
		markers, _ := filepath.Glob(filepath.Join(tmp, "*", ".project_root"))
		for _, m := range markers {
			b, err := os.ReadFile(m)
			if err != nil {
				continue
			}
			owner := filepath.Clean(strings.TrimSpace(string(b)))
			for _, r := range roots {
				if owner == r {
					add(filepath.Dir(m))
				}
			}
		}
		for _, r := range roots {
			sum := sha256.Sum256([]byte(r))
			add(filepath.Join(tmp, hex.EncodeToString(sum[:])))
		}
	}
	sort.Strings(out)
	return out
}

// ParseGemini reads a Gemini CLI record: the entries its whole lines
// hold (a last line not ended yet is still being written).
func ParseGemini(data []byte) []Entry {
	p := newGeminiParser()
	var out []Entry
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return out
		}
		if line := data[:i]; len(bytes.TrimSpace(line)) > 0 {
			out = append(out, p.line(line)...)
		}
		data = data[i+1:]
	}
}

// geminiParser turns a record's lines, in order, into entries. Since a
// message is written again as it changes and the conversation may be
// rolled back or written again under new ids, an entry is made once, the
// first time what it holds is whole, and never changed or taken back:
//
//   - a prompt: the first time its message is seen. A "user" message is
//     not a prompt when it holds no text but tool results, when it is the
//     program's own context, when it is the program's follow-up of the
//     last prompt (its "displayContent" shows that prompt: a loop
//     detected, "Please continue."), or when its text is that of a user
//     message still in the conversation (the program wrote its history
//     again, with new ids, after a request was cancelled: a prompt typed
//     again word for word while the first is still in the conversation
//     is read so too);
//   - the agent's text: the first time its reply is seen with text;
//   - a tool call and its result: the first time the reply is seen with
//     that call (calls are written with their results).
//
// Nothing is partial: Gemini CLI writes a message once it is whole.
type geminiParser struct {
	made    map[string]bool // entry ids made
	decided map[string]bool // user messages read (a prompt or not)
	// live are the ids of the conversation as it now is, words its user
	// messages' text.
	live       []string
	isLive     map[string]bool
	words      map[string]string
	liveWords  map[string]int
	lastPrompt string
}

func newGeminiParser() *geminiParser {
	return &geminiParser{made: map[string]bool{}, decided: map[string]bool{}, isLive: map[string]bool{}, words: map[string]string{}, liveWords: map[string]int{}}
}

type geminiMessage struct {
	ID             string           `json:"id"`
	Timestamp      string           `json:"timestamp"`
	Type           string           `json:"type"`
	Content        json.RawMessage  `json:"content"`
	DisplayContent json.RawMessage  `json:"displayContent"`
	Model          json.RawMessage  `json:"model"`
	ToolCalls      []geminiToolCall `json:"toolCalls"`
}

type geminiToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Args      map[string]any  `json:"args"`
	Result    json.RawMessage `json:"result"`
	Status    string          `json:"status"`
	Timestamp string          `json:"timestamp"`
}

// line reads one line: the entries it makes.
func (p *geminiParser) line(b []byte) []Entry {
	var rec map[string]json.RawMessage
	if json.Unmarshal(b, &rec) != nil {
		return nil
	}
	if raw, ok := rec["$rewindTo"]; ok {
		var id string
		if json.Unmarshal(raw, &id) == nil {
			p.rewind(id)
		}
		return nil
	}
	if _, ok := rec["id"]; ok {
		var m geminiMessage
		if json.Unmarshal(b, &m) != nil || m.ID == "" {
			return nil
		}
		out := p.message(m)
		p.keep(m)
		return out
	}
	list := rec["messages"] // a first line holding the conversation
	if raw, ok := rec["$set"]; ok {
		var set map[string]json.RawMessage
		if json.Unmarshal(raw, &set) != nil {
			return nil
		}
		list = set["messages"]
	}
	if list == nil {
		return nil
	}
	var msgs []json.RawMessage
	if json.Unmarshal(list, &msgs) != nil {
		return nil
	}
	var out []Entry
	var ids []string
	for _, raw := range msgs {
		var m geminiMessage
		if json.Unmarshal(raw, &m) != nil || m.ID == "" {
			continue
		}
		out = append(out, p.message(m)...)
		p.remember(m)
		ids = append(ids, m.ID)
	}
	p.setLive(ids)
	return out
}

// message makes the entries m holds that were not made yet.
func (p *geminiParser) message(m geminiMessage) []Entry {
	at, _ := time.Parse(time.RFC3339Nano, m.Timestamp)
	switch m.Type {
	case "user":
		if p.decided[m.ID] {
			return nil
		}
		p.decided[m.ID] = true
		content, hasText := geminiText(m.Content)
		if !hasText || geminiIgnored(content) {
			return nil
		}
		text := content
		if display, ok := geminiText(m.DisplayContent); ok {
			text = display
			if Words(display) == p.lastPrompt {
				return nil
			}
		}
		if w := Words(text); w == "" || p.liveWords[w] > 0 {
			return nil
		}
		p.lastPrompt = Words(text)
		p.made[m.ID] = true
		return []Entry{{ID: m.ID, Kind: Prompt, Text: text, At: at}}
	case "gemini":
		if m.Model == nil {
			return nil
		}
		var out []Entry
		if !p.made[m.ID] {
			if text, _ := geminiText(m.Content); strings.TrimSpace(text) != "" {
				p.made[m.ID] = true
				out = append(out, Entry{ID: m.ID, Kind: Text, Text: text, At: at})
			}
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == "" {
				continue
			}
			tat, err := time.Parse(time.RFC3339Nano, tc.Timestamp)
			if err != nil {
				tat = at
			}
			if !p.made[tc.ID] {
				p.made[tc.ID] = true
				out = append(out, Entry{ID: tc.ID, Kind: ToolCall, Tool: tc.Name, Input: tc.Args, At: tat})
			}
			rid := tc.ID + "/result"
			if !p.made[rid] && (len(tc.Result) > 0 && string(tc.Result) != "null" || tc.Status != "") {
				p.made[rid] = true
				out = append(out, Entry{ID: rid, Kind: ToolResult, Text: geminiResult(tc.Result), Error: tc.Status != "" && tc.Status != "success", At: tat})
			}
		}
		return out
	}
	return nil
}

// remember notes the words of a user message (for the conversation's
// prompts).
func (p *geminiParser) remember(m geminiMessage) {
	if m.Type != "user" {
		return
	}
	text, _ := geminiText(m.Content)
	if display, ok := geminiText(m.DisplayContent); ok {
		text = display
	}
	p.words[m.ID] = Words(text)
}

// keep adds a message line's message to the conversation, once.
func (p *geminiParser) keep(m geminiMessage) {
	if p.isLive[m.ID] {
		return
	}
	p.remember(m)
	p.live = append(p.live, m.ID)
	p.isLive[m.ID] = true
	if w := p.words[m.ID]; w != "" {
		p.liveWords[w]++
	}
}

// setLive makes ids the conversation.
func (p *geminiParser) setLive(ids []string) {
	p.live = ids
	p.isLive = map[string]bool{}
	p.liveWords = map[string]int{}
	for _, id := range ids {
		p.isLive[id] = true
		if w := p.words[id]; w != "" {
			p.liveWords[w]++
		}
	}
}

// rewind cuts the conversation before the message id (all of it when id
// is not there), as Gemini CLI loads a record.
func (p *geminiParser) rewind(id string) {
	cut := 0
	for i, l := range p.live {
		if l == id {
			cut = i
			break
		}
	}
	p.setLive(p.live[:cut])
}

// geminiIgnored is Gemini CLI's own test of a user message that is not the
// user's (isIgnoredUserContent): empty, a command, its context.
func geminiIgnored(s string) bool {
	t := strings.TrimSpace(s)
	return t == "" || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "?") ||
		strings.HasPrefix(t, "<session_context>") || strings.HasPrefix(t, "<hook_context>")
}

// geminiPart is one part of a message's content.
type geminiPart struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	FunctionResponse *struct {
		Response map[string]any `json:"response"`
	} `json:"functionResponse"`
}

// geminiText is the text of a content (a string, a part or parts),
// thoughts left out; ok is false when it holds no text part at all.
func geminiText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []geminiPart
	if json.Unmarshal(raw, &parts) != nil {
		var one geminiPart
		if json.Unmarshal(raw, &one) != nil {
			return "", false
		}
		parts = []geminiPart{one}
	}
	var b strings.Builder
	ok := false
	for _, part := range parts {
		if part.Text != nil && !part.Thought {
			b.WriteString(*part.Text)
			ok = true
		}
	}
	return b.String(), ok
}

// geminiResult is what a tool answered: its functionResponse's output (or
// error), else the response as JSON, or the text parts.
func geminiResult(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []geminiPart
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, part := range parts {
		switch {
		case part.FunctionResponse != nil:
			r := part.FunctionResponse.Response
			if v, ok := r["output"].(string); ok {
				out = append(out, v)
			} else if v, ok := r["error"].(string); ok {
				out = append(out, v)
			} else if len(r) > 0 {
				b, _ := json.Marshal(r)
				out = append(out, string(b))
			}
		case part.Text != nil && !part.Thought:
			out = append(out, *part.Text)
		}
	}
	return strings.Join(out, "\n")
}
