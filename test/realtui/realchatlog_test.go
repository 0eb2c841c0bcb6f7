package realtui

// The records the real agent TUIs keep of their conversations (the pinned
// npm versions, in tmux, against scripted model servers), read as wilco
// reads them (package chatlog): as the program writes them, turn by turn.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"wilco/test/blackbox"

	"wilco/adapter/chatlog"
	execadapter "wilco/adapter/exec"
	tmuxadapter "wilco/adapter/tmux"
	"wilco/modelserver"
)

// tuiUntilReady answers the program's own questions (its preset's dialog
// rules) until its input box waits, empty, and still waits two seconds
// later (Codex shows its main screen a moment between two questions).
func tuiUntilReady(t *testing.T, srv tmuxadapter.Server, session string, style *tmuxadapter.Style) {
	t.Helper()
	ctx := context.Background()
	var last string
	var readySince time.Time
	if !blackbox.Eventually(90*time.Second, 200*time.Millisecond, func() bool {
		p, err := srv.Capture(ctx, session)
		if err != nil || p.Dead {
			return false
		}
		last = p.Screen.Text()
		state, dialog := style.Classify(p.Screen)
		if dialog != nil {
			// One key at a time, each once the program drew what the one
			// before did (a choice moved); the question read again once
			// the program no longer shows it (or a while later: its answer
			// was lost, and it is answered again).
			for i, k := range dialog.Keys {
				shown := last
				_ = srv.SendKeys(ctx, session, k)
				blackbox.Eventually(10*time.Second, 100*time.Millisecond, func() bool {
					p, err := srv.Capture(ctx, session)
					if err != nil || p.Dead {
						return true
					}
					last = p.Screen.Text()
					if i < len(dialog.Keys)-1 {
						return last != shown
					}
					_, d := style.Classify(p.Screen)
					return d == nil || d.Match != dialog.Match
				})
			}
			return false
		}
		if state != tmuxadapter.Ready {
			readySince = time.Time{}
			return false
		}
		if readySince.IsZero() {
			readySince = time.Now()
		}
		return time.Since(readySince) >= 2*time.Second
	}) {
		t.Fatalf("the program never waited for a prompt; its pane:\n%s", last)
	}
}

// tuiSend pastes a prompt into the program's input box and submits it
// once the paste shows there (the pane no longer looks ready, or, for an
// input box that looks the same empty or full, it changed since the
// paste: a key sent before is lost, as wilco's tmux adapter knows), again
// while the input box still holds it.
func tuiSend(t *testing.T, srv tmuxadapter.Server, session string, preset tmuxadapter.Preset, prompt string) {
	t.Helper()
	ctx := context.Background()
	var before tmuxadapter.Pane
	if !blackbox.Eventually(90*time.Second, 100*time.Millisecond, func() bool {
		var err error
		before, err = srv.Capture(ctx, session)
		state, _ := preset.Style.Classify(before.Screen)
		return err == nil && state == tmuxadapter.Ready
	}) {
		t.Fatalf("the input box never waited for the prompt:\n%s", before.Screen.Text())
	}
	if err := srv.Paste(ctx, session, "prompt", prompt); err != nil {
		t.Fatal(err)
	}
	var last string
	if !blackbox.Eventually(30*time.Second, 100*time.Millisecond, func() bool {
		p, err := srv.Capture(ctx, session)
		if err != nil {
			return false
		}
		last = p.Screen.Text()
		state, _ := preset.Style.Classify(p.Screen)
		return state != tmuxadapter.Ready || preset.Style.HiddenInput && last != before.Screen.Text()
	}) {
		t.Fatalf("the paste never showed in the input box:\n%s", last)
	}
	for try := 0; try < 4; try++ {
		if err := srv.SendKeys(ctx, session, preset.Submit); err != nil {
			t.Fatal(err)
		}
		if blackbox.Eventually(3*time.Second, 200*time.Millisecond, func() bool {
			p, err := srv.Capture(ctx, session)
			return err == nil && preset.Style.Busy.MatchString(p.Screen.Text())
		}) {
			return
		}
		p, _ := srv.Capture(ctx, session)
		if state, _ := preset.Style.Classify(p.Screen); state == tmuxadapter.Ready {
			return // the turn was already over
		}
	}
}

// stopCodexDaemon stops the app-server daemon the Codex TUI starts under
// its home to run its conversations, which outlives it: `codex app-server
// daemon stop` ends the server, and its pid-update loop is ended by the
// pid its file gives (when that process is still this home's).
func stopCodexDaemon(t testing.TB, codex, home string, env []string) {
	dir := filepath.Join(home, ".codex", "app-server-daemon")
	var pids []int
	for _, name := range []string{"daemon.pid", "daemon-updater.pid"} {
		var f struct{ PID int }
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil && json.Unmarshal(b, &f) == nil && f.PID > 0 {
			pids = append(pids, f.PID)
		}
	}
	stop := exec.Command(codex, "app-server", "daemon", "stop")
	stop.Env = env
	_ = stop.Run()
	for _, pid := range pids {
		if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.Contains(string(cmd), home) {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	for _, pid := range pids {
		if !blackbox.Eventually(10*time.Second, 50*time.Millisecond, func() bool { return syscall.Kill(pid, 0) != nil }) {
			t.Errorf("Codex's app-server daemon (pid %d) is still running", pid)
		}
	}
}

// readTurn reads log until the turn that prompt began has ended, and
// returns that turn's entries (the Prompt, then what came of it).
func readTurn(t *testing.T, log chatlog.Log, prompt string) []chatlog.Entry {
	t.Helper()
	var turn, all []chatlog.Entry
	if !blackbox.Eventually(90*time.Second, 100*time.Millisecond, func() bool {
		var err error
		if all, err = log.Read(); err != nil {
			t.Fatal(err)
		}
		turn = nil
		for _, e := range all {
			switch {
			case e.Kind == chatlog.Prompt && chatlog.Words(e.Text) == chatlog.Words(prompt):
				turn = []chatlog.Entry{e}
			case turn != nil && turn[len(turn)-1].Kind != chatlog.TurnEnd:
				turn = append(turn, e)
			}
		}
		return turn != nil && turn[len(turn)-1].Kind == chatlog.TurnEnd
	}) {
		t.Fatalf("the turn of %q never ended in %s:\n%s", prompt, log.Path(), describeEntries(all))
	}
	return turn
}

func describeEntries(entries []chatlog.Entry) string {
	var b strings.Builder
	for _, e := range entries {
		in, _ := json.Marshal(e.Input)
		fmt.Fprintf(&b, "%s %s %q tool=%s input=%s error=%v\n", e.ID, e.Kind, e.Text, e.Tool, in, e.Error)
	}
	return b.String()
}

// The real Codex TUI: its conversation is found in its folder once its
// first prompt is sent (it has no id from wilco), read turn by turn as it
// writes it — the prompt as pasted, the agent's text, its command and
// that command's output, the turn's end — and, after `codex resume <id>`
// with the id the record gave, found again by that id, going on in the
// same record with every earlier entry in place.
func TestCodexTUIRecordIsReadTurnByTurnAndAfterAResume(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	codex := blackbox.NpmBin(t, "@openai/codex", execadapter.PresetCodex, "codex")
	long := strings.Repeat("A long answer, longer than the pane is wide, so that the program wraps it. ", 5) + "\n\n- one\n- two"
	model := modelserver.NewResponses(t, func(turn modelserver.Turn) modelserver.Reply {
		switch {
		case strings.Contains(turn.Prompt, "first task") && turn.Step == 0:
			return modelserver.Reply{Text: long, Tool: blackbox.ShellTool("printf 'from codex\\n' > notes.txt && echo written")}
		case strings.Contains(turn.Prompt, "first task"):
			return modelserver.Reply{Text: "Wrote notes.txt."}
		}
		return modelserver.Reply{Text: "Answered: " + strings.Fields(turn.Prompt)[0]}
	})
	home, repo := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The model offer is marked as seen, as Codex marks it when the user
	// keeps the model: the conversation stays on the model whose tools the
	// script knows.
	cfg := fmt.Sprintf("model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\n\n[model_providers.scripted]\nname = \"scripted\"\nbase_url = %q\nwire_api = \"responses\"\n\n"+
		"[notice.model_migrations]\n\"gpt-5.5\" = \"gpt-6-sol\"\n", model.URL())
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := tmuxadapter.PrivateServer("", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8"}
	ctx := context.Background()
	t.Cleanup(func() {
		_ = srv.KillServer(ctx)
		stopCodexDaemon(t, codex, home, env)
	})
	preset := tmuxadapter.Presets[tmuxadapter.PresetCodex]
	since := time.Now()
	if err := srv.NewSession(ctx, "codex", repo, env, []string{codex}, 160, 50); err != nil {
		t.Fatal(err)
	}
	tuiUntilReady(t, srv, "codex", &preset.Style)
	where := chatlog.Where{Env: map[string]string{"HOME": home, "CODEX_HOME": ""}, Dir: repo, Since: since}
	format := chatlog.For(tmuxadapter.PresetCodex)
	if format == nil {
		t.Fatal("no record format for codex")
	}
	if _, ok, err := format.Open(where); ok || err != nil {
		t.Fatalf("a record before the first prompt: ok %v, %v", ok, err)
	}

	send := func(prompt string) { tuiSend(t, srv, "codex", preset, prompt) }
	first := "Please do the first task: write notes.txt."
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
		var files []string
		_ = filepath.Walk(filepath.Join(home, ".codex", "sessions"), func(path string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				b, _ := os.ReadFile(path)
				first, _, _ := strings.Cut(string(b), "\n")
				files = append(files, path+": "+blackbox.Tail(first, 1)[:min(len(first), 400)])
			}
			return nil
		})
		p, _ := srv.Capture(ctx, "codex")
		t.Fatalf("Codex's record of the conversation was never found in %s (since %s); its rollouts:\n%s\nits pane:\n%s",
			repo, since.UTC().Format(time.RFC3339Nano), strings.Join(files, "\n"), p.Screen.Text())
	}
	turn := readTurn(t, log, first)
	kinds := make([]chatlog.Kind, len(turn))
	for i, e := range turn {
		kinds[i] = e.Kind
	}
	want := []chatlog.Kind{chatlog.Prompt, chatlog.Text, chatlog.ToolCall, chatlog.ToolResult, chatlog.Text, chatlog.TurnEnd}
	if fmt.Sprint(kinds) != fmt.Sprint(want) || turn[0].Text != first || turn[1].Text != long ||
		turn[2].Tool != "exec_command" || turn[2].Input["cmd"] != "printf 'from codex\\n' > notes.txt && echo written" ||
		!strings.Contains(turn[3].Text, "Output:\nwritten\n") || turn[3].Error || turn[4].Text != "Wrote notes.txt." || turn[5].Error {
		var reqs []string
		for _, r := range model.Requests() {
			reqs = append(reqs, fmt.Sprintf("%s model=%v tools=%v prompt=%.80q", r.Path, r.Body["model"], r.Turn.Tools, r.Turn.Prompt))
		}
		b, _ := os.ReadFile(log.Path())
		t.Fatalf("the first turn:\n%s\nthe model was asked:\n%s\nthe record:\n%s", describeEntries(turn), strings.Join(reqs, "\n"), b)
	}
	if blackbox.ReadFile(t, filepath.Join(repo, "notes.txt")) != "from codex\n" {
		t.Fatal("Codex's command did not write notes.txt")
	}
	second := "Second prompt,\nover lines:\n\n  - indented <xml> & \"quoted\"."
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
	if id == "" || !strings.Contains(filepath.Base(log.Path()), id) {
		t.Fatalf("the conversation's id %q, its record %s", id, log.Path())
	}
	if err := srv.SendKeys(ctx, "codex", "/quit"); err != nil {
		t.Fatal(err)
	}
	// The command submitted once Codex shows it typed in its input box.
	typed := regexp.MustCompile(`(?m)^›\s*/quit\s*$`)
	if !blackbox.Eventually(10*time.Second, 100*time.Millisecond, func() bool {
		p, err := srv.Capture(ctx, "codex")
		return err == nil && typed.MatchString(p.Screen.Text())
	}) {
		p, _ := srv.Capture(ctx, "codex")
		t.Fatalf("/quit never showed in Codex's input box:\n%s", p.Screen.Text())
	}
	_ = srv.SendKeys(ctx, "codex", "Enter")
	if !blackbox.Eventually(30*time.Second, 200*time.Millisecond, func() bool {
		p, err := srv.Capture(ctx, "codex")
		return err == nil && p.Dead
	}) {
		t.Fatal("Codex did not quit")
	}
	if err := srv.Respawn(ctx, "codex", repo, env, append([]string{codex}, preset.Resume(id)...), false); err != nil {
		t.Fatal(err)
	}
	tuiUntilReady(t, srv, "codex", &preset.Style)
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
