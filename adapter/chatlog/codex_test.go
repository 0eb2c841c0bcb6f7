package chatlog

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The records in testdata/codex were written by the real Codex 0.169.0 TUI
// (in tmux, against a scripted Responses API), then trimmed (Codex's own
// instructions shortened) and anonymised (/repo, /home/user):
//
//   - write-and-resume.jsonl: a long answer and an exec_command that
//     writes a file; a command that fails; a prompt of several lines; the
//     program quit, `codex resume <id>` with an AGENTS.md now in the
//     folder, a fourth prompt.
//   - patch-error-interrupt.jsonl: apply_patch twice; a turn the model API
//     refused (HTTP 400); a turn interrupted by Escape; a command the
//     sandbox refused; a pasted prompt of 5608 characters.
//   - failed-patch-declined.jsonl: a patch that does not apply; a command
//     asking to leave the sandbox, declined at the approval question.

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "codex", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// codexWant is an expected entry (At is checked apart).
type codexWant struct {
	id    string
	kind  Kind
	text  string
	tool  string
	input map[string]any
	err   bool
}

func checkEntries(t *testing.T, got []Entry, want []codexWant) {
	t.Helper()
	for i := 0; i < len(got) || i < len(want); i++ {
		if i >= len(got) {
			t.Errorf("entry %d missing: want %+v", i, want[i])
			continue
		}
		g := got[i]
		if i >= len(want) {
			t.Errorf("entry %d not wanted: %s %s %q", i, g.ID, g.Kind, g.Text)
			continue
		}
		w := want[i]
		if g.ID != w.id || g.Kind != w.kind || g.Text != w.text || g.Tool != w.tool || !reflect.DeepEqual(g.Input, w.input) || g.Error != w.err || g.Partial {
			t.Errorf("entry %d:\n got %s %s %q tool=%q input=%v error=%v partial=%v\nwant %s %s %q tool=%q input=%v error=%v",
				i, g.ID, g.Kind, g.Text, g.Tool, g.Input, g.Error, g.Partial, w.id, w.kind, w.text, w.tool, w.input, w.err)
		}
		if g.At.IsZero() {
			t.Errorf("entry %d (%s) has no time", i, g.ID)
		}
	}
}

func TestCodexRecordOfTheRealTUIGivesItsTurns(t *testing.T) {
	long := strings.Repeat("This is a long paragraph of the agent's answer, written to be wrapped by the terminal. ", 6) +
		"\n\nA second paragraph:\n- one item\n- two items\n\n```go\nfunc main() {}\n```\nThe end of the long text."
	multi := "A third message\nover several lines,\n\n  indented here,\nwith <xml> & \"quotes\"."
	got := parseCodex(readTestdata(t, "write-and-resume.jsonl"))
	checkEntries(t, got, []codexWant{
		{"line-9", Prompt, "Please do the first task: write notes.txt.", "", nil, false},
		{"line-11", Text, long, "", nil, false},
		{"line-12", ToolCall, "", "exec_command", map[string]any{"cmd": "printf 'hello from codex\\n' > notes.txt && echo written"}, false},
		{"line-15", ToolResult, "Chunk ID: 1f1aff\nWall time: 0.0057 seconds\nProcess exited with code 0\nOriginal token count: 2\nOutput:\nwritten\n", "", nil, false},
		{"line-18", Text, "Wrote notes.txt.", "", nil, false},
		{"line-21", TurnEnd, "", "", nil, false},
		{"line-26", Prompt, "Now the second task: read missing.txt.", "", nil, false},
		{"line-28", Text, "Reading a missing file.", "", nil, false},
		{"line-29", ToolCall, "", "exec_command", map[string]any{"cmd": "cat missing.txt"}, false},
		{"line-32", ToolResult, "Chunk ID: 0507cb\nWall time: 0.0008 seconds\nProcess exited with code 1\nOriginal token count: 11\nOutput:\ncat: missing.txt: No such file or directory\n", "", nil, true},
		{"line-35", Text, "The file is missing, as expected.", "", nil, false},
		{"line-38", TurnEnd, "", "", nil, false},
		{"line-43", Prompt, multi, "", nil, false},
		{"line-45", Text, "Plain answer to: " + multi, "", nil, false},
		{"line-48", TurnEnd, "", "", nil, false},
		// Resumed: the same file goes on.
		{"line-55", Prompt, "After resume: a fourth message.", "", nil, false},
		{"line-57", Text, "Plain answer to: After resume: a fourth message.", "", nil, false},
		{"line-60", TurnEnd, "", "", nil, false},
	})
	if want, _ := time.Parse(time.RFC3339Nano, "2026-11-26T11:31:07.389Z"); !got[0].At.Equal(want) {
		t.Errorf("the first prompt's time: %v, want %v", got[0].At, want)
	}

	var paste strings.Builder
	paste.WriteString("## Task: T-9\n\n")
	for i := range 80 {
		fmt.Fprintf(&paste, "Line %d of a long pasted prompt with some words to fill it up nicely.\n", i)
	}
	paste.WriteString("End.")
	patch := "*** Begin Patch\n*** Add File: hello.txt\n+hello from apply_patch\n*** End Patch\n"
	applied := "Output:\nSuccess. Updated the following files:\nA hello.txt\n"
	checkEntries(t, parseCodex(readTestdata(t, "patch-error-interrupt.jsonl")), []codexWant{
		{"line-9", Prompt, "Please patch now.", "", nil, false},
		{"line-10", ToolCall, "", "apply_patch", map[string]any{"input": patch}, false},
		{"line-13", ToolResult, "Exit code: 0\nWall time: 0.1 seconds\n" + applied, "", nil, false},
		{"line-16", Text, "Answer 3 (step 1) to a prompt of 17 chars.", "", nil, false},
		{"line-19", TurnEnd, "", "", nil, false},
		{"line-24", Prompt, "Now badpatch now.", "", nil, false},
		{"line-25", ToolCall, "", "apply_patch", map[string]any{"input": patch}, false},
		{"line-28", ToolResult, "Exit code: 0\nWall time: 0.2 seconds\n" + applied, "", nil, false},
		{"line-31", Text, "Answer 6 (step 1) to a prompt of 17 chars.", "", nil, false},
		{"line-34", TurnEnd, "", "", nil, false},
		{"line-39", Prompt, "Then fail now.", "", nil, false},
		{"line-40", TurnEnd, `{"error":{"message":"scripted refusal","type":"invalid_request_error"}}`, "", nil, true},
		{"line-45", Prompt, "Go slow now.", "", nil, false},
		{"line-48", TurnEnd, "aborted: interrupted", "", nil, false},
		{"line-53", Prompt, "Try outside now.", "", nil, false},
		{"line-54", ToolCall, "", "exec_command", map[string]any{"cmd": "echo outside > /etc/outside.txt"}, false},
		{"line-57", ToolResult, "Chunk ID: 6ad422\nWall time: 0.0000 seconds\nProcess exited with code 1\nOriginal token count: 18\nOutput:\n/bin/bash: line 1: /etc/outside.txt: Read-only file system\n", "", nil, true},
		{"line-60", Text, "Answer 13 (step 1) to a prompt of 16 chars.", "", nil, false},
		{"line-63", TurnEnd, "", "", nil, false},
		{"line-68", Prompt, paste.String(), "", nil, false},
		{"line-70", Text, "Answer 14 (step 0) to a prompt of 5608 chars.", "", nil, false},
		{"line-73", TurnEnd, "", "", nil, false},
	})

	checkEntries(t, parseCodex(readTestdata(t, "failed-patch-declined.jsonl")), []codexWant{
		{"line-9", Prompt, "Make a broken edit please.", "", nil, false},
		{"line-10", ToolCall, "", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: nosuch.txt\n@@\n-x\n+y\n*** End Patch\n"}, false},
		{"line-12", ToolResult, "apply_patch verification failed: Failed to read file to update /repo/nosuch.txt: No such file or directory (os error 2)", "", nil, true},
		{"line-15", Text, "Answer 66 (step 1) to a prompt of 26 chars.", "", nil, false},
		{"line-18", TurnEnd, "", "", nil, false},
		{"line-23", Prompt, "Now escalate now.", "", nil, false},
		{"line-24", ToolCall, "", "exec_command", map[string]any{"cmd": "touch /etc/outside.txt", "justification": "to write outside", "sandbox_permissions": "require_escalated"}, false},
		{"line-26", ToolResult, "Wall time: 8.5 seconds\naborted by user", "", nil, true},
		{"line-29", TurnEnd, "aborted: interrupted", "", nil, false},
	})
}

// Codex records as user messages what it adds itself — its environment
// context, the folder's AGENTS.md, the note of an interrupted turn — and a
// copy of the prompt: only the prompt is a Prompt, once, with the text as
// typed.
func TestCodexPromptIsTheUsersTextNotWhatCodexAdds(t *testing.T) {
	for name, added := range map[string][]string{
		"write-and-resume.jsonl":      {"<environment_context>", "# AGENTS.md instructions for /repo"},
		"patch-error-interrupt.jsonl": {"<environment_context>", "<turn_aborted>"},
		"failed-patch-declined.jsonl": {"<environment_context>", "<turn_aborted>"},
	} {
		data := readTestdata(t, name)
		for _, a := range added {
			if !strings.Contains(string(data), a) {
				t.Fatalf("%s: the record no longer holds %q", name, a)
			}
		}
		for _, e := range parseCodex(data) {
			for _, a := range added {
				if e.Kind == Prompt && strings.Contains(e.Text, a) {
					t.Errorf("%s: %s is a Prompt: %q", name, e.ID, e.Text)
				}
			}
		}
	}
	// A version that records the prompt both as an item and as the older
	// user_message event gives one Prompt.
	twice := `{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"user_message","message":"Fix it.","images":[]}}
{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","id":"u1","content":[{"type":"text","text":"Fix it.","text_elements":[]},{"type":"image","image_url":"data:"}]}}}
{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Fixed."}]}}
`
	checkEntries(t, parseCodex([]byte(twice)), []codexWant{
		{"line-1", Prompt, "Fix it.", "", nil, false},
		{"line-3", Text, "Fixed.", "", nil, false},
	})
}

// Tool calls of the other kinds Codex records: a namespaced function (an
// MCP server's tools) named as Codex flattens it, a local shell call, a
// web search, a tool search and what it found, an output in parts and the
// older {content, success} output.
func TestCodexToolCallsOfEveryKind(t *testing.T) {
	rec := `{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"function_call","namespace":"mcp__wilco__","name":"wilco_ack","arguments":"{\"status\":\"RECEIVED\"}","call_id":"c1"}}
{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"c1","server":"wilco","tool":"ack","arguments":{},"status":"failed","error":{"message":"refused"}}}}
{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"refused"},{"type":"input_image","image_url":"data:"}]}}
{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"local_shell_call","call_id":"c2","status":"completed","action":{"type":"exec","command":["ls","-l"]}}}
{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":{"content":"no such dir","success":false}}}
{"timestamp":"2026-01-01T00:00:03Z","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"type":"search","query":"wilco"}}}
{"timestamp":"2026-01-01T00:00:04Z","type":"response_item","payload":{"type":"tool_search_call","call_id":"s1","execution":"client","arguments":{"query":"ack"}}}
{"timestamp":"2026-01-01T00:00:04Z","type":"response_item","payload":{"type":"tool_search_output","call_id":"s1","status":"completed","execution":"client","tools":[{"type":"namespace","name":"mcp__wilco__","tools":[{"name":"wilco_ack"}]}]}}
{"timestamp":"2026-01-01T00:00:05Z","type":"response_item","payload":{"type":"function_call","name":"view_image","arguments":"not json","call_id":"c3"}}
{"timestamp":"2026-01-01T00:00:06Z","type":"response_item","payload":{"type":"reasoning","summary":[],"encrypted_content":"x"}}
{"timestamp":"2026-01-01T00:00:06Z","type":"compacted","payload":{"message":"summary","replacement_history":[]}}
`
	checkEntries(t, parseCodex([]byte(rec)), []codexWant{
		{"line-1", ToolCall, "", "mcp__wilco__wilco_ack", map[string]any{"status": "RECEIVED"}, false},
		{"line-3", ToolResult, "refused[image]", "", nil, true},
		{"line-4", ToolCall, "", "local_shell", map[string]any{"type": "exec", "command": []any{"ls", "-l"}}, false},
		{"line-5", ToolResult, "no such dir", "", nil, true},
		{"line-6", ToolCall, "", "web_search", map[string]any{"type": "search", "query": "wilco"}, false},
		{"line-7", ToolCall, "", "tool_search", map[string]any{"query": "ack"}, false},
		{"line-8", ToolResult, "mcp__wilco__wilco_ack", "", nil, false},
		{"line-9", ToolCall, "", "view_image", map[string]any{"arguments": "not json"}, false},
	})
}

// checkReads checks a growing record's reads: every entry returned keeps
// its place, its ID and its content in later reads, none is Partial, and
// the last read is the whole record's.
func checkReads(t testing.TB, reads [][]Entry, whole []Entry) {
	t.Helper()
	for i, r := range reads {
		if len(r) > len(whole) {
			t.Fatalf("read %d has %d entries, the whole record %d", i, len(r), len(whole))
		}
		for j, e := range r {
			if e.Partial {
				t.Fatalf("read %d: entry %s is partial: a rollout's lines are written whole", i, e.ID)
			}
			if !reflect.DeepEqual(e, whole[j]) {
				t.Fatalf("read %d: entry %d changed:\n%+v\nbecame\n%+v", i, j, e, whole[j])
			}
		}
	}
	if last := reads[len(reads)-1]; !reflect.DeepEqual(last, whole) {
		t.Fatalf("the last read has %d entries, the record %d", len(last), len(whole))
	}
}

// A record read as Codex writes it, cut at every byte: an entry once
// returned keeps its place, ID and content; a line not yet whole waits.
func TestCodexEntriesStayPutAsTheRecordGrows(t *testing.T) {
	for _, name := range []string{"write-and-resume.jsonl", "patch-error-interrupt.jsonl", "failed-patch-declined.jsonl"} {
		data := readTestdata(t, name)
		whole := parseCodex(data)
		var p codexParser
		got, off := 0, 0
		for cut := 0; cut <= len(data); cut++ {
			entries, n := p.feed(data[off:cut])
			off += n
			for _, e := range entries {
				if got >= len(whole) || !reflect.DeepEqual(e, whole[got]) {
					t.Fatalf("%s cut at byte %d: entry %d is %+v, read whole it is not", name, cut, got, e)
				}
				if e.Partial {
					t.Fatalf("%s: entry %s is partial: a rollout's lines are written whole", name, e.ID)
				}
				got++
			}
		}
		if got != len(whole) {
			t.Fatalf("%s read as it grew: %d entries; read whole: %d", name, got, len(whole))
		}
	}
}

// The Log reads the file as Codex appends to it, in chunks that end
// anywhere in a line, and keeps the partial last line until it is whole.
func TestCodexLogReadsTheFileAsItGrows(t *testing.T) {
	data := readTestdata(t, "patch-error-interrupt.jsonl")
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log := newCodexLog(path, "")
	var reads [][]Entry
	for off := 0; off < len(data); {
		n := min(997, len(data)-off) // a prime: the chunks end anywhere
		if _, err := f.Write(data[off : off+n]); err != nil {
			t.Fatal(err)
		}
		off += n
		got, err := log.Read()
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, got)
	}
	checkReads(t, reads, parseCodex(data))
	if log.Conversation() != "01a217a3-7576-7143-83b3-925dc010986f" {
		t.Fatalf("the conversation: %q", log.Conversation())
	}
	if err := f.Truncate(10); err != nil {
		t.Fatal(err)
	}
	// A record made again from less than was read: read again from its
	// start.
	if got, err := log.Read(); err != nil || len(got) != 0 {
		t.Fatalf("a record that shrank to a part of its first line: %v, %v", got, err)
	}
}

// codexHomeWith makes a Codex home whose rollouts are the given
// conversations, each a rollout of the real record with its own id, folder
// and start; it returns the Where of the program (its HOME).
func codexHomeWith(t *testing.T, convs ...codexConv) Where {
	t.Helper()
	home := t.TempDir()
	for _, c := range convs {
		writeCodexRollout(t, filepath.Join(home, ".codex"), c)
	}
	return Where{Env: map[string]string{"HOME": home, "CODEX_HOME": ""}}
}

type codexConv struct {
	id, cwd string
	start   time.Time
	extra   string // more of the session_meta's payload
}

// writeCodexRollout files a rollout as Codex does: under the date of its
// start, named by its start and id, its session_meta first, then the
// turns of a real record.
func writeCodexRollout(t *testing.T, codexHome string, c codexConv) string {
	t.Helper()
	dir := filepath.Join(codexHome, "sessions", c.start.Format("2006"), c.start.Format("01"), c.start.Format("02"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rollout-"+c.start.Format("2006-01-02T15-04-05")+"-"+c.id+".jsonl")
	meta := fmt.Sprintf(`{"timestamp":%q,"ordinal":0,"type":"session_meta","payload":{"session_id":%q,"id":%q,"timestamp":%q,"cwd":%q,"originator":"codex-tui","cli_version":"0.169.0","source":"vscode","thread_source":"user"%s}}`,
		c.start.Add(5*time.Second).Format(time.RFC3339Nano), c.id, c.id, c.start.UTC().Format("2006-01-02T15:04:05.000Z"), c.cwd, c.extra)
	lines := strings.SplitAfter(string(readTestdata(t, "write-and-resume.jsonl")), "\n")
	if err := os.WriteFile(path, []byte(meta+"\n"+strings.Join(lines[1:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Codex starts its conversations without an id from wilco: the one wilco
// started is the one Codex started in the program's folder since the
// program started — not an older one of that folder, not one of another
// folder, not a sub-agent's — the earliest when several were started
// since (a second program in the same folder started later).
func TestCodexOpenFindsTheConversationStartedInItsFolderSinceTheProgramStarted(t *testing.T) {
	since := time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond)
	repo, other := t.TempDir(), t.TempDir()
	w := codexHomeWith(t,
		codexConv{id: "00000000-0000-7000-8000-000000000001", cwd: repo, start: since.Add(-time.Hour)},
		codexConv{id: "00000000-0000-7000-8000-000000000002", cwd: other, start: since.Add(time.Second)},
		codexConv{id: "00000000-0000-7000-8000-000000000003", cwd: repo, start: since.Add(2 * time.Second), extra: `,"parent_thread_id":"00000000-0000-7000-8000-000000000009"`},
		codexConv{id: "00000000-0000-7000-8000-000000000004", cwd: repo, start: since.Add(3 * time.Second)},
		codexConv{id: "00000000-0000-7000-8000-000000000005", cwd: repo, start: since.Add(40 * time.Second)},
	)
	w.Dir, w.Since = repo, since
	log, ok, err := For("codex").Open(w)
	if err != nil || !ok {
		t.Fatalf("Open: ok %v, %v", ok, err)
	}
	if log.Conversation() != "00000000-0000-7000-8000-000000000004" || !strings.HasSuffix(log.Path(), "-00000000-0000-7000-8000-000000000004.jsonl") {
		t.Fatalf("found %s (%s)", log.Conversation(), log.Path())
	}
	entries, err := log.Read()
	if err != nil || len(entries) != 18 || entries[0].Text != "Please do the first task: write notes.txt." {
		t.Fatalf("read %d entries (%v)", len(entries), err)
	}
	// The second program in that folder, started later, finds its own.
	w.Since = since.Add(30 * time.Second)
	if log, ok, err := For("codex").Open(w); err != nil || !ok || log.Conversation() != "00000000-0000-7000-8000-000000000005" {
		t.Fatalf("the later program found %v (ok %v, %v)", log, ok, err)
	}
	// A folder named through a symbolic link is the same folder.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	w.Dir, w.Since = link, since
	if log, ok, err := For("codex").Open(w); err != nil || !ok || log.Conversation() != "00000000-0000-7000-8000-000000000004" {
		t.Fatalf("through a link, found %v (ok %v, %v)", log, ok, err)
	}
}

// Codex writes its rollout at the first prompt: until then, and while its
// first line is not whole, there is nothing to open yet.
func TestCodexOpenWaitsForTheRecord(t *testing.T) {
	since := time.Now().Add(-time.Minute)
	repo := t.TempDir()
	w := codexHomeWith(t)
	w.Dir, w.Since = repo, since
	if _, ok, err := For("codex").Open(w); ok || err != nil {
		t.Fatalf("Open of a home with no rollouts: ok %v, %v", ok, err)
	}
	path := writeCodexRollout(t, filepath.Join(w.Env["HOME"], ".codex"), codexConv{id: "00000000-0000-7000-8000-00000000000a", cwd: repo, start: since.Add(time.Second)})
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first := strings.Index(string(whole), "\n")
	if err := os.WriteFile(path, whole[:first], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := For("codex").Open(w); ok || err != nil {
		t.Fatalf("Open of a rollout whose first line is not whole: ok %v, %v", ok, err)
	}
	if err := os.WriteFile(path, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if log, ok, err := For("codex").Open(w); !ok || err != nil || log.Conversation() != "00000000-0000-7000-8000-00000000000a" {
		t.Fatalf("Open once written: %v, ok %v, %v", log, ok, err)
	}
	// Without its folder nor its id, a conversation cannot be found.
	if _, ok, err := For("codex").Open(Where{Env: w.Env, Since: since}); ok || err == nil {
		t.Fatalf("Open without a folder: ok %v, %v", ok, err)
	}
}

// A resumed conversation (`codex resume <id>`) goes on in its own file,
// found by its id whatever its date, in $CODEX_HOME when it is set.
func TestCodexOpenFindsAResumedConversationByItsID(t *testing.T) {
	codexHome := t.TempDir()
	old := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	writeCodexRollout(t, codexHome, codexConv{id: "00000000-0000-7000-8000-0000000000b1", cwd: "/repo", start: old})
	path := writeCodexRollout(t, codexHome, codexConv{id: "00000000-0000-7000-8000-0000000000b2", cwd: "/repo", start: old.Add(time.Hour)})
	w := Where{Env: map[string]string{"HOME": t.TempDir(), "CODEX_HOME": codexHome}, Dir: "/elsewhere", Since: time.Now(),
		Conversation: "00000000-0000-7000-8000-0000000000b2"}
	log, ok, err := For("codex").Open(w)
	if err != nil || !ok || log.Path() != path || log.Conversation() != w.Conversation {
		t.Fatalf("Open by id: %v, ok %v, %v", log, ok, err)
	}
	w.Conversation = "00000000-0000-7000-8000-0000000000b3"
	if _, ok, err := For("codex").Open(w); ok || err != nil {
		t.Fatalf("Open of an id with no rollout: ok %v, %v", ok, err)
	}
}

// FuzzParseCodex: any bytes parse without a panic, and a record read as it
// grows (cut anywhere, read in two pieces) gives the entries of the whole,
// in place.
func FuzzParseCodex(f *testing.F) {
	for _, name := range []string{"write-and-resume.jsonl", "patch-error-interrupt.jsonl", "failed-patch-declined.jsonl"} {
		data := readTestdata(f, name)
		f.Add(data, uint32(len(data)/3))
	}
	f.Add([]byte(`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":"x"}}}`+"\n"+`{"type":"event_msg","payload":{"type":"task_complete","error":"boom"}}`+"\n"), uint32(5))
	f.Add([]byte(`{"type":"response_item","payload":{"type":"function_call_output","output":{"content":[1]}}}`+"\n{\n"), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, cut uint32) {
		whole := parseCodex(data)
		c := int(cut) % (len(data) + 1)
		var p codexParser
		first, n := p.feed(data[:c])
		rest, _ := p.feed(data[n:])
		checkReads(t, [][]Entry{first, append(append([]Entry(nil), first...), rest...)}, whole)
	})
}
