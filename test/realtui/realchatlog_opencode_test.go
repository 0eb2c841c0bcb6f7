package realtui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"

	"wilco/adapter/chatlog"
	execadapter "wilco/adapter/exec"
	tmuxadapter "wilco/adapter/tmux"
	"wilco/modelserver"
)

// The real opencode TUI: its conversation is found in its database once
// its first prompt is sent (it has no id from wilco: it makes its own),
// read turn by turn as it writes it — the prompt as pasted over several
// lines, the agent's long text, its write and what that answered, the
// turn's end — and, after `opencode --session <id>` with the id the
// record gave, found again by that id, going on with every earlier entry
// in place.
func TestOpencodeTUIRecordIsReadTurnByTurnAndAfterAResume(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	opencode := blackbox.NpmBin(t, "opencode-ai", execadapter.PresetOpencode, "opencode")
	repo := t.TempDir()
	long := strings.Repeat("A long answer, longer than the pane is wide, so that the program wraps it. ", 5) + "\n\n- one\n- two"
	model := modelserver.NewChat(t, func(turn modelserver.Turn) modelserver.Reply {
		switch {
		case strings.Contains(turn.Prompt, "first task") && turn.Step == 0:
			return modelserver.Reply{Text: long, Tool: &modelserver.ToolUse{Name: "write",
				Input: map[string]any{"filePath": filepath.Join(repo, "notes.txt"), "content": "from opencode\n"}}}
		case strings.Contains(turn.Prompt, "first task"):
			return modelserver.Reply{Text: "Wrote notes.txt."}
		}
		return modelserver.Reply{Text: "Answered: " + strings.Fields(turn.Prompt)[0]}
	})
	home := blackbox.OpencodeHome(t, model.URL())
	srv, err := tmuxadapter.PrivateServer("", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// opencode takes its folder from PWD, as the tmux adapter sets it.
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8", "PWD=" + repo}
	ctx := context.Background()
	t.Cleanup(func() { _ = srv.KillServer(ctx) })
	preset := tmuxadapter.Presets[tmuxadapter.PresetOpencode]
	since := time.Now()
	if err := srv.NewSession(ctx, "opencode", repo, env, []string{opencode}, 160, 50); err != nil {
		t.Fatal(err)
	}
	tuiUntilReady(t, srv, "opencode", &preset.Style)
	where := chatlog.Where{Env: map[string]string{"HOME": home, "XDG_DATA_HOME": "", "OPENCODE_DB": ""}, Dir: repo, Since: since}
	format := chatlog.For(tmuxadapter.PresetOpencode)
	if format == nil {
		t.Fatal("no record format for opencode")
	}
	if _, ok, err := format.Open(where); ok || err != nil {
		t.Fatalf("a record before the first prompt: ok %v, %v", ok, err)
	}

	send := func(prompt string) { tuiSend(t, srv, "opencode", preset, prompt) }
	first := "Please do the first task: write notes.txt.\n\nOver lines,\n  indented <xml> & \"quoted\"."
	send(first)
	var log chatlog.Log
	if !blackbox.Eventually(60*time.Second, 100*time.Millisecond, func() bool {
		var ok bool
		log, ok, err = format.Open(where)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}) {
		p, _ := srv.Capture(ctx, "opencode")
		t.Fatalf("opencode's conversation was never found in %s for %s; its pane:\n%s", chatlog.OpencodeDB(where), repo, p.Screen.Text())
	}
	turn := readTurn(t, log, first)
	kinds := make([]chatlog.Kind, len(turn))
	for i, e := range turn {
		kinds[i] = e.Kind
	}
	want := []chatlog.Kind{chatlog.Prompt, chatlog.Text, chatlog.ToolCall, chatlog.ToolResult, chatlog.Text, chatlog.TurnEnd}
	if fmt.Sprint(kinds) != fmt.Sprint(want) || chatlog.Words(turn[0].Text) != chatlog.Words(first) || turn[1].Text != long ||
		turn[2].Tool != "write" || turn[2].Input["filePath"] != filepath.Join(repo, "notes.txt") ||
		turn[3].Text != "Wrote file successfully." || turn[3].Error || turn[4].Text != "Wrote notes.txt." {
		t.Fatalf("the first turn:\n%s", describeEntries(turn))
	}
	if blackbox.ReadFile(t, filepath.Join(repo, "notes.txt")) != "from opencode\n" {
		t.Fatal("opencode's write did not write notes.txt")
	}
	second := "Second prompt, on one line."
	send(second)
	if turn := readTurn(t, log, second); len(turn) != 3 || turn[0].Text != second || turn[1].Text != "Answered: Second" {
		t.Fatalf("the second turn:\n%s", describeEntries(turn))
	}
	before, err := log.Read()
	if err != nil {
		t.Fatal(err)
	}

	// Quit, and resume the conversation by the id its record gave.
	id := log.Conversation()
	if !strings.HasPrefix(id, "ses_") || !strings.HasSuffix(log.Path(), "#"+id) {
		t.Fatalf("the conversation's id %q, its record %s", id, log.Path())
	}
	if err := srv.SendKeys(ctx, "opencode", "C-c"); err != nil {
		t.Fatal(err)
	}
	if !blackbox.Eventually(30*time.Second, 200*time.Millisecond, func() bool {
		p, err := srv.Capture(ctx, "opencode")
		return err == nil && p.Dead
	}) {
		t.Fatal("opencode did not quit")
	}
	if err := srv.Respawn(ctx, "opencode", repo, env, append([]string{opencode}, preset.Resume(id)...), false); err != nil {
		t.Fatal(err)
	}
	tuiUntilReady(t, srv, "opencode", &preset.Style)
	where.Conversation, where.Since = id, time.Now()
	resumed, ok, err := format.Open(where)
	if err != nil || !ok || resumed.Path() != log.Path() || resumed.Conversation() != id {
		t.Fatalf("the resumed conversation's record: %v (ok %v, %v); before: %s", resumed, ok, err, log.Path())
	}
	third := "Third prompt, after the resume."
	send(third)
	if turn := readTurn(t, resumed, third); len(turn) != 3 || turn[1].Text != "Answered: Third" {
		t.Fatalf("the third turn:\n%s", describeEntries(turn))
	}
	after, err := resumed.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) <= len(before) || describeEntries(after[:len(before)]) != describeEntries(before) {
		t.Fatalf("the resumed record does not go on from the first run's:\nbefore:\n%s\nafter:\n%s", describeEntries(before), describeEntries(after))
	}
}
