package chatlog

// Codex CLI's record of a conversation: its rollout, one JSON object a line.
//
// The format comes from Codex's own source (github.com/openai/codex,
// codex-rs, the version wilco's preset pins: 0.169.0) and was read from the
// files the real 0.169.0 TUI wrote (testdata/codex):
//
//   - rollout/src/recorder.rs (precompute_log_file_info, JsonlWriter): the
//     file is $CODEX_HOME/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl,
//     dated in Codex's local time, $CODEX_HOME defaulting to ~/.codex. It
//     is created at the first prompt (not when the program starts), its
//     first line the session_meta; each item is then appended whole, as
//     one line {"timestamp", "ordinal", "type", "payload"} flushed at once.
//     A resumed conversation (`codex resume <id>`) appends to the same
//     file. (The 0.169.0 TUI has the rollout written by an app-server
//     daemon it starts under $CODEX_HOME, which outlives it — or, run
//     with --no-daemon as wilco's preset runs it, by its own process: the
//     file is the same.) An idle rollout may later be compressed into a
//     .jsonl.zst sibling, which Codex turns back into .jsonl when it
//     resumes it.
//   - protocol/src/protocol.rs (RolloutItem, SessionMeta, EventMsg),
//     protocol/src/models.rs (ResponseItem), protocol/src/items.rs
//     (TurnItem), rollout/src/policy.rs (which of them are written):
//     "type" is session_meta (payload: id, timestamp, cwd, thread_source,
//     parent_thread_id), response_item (the model's history: a message of
//     role developer, user or assistant, function_call, custom_tool_call,
//     local_shell_call, web_search_call, tool_search_call and their
//     outputs), event_msg (task_started, item_completed, task_complete,
//     turn_aborted…), turn_context, world_state, compacted,
//     token_usage_record.
//
// What wilco reads of it:
//
//   - Prompt: the user's message as Codex took it, the event_msg
//     item_completed whose item is a UserMessage (the text of its parts,
//     joined as UserMessageItem::message joins them), or the older
//     user_message event. Not the response_item messages of role user:
//     Codex also records there what it adds to the conversation itself —
//     its <environment_context>, the project's AGENTS.md ("# AGENTS.md
//     instructions for <dir>"), a <turn_aborted> note, skills — beside a
//     copy of the prompt.
//   - Text: a response_item message of role assistant (its output_text
//     parts). Codex writes a message once it is whole: a rollout holds no
//     partial entry.
//   - ToolCall: function_call (its JSON arguments as Input; a tool of a
//     namespace, such as an MCP server's, is named namespace__name as
//     Codex flattens it, protocol/src/tool_name.rs), custom_tool_call
//     (apply_patch: Input {"input": the patch}), local_shell_call,
//     web_search_call, tool_search_call.
//   - ToolResult: function_call_output, custom_tool_call_output,
//     tool_search_output. Error when the item_completed of that call
//     (CommandExecution, FileChange, McpToolCall, DynamicToolCall, written
//     before the output) says it failed or was declined, when an output
//     says success: false, or when its text, as Codex words it for the
//     model, says so (codexOutputFailed: an exit code other than 0, a
//     patch that does not apply, a command the user declined — the cases
//     for which 0.169.0 records no failed item).
//   - TurnEnd: task_complete (Error, with the error's message as Text,
//     when the turn failed — the model API refused it), and turn_aborted
//     (Text "aborted: <reason>": interrupted by the user).
//
// An Entry's ID is its line's number in the file ("line-N"): the file is
// only ever appended to, so a line keeps its number.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

func init() { register(codexFormat{}) }

// codexFormat reads Codex CLI's rollouts.
type codexFormat struct{}

// Name is Codex's preset name.
func (codexFormat) Name() string { return "codex" }

// codexStartSlack is how much earlier than Where.Since a conversation's
// recorded start may be and still be the program's: Codex records its start
// to the millisecond, wilco's clock reading may come a little after.
const codexStartSlack = time.Second

// codexMetaMax bounds the first line read to learn a rollout's folder and
// start: the session_meta carries Codex's base instructions (tens of KiB).
const codexMetaMax = 16 << 20

// Open finds the rollout of the conversation w names: by its id when
// w.Conversation is set (a resumed conversation: Codex appends to its
// file), else the conversation Codex started in w.Dir at or after w.Since,
// the earliest of them when there are several (a program started later in
// the same folder has a later one). ok is false until Codex has written it
// (at the first prompt). A conversation resumed without its id (`codex
// resume --last`) began before w.Since: it is found by its id only, which
// the Log of its first run gave (Conversation).
func (codexFormat) Open(w Where) (Log, bool, error) {
	root := filepath.Join(codexHome(w), "sessions")
	if w.Conversation != "" {
		path, err := codexRolloutByID(root, w.Conversation)
		if err != nil || path == "" {
			return nil, false, err
		}
		return newCodexLog(path, w.Conversation), true, nil
	}
	if w.Dir == "" {
		return nil, false, errors.New("codex: a conversation is found by its id or by its folder, and neither was given")
	}
	found, err := codexRolloutsSince(root, w.Dir, w.Since, time.Now())
	if err != nil || len(found) == 0 {
		return nil, false, err
	}
	return newCodexLog(found[0].path, found[0].id), true, nil
}

// codexHome is Codex's home directory: $CODEX_HOME, else ~/.codex.
func codexHome(w Where) string {
	if h := w.Getenv("CODEX_HOME"); h != "" {
		return h
	}
	return filepath.Join(w.Home(), ".codex")
}

// codexRolloutByID is the rollout of conversation id under root (Codex's
// folder of rollouts), "" when there is none yet.
func codexRolloutByID(root, id string) (string, error) {
	paths, err := filepath.Glob(filepath.Join(root, "[0-9]*", "[0-9]*", "[0-9]*", "rollout-*.jsonl"))
	if err != nil {
		return "", fmt.Errorf("codex: listing %s: %w", root, err)
	}
	for _, p := range paths {
		if strings.HasSuffix(filepath.Base(p), "-"+id+".jsonl") {
			return p, nil
		}
	}
	return "", nil
}

// codexRollout is a rollout found for a folder: its conversation's id and
// start.
type codexRollout struct {
	path  string
	id    string
	start time.Time
}

// codexRolloutsSince lists the rollouts under root of the conversations
// started in dir at or after since (up to now), earliest first. Only the
// date folders those days may be filed under are read (Codex dates them in
// its local time: a day either side), only the files written since, and of
// each only its first line. Conversations Codex started itself (a
// sub-agent's) are left out.
func codexRolloutsSince(root, dir string, since, now time.Time) ([]codexRollout, error) {
	from := since.Add(-codexStartSlack)
	var found []codexRollout
	utc := since.UTC()
	day := time.Date(utc.Year(), utc.Month(), utc.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
	for last := now.UTC().AddDate(0, 0, 1); !day.After(last); day = day.AddDate(0, 0, 1) {
		folder := filepath.Join(root, day.Format("2006"), day.Format("01"), day.Format("02"))
		names, err := os.ReadDir(folder)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("codex: listing %s: %w", folder, err)
		}
		for _, n := range names {
			name := n.Name()
			if n.IsDir() || !strings.HasPrefix(name, "rollout-") || !strings.HasSuffix(name, ".jsonl") {
				continue
			}
			path := filepath.Join(folder, name)
			if info, err := n.Info(); err != nil || info.ModTime().Before(from) {
				continue
			}
			meta, ok := codexReadMeta(path)
			if !ok || meta.subAgent() || meta.start.Before(from) || !sameDir(meta.Cwd, dir) {
				continue
			}
			found = append(found, codexRollout{path: path, id: meta.ID, start: meta.start})
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if !found[i].start.Equal(found[j].start) {
			return found[i].start.Before(found[j].start)
		}
		return found[i].path < found[j].path
	})
	return found, nil
}

// codexMeta is what wilco reads of a session_meta's payload.
type codexMeta struct {
	ID           string          `json:"id"`
	SessionID    string          `json:"session_id"`
	Timestamp    string          `json:"timestamp"`
	Cwd          string          `json:"cwd"`
	ThreadSource string          `json:"thread_source"`
	ParentThread string          `json:"parent_thread_id"`
	Source       json.RawMessage `json:"source"`
	start        time.Time
}

// subAgent reports whether Codex started the conversation itself: a
// sub-agent's (its source or thread_source says so, or it has a parent),
// a review's or a memory consolidation's.
func (m codexMeta) subAgent() bool {
	switch m.ThreadSource {
	case "subagent", "guardian_review", "memory_consolidation":
		return true
	}
	return m.ParentThread != "" || bytes.Contains(m.Source, []byte(`"subagent"`))
}

// codexReadMeta reads the session_meta on a rollout's first line; ok is
// false while that line is not whole, or is not a session_meta.
func codexReadMeta(path string) (codexMeta, bool) {
	f, err := os.Open(path)
	if err != nil {
		return codexMeta{}, false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(io.LimitReader(f, codexMetaMax), 64<<10).ReadBytes('\n')
	if err != nil {
		return codexMeta{}, false
	}
	return codexParseMeta(line)
}

// codexParseMeta reads a session_meta line.
func codexParseMeta(line []byte) (codexMeta, bool) {
	var l struct {
		Timestamp string    `json:"timestamp"`
		Type      string    `json:"type"`
		Payload   codexMeta `json:"payload"`
	}
	if json.Unmarshal(line, &l) != nil || l.Type != "session_meta" {
		return codexMeta{}, false
	}
	m := l.Payload
	if m.ID == "" {
		m.ID = m.SessionID
	}
	for _, ts := range []string{m.Timestamp, l.Timestamp} {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			m.start = t
			return m, m.ID != ""
		}
	}
	return codexMeta{}, false
}

// sameDir reports whether two paths name the same folder (either may go
// through a symbolic link, as /tmp does on macOS).
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// codexLog is one rollout, read as it grows (a JSONL record: each Read
// parses the whole lines appended since the last one).
type codexLog struct {
	*jsonlLog
	parser *codexParser
}

func newCodexLog(path, conv string) *codexLog {
	p := &codexParser{}
	return &codexLog{parser: p, jsonlLog: &jsonlLog{path: path, conv: conv, parse: func(line []byte, n int) []Entry {
		if e, ok := p.line(line); ok {
			e.ID = "line-" + strconv.Itoa(n+1)
			return []Entry{e}
		}
		return nil
	}}}
}

// Conversation is Codex's id of the conversation (`codex resume <id>`).
func (l *codexLog) Conversation() string {
	if l.conv != "" {
		return l.conv
	}
	return l.parser.conv
}

// codexParser turns a rollout's lines into Entries, line by line: what it
// keeps between lines is the line count, the calls Codex said failed and
// the last prompt (Codex versions that record a prompt twice, as an item
// and as a legacy event, give one Prompt).
type codexParser struct {
	lines  int
	failed map[string]bool
	// prompt is the text of the last entry when it is a Prompt.
	prompt string
	conv   string
}

// feed parses the whole lines at the start of data and returns their
// entries and the bytes they take; a last line without its newline is
// left for the next feed, when it is whole.
func (p *codexParser) feed(data []byte) (entries []Entry, n int) {
	for {
		i := bytes.IndexByte(data[n:], '\n')
		if i < 0 {
			return entries, n
		}
		p.lines++
		if e, ok := p.line(data[n : n+i]); ok {
			e.ID = "line-" + strconv.Itoa(p.lines)
			entries = append(entries, e)
		}
		n += i + 1
	}
}

// parseCodex is every entry of a rollout's whole lines.
func parseCodex(data []byte) []Entry {
	var p codexParser
	entries, _ := p.feed(data)
	return entries
}

// codexLine is one line of a rollout.
type codexLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// codexItem is the payload of a response_item or an event_msg: the fields
// wilco reads of any of them.
type codexItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	Action    json.RawMessage `json:"action"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Tools     json.RawMessage `json:"tools"`
	Message   json.RawMessage `json:"message"`
	Item      json.RawMessage `json:"item"`
	Error     json.RawMessage `json:"error"`
	Reason    string          `json:"reason"`
}

// codexTurnItem is the item of an item_completed event.
type codexTurnItem struct {
	Type     string          `json:"type"`
	ID       string          `json:"id"`
	Content  json.RawMessage `json:"content"`
	Status   string          `json:"status"`
	ExitCode *float64        `json:"exit_code"`
	Success  *bool           `json:"success"`
	Error    json.RawMessage `json:"error"`
}

// line is the entry of one line, ok false when it makes none.
func (p *codexParser) line(b []byte) (Entry, bool) {
	var l codexLine
	if json.Unmarshal(b, &l) != nil {
		return Entry{}, false
	}
	at, _ := time.Parse(time.RFC3339Nano, l.Timestamp)
	switch l.Type {
	case "session_meta":
		if m, ok := codexParseMeta(b); ok && p.conv == "" {
			p.conv = m.ID
		}
		return Entry{}, false
	case "response_item", "event_msg":
	default:
		return Entry{}, false
	}
	var it codexItem
	if json.Unmarshal(l.Payload, &it) != nil {
		return Entry{}, false
	}
	var e Entry
	if l.Type == "event_msg" {
		e = p.event(it)
	} else {
		e = p.responseItem(it)
	}
	if e.Kind == "" {
		return Entry{}, false
	}
	if e.Kind == Prompt {
		if p.prompt != "" && Words(e.Text) == Words(p.prompt) {
			return Entry{}, false
		}
		p.prompt = e.Text
	} else {
		p.prompt = ""
	}
	e.At = at
	return e, true
}

// event is the entry of an event_msg (Kind "" when none).
func (p *codexParser) event(it codexItem) Entry {
	switch it.Type {
	case "item_completed":
		var item codexTurnItem
		if json.Unmarshal(it.Item, &item) != nil {
			return Entry{}
		}
		if item.Type == "UserMessage" {
			return Entry{Kind: Prompt, Text: codexUserText(item.Content)}
		}
		if item.failed() {
			if p.failed == nil {
				p.failed = map[string]bool{}
			}
			p.failed[item.ID] = true
		}
	case "user_message":
		var text string
		if json.Unmarshal(it.Message, &text) == nil {
			return Entry{Kind: Prompt, Text: text}
		}
	case "task_complete", "turn_complete":
		if msg, failed := codexError(it.Error); failed {
			return Entry{Kind: TurnEnd, Text: msg, Error: true}
		}
		return Entry{Kind: TurnEnd}
	case "turn_aborted":
		return Entry{Kind: TurnEnd, Text: "aborted: " + it.Reason}
	}
	return Entry{}
}

// failed reports whether a completed tool item says its call failed.
func (t *codexTurnItem) failed() bool {
	switch t.Status {
	case "failed", "declined":
		return true
	}
	if t.ExitCode != nil && *t.ExitCode != 0 {
		return true
	}
	if t.Success != nil && !*t.Success {
		return true
	}
	_, failed := codexError(t.Error)
	return failed
}

// codexError reads an error field: absent or null is none; an object's
// message, or a string, is its text.
func codexError(raw json.RawMessage) (msg string, failed bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return obj.Message, true
	}
	_ = json.Unmarshal(raw, &msg)
	return msg, true
}

// responseItem is the entry of a response_item (Kind "" when none).
func (p *codexParser) responseItem(it codexItem) Entry {
	switch it.Type {
	case "message":
		if it.Role != "assistant" {
			return Entry{}
		}
		text, _ := codexOutputText(it.Content)
		return Entry{Kind: Text, Text: text}
	case "function_call":
		return Entry{Kind: ToolCall, Tool: codexToolName(it.Namespace, it.Name), Input: codexInput(it.Arguments, "arguments")}
	case "custom_tool_call":
		return Entry{Kind: ToolCall, Tool: it.Name, Input: codexInput(it.Input, "input")}
	case "local_shell_call":
		return Entry{Kind: ToolCall, Tool: "local_shell", Input: codexInput(it.Action, "action")}
	case "web_search_call":
		return Entry{Kind: ToolCall, Tool: "web_search", Input: codexInput(it.Action, "action")}
	case "tool_search_call":
		return Entry{Kind: ToolCall, Tool: "tool_search", Input: codexInput(it.Arguments, "arguments")}
	case "function_call_output", "custom_tool_call_output":
		text, failed := codexOutputText(it.Output)
		return Entry{Kind: ToolResult, Text: text, Error: failed || p.failed[it.CallID] || codexOutputFailed(text)}
	case "tool_search_output":
		return Entry{Kind: ToolResult, Text: codexToolNames(it.Tools)}
	}
	return Entry{}
}

// codexOutputFailed reports whether a tool's output, as Codex words it for
// the model, says the call failed: its header ("Chunk ID", "Wall time",
// "Process exited with code N" of exec_command; "Exit code: N" of
// apply_patch and the shell tools) gives an exit code other than 0, or
// instead of the "Output:" that follows it there is "aborted by user" or
// "… rejected by user" (a command the user declined), or the output is
// apply_patch's "apply_patch verification failed: …" (a patch that does
// not apply).
func codexOutputFailed(text string) bool {
	if strings.HasPrefix(text, "apply_patch verification failed") {
		return true
	}
	for _, line := range strings.SplitN(text, "\n", 8) {
		name, value, ok := strings.Cut(line, ":")
		if code, found := strings.CutPrefix(line, "Process exited with code "); found {
			name, value, ok = "Exit code", code, true
		}
		switch {
		case ok && name == "Exit code":
			if code, err := strconv.Atoi(strings.TrimSpace(value)); err == nil && code != 0 {
				return true
			}
		case ok && (name == "Chunk ID" || name == "Wall time" || name == "Original token count" ||
			name == "Process running with session ID" || name == "Total output lines"):
		default:
			return strings.HasPrefix(line, "aborted by user") || strings.HasSuffix(line, "rejected by user")
		}
	}
	return false
}

// codexToolName is a tool's name as Codex flattens a namespaced one
// (protocol/src/tool_name.rs, join_namespaced_tool_name).
func codexToolName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return strings.TrimRight(namespace, "_") + "__" + strings.TrimLeft(name, "_")
}

// codexInput is a tool call's input: raw's JSON object, or raw's value
// (a string JSON that is no object, an array) under key.
func codexInput(raw json.RawMessage, key string) map[string]any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	if s, ok := v.(string); ok {
		var obj map[string]any
		if json.Unmarshal([]byte(s), &obj) == nil && obj != nil {
			return obj
		}
	}
	if obj, ok := v.(map[string]any); ok {
		return obj
	}
	return map[string]any{key: v}
}

// codexOutputText is the text of a message's content or of a tool's
// output: a string, a list of parts (text, output_text, input_text; an
// image is "[image]"), or the object {content, success} older versions
// wrote; failed when that object says success: false.
func codexOutputText(raw json.RawMessage) (text string, failed bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, false
	}
	var parts []map[string]any
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, part := range parts {
			switch t, _ := part["type"].(string); t {
			case "output_text", "input_text", "text":
				s, _ := part["text"].(string)
				b.WriteString(s)
			case "input_image", "image":
				b.WriteString("[image]")
			}
		}
		return b.String(), false
	}
	var obj struct {
		Content      json.RawMessage `json:"content"`
		ContentItems json.RawMessage `json:"content_items"`
		Success      *bool           `json:"success"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		failed = obj.Success != nil && !*obj.Success
		if len(obj.Content) > 0 {
			text, _ = codexOutputText(obj.Content)
		} else if len(obj.ContentItems) > 0 {
			text, _ = codexOutputText(obj.ContentItems)
		}
	}
	return text, failed
}

// codexUserText is the text of a user message's parts, joined as Codex
// joins them (protocol/src/items.rs, UserMessageItem::message): its images
// have none.
func codexUserText(raw json.RawMessage) string {
	var parts []codexPart
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, part := range parts {
		if part.Type == "text" {
			b.WriteString(part.Text)
		}
	}
	return b.String()
}

// codexPart is a part of a message.
type codexPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// codexToolNames lists the tools a tool search found, one a line (a
// namespace's as namespace__name).
func codexToolNames(raw json.RawMessage) string {
	var tools []struct {
		Name  string `json:"name"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if json.Unmarshal(raw, &tools) != nil {
		return ""
	}
	var names []string
	for _, t := range tools {
		if len(t.Tools) == 0 {
			names = append(names, t.Name)
		}
		for _, c := range t.Tools {
			names = append(names, codexToolName(t.Name, c.Name))
		}
	}
	return strings.Join(names, "\n")
}
