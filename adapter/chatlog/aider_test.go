package chatlog

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// testdata/aider/chat.history.md is written as Aider v0.86.2 writes its
// chat history (aider/io.py, its calls transliterated): two runs in the
// same repository; the second warns, announces itself, is sent a prompt of
// three lines, replies with a new file, asks to create it, applies it and
// commits; then a second prompt, replied to with a heading and a quote,
// and tokens reported on two lines.
const aiderHistory = "testdata/aider/chat.history.md"

func TestAnAiderHistoryHoldsThePromptsTheRepliesAndAidersOwnOutput(t *testing.T) {
	t.Parallel()
	got := ParseAider(readRecordFile(t, aiderHistory))
	announce := "Aider v0.86.2\nModel: openai/scripted with whole edit format\nGit repo: .git with 1 files\nRepo-map: disabled"
	want := []Entry{
		{ID: "line-3", Kind: ToolResult, Text: announce},
		{ID: "line-8", Kind: Prompt, Text: "Say hello."},
		{ID: "line-10", Kind: Text, Text: "Hello."},
		{ID: "line-12", Kind: ToolResult, Text: "Tokens: 1.9k sent, 3 received. Cost: $0.0057 message, $0.0057 session."},
		{ID: "line-16", Kind: ToolResult, Text: "Warning for openai/scripted: Unknown context window size and costs, using sane defaults.\nYou can skip this check with --no-show-model-warnings\n" + announce},
		{ID: "line-23", Kind: Prompt, Text: "[T-1] Write notes.txt with a greeting.\n\nReply with [ACK] first, then do it."},
		{ID: "line-27", Kind: Text, Text: "[ACK] T-1 - RECEIVED\nUnderstanding: write a greeting into notes.txt.\n\nHere is the new file:\n\nnotes.txt\n```\nhello from the model\n```"},
		{ID: "line-37", Kind: ToolResult, Text: "Tokens: 2.1k sent, 45 received. Cost: $0.0065 message, $0.0065 session.\nnotes.txt\nCreate new file? (Y)es/(N)o [Yes]: y\nApplied edit to notes.txt\nCommit 1a2b3c4 feat: Add greeting to notes.txt"},
		{ID: "line-43", Kind: Prompt, Text: "What does notes.txt say?"},
		// A heading and a quote of the model's are its text: Aider's own
		// lines end with two spaces.
		{ID: "line-45", Kind: Text, Text: "#### What it holds\n\nThe file says:\n\n> hello from the model\n\nThat is all."},
		// Aider's output of two lines: "> " before the first only. The
		// last entry may still grow.
		{ID: "line-53", Kind: ToolResult, Text: "Tokens: 2.3k sent, 1.0k cache write, 1.2k cache hit, 60 received.\nCost: $0.0042 message, $0.0107 session.", Partial: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries:\n%s\nwant:\n%s", dumpEntries(got), dumpEntries(want))
	}
}

func TestAiderLinesOfItsOwn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		history string
		want    []Entry
	}{
		// An empty prompt.
		{"\n#### <blank>  \n\nok\n\n> x  \n", []Entry{{ID: "line-1", Kind: Prompt}, {ID: "line-3", Kind: Text, Text: "ok"}, {ID: "line-5", Kind: ToolResult, Text: "x", Partial: true}}},
		// A question answered for the user ("(A)ll" before) is written as
		// a prompt line: Aider's own.
		{"\n#### go  \n> a.txt  \n#### Create new file? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a  \n\n#### next  \n",
			[]Entry{{ID: "line-1", Kind: Prompt, Text: "go"}, {ID: "line-2", Kind: ToolResult, Text: "a.txt\nCreate new file? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a"}, {ID: "line-5", Kind: Prompt, Text: "next", Partial: true}}},
		// A quote ending the model's text, then Aider's output.
		{"\n#### q  \n\nSee:\n> quoted\n\n> Tokens: 1 sent.  \n", []Entry{{ID: "line-1", Kind: Prompt, Text: "q"}, {ID: "line-3", Kind: Text, Text: "See:\n> quoted"}, {ID: "line-6", Kind: ToolResult, Text: "Tokens: 1 sent.", Partial: true}}},
		// A new start ends what came before.
		{"\nreply\n\n# aider chat started at 2026-11-26 10:00:05\n\n> Aider v0.86.2  \n", []Entry{{ID: "line-1", Kind: Text, Text: "reply"}, {ID: "line-5", Kind: ToolResult, Text: "Aider v0.86.2", Partial: true}}},
		// Lines ended by "\r\n".
		{"\r\n#### a  \r\n#### b  \r\n\r\nc\r\n\r\n", []Entry{{ID: "line-1", Kind: Prompt, Text: "a\nb"}, {ID: "line-4", Kind: Text, Text: "c", Partial: true}}},
	} {
		if got := ParseAider([]byte(c.history)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n%s\nwant:\n%s", c.history, dumpEntries(got), dumpEntries(c.want))
		}
	}
}

// aiderRepo is a git working tree (git init) with a subfolder.
func aiderRepo(t *testing.T) (root, sub string) {
	t.Helper()
	root = t.TempDir()
	sub = filepath.Join(root, "pkg", "x")
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	return root, sub
}

// An empty .git folder (or one in a parent folder, such as the temporary
// directory's) is no repository: the history is in the folder itself.
func TestAnEmptyGitFolderIsNoRepository(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	if err := os.Mkdir(filepath.Join(parent, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w := Where{Env: map[string]string{"HOME": t.TempDir(), "AIDER_CHAT_HISTORY_FILE": ""}, Dir: dir}
	if got, want := AiderHistoryFile(w), filepath.Join(dir, ".aider.chat.history.md"); got != want {
		t.Fatalf("history file %s, want %s", got, want)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: /elsewhere/.git/worktrees/work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := gitRoot(filepath.Join(dir)); got != dir {
		t.Fatalf("a worktree's .git file: root %q, want %q", got, dir)
	}
}

func TestAiderHistoryFileIsWhereAiderWritesIt(t *testing.T) {
	t.Parallel()
	root, sub := aiderRepo(t)
	home := t.TempDir()
	w := Where{Env: map[string]string{"HOME": home, "AIDER_CHAT_HISTORY_FILE": ""}, Dir: sub}
	check := func(what, want string) {
		t.Helper()
		if got := AiderHistoryFile(w); got != want {
			t.Fatalf("%s: %s, want %s", what, got, want)
		}
	}
	check("in a repository", filepath.Join(root, ".aider.chat.history.md"))
	outside := t.TempDir()
	w.Dir = outside
	check("outside one", filepath.Join(outside, ".aider.chat.history.md"))
	w.Dir = sub
	writeFile(t, filepath.Join(home, ".aider.conf.yml"), "chat-history-file: home.md\n")
	check("the home's configuration", filepath.Join(sub, "home.md"))
	writeFile(t, filepath.Join(root, ".aider.conf.yml"), "# mine\nchat-history-file: /var/log/aider.md\nmodel: x\n")
	check("the repository's configuration", "/var/log/aider.md")
	writeFile(t, filepath.Join(sub, ".aider.conf.yml"), "chat-history-file: here.md\n")
	check("the folder's configuration", filepath.Join(sub, "here.md"))
	w.Env["AIDER_CHAT_HISTORY_FILE"] = "env.md"
	check("the environment", filepath.Join(sub, "env.md"))
	writeFile(t, filepath.Join(home, ".env"), "export AIDER_CHAT_HISTORY_FILE='/srv/logs/from home.md'\n")
	check("the home's .env", "/srv/logs/from home.md")
	writeFile(t, filepath.Join(sub, ".env"), "OPENAI_API_KEY=x\nAIDER_CHAT_HISTORY_FILE=dot.md # a comment\n")
	check("the folder's .env", filepath.Join(sub, "dot.md"))
}

func TestAnAiderHistoryIsThisRunsConversation(t *testing.T) {
	t.Parallel()
	root, _ := aiderRepo(t)
	w := Where{Env: map[string]string{"HOME": t.TempDir()}, Dir: root, Since: time.Now().Add(-time.Minute)}
	path := filepath.Join(root, ".aider.chat.history.md")
	if _, ok, err := For("aider").Open(w); ok || err != nil {
		t.Fatalf("no history yet: ok %v, err %v", ok, err)
	}
	b := readRecordFile(t, aiderHistory)
	writeFile(t, path, string(b))
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := For("aider").Open(w); ok || err != nil {
		t.Fatalf("a history not written since the start: ok %v, err %v", ok, err)
	}
	if err := os.Chtimes(path, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	l := mustOpen(t, For("aider"), w)
	es, err := l.Read()
	if err != nil || l.Path() != path || l.Conversation() != "" {
		t.Fatalf("%v %s %q", err, l.Path(), l.Conversation())
	}
	// From the last start on: the earlier run's prompt is not this one's.
	if want := ParseAider(b)[4:]; !reflect.DeepEqual(es, want) {
		t.Fatalf("read:\n%s\nwant:\n%s", dumpEntries(es), dumpEntries(want))
	}
}

func TestAnAiderHistoryReadAsItGrowsNeverChangesWhatItReturned(t *testing.T) {
	t.Parallel()
	b := readRecordFile(t, aiderHistory)
	for _, cut := range []func(int) int{
		func(int) int { return 1 },
		func(i int) int { return (i*7919)%97 + 1 },
	} {
		root, _ := aiderRepo(t)
		w := Where{Env: map[string]string{"HOME": t.TempDir()}, Dir: root}
		checkLogGrowth(t, filepath.Join(root, ".aider.chat.history.md"), b, cut, func() (Log, bool, error) { return For("aider").Open(w) }, ParseAider(b))
	}
}

func FuzzParseAider(f *testing.F) {
	b := readRecordFile(f, aiderHistory)
	f.Add(b)
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i := 0; i+4 <= len(lines); i += 4 {
		f.Add(bytes.Join(lines[i:i+4], nil))
	}
	f.Add([]byte("> a\nb\n\nc  \n> d  \n#### e  \n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		whole := ParseAider(b)
		ids := map[string]bool{}
		for k, e := range whole {
			if e.ID == "" || e.Kind == "" || ids[e.ID] || e.Partial && k != len(whole)-1 {
				t.Fatalf("entry %d of %d: no id or kind, an id seen before, or partial: %+v", k, len(whole), e)
			}
			ids[e.ID] = true
		}
		// Any part of it from its start: its whole entries are the
		// first ones, the same.
		for cut := 0; cut <= len(b); cut += max(1, len(b)/13) {
			for k, e := range ParseAider(b[:cut]) {
				if !e.Partial && (k >= len(whole) || !reflect.DeepEqual(e, whole[k])) {
					t.Fatalf("cut at %d, entry %d: %+v\nwhole:\n%s", cut, k, e, dumpEntries(whole))
				}
			}
		}
	})
}
