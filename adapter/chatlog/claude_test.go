package chatlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const claudeRecord = "testdata/claude-code/9604e375-3bce-4683-92de-ad46e969bd56.jsonl"

// summary is each entry as "kind: text or tool", for comparisons.
func summary(es []Entry) []string {
	var out []string
	for _, e := range es {
		s := string(e.Kind)
		switch e.Kind {
		case ToolCall:
			s += ": " + e.Tool
		case Prompt, Text:
			first, _, _ := strings.Cut(strings.TrimSpace(e.Text), "\n")
			s += ": " + first
		}
		out = append(out, s)
	}
	return out
}

func TestClaudeCodeRecordIsReadAsTheConversation(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(claudeRecord)
	if err != nil {
		t.Fatal(err)
	}
	l := &jsonlLog{parse: parseClaudeLine}
	l.feed(b)
	want := []string{
		"prompt: ## Task: T-1",
		"text: [ACK] T-1 - RECEIVED", "tool_call: Read", "tool_result",
		"text: Writing the fix.", "tool_call: Write", "tool_result",
		"text: Done: wrote file.txt.",
		"turn_end",
		"prompt: <retry_context attempt=\"2\" max_attempts=\"12\">",
		"text: [ACK] T-1 - RECEIVED", "tool_call: Read", "tool_result",
		"text: Writing the fix.", "tool_call: Write", "tool_result",
		"text: Done: wrote file.txt.",
		"turn_end",
	}
	got := summary(l.entries)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The prompt as it was sent: the paste's tags taken off.
	p := l.entries[0].Text
	if strings.Contains(p, "pasted_content") || !strings.HasPrefix(p, "## Task: T-1\n\nWrite the fix into file.txt") ||
		!strings.HasSuffix(p, `"Status: impossible" and its "Reason:".`) {
		t.Fatalf("the prompt: %q", p)
	}
	ack := l.entries[1].Text
	if ack != "[ACK] T-1 - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\nReading it first." {
		t.Fatalf("the agent's text: %q", ack)
	}
	w := l.entries[5]
	if w.Input["file_path"] != "/repo/file.txt" || w.Input["content"] != "attempt 1\n" {
		t.Fatalf("the Write call: %+v", w)
	}
	if r := l.entries[3]; r.Text != "1\tbroken\n2\t" || r.Error {
		t.Fatalf("the Read result: %+v", r)
	}
	for i, e := range l.entries {
		if e.ID == "" || e.At.IsZero() {
			t.Fatalf("entry %d has no id or time: %+v", i, e)
		}
	}
}

// checkGrowth feeds a record in pieces of the sizes cut gives: the entries
// read so far are always a prefix of the whole record's, same ids, same
// texts.
func checkGrowth(t *testing.T, b []byte, parse func([]byte, int) []Entry, cut func(i int) int) {
	t.Helper()
	whole := &jsonlLog{parse: parse}
	whole.feed(b)
	l := &jsonlLog{parse: parse}
	for i, at := 0, 0; at < len(b); i++ {
		n := min(max(cut(i), 1), len(b)-at)
		l.feed(b[at : at+n])
		at += n
		if len(l.entries) > len(whole.entries) {
			t.Fatalf("after %d bytes: %d entries, more than the whole record's %d", at, len(l.entries), len(whole.entries))
		}
		for k, e := range l.entries {
			w := whole.entries[k]
			if e.ID != w.ID || e.Kind != w.Kind || e.Text != w.Text || e.Tool != w.Tool {
				t.Fatalf("after %d bytes, entry %d is %+v, then %+v", at, k, e, w)
			}
		}
	}
	if len(l.entries) != len(whole.entries) {
		t.Fatalf("read in pieces: %d entries, whole: %d", len(l.entries), len(whole.entries))
	}
}

func TestAClaudeCodeRecordReadAsItGrowsNeverChangesWhatItReturned(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(claudeRecord)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 7, 100, 4096} {
		checkGrowth(t, b, parseClaudeLine, func(int) int { return size })
	}
	checkGrowth(t, b, parseClaudeLine, func(i int) int { return (i*7919)%997 + 1 })
}

func TestAClaudeCodeRecordIsFoundByItsConversationID(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := "/srv/a repo/é"
	w := Where{Env: map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": ""}, Dir: dir, Conversation: "11111111-2222-4333-8444-555555555555"}
	if _, ok, err := (claudeFormat{}).Open(w); ok || err != nil {
		t.Fatalf("a record not written yet: ok %v, err %v", ok, err)
	}
	proj := ClaudeProjectDir(w)
	if filepath.Base(proj) != "-srv-a-repo--" {
		t.Fatalf("the project folder: %s", proj)
	}
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(proj, "99999999-2222-4333-8444-555555555555.jsonl")
	mine := filepath.Join(proj, w.Conversation+".jsonl")
	for _, p := range []string{mine, other} {
		if err := os.WriteFile(p, []byte(`{"type":"user","uuid":"u1","message":{"role":"user","content":"hello from `+filepath.Base(p)+`"}}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, ok, err := (claudeFormat{}).Open(w)
	if !ok || err != nil {
		t.Fatalf("ok %v err %v", ok, err)
	}
	es, err := l.Read()
	if err != nil || len(es) != 1 || !strings.Contains(es[0].Text, w.Conversation) || l.Conversation() != w.Conversation || l.Path() != mine {
		t.Fatalf("read %+v (%v) from %s", es, err, l.Path())
	}
	// CLAUDE_CONFIG_DIR moves the records.
	cfg := t.TempDir()
	w.Env["CLAUDE_CONFIG_DIR"] = cfg
	if _, ok, _ := (claudeFormat{}).Open(w); ok {
		t.Fatal("found outside CLAUDE_CONFIG_DIR")
	}
	// Without an id: the newest record of the folder since the start.
	w.Env["CLAUDE_CONFIG_DIR"], w.Conversation, w.Since = "", "", time.Now().Add(-time.Minute)
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(other, later, later); err != nil {
		t.Fatal(err)
	}
	if l, ok, _ := (claudeFormat{}).Open(w); !ok || l.Path() != other {
		t.Fatalf("without an id: %v %v", ok, l)
	}
}

func TestAClaudeCodeRecordReadAgainSeesOnlyWhatWasAppended(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.jsonl")
	l := &jsonlLog{path: path, parse: parseClaudeLine}
	if es, err := l.Read(); err != nil || len(es) != 0 {
		t.Fatalf("no file yet: %v %v", es, err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(s string) {
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"type":"user","uuid":"p","message":{"role":"user","content":"do it"}}` + "\n" + `{"type":"assistant","uuid":"a","message":{"role":"assistant","content":[{"type":"text","text":"[ACK] T-1 - RECEIVED`)
	es, _ := l.Read()
	if len(es) != 1 || es[0].Kind != Prompt {
		t.Fatalf("a line not ended is not read: %+v", es)
	}
	write(`\nUnderstanding: a long one"}]}}` + "\n" + `{"type":"system","subtype":"turn_duration","uuid":"e"}` + "\n")
	es, _ = l.Read()
	if len(es) != 3 || es[1].Text != "[ACK] T-1 - RECEIVED\nUnderstanding: a long one" || es[2].Kind != TurnEnd {
		t.Fatalf("%+v", es)
	}
	// A file made again from nothing is read again from its start.
	if err := os.WriteFile(path, []byte(`{"type":"user","uuid":"q","message":{"role":"user","content":"again"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	es, _ = l.Read()
	if len(es) != 1 || es[0].Text != "again" {
		t.Fatalf("after the file was replaced: %+v", es)
	}
}

func TestClaudeCodeMessagesOfItsOwnAndOfSubAgentsAreNotTheConversation(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		`{"type":"user","isMeta":true,"uuid":"m","message":{"role":"user","content":"Caveat: the messages below were generated by the user while running local commands"}}`,
		`{"type":"assistant","isSidechain":true,"uuid":"s","message":{"role":"assistant","content":[{"type":"text","text":"[ACK] T-9 - RECEIVED"}]}}`,
		`{"type":"system","subtype":"stop_hook_summary","uuid":"h"}`,
		`{"type":"assistant","uuid":"t","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"}]}}`,
		`not json`, `{"type":"user","message":{"content":42}}`,
	} {
		if es := parseClaudeLine([]byte(line), 0); len(es) != 0 {
			t.Errorf("%s read as %+v", line, es)
		}
	}
}

func FuzzParseClaudeLine(f *testing.F) {
	b, err := os.ReadFile(claudeRecord)
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f.Add([]byte(l))
	}
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"text","text":"x"}],"is_error":true}]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		es := parseClaudeLine(line, 3)
		for _, e := range es {
			if e.ID == "" || e.Kind == "" {
				t.Fatalf("an entry without id or kind: %+v", e)
			}
		}
		// Fed with a line after it, in two pieces anywhere: the same.
		whole := &jsonlLog{parse: parseClaudeLine}
		rec := append(append([]byte{}, line...), '\n')
		whole.feed(rec)
		for cut := 0; cut <= len(rec); cut += max(1, len(rec)/7) {
			l := &jsonlLog{parse: parseClaudeLine}
			l.feed(rec[:cut])
			l.feed(rec[cut:])
			if len(l.entries) != len(whole.entries) {
				t.Fatalf("cut at %d: %d entries, whole %d", cut, len(l.entries), len(whole.entries))
			}
		}
	})
}
