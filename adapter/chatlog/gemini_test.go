package chatlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The records in testdata/gemini were written by Gemini CLI 0.61.0 in tmux
// against the scripted Gemini API (package modelserver), then trimmed and
// their paths made /repo and /home/user:
//   - two-turns: a reply with a long text and a write_file call, allowed;
//     a second prompt whose read_file call fails;
//   - resumed: two-turns resumed (--resume), a third prompt whose
//     write_file call was denied: Gemini CLI then wrote the conversation
//     again under new ids; resumed-new is the record of its own it started
//     under the same id when resuming;
//   - loop-recovery: a reply repeating itself, stopped by Gemini CLI's loop
//     detection, which rolled the prompt back and sent a request of its
//     own in its place;
//   - denied-then-sent-again: a pasted prompt of many lines whose
//     write_file call was denied, then the same prompt pasted again and
//     its call allowed.
const (
	geminiTwoTurns   = "testdata/gemini/two-turns.jsonl"
	geminiResumed    = "testdata/gemini/resumed.jsonl"
	geminiResumedNew = "testdata/gemini/resumed-new.jsonl"
	geminiLoop       = "testdata/gemini/loop-recovery.jsonl"
	geminiDenied     = "testdata/gemini/denied-then-sent-again.jsonl"

	geminiTwoTurnsID = "3f2a9c1e-5b7d-4e8f-9a01-23456789abcd"
	geminiDeniedID   = "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
)

var geminiRecords = []string{geminiTwoTurns, geminiResumed, geminiResumedNew, geminiLoop, geminiDenied}

func readRecordFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// geminiPlan is the long text the scripted model answers the first prompt
// with (trimmed to its first 6 lines in the records).
func geminiPlan() string {
	lines := []string{"I will write the file now.", ""}
	for i := 1; i <= 6; i++ {
		lines = append(lines, fmt.Sprintf("Line %d of the plan: step %d looks at part %c of the repository and says what it found there.", i, i*7, rune('A'+i%26)))
	}
	return strings.Join(lines, "\n")
}

func TestAGeminiRecordHoldsThePromptsTheRepliesAndTheToolCallsWithTheirResults(t *testing.T) {
	t.Parallel()
	got := ParseGemini(readRecordFile(t, geminiTwoTurns))
	want := []Entry{
		{ID: "967153c4-7675-472d-9b36-2fc22cd92b4b", Kind: Prompt, Text: "Please do the first task: write notes.txt with a greeting.", At: at(t, "2026-11-26T11:33:06.816Z")},
		{ID: "f4341855-e4e2-4308-9386-2c8a447e52a4", Kind: Text, Text: geminiPlan(), At: at(t, "2026-11-26T11:33:07.591Z")},
		{ID: "write_file__write_file_1795692787374_0", Kind: ToolCall, Tool: "write_file", Input: map[string]any{"content": "hello from the model\n", "file_path": "notes.txt"}, At: at(t, "2026-11-26T11:33:19.632Z")},
		{ID: "write_file__write_file_1795692787374_0/result", Kind: ToolResult, Text: "Successfully created and wrote to new file: /repo/notes.txt. Here is the updated code:\nhello from the model\n", At: at(t, "2026-11-26T11:33:19.632Z")},
		{ID: "ff31c499-0648-4cce-820e-2cb841c611ff", Kind: Text, Text: "The file notes.txt is written.\nSecond line of the closing message.", At: at(t, "2026-11-26T11:33:19.931Z")},
		{ID: "95bfbe05-7d2d-4a29-9098-68cdc934d80c", Kind: Prompt, Text: "Now the second task: read missing.txt and tell me.", At: at(t, "2026-11-26T11:33:32.691Z")},
		{ID: "read_file__read_file_1795692812751_0", Kind: ToolCall, Tool: "read_file", Input: map[string]any{"file_path": "missing.txt"}, At: at(t, "2026-11-26T11:33:32.761Z")},
		{ID: "read_file__read_file_1795692812751_0/result", Kind: ToolResult, Text: "File not found: /repo/missing.txt", Error: true, At: at(t, "2026-11-26T11:33:32.761Z")},
		{ID: "dd36ba3f-0bd1-451f-b265-b5ccb669c741", Kind: Text, Text: "There is no missing.txt; the second turn is over.", At: at(t, "2026-11-26T11:33:32.794Z")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries:\n%s\nwant:\n%s", dumpEntries(got), dumpEntries(want))
	}
}

func dumpEntries(es []Entry) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%+v\n", e)
	}
	return b.String()
}

// kinds is each entry as "kind id", for comparisons of ids.
func kinds(es []Entry) string {
	var out []string
	for _, e := range es {
		out = append(out, string(e.Kind)+" "+e.ID)
	}
	return strings.Join(out, "\n")
}

func TestAGeminiConversationWrittenAgainAfterADenialMakesNoNewPrompt(t *testing.T) {
	t.Parallel()
	// Resumed, then a call denied: Gemini CLI wrote the whole conversation
	// again (the first two prompts and replies, under new ids) and made
	// it the record's conversation. None of it is said anew.
	got := ParseGemini(readRecordFile(t, geminiResumed))
	want := ParseGemini(readRecordFile(t, geminiTwoTurns))
	third := []Entry{
		{ID: "3e418970-e624-43f6-92cf-815dcb9c68f6", Kind: Prompt, Text: "And the third task please.", At: at(t, "2026-11-26T11:34:50.532Z")},
		{ID: "6693e458-2eaf-4e8f-a537-c6c906be21ee", Kind: Text, Text: "Writing other.txt.", At: at(t, "2026-11-26T11:34:50.607Z")},
		{ID: "write_file__write_file_1795692890561_0", Kind: ToolCall, Tool: "write_file", Input: map[string]any{"content": "x\n", "file_path": "other.txt"}, At: at(t, "2026-11-26T11:35:01.889Z")},
		{ID: "write_file__write_file_1795692890561_0/result", Kind: ToolResult, Text: "[Operation Cancelled] Reason: User denied execution.", Error: true, At: at(t, "2026-11-26T11:35:01.889Z")},
	}
	want = append(want, third...)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries:\n%s\nwant:\n%s", dumpEntries(got), dumpEntries(want))
	}
}

func TestAGeminiPromptSentAgainAfterADenialIsANewPrompt(t *testing.T) {
	t.Parallel()
	got := ParseGemini(readRecordFile(t, geminiDenied))
	want := strings.Join([]string{
		"prompt 7d37b09c-a8f2-4b05-92fc-3641ad312316",
		"text 6146893e-07bf-44a5-b1eb-62599442a18b",
		"tool_call write_file__write_file_1795693266132_0",
		"tool_result write_file__write_file_1795693266132_0/result",
		"prompt d149dae1-168a-4579-9e9c-30a3290713a5",
		"text d6e4add0-3bd4-46c9-b44e-0abfded4e310",
		"tool_call write_file__write_file_1795693287451_0",
		"tool_result write_file__write_file_1795693287451_0/result",
		"text 99349412-f029-43d2-91ad-7ad88dc3e413",
	}, "\n")
	if kinds(got) != want {
		t.Fatalf("entries:\n%s\nwant:\n%s", kinds(got), want)
	}
	// The prompt as it was pasted (Gemini CLI shows "[Pasted Text: 28
	// lines]" in its input box, and records the text).
	var lines []string
	for i := 1; i <= 4; i++ {
		lines = append(lines, fmt.Sprintf("Requirement %d: the reader keeps line %d exactly as it was typed, with its words.", i, i))
	}
	prompt := "[T-3] The second task, attempt 1.\n\n" + strings.Join(lines, "\n") + "\n\nReply with [ACK] first."
	if got[0].Text != prompt || got[4].Text != prompt {
		t.Fatalf("the prompts: %q, %q", got[0].Text, got[4].Text)
	}
	if denied := got[3]; !denied.Error || denied.Text != "[Operation Cancelled] Reason: User denied execution." {
		t.Fatalf("the denied call's result: %+v", denied)
	}
	if allowed := got[7]; allowed.Error || !strings.HasPrefix(allowed.Text, "Successfully created") {
		t.Fatalf("the allowed call's result: %+v", allowed)
	}
}

func TestAGeminiRequestOfItsOwnInPlaceOfThePromptIsNotANewPrompt(t *testing.T) {
	t.Parallel()
	// A loop detected: the prompt rolled back, "System: Potential loop
	// detected…" sent in its place (shown as the prompt): the reply to it
	// is the prompt's.
	got := ParseGemini(readRecordFile(t, geminiLoop))
	want := []Entry{
		{ID: "065a0851-3c20-4400-8c7a-ca6d1d55f011", Kind: Prompt, Text: "Please do the first task: write notes.txt with a greeting.", At: at(t, "2026-11-26T11:31:36.832Z")},
		{ID: "5546d72b-a4bd-434d-87d8-f18b27733020", Kind: Text, Text: "OK", At: at(t, "2026-11-26T11:31:37.237Z")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries:\n%s\nwant:\n%s", dumpEntries(got), dumpEntries(want))
	}
}

func TestGeminiMessagesOfItsOwnAreNotTheConversation(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		`{"id":"c","timestamp":"2026-11-26T11:31:26.917Z","type":"user","content":[{"text":"<session_context>\nThis is the Gemini CLI."}]}`,
		`{"id":"h","type":"user","content":[{"text":"<hook_context>x</hook_context>"}]}`,
		`{"id":"r","type":"user","content":[{"functionResponse":{"id":"t","name":"read_file","response":{"output":"x"}}}]}`,
		`{"id":"s","type":"gemini","content":[{"text":"history written again"}],"thoughts":[],"tokens":null}`,
		`{"id":"i","type":"info","content":"Request cancelled."}`,
		`{"id":"t","type":"gemini","content":[{"text":"thinking","thought":true}],"model":"m"}`,
		`{"id":"e","type":"gemini","content":"","model":"m"}`,
		`{"$set":{"lastUpdated":"2026-11-26T11:31:37.237Z"}}`,
		`{"$rewindTo":"x"}`,
		`not json`, `{"id":3}`, `[]`,
	} {
		if es := ParseGemini([]byte(line + "\n")); len(es) != 0 {
			t.Errorf("%s read as %+v", line, es)
		}
	}
}

func TestGeminiPromptTextIsWhatTheUserSent(t *testing.T) {
	t.Parallel()
	// A prompt naming a file (@notes.txt) is sent with the file's content
	// after it; displayContent is what was typed.
	es := ParseGemini([]byte(`{"id":"p","type":"user","content":[{"text":"Read @notes.txt"},{"text":"\n--- Content from referenced files ---\nhello"}],"displayContent":[{"text":"Read @notes.txt"}]}` + "\n"))
	if len(es) != 1 || es[0].Kind != Prompt || es[0].Text != "Read @notes.txt" {
		t.Fatalf("%+v", es)
	}
}

// writeGeminiRecord puts a record in home's project folder project.
func writeGeminiRecord(t *testing.T, home, project, name string, b []byte) string {
	t.Helper()
	dir := filepath.Join(home, ".gemini", "tmp", project, "chats")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustOpen(t *testing.T, f Format, w Where) Log {
	t.Helper()
	l, ok, err := f.Open(w)
	if err != nil || !ok {
		t.Fatalf("open %+v: ok %v, err %v", w, ok, err)
	}
	return l
}

func TestAGeminiRecordIsFoundByItsConversationID(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	w := Where{Env: map[string]string{"HOME": home, "GEMINI_CLI_HOME": ""}, Dir: "/repo", Conversation: geminiTwoTurnsID}
	if _, ok, err := For("gemini").Open(w); ok || err != nil {
		t.Fatalf("a record not written yet: ok %v, err %v", ok, err)
	}
	// Two conversations in the same folder, and one whose id begins as
	// the first's.
	mine := writeGeminiRecord(t, home, "repo", "session-2026-11-26T11-33-3f2a9c1e.jsonl", readRecordFile(t, geminiTwoTurns))
	other := writeGeminiRecord(t, home, "repo", "session-2026-11-26T11-40-7c1d2e3f.jsonl", readRecordFile(t, geminiDenied))
	alike := bytes.ReplaceAll(readRecordFile(t, geminiLoop), []byte(geminiTwoTurnsID), []byte("3f2a9c1e-0000-4000-8000-000000000000"))
	writeGeminiRecord(t, home, "repo", "session-2026-11-26T11-31-3f2a9c1e.jsonl", alike)
	for _, c := range []struct {
		id, path, record string
	}{{geminiTwoTurnsID, mine, geminiTwoTurns}, {geminiDeniedID, other, geminiDenied}} {
		w.Conversation = c.id
		l := mustOpen(t, For("gemini"), w)
		es, err := l.Read()
		if err != nil || l.Path() != c.path || l.Conversation() != c.id {
			t.Fatalf("%s: %s %s %v", c.id, l.Path(), l.Conversation(), err)
		}
		if !reflect.DeepEqual(es, ParseGemini(readRecordFile(t, c.record))) {
			t.Fatalf("%s: read\n%s", c.id, dumpEntries(es))
		}
	}
	// GEMINI_CLI_HOME is Gemini CLI's home, in place of HOME.
	cliHome := t.TempDir()
	w.Env["GEMINI_CLI_HOME"] = cliHome
	if _, ok, _ := For("gemini").Open(w); ok {
		t.Fatal("found outside GEMINI_CLI_HOME")
	}
	moved := writeGeminiRecord(t, cliHome, "repo-1", "session-2026-11-26T11-40-7c1d2e3f.jsonl", readRecordFile(t, geminiDenied))
	if l := mustOpen(t, For("gemini"), w); l.Path() != moved {
		t.Fatalf("under GEMINI_CLI_HOME: %s", l.Path())
	}
}

func TestAResumedGeminiConversationIsTheRecordStartedFirst(t *testing.T) {
	t.Parallel()
	// Resuming, Gemini CLI starts a record of its own under the same id,
	// then goes on in the old one.
	home := t.TempDir()
	old := writeGeminiRecord(t, home, "repo", "session-2026-11-26T11-33-3f2a9c1e.jsonl", readRecordFile(t, geminiResumed))
	writeGeminiRecord(t, home, "repo", "session-2026-11-26T11-34-3f2a9c1e.jsonl", readRecordFile(t, geminiResumedNew))
	l := mustOpen(t, For("gemini"), Where{Env: map[string]string{"HOME": home}, Dir: "/repo", Conversation: geminiTwoTurnsID})
	if l.Path() != old {
		t.Fatalf("found %s", l.Path())
	}
}

// geminiStarted is record b with its start time t.
func geminiStarted(t *testing.T, b []byte, start time.Time) []byte {
	t.Helper()
	first, rest, _ := bytes.Cut(b, []byte("\n"))
	var meta map[string]any
	if err := json.Unmarshal(first, &meta); err != nil {
		t.Fatal(err)
	}
	meta["startTime"] = start.UTC().Format("2006-01-02T15:04:05.000Z")
	line, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(line, '\n'), rest...)
}

func TestAGeminiRecordWithoutAnIDIsTheFirstStartedInTheFolderSinceTheStart(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 26, 11, 0, 0, 0, time.UTC)
	dir := "/srv/work/repo"
	sum := sha256.Sum256([]byte(dir))
	for _, c := range []struct {
		name    string
		project string
		mark    func(t *testing.T, gemini string)
	}{
		{"named in projects.json", "repo", func(t *testing.T, gemini string) {
			writeFile(t, filepath.Join(gemini, "projects.json"), `{"projects":{"`+dir+`":"repo","/srv/other":"repo-1"}}`)
		}},
		{"named by .project_root", "repo-2", func(t *testing.T, gemini string) {
			writeFile(t, filepath.Join(gemini, "tmp", "repo-2", ".project_root"), dir)
		}},
		{"named by the folder's sha256", hex.EncodeToString(sum[:]), func(*testing.T, string) {}},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			gemini := filepath.Join(home, ".gemini")
			first := writeGeminiRecord(t, home, c.project, "session-a.jsonl", geminiStarted(t, readRecordFile(t, geminiTwoTurns), t0.Add(time.Minute)))
			second := writeGeminiRecord(t, home, c.project, "session-b.jsonl", geminiStarted(t, readRecordFile(t, geminiDenied), t0.Add(2*time.Minute)))
			// Another folder's record, started in between.
			writeGeminiRecord(t, home, "repo-1", "session-c.jsonl", geminiStarted(t, readRecordFile(t, geminiLoop), t0.Add(90*time.Second)))
			writeFile(t, filepath.Join(gemini, "tmp", "repo-1", ".project_root"), "/srv/other")
			c.mark(t, gemini)
			w := Where{Env: map[string]string{"HOME": home}, Dir: dir}
			for _, s := range []struct {
				since time.Time
				want  string
				conv  string
			}{
				{t0, first, geminiTwoTurnsID},
				{t0.Add(61 * time.Second), second, geminiDeniedID},
			} {
				w.Since = s.since
				l := mustOpen(t, For("gemini"), w)
				if l.Path() != s.want || l.Conversation() != s.conv {
					t.Fatalf("since %s: %s (%s)", s.since, l.Path(), l.Conversation())
				}
			}
			// None started since: the one written since (resumed).
			w.Since = time.Now().Add(-time.Minute)
			if _, ok, _ := For("gemini").Open(w); !ok {
				t.Fatal("the records written since were not found")
			}
			w.Since = time.Now().Add(time.Hour)
			if _, ok, _ := For("gemini").Open(w); ok {
				t.Fatal("found a record not written since the start")
			}
		})
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// checkLogGrowth writes b to path in pieces of the sizes cut gives,
// opening the log once it is found and reading it after each piece: an
// entry read whole keeps its place and all it holds; only the last entry
// may be partial; once all is written, the entries are want.
func checkLogGrowth(t *testing.T, path string, b []byte, cut func(i int) int, open func() (Log, bool, error), want []Entry) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var l Log
	var whole []Entry
	var es []Entry
	for i, done := 0, 0; done < len(b); i++ {
		n := min(max(cut(i), 1), len(b)-done)
		if _, err := f.Write(b[done : done+n]); err != nil {
			t.Fatal(err)
		}
		done += n
		if l == nil {
			var ok bool
			if l, ok, err = open(); err != nil {
				t.Fatal(err)
			} else if !ok {
				l = nil
				continue
			}
		}
		if es, err = l.Read(); err != nil {
			t.Fatal(err)
		}
		if len(es) < len(whole) {
			t.Fatalf("after %d bytes: %d entries, fewer than the %d read whole before", done, len(es), len(whole))
		}
		for k, e := range es {
			if k < len(whole) && !reflect.DeepEqual(e, whole[k]) {
				t.Fatalf("after %d bytes, entry %d was read whole as\n%+v\nand is now\n%+v", done, k, whole[k], e)
			}
			if e.Partial && k != len(es)-1 {
				t.Fatalf("after %d bytes, entry %d of %d is partial: %+v", done, k, len(es), e)
			}
			if !e.Partial && k >= len(whole) {
				whole = append(whole, e)
			}
		}
	}
	if l == nil {
		t.Fatal("never found")
	}
	if !reflect.DeepEqual(es, want) {
		t.Fatalf("read as it grew:\n%s\nwant:\n%s", dumpEntries(es), dumpEntries(want))
	}
}

func TestAGeminiRecordReadAsItGrowsNeverChangesWhatItReturned(t *testing.T) {
	t.Parallel()
	for _, record := range geminiRecords {
		b := readRecordFile(t, record)
		first, _, _ := bytes.Cut(b, []byte("\n"))
		var meta geminiMeta
		if err := json.Unmarshal(first, &meta); err != nil {
			t.Fatal(err)
		}
		for _, cut := range []func(int) int{
			func(int) int { return 1 },
			func(i int) int { return (i*7919)%997 + 1 },
		} {
			home := t.TempDir()
			path := filepath.Join(home, ".gemini", "tmp", "repo", "chats", "session-2026-11-26T11-33-"+meta.SessionID[:8]+".jsonl")
			w := Where{Env: map[string]string{"HOME": home}, Dir: "/repo", Conversation: meta.SessionID}
			checkLogGrowth(t, path, b, cut, func() (Log, bool, error) { return For("gemini").Open(w) }, ParseGemini(b))
		}
	}
}

func TestAGeminiRecordRewrittenIsReadAgainFromItsStart(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	b := readRecordFile(t, geminiTwoTurns)
	path := writeGeminiRecord(t, home, "repo", "session-2026-11-26T11-33-3f2a9c1e.jsonl", b)
	l := mustOpen(t, For("gemini"), Where{Env: map[string]string{"HOME": home}, Conversation: geminiTwoTurnsID})
	if es, err := l.Read(); err != nil || len(es) != 9 {
		t.Fatalf("%d entries, %v", len(es), err)
	}
	// Written again whole, shorter (Gemini CLI rewrites a record it could
	// not read): what it holds now.
	lines := bytes.SplitAfter(b, []byte("\n"))
	if err := os.WriteFile(path+".tmp", bytes.Join(lines[:5], nil), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	es, err := l.Read()
	if err != nil || kinds(es) != "prompt 967153c4-7675-472d-9b36-2fc22cd92b4b\ntext f4341855-e4e2-4308-9386-2c8a447e52a4" {
		t.Fatalf("after the rewrite: %v\n%s", err, kinds(es))
	}
}

func FuzzParseGemini(f *testing.F) {
	// The records' lines, a few at a time (a whole record is slow to
	// minimize).
	for _, record := range geminiRecords {
		lines := bytes.SplitAfter(readRecordFile(f, record), []byte("\n"))
		for i := 0; i+3 <= len(lines); i += 3 {
			f.Add(bytes.Join(lines[i:i+3], nil))
		}
	}
	f.Add([]byte(`{"id":"p","type":"user","content":"x"}` + "\n" + `{"$rewindTo":"p"}` + "\n" + `{"id":"q","type":"user","content":"x"}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		whole := ParseGemini(b)
		ids := map[string]bool{}
		for _, e := range whole {
			if e.ID == "" || e.Kind == "" || e.Partial || ids[e.ID] {
				t.Fatalf("an entry without id or kind, partial, or with an id seen before: %+v", e)
			}
			ids[e.ID] = true
		}
		// Any part of it from its start: the first entries, the same.
		for cut := 0; cut <= len(b); cut += max(1, len(b)/5) {
			part := ParseGemini(b[:cut])
			if len(part) > len(whole) || len(part) > 0 && !reflect.DeepEqual(part, whole[:len(part)]) {
				t.Fatalf("cut at %d:\n%s\nwhole:\n%s", cut, dumpEntries(part), dumpEntries(whole))
			}
		}
	})
}
