package tmux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// seedScreens adds the real programs' captures to a fuzz corpus.
func seedScreens(f *testing.F, add func(string)) {
	f.Helper()
	names, _ := filepath.Glob(filepath.Join("testdata", "screens", "*.capture"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		add(string(b))
	}
}

func FuzzStripANSI(f *testing.F) {
	seedScreens(f, func(s string) {
		for _, l := range strings.Split(s, "\n") {
			f.Add(l)
		}
	})
	f.Add("\x1b]8;;x\x1b\\y\x1b[2;3")
	f.Fuzz(func(t *testing.T, in string) {
		text, undimmed := parseLine(in)
		for _, out := range []string{text, undimmed} {
			if strings.ContainsAny(out, "\x1b\u009b") || hasControl(out) || !utf8.ValidString(out) {
				t.Fatalf("parseLine(%q) left %q", in, out)
			}
		}
		if len(undimmed) > len(text) {
			t.Fatalf("undimmed %q is longer than the text %q", undimmed, text)
		}
		if again := StripANSI(text); again != text {
			t.Fatalf("stripping twice changed %q to %q", text, again)
		}
	})
}

func FuzzContent(f *testing.F) {
	seedScreens(f, func(s string) { f.Add(s, 120) })
	f.Fuzz(func(t *testing.T, capture string, width int) {
		history, screen, _ := strings.Cut(capture, captureMark+"\n")
		s := ParseScreen(history, screen, width%400)
		for _, name := range PresetNames() {
			st := Presets[name].Style
			st.Classify(s)
			tool, text := st.ToolOf(s), st.PermissionText(s)
			// A question read from its first line down begins with it (without
			// a box's edge or a side panel), and the whole request found in it
			// is in it.
			if st.PermissionBelow && text != "" {
				loc := st.Permission.FindStringIndex(s.Text())
				if row := s.Rows[strings.Count(s.Text()[:loc[0]], "\n")]; !strings.Contains(row, firstLine(text)) {
					t.Fatalf("%s: the question's text does not begin with the question's row %q: %q", name, row, text)
				}
			}
			if st.Asks != nil && tool != "" && !strings.Contains(text, tool) {
				t.Fatalf("%s: the tool %q is not in the question's text %q", name, tool, text)
			}
			// The conversation above a question is read only when one shows,
			// each line of it one row, trimmed.
			above := st.PermissionAbove(s)
			if text == "" && above != nil {
				t.Fatalf("%s: a conversation above no question: %q", name, above)
			}
			for _, l := range above {
				if l == "" || l != strings.TrimSpace(l) || strings.ContainsAny(l, "\x1b\n") {
					t.Fatalf("%s: a line above the question %q", name, l)
				}
			}
			for _, l := range st.Content(s) {
				if strings.ContainsAny(l.Text, "\x1b\n") {
					t.Fatalf("%s: a line holds an escape or a newline: %q", name, l.Text)
				}
			}
		}
	})
}

// FuzzReader checks the read-once cursor: the same screen read again gives
// nothing new, and what a turn read is what Next returned.
func FuzzReader(f *testing.F) {
	f.Add("a\nb\n", "a\nb\nc\nd\n", "b\nc\nd\ne\n", "c\nx")
	f.Add("", "[ACK] T-1 - RECEIVED\nok\n", "ok\n[ACK] T-1 - RECEIVED\n", "[ACK] T-1 - RECEIVED")
	f.Fuzz(func(t *testing.T, past, a, b, prompt string) {
		var r Reader
		r.Mark(lines(strings.Split(past, "\n")...), prompt)
		var got []string
		for _, screen := range []string{a, b} {
			content := lines(strings.Split(screen, "\n")...)
			got = append(got, r.Next(content)...)
			if again := r.Next(content); len(again) != 0 {
				t.Fatalf("the same screen read twice gave %q", again)
			}
		}
		if turn := r.Turn(); strings.Join(turn, "\n") != strings.Join(got, "\n") {
			t.Fatalf("Turn %q differs from what Next returned %q", turn, got)
		}
	})
}
