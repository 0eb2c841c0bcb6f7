package realtui

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"

	"wilco/adapter/chatlog"
	execadapter "wilco/adapter/exec"
	tmuxadapter "wilco/adapter/tmux"
	"wilco/modelserver"
)

// Gemini CLI, for real, in tmux as the gemini preset runs it, against the
// scripted Gemini API: two prompts pasted (many lines each), a reply with a
// long text and a file written (its permission given in the pane), a tool
// call that fails. Its own record, found by the conversation id wilco gave
// it, read as it is written, is the conversation: the prompts as pasted,
// the replies' whole texts, the calls and their results; no entry read
// whole ever changes.
func TestGeminiCLIsOwnRecordIsReadAsItsConversation(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	gemini := blackbox.NpmBin(t, "@google/gemini-cli", execadapter.PresetGemini, "gemini")
	var plan []string
	for i := 1; i <= 30; i++ {
		plan = append(plan, "Step "+strings.Repeat("I", i%4+1)+" of the plan reads part "+string(rune('A'+i%26))+" of the repository and says so.")
	}
	long := "Writing notes.txt.\n\n" + strings.Join(plan, "\n")
	model := modelserver.NewGemini(t, func(turn modelserver.Turn) modelserver.Reply {
		switch {
		case strings.Contains(turn.Prompt, "notes.txt") && turn.Step == 0:
			return modelserver.Reply{Text: long, Tool: &modelserver.ToolUse{Name: "write_file", Input: map[string]any{"file_path": "notes.txt", "content": "hello\n"}}}
		case strings.Contains(turn.Prompt, "notes.txt"):
			return modelserver.Reply{Text: "notes.txt is written."}
		case strings.Contains(turn.Prompt, "missing.txt") && turn.Step == 0:
			return modelserver.Reply{Tool: &modelserver.ToolUse{Name: "read_file", Input: map[string]any{"file_path": "missing.txt"}}}
		case strings.Contains(turn.Prompt, "missing.txt"):
			return modelserver.Reply{Text: "missing.txt is not there."}
		}
		return modelserver.Reply{Text: "OK"}
	})
	home, repo := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := tmuxadapter.PrivateServer("", filepath.Join(t.TempDir(), "tmux"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t.Cleanup(func() { blackbox.EndPanes(srv) })
	preset := tmuxadapter.Presets[tmuxadapter.PresetGemini]
	id := "5d1f0c2a-7b3e-4c9d-8e1f-2a3b4c5d6e7f"
	// The preset's Unset, as wilco's tmux adapter removes them (Gemini CLI
	// runs headless when CI=true).
	argv := []string{"env"}
	for _, k := range preset.Unset {
		argv = append(argv, "-u", k)
	}
	argv = append(append(append(argv, gemini), preset.Args...), preset.NewSession(id)...)
	env := []string{"HOME=" + home, "GOOGLE_GEMINI_BASE_URL=" + model.URL(), "GEMINI_API_KEY=scripted-key"}
	for k, v := range preset.Env {
		env = append(env, k+"="+v)
	}
	if err := srv.NewSession(ctx, "gemini", repo, env, argv, 160, 50); err != nil {
		t.Fatal(err)
	}
	screen := func() string {
		p, err := srv.Capture(ctx, "gemini")
		if err != nil {
			t.Fatal(err)
		}
		if p.Dead {
			t.Fatalf("Gemini CLI exited:\n%s", p.Screen.Text())
		}
		return p.Screen.Text()
	}
	waitScreen := func(what string, ok func(string) bool) {
		t.Helper()
		if !blackbox.Eventually(90*time.Second, 200*time.Millisecond, func() bool { return ok(screen()) }) {
			t.Fatalf("%s never came:\n%s", what, screen())
		}
	}
	ready := func(s string) bool { return preset.Style.Ready.MatchString(s) }

	// The record, read while it is written.
	w := chatlog.Where{Env: map[string]string{"HOME": home, "GEMINI_CLI_HOME": ""}, Dir: repo, Conversation: id, Since: time.Now()}
	var log chatlog.Log
	var whole, entries []chatlog.Entry
	read := func() {
		t.Helper()
		if log == nil {
			l, ok, err := chatlog.For("gemini").Open(w)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				return
			}
			log = l
		}
		var err error
		if entries, err = log.Read(); err != nil {
			t.Fatal(err)
		}
		for k, e := range entries {
			if k < len(whole) && !reflect.DeepEqual(e, whole[k]) {
				t.Fatalf("entry %d was read whole as %+v, now %+v", k, whole[k], e)
			}
			if k >= len(whole) && !e.Partial {
				whole = append(whole, e)
			}
		}
	}
	waitEntry := func(what string, ok func(chatlog.Entry) bool) {
		t.Helper()
		if !blackbox.Eventually(90*time.Second, 100*time.Millisecond, func() bool {
			read()
			return len(entries) > 0 && ok(entries[len(entries)-1])
		}) {
			t.Fatalf("%s never read; entries:\n%+v\nscreen:\n%s", what, entries, screen())
		}
	}
	// send pastes a prompt and submits it once the paste shows in the
	// input box (the pane no longer looks ready: a submit key that comes
	// before is lost, as wilco's tmux adapter knows), again while the
	// record does not hold it.
	send := func(prompt string) {
		t.Helper()
		waitScreen("the input box", ready)
		if err := srv.Paste(ctx, "gemini", "prompt", prompt); err != nil {
			t.Fatal(err)
		}
		waitScreen("the paste in the input box", func(s string) bool { return !ready(s) })
		sent := func() bool {
			read()
			for _, e := range entries {
				if e.Kind == chatlog.Prompt && chatlog.Words(e.Text) == chatlog.Words(prompt) {
					return true
				}
			}
			return false
		}
		for try := 0; !sent(); try++ {
			if try == 10 {
				t.Fatalf("the prompt was never submitted:\n%s", screen())
			}
			if err := srv.SendKeys(ctx, "gemini", preset.Submit); err != nil {
				t.Fatal(err)
			}
			blackbox.Eventually(3*time.Second, 100*time.Millisecond, sent)
		}
	}
	first := "[T-1] Write notes.txt.\n\nIt holds one line:\n\n    hello\n\nReply with [ACK] first."
	second := "[T-2] Read missing.txt.\n\nSay what you find.\nThat is all."

	send(first)
	waitScreen("the permission question", preset.Style.Permission.MatchString)
	read()
	if err := srv.SendKeys(ctx, "gemini", preset.Approve...); err != nil {
		t.Fatal(err)
	}
	waitEntry("the first reply's end", func(e chatlog.Entry) bool { return e.Text == "notes.txt is written." })
	send(second)
	waitEntry("the second reply", func(e chatlog.Entry) bool { return e.Text == "missing.txt is not there." })

	var got []string
	for _, e := range entries {
		got = append(got, string(e.Kind)+" "+e.Tool)
	}
	want := []string{"prompt ", "text ", "tool_call write_file", "tool_result ", "text ", "prompt ", "tool_call read_file", "tool_result ", "text "}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries: %q\nwant %q\n%+v", got, want, entries)
	}
	if chatlog.Words(entries[0].Text) != chatlog.Words(first) || chatlog.Words(entries[5].Text) != chatlog.Words(second) {
		t.Fatalf("the prompts as recorded: %q, %q", entries[0].Text, entries[5].Text)
	}
	if entries[1].Text != long {
		t.Fatalf("the long reply: %q", entries[1].Text)
	}
	if e := entries[2]; e.Input["file_path"] != "notes.txt" || e.Input["content"] != "hello\n" {
		t.Fatalf("the write_file call: %+v", e)
	}
	if e := entries[3]; e.Error || !strings.Contains(e.Text, "notes.txt") {
		t.Fatalf("the write_file result: %+v", e)
	}
	if e := entries[7]; !e.Error || !strings.Contains(e.Text, "missing.txt") {
		t.Fatalf("the read_file result: %+v", e)
	}
	if log.Conversation() != id || !strings.HasPrefix(filepath.Base(log.Path()), "session-") {
		t.Fatalf("the record: %s, conversation %s", log.Path(), log.Conversation())
	}
	if b, err := os.ReadFile(filepath.Join(repo, "notes.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("notes.txt: %q %v", b, err)
	}
}
