package tmux

import (
	"slices"
	"strings"
	"testing"
)

// altScreen is what a program on the alternate screen shows of its
// conversation: its last h rows, nothing above.
func altScreen(conversation []string, h int) []Line {
	if len(conversation) > h {
		conversation = conversation[len(conversation)-h:]
	}
	return lines(conversation...)
}

// longPrompt is a prompt higher than the screen, ending as every
// delegation ends.
func longPrompt(id string, retry bool) []string {
	var p []string
	if retry {
		p = append(p, `<retry_context attempt="2">`, "  the check failed", "</retry_context>", "")
	}
	p = append(p, "## Task: "+id, "", "Write the fix into file.txt")
	for i := 1; i <= 12; i++ {
		p = append(p, "a line of the lesson number "+strings.Repeat("x", i))
	}
	return append(p, `need; if the task cannot be done at all, "Status: impossible" and its "Reason:".`)
}

func readTurn(r *Reader, conversation []string, from, h int) []string {
	var got []string
	for n := from; n <= len(conversation); n++ {
		got = append(got, r.Next(altScreen(conversation[:n], h))...)
	}
	return got
}

// The echo of a prompt higher than the screen, its first rows gone at
// once, is never the agent's.
func TestTheEchoOfAPromptHigherThanTheScreenIsNeverTheAgents(t *testing.T) {
	t.Parallel()
	prompt := longPrompt("T-1", false)
	conv := append([]string{"welcome"}, prompt...)
	answer := []string{"[ACK] T-1 - RECEIVED", "Understanding: will fix it", "Status: complete"}
	var r Reader
	r.Mark(altScreen(conv[:1], 8), strings.Join(prompt, "\n"))
	conv = append(conv, answer...)
	got := readTurn(&r, conv, 2, 8)
	if !slices.Equal(got, answer) {
		t.Fatalf("read %q, want %q", got, answer)
	}
}

// The lines of the turn before, ended the same way, are not this turn's:
// not while the pane still shows them, not when this turn's answer repeats
// them word for word.
func TestAnEarlierTurnAndARetryRepeatingItAreToldApart(t *testing.T) {
	t.Parallel()
	answer := []string{"[ACK] T-1 - RECEIVED", "Understanding: will fix it", "Wrote file.txt.", "Status: complete"}
	first := append(longPrompt("T-1", false), answer...)
	retry := longPrompt("T-1", true)
	conv := append(slices.Clone(first), retry...)
	var r Reader
	r.Mark(altScreen(first, 10), strings.Join(retry, "\n"))
	// The pane still shows the earlier turn: nothing of this one yet.
	if got := r.Next(altScreen(first, 10)); len(got) != 0 {
		t.Fatalf("the earlier turn was read as this one's: %q", got)
	}
	conv = append(conv, answer...)
	got := readTurn(&r, conv, len(first)+1, 10)
	if !slices.Equal(got, answer) {
		t.Fatalf("read %q, want %q", got, answer)
	}
	// An answer that came whole before the pane was read again: read at
	// the turn's end.
	var r2 Reader
	r2.Mark(altScreen(first, 10), strings.Join(retry, "\n"))
	if got := r2.Next(altScreen(conv, 10)); len(got) != 0 {
		t.Fatalf("read %q before the turn's end", got)
	}
	if got := r2.Final(altScreen(conv, 10)); !slices.Equal(got, answer) {
		t.Fatalf("at the turn's end, read %q, want %q", got, answer)
	}
}

// Rows a program wrapped itself are one line again, however wide it
// wraps them; a line of its own is never joined to the one above.
func TestRowsTheProgramWrappedAreJoined(t *testing.T) {
	t.Parallel()
	st := Style{}
	understanding := "Understanding: will write the fix into file.txt so that the check passes, and make sure that first.txt holds the word first, that second.txt holds the word second"
	for _, width := range []int{60, 80, 100} {
		var rows []string
		for _, l := range []string{"[ACK] T-1 - RECEIVED", understanding, "- a list item", "Status: complete"} {
			for i, r := range wrapRows(l, width-2) {
				if i > 0 {
					r = "  " + r
				}
				rows = append(rows, r)
			}
		}
		rows = append(rows, "> ")
		var got []string
		for _, l := range st.Content(Screen{Rows: rows, Width: width}) {
			got = append(got, l.Text)
		}
		want := []string{"[ACK] T-1 - RECEIVED", understanding, "- a list item", "Status: complete"}
		if !slices.Equal(got, want) {
			t.Fatalf("width %d: %q, want %q", width, got, want)
		}
	}
	// A conversation whose rows end anywhere is not joined.
	got := st.Content(Screen{Rows: []string{"I will restart you. Please finish your current work and reply with ok when ready.", "ok", "> "}, Width: 200})
	if len(got) != 2 {
		t.Fatalf("joined: %+v", got)
	}
}

func wrapRows(l string, width int) []string {
	var rows []string
	for len(l) > width {
		cut := strings.LastIndex(l[:width+1], " ")
		rows = append(rows, l[:cut])
		l = l[cut+1:]
		width -= 2
	}
	return append(rows, l)
}
