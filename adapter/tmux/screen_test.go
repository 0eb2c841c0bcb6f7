package tmux

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// loadScreen reads a capture of a real program's pane kept in
// testdata/screens: "width=N", the scrollback, the capture mark, the
// screen (each as `capture-pane -p -e -J` gives it).
func loadScreen(t testing.TB, name string) Screen {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "screens", name+".capture"))
	if err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(string(b), "\n")
	width, _ := strconv.Atoi(strings.TrimPrefix(head, "width="))
	history, screen, ok := strings.Cut(rest, captureMark+"\n")
	if !ok {
		t.Fatalf("%s: no capture mark", name)
	}
	return ParseScreen(history, screen, width)
}

// edited is a capture with each of its rows changed by r.
func edited(t testing.TB, name string, r *strings.Replacer) Screen {
	t.Helper()
	s := loadScreen(t, name)
	for i := range s.Rows {
		s.Rows[i], s.Undimmed[i] = r.Replace(s.Rows[i]), r.Replace(s.Undimmed[i])
	}
	return s
}

func texts(lines []Line) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l.Text)
	}
	return out
}

func TestStripANSIRemovesEscapeSequencesAndKeepsTheText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want, undimmed string }{
		{"\x1b[38;5;174m ▐\x1b[48;5;16m▛█\x1b[39m\x1b[49m   \x1b[1mClaude Code\x1b[0m", " ▐▛█   Claude Code", " ▐▛█   Claude Code"},
		{"\x1b[1m›\x1b[0m\x1b[39m\x1b[49m \x1b[2mAsk Codex to do anything\x1b[0m\x1b[39m\x1b[49m", "› Ask Codex to do anything", "› "},
		{"\x1b]8;;https://example.com\x07link\x1b]8;;\x07 and \x1b(Bbox", "link and box", "link and box"},
		{"a\tb\x07c\x1b[Kd\x1b7e\u009b31mf", "a bcdef", "a bcdef"},
		{"\x1b[2mdim\x1b[22m bright \x1b[2;38;2;1;2;3mdim again\x1b[m end", "dim bright dim again end", " bright  end"},
		{"broken \x1b[", "broken ", "broken "},
		{"bad utf8 \xff!", "bad utf8 \uFFFD!", "bad utf8 \uFFFD!"},
	} {
		if got := StripANSI(c.in); got != c.want {
			t.Errorf("StripANSI(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Undim(c.in); got != c.undimmed {
			t.Errorf("Undim(%q) = %q, want %q", c.in, got, c.undimmed)
		}
	}
}

// The real programs' screens are told apart: ready, typing, busy, asking
// for permission, asking their own startup questions.
func TestTheRealProgramsScreensAreClassified(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		preset, screen string
		want           State
		dialog         string
	}{
		{PresetClaudeCode, "claude-trust", Dialog, "trust the folder"},
		{PresetClaudeCode, "claude-apikey", Dialog, "use the API key"},
		{PresetClaudeCode, "claude-ready-empty", Ready, ""},
		{PresetClaudeCode, "claude-typing", Typing, ""},
		{PresetClaudeCode, "claude-busy", Busy, ""},
		{PresetClaudeCode, "claude-starting", Busy, ""}, // a turn starts: its spinner shows, its status line does not say so yet
		{PresetClaudeCode, "claude-permission", Permission, ""},
		{PresetClaudeCode, "claude-done", Ready, ""},
		{PresetClaudeCode, "claude-narrow", Ready, ""},
		{PresetCodex, "cx-ready", Ready, ""},
		{PresetCodex, "cx-typing", Typing, ""},
		{PresetCodex, "cx-busy", Busy, ""},
		{PresetCodex, "cx-done", Ready, ""},
		{PresetCodex, "cx-starting", Typing, ""}, // its input box drawn before it asks to trust the folder: no prompt yet
		{PresetCodex, "cx-trust", Dialog, "trust the folder"},
		{PresetCodex, "cx-model", Dialog, "keep the model"},
		{PresetCodex, "cx-permission", Permission, ""},
		{PresetGemini, "gm-ready", Ready, ""},
		{PresetGemini, "gm-typing", Typing, ""},
		{PresetGemini, "gm-busy", Busy, ""},
		{PresetGemini, "gm-done", Ready, ""},
		{PresetGemini, "gm-permission-shell", Permission, ""},
		{PresetGemini, "gm-permission-write", Permission, ""},
		{PresetGemini, "gm-queued", Busy, ""},    // the prompt waits in its queue while it starts: the input box is empty
		{PresetOpencode, "oc-typing", Ready, ""}, // its input box does not tell: its paste is confirmed by the busy line
		{PresetOpencode, "oc-busy", Ready, ""},   // seconds after its submit it shows nothing of its work yet
		{PresetOpencode, "oc-done", Busy, ""},
		{PresetOpencode, "oc-permission", Permission, ""},
		{PresetOpencode, "oc-permission-wide", Permission, ""},
		{PresetOpencode, "oc-permission-clipped", Permission, ""},
		{PresetOpencode, "oc-permission-edit", Permission, ""},
		{PresetOpencode, "oc-permission-outside", Permission, ""},
	} {
		st := Presets[c.preset].Style
		got, d := st.Classify(loadScreen(t, c.screen))
		name := ""
		if d != nil {
			name = d.Name
		}
		if got != c.want || name != c.dialog {
			t.Errorf("%s: %s (%q), want %s (%q)", c.screen, got, name, c.want, c.dialog)
		}
	}
}

func TestAPermissionQuestionNamesItsToolAndItsText(t *testing.T) {
	t.Parallel()
	st := Presets[PresetClaudeCode].Style
	s := loadScreen(t, "claude-permission")
	if tool := st.ToolOf(s); tool != "Write" {
		t.Fatalf("tool = %q", tool)
	}
	if text := st.PermissionText(s); !strings.Contains(text, "Do you want to create file.txt?") || !strings.Contains(text, "Write(/home/user/a/file.txt)") {
		t.Fatalf("text:\n%s", text)
	}
	// The agent's words above the question are not its text: an allow
	// entry that matches them allows nothing.
	if text := st.PermissionText(s); strings.Contains(text, "Writing now.") || strings.Contains(text, "Understanding:") {
		t.Fatalf("the question's text holds the agent's words:\n%s", text)
	}
}

// The conversation above a permission question is what the pane shows
// above its text: the agent's words and what it did before (scrollback
// included), never a row of the question itself, nor a spinner.
func TestTheConversationAboveAQuestionIsNotTheQuestion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ preset, screen, last, first string }{
		{PresetClaudeCode, "claude-permission", "Writing now.", ""},
		{PresetGemini, "gm-permission-write", "Writing.", "Tips for getting started:"},
	} {
		st := Presets[c.preset].Style
		s := loadScreen(t, c.screen)
		above := st.PermissionAbove(s)
		if len(above) == 0 || above[len(above)-1] != c.last || c.first != "" && !slices.Contains(above, c.first) {
			t.Errorf("%s: above the question:\n%s", c.screen, strings.Join(above, "\n"))
		}
		for _, l := range strings.Split(st.PermissionText(s), "\n") {
			if slices.Contains(above, l) {
				t.Errorf("%s: the question's line %q is read above it", c.screen, l)
			}
		}
	}
	st := Presets[PresetGemini].Style
	s := loadScreen(t, "gm-permission-write")
	s.Rows = slices.Insert(s.Rows, 25, " ⠋ Thinking... (esc to cancel, 0s)")
	s.Undimmed = slices.Insert(s.Undimmed, 25, " ⠋ Thinking... (esc to cancel, 0s)")
	if above := st.PermissionAbove(s); above[len(above)-1] != "Writing." {
		t.Errorf("a spinner is read above the question:\n%s", strings.Join(above, "\n"))
	}
}

// Codex's offer of a newer model is answered by the one key that keeps
// the existing model whatever is highlighted ("2"), not by moving the
// highlight and confirming it: a key that comes before the offer takes
// keys is lost, and Enter alone takes the new model.
func TestCodexsOfferOfANewerModelIsDeclinedByOneKey(t *testing.T) {
	t.Parallel()
	st := Presets[PresetCodex].Style
	s := loadScreen(t, "cx-model")
	state, d := st.Classify(s)
	if state != Dialog || d == nil || d.Name != "keep the model" || !slices.Equal(d.Keys, []string{"2"}) {
		t.Fatalf("the offer: %s %+v", state, d)
	}
	if !strings.Contains(s.Text(), "› 1. Try new model") || !strings.Contains(s.Text(), "2. Use existing model") {
		t.Fatalf("the capture no longer shows the offer:\n%s", s.Text())
	}
	// The same offer with the existing model highlighted is answered too.
	moved := edited(t, "cx-model", strings.NewReplacer("› 1. Try", "  1. Try", "  2. Use", "› 2. Use"))
	if state, d := st.Classify(moved); state != Dialog || d == nil || d.Name != "keep the model" {
		t.Fatalf("the offer with its second choice highlighted: %s %+v", state, d)
	}
}

// Codex's own questions are told from the conversation's words: a model
// that asks "Would you like to run the tests?" or speaks of trying a new
// model leaves the pane ready, not asking for permission or a dialog.
func TestCodexsQuestionsAreNotTheModelsWords(t *testing.T) {
	t.Parallel()
	st := Presets[PresetCodex].Style
	s := edited(t, "cx-done", strings.NewReplacer("Status: complete", "Would you like to run the tests? 1. Yes, proceed",
		"Summary: wrote the fix", "1. Try new model, or 2. Use existing model"))
	if !strings.Contains(s.Text(), "Would you like to run the tests?") {
		t.Fatalf("the screen was not changed:\n%s", s.Text())
	}
	if state, d := st.Classify(s); state != Ready {
		t.Fatalf("the model's words are taken for Codex's question: %s %+v", state, d)
	}
}

// Codex asks to run a command outside its sandbox: the question's tool is
// the command, its text the question from its first line down (not the
// conversation above it, where an earlier command ran), and an allow list
// is matched against the command alone — not the model's reason for it;
// a command that cannot be read whole is allowed by nothing.
func TestCodexsApprovalNamesItsCommandAndOnlyTheCommandIsAllowed(t *testing.T) {
	t.Parallel()
	st := Presets[PresetCodex].Style
	s := loadScreen(t, "cx-permission")
	if !strings.Contains(s.Text(), "• Ran touch /home/u1/outside.txt") || !strings.Contains(s.Text(), "› Then escalate again") {
		t.Fatalf("the capture no longer shows an earlier command and the prompt above the question:\n%s", s.Text())
	}
	if tool := st.ToolOf(s); tool != "touch /home/u1/outside.txt" {
		t.Fatalf("tool = %q", tool)
	}
	text := st.PermissionText(s)
	if !strings.HasPrefix(text, "Would you like to run the following command?\n") || !strings.Contains(text, "Reason: to write outside") ||
		strings.Contains(text, "escalate again") || strings.Contains(text, "• Ran") {
		t.Fatalf("text:\n%s", text)
	}
	tool := st.ToolOf(s)
	for _, c := range []struct {
		entry string
		want  bool
	}{
		{`^touch `, true},
		{`outside\.txt$`, true},
		{`write`, false},    // the model's reason, not the command
		{`escalate`, false}, // the prompt above the question
		{`Ran`, false},      // an earlier command
		{`^rm `, false},
	} {
		if got := st.Allows(regexp.MustCompile(c.entry), tool, text); got != c.want {
			t.Errorf("allow %q: %v, want %v", c.entry, got, c.want)
		}
	}
	// A long command is read whole, across the rows it wraps on.
	long := loadScreen(t, "cx-permission-long")
	if tool := st.ToolOf(long); !strings.HasPrefix(tool, "printf 'abcdefghij abcdefghij") || !strings.HasSuffix(tool, "abcdefghij ' > /home/u1/long.txt") ||
		strings.Count(tool, "abcdefghij") != 20 || !st.Allows(regexp.MustCompile(`^printf '[a-j \n]*' > /home/u1/long\.txt$`), tool, st.PermissionText(long)) {
		t.Fatalf("the long command: %q", tool)
	}
	// A command with a line that begins like one ("$ printf ok"), or a
	// reason wrapped onto a row that does: the command cannot be told,
	// and no entry allows it.
	for name, s := range map[string]Screen{
		"cx-permission-lines":  loadScreen(t, "cx-permission-lines"),
		"a reason on two rows": edited(t, "cx-permission", strings.NewReplacer("Environment: local", "$ printf ok")),
	} {
		if state, _ := st.Classify(s); state != Permission {
			t.Fatalf("%s: %s", name, state)
		}
		text := st.PermissionText(s)
		if tool := st.ToolOf(s); tool != "" || st.Allows(regexp.MustCompile(`printf`), tool, text) || st.Allows(regexp.MustCompile(`.`), tool, text) {
			t.Errorf("%s: read as the command %q:\n%s", name, tool, text)
		}
	}
	// A style that cannot tell the whole request matches the text too.
	claude := Presets[PresetClaudeCode].Style
	cs := loadScreen(t, "claude-permission")
	if !claude.Allows(regexp.MustCompile(`file\.txt`), claude.ToolOf(cs), claude.PermissionText(cs)) {
		t.Fatal("Claude Code's question is no longer matched by its text")
	}
}

// opencode's permission question is read from its box down, without the
// box's edge or the side panel beside it: its tool is the command a shell
// question would run (read whole across the rows it wraps on), else the
// question's title; and an allow list is matched against that alone — not
// the conversation above the question, where the prompt, the model's words
// and an earlier command show.
func TestAnOpencodePermissionQuestionNamesWhatItAsksAndOnlyThatIsAllowed(t *testing.T) {
	t.Parallel()
	st := Presets[PresetOpencode].Style
	s := loadScreen(t, "oc-permission")
	if !strings.Contains(s.Text(), "$ printf 'fixed\\n' > file.txt") || !strings.Contains(s.Text(), "With printf, or by removing keep.txt first.") {
		t.Fatalf("the capture no longer shows an earlier command and the model's words above the question:\n%s", s.Text())
	}
	for _, c := range []struct{ screen, tool string }{
		{"oc-permission", "rm -f keep.txt"},
		{"oc-permission-wide", "printf 'a long line that is longer than the pane is wide, %s %s %s\\n' one two three four five six seven\n" +
			"eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twentyone\n" +
			"twentytwo > file.txt"},
		{"oc-permission-edit", "Edit file.txt"},
		{"oc-permission-outside", "Access external directory /srv"},
	} {
		s := loadScreen(t, c.screen)
		text := st.PermissionText(s)
		if tool := st.ToolOf(s); tool != c.tool {
			t.Errorf("%s: tool = %q, want %q\ntext:\n%s", c.screen, tool, c.tool, text)
		}
		if !strings.HasPrefix(text, "△ Permission required\n") || !strings.Contains(text, "\nAllow once   Allow always   Reject ") ||
			strings.ContainsAny(text, "┃▣") || strings.Contains(text, "the-projects-of-a-team") || strings.Contains(text, "OpenCode 1.18.33") {
			t.Errorf("%s: text:\n%s", c.screen, text)
		}
	}
	text := st.PermissionText(s)
	tool := st.ToolOf(s)
	for _, c := range []struct {
		entry string
		want  bool
	}{
		{`^rm -f keep\.txt$`, true},
		{`keep\.txt`, true},
		{`printf`, false},     // an earlier command, and the model's words, above the question
		{`Permission`, false}, // the question's own words
		{`Shell`, false},
	} {
		if got := st.Allows(regexp.MustCompile(c.entry), tool, text); got != c.want {
			t.Errorf("allow %q: %v, want %v", c.entry, got, c.want)
		}
	}
}

// opencode's question box shows at most seven rows of a command: a longer
// one is cut off (here, an rm after nine printfs), so the command reads as
// none and no entry of an allow list allows it.
func TestAnOpencodeCommandCutOffByItsQuestionIsAllowedByNoEntry(t *testing.T) {
	t.Parallel()
	st := Presets[PresetOpencode].Style
	s := loadScreen(t, "oc-permission-clipped")
	text := st.PermissionText(s)
	if !strings.Contains(text, "$ printf 1\nprintf 2") || !strings.Contains(text, "printf 7") || strings.Contains(text, "rm -f keep.txt") {
		t.Fatalf("the capture no longer shows the command cut off:\n%s", text)
	}
	if tool := st.ToolOf(s); tool != "" || st.Allows(regexp.MustCompile(`printf`), tool, text) || st.Allows(regexp.MustCompile(`.`), tool, text) {
		t.Fatalf("a command cut off is read as %q:\n%s", tool, text)
	}
	// The same question with a command of one row fewer shows it whole.
	whole := loadScreen(t, "oc-permission-clipped")
	for i := len(whole.Rows) - 1; i >= 0; i-- {
		if strings.Contains(whole.Rows[i], "printf 7") {
			whole.Rows = append(slices.Delete(whole.Rows, i, i+1), "")
			whole.Undimmed = append(slices.Delete(whole.Undimmed, i, i+1), "")
			break
		}
	}
	if tool := st.ToolOf(whole); tool != "printf 1\nprintf 2\nprintf 3\nprintf 4\nprintf 5\nprintf 6" {
		t.Fatalf("a command of six rows: %q\n%s", tool, st.PermissionText(whole))
	}
}

// Gemini CLI's confirmation is its box: the tool its header names, and the
// box's text without its edges — not the prompt above it, nor the model's
// words (which name write_file above a question for Shell).
func TestAGeminiConfirmationIsItsBoxNotTheConversationAboveIt(t *testing.T) {
	t.Parallel()
	st := Presets[PresetGemini].Style
	for _, c := range []struct{ screen, tool, text string }{
		{"gm-permission-shell", "Shell", "? Shell  rm -f keep.txt\nrm -f keep.txt\nAllow execution of [Shell]?\n● 1. Allow once\n2. Allow for this session\n3. No, suggest changes (esc)"},
		{"gm-permission-write", "WriteFile", "? WriteFile  Writing to file.txt\n1 fixed\nApply this change?\n● 1. Allow once\n2. Allow for this session\n3. Modify with external editor\n4. No, suggest changes (esc)"},
	} {
		s := loadScreen(t, c.screen)
		if tool := st.ToolOf(s); tool != c.tool {
			t.Errorf("%s: tool %q, want %q", c.screen, tool, c.tool)
		}
		if text := st.PermissionText(s); text != c.text {
			t.Errorf("%s: text\n%s\nwant\n%s", c.screen, text, c.text)
		}
	}
}

// Gemini CLI's queue of prompts (while it starts) is not its conversation:
// it holds a prompt, flattened.
func TestGeminisQueueIsNotItsConversation(t *testing.T) {
	t.Parallel()
	st := Presets[PresetGemini].Style
	got := strings.Join(texts(st.Content(loadScreen(t, "gm-queued"))), "\n")
	for _, not := range []string{"Queued", "[Q-1] A queued prompt", "Reply with [ACK]"} {
		if strings.Contains(got, not) {
			t.Errorf("the conversation holds %q:\n%s", not, got)
		}
	}
}

// Claude Code's screen is read as its conversation: the prompt's echo and
// the model's messages without their markers, and nothing of the input
// box, the status line, the spinner or the hints.
func TestClaudeCodesConversationIsReadWithoutItsDecoration(t *testing.T) {
	t.Parallel()
	st := Presets[PresetClaudeCode].Style
	content := st.Content(loadScreen(t, "claude-done"))
	got := strings.Join(texts(content), "\n")
	for _, want := range []string{"[ACK] T-1 - RECEIVED", "  Understanding: Will write the fix into file.txt", "Write(/home/user/a/file.txt)", "Status: complete"} {
		if !strings.Contains(got, want) {
			t.Errorf("the conversation lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"accept edits on", "❯", "────", "Worked for", "Baked for", "/effort", "esc to interrupt"} {
		if strings.Contains(got, not) {
			t.Errorf("the conversation holds decoration %q:\n%s", not, got)
		}
	}
	i := slices.IndexFunc(content, func(l Line) bool { return strings.HasPrefix(l.Text, "[ACK]") })
	if i < 0 || !content[i].Reply {
		t.Fatalf("the ACK line is not marked as the agent's: %+v", content)
	}
}

// opencode draws a side panel (context, tokens, LSP) beside the
// conversation: it is cut off.
func TestASidePanelIsCutOff(t *testing.T) {
	t.Parallel()
	st := Presets[PresetOpencode].Style
	got := strings.Join(texts(st.Content(loadScreen(t, "oc-done"))), "\n")
	if !strings.Contains(got, "[ACK] T-1 - RECEIVED") || !strings.Contains(got, "Understanding: Will write the fix into file.txt") {
		t.Fatalf("the conversation:\n%s", got)
	}
	for _, not := range []string{"LSPs are disabled", "Context", "tokens", "$0.00 spent"} {
		if strings.Contains(got, not) {
			t.Errorf("the side panel's %q is read:\n%s", not, got)
		}
	}
}

// Claude Code shows the diff of a changed file in a side panel, right of
// a vertical rule: it is cut off, and the turn after it is read alone.
func TestClaudeCodesDiffPanelIsCutOff(t *testing.T) {
	t.Parallel()
	st := Presets[PresetClaudeCode].Style
	content := st.Content(loadScreen(t, "claude-panel-1"))
	got := strings.Join(texts(content), "\n")
	for _, not := range []string{"│", "file changed", "/diff to close", "[ ask ]"} {
		if strings.Contains(got, not) {
			t.Fatalf("the panel's %q is read:\n%s", not, got)
		}
	}
	var r Reader
	r.Mark(st.Content(loadScreen(t, "claude-panel-0")), "Task T-1 round 1: write the fix into file.txt")
	turn := strings.Join(r.Next(content), "\n")
	for _, want := range []string{"[ACK] T-1 - RECEIVED", "Understanding: Will write the fix into file.txt", "Write(file.txt)", "Status: complete"} {
		if strings.Count(turn, want) != 1 {
			t.Errorf("%q read %d times:\n%s", want, strings.Count(turn, want), turn)
		}
	}
	if strings.Contains(turn, "Added 1 line") || strings.Contains(turn, "round 0") || strings.Contains(turn, "round 1") {
		t.Fatalf("the turn holds the past or the prompt's echo:\n%s", turn)
	}
}

// A turn of the real Claude Code read screen by screen — busy, asking
// permission, working, done, then redrawn narrower —: each line of the
// agent once, the echo of the prompt never.
func TestATurnIsReadOnceFromTheRealScreens(t *testing.T) {
	t.Parallel()
	st := Presets[PresetClaudeCode].Style
	prompt := "Task T-1: SLOW and WRITE the fix into file.txt\nACKNOWLEDGMENT REQUIRED: Reply with [ACK] T-1 - RECEIVED\nThird line."
	var r Reader
	r.Mark(st.Content(loadScreen(t, "claude-ready-empty")), prompt)
	var all []string
	for _, name := range []string{"claude-busy", "claude-permission", "claude-working", "claude-done", "claude-narrow", "claude-done"} {
		all = append(all, r.Next(st.Content(loadScreen(t, name)))...)
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{"[ACK] T-1 - RECEIVED", "Understanding: Will write the fix into file.txt", "Write(/home/user/a/file.txt)", "Wrote 1 line", "Status: complete"} {
		if strings.Count(got, want) != 1 {
			t.Errorf("%q read %d times:\n%s", want, strings.Count(got, want), got)
		}
	}
	if strings.Contains(got, "ACKNOWLEDGMENT REQUIRED") || strings.Contains(got, "Third line.") || strings.Contains(got, "Claude Code v2") {
		t.Fatalf("the echo of the prompt, or the past, was read:\n%s", got)
	}
}

func lines(ss ...string) []Line {
	var out []Line
	for _, s := range ss {
		out = append(out, Line{Text: s})
	}
	return out
}

func TestTheReaderReadsEachLineOnceAsTheScreenGrowsScrollsAndIsRedrawn(t *testing.T) {
	t.Parallel()
	var r Reader
	past := lines("> earlier", "ok", "", "a status that goes away")
	r.Mark(past, "do the thing\nnow")
	steps := []struct {
		content []Line
		want    []string
	}{
		// The echo of the prompt first: skipped.
		{lines("> earlier", "ok", "do the thing", "now"), nil},
		{lines("> earlier", "ok", "do the thing", "now", "[ACK] T-1 - RECEIVED"), []string{"[ACK] T-1 - RECEIVED"}},
		{lines("> earlier", "ok", "do the thing", "now", "[ACK] T-1 - RECEIVED", "ok"), []string{"ok"}},
		// Scrolled: the past is gone from the top.
		{lines("ok", "do the thing", "now", "[ACK] T-1 - RECEIVED", "ok", "done"), []string{"done"}},
		// Redrawn from scratch (the screen cleared): nothing read twice.
		{lines("[ACK] T-1 - RECEIVED", "ok", "done", "Status: complete"), []string{"Status: complete"}},
	}
	for i, s := range steps {
		got := r.Next(s.content)
		if !slices.Equal(got, s.want) {
			t.Fatalf("step %d: got %q, want %q (turn %q)", i, got, s.want, r.Turn())
		}
	}
}

// An agent's line that the prompt also holds — its ACK line is in the
// prompt's request for it — is not taken for the echo.
func TestTheAgentsLinesThatThePromptHoldsAreNotTakenForItsEcho(t *testing.T) {
	t.Parallel()
	var r Reader
	prompt := "Task T-1\nACKNOWLEDGMENT REQUIRED: Reply with [ACK] T-1 - RECEIVED"
	r.Mark(nil, prompt)
	got := r.Next(lines("[ACK] T-1 - RECEIVED", "Understanding: do it"))
	if !slices.Equal(got, []string{"[ACK] T-1 - RECEIVED", "Understanding: do it"}) {
		t.Fatalf("got %q", got)
	}
	var r2 Reader
	r2.Mark(nil, prompt)
	got = r2.Next(lines("Task T-1", "ACKNOWLEDGMENT REQUIRED: Reply with [ACK] T-1 - RECEIVED", "[ACK] T-1 - RECEIVED", "Understanding: do it"))
	if !slices.Equal(got, []string{"[ACK] T-1 - RECEIVED", "Understanding: do it"}) {
		t.Fatalf("after the echo, got %q", got)
	}
}
