package exec

import (
	"strings"
	"testing"

	"wilco/ack"
)

// ackShapes are acknowledgments as models write them: each is a correct
// ACK of task T-1 whose understanding speaks of "the login timeout".
var ackShapes = []struct{ name, out string }{
	{"plain", "[ACK] T-1 - RECEIVED\nUnderstanding: fix the login timeout\n"},
	{"blank line after the ACK line", "[ACK] T-1 - RECEIVED\n\nUnderstanding: fix the login timeout\n"},
	{"two blank lines", "[ACK] T-1 - RECEIVED\n\n\nUnderstanding: fix the login timeout\n\nWorking on it.\n"},
	{"CRLF", "[ACK] T-1 - RECEIVED\r\nUnderstanding: fix the login timeout\r\n"},
	{"CRLF and a blank line", "[ACK] T-1 - RECEIVED\r\n\r\nUnderstanding: fix the login timeout\r\n"},
	{"bold ACK line", "**[ACK] T-1 - RECEIVED**\nUnderstanding: fix the login timeout\n"},
	{"bold label", "[ACK] T-1 - RECEIVED\n**Understanding:** fix the login timeout\n"},
	{"bold label, colon outside", "[ACK] T-1 - RECEIVED\n**Understanding**: fix the login timeout\n"},
	{"label with a dash", "[ACK] T-1 - RECEIVED\nUnderstanding - fix the login timeout\n"},
	{"bullet label", "[ACK] T-1 - RECEIVED\n- Understanding: fix the login timeout\n"},
	{"heading ACK", "## [ACK] T-1 - RECEIVED\nUnderstanding: fix the login timeout\n"},
	{"a sentence before", "Sure, here is my acknowledgment.\n[ACK] T-1 - RECEIVED\nUnderstanding: fix the login timeout\n"},
	{"a paragraph before", "I read the task carefully.\n\n[ACK] T-1 - RECEIVED\nUnderstanding: fix the login timeout\n"},
	{"in a fenced block", "```\n[ACK] T-1 - RECEIVED\nUnderstanding: fix the login timeout\n```\n"},
	{"fenced, text language", "```text\n[ACK] T-1 - RECEIVED\nUnderstanding: fix the login timeout\n```\n"},
	{"trailing spaces", "[ACK] T-1 - RECEIVED   \nUnderstanding: fix the login timeout   \n"},
	{"indented", "  [ACK] T-1 - RECEIVED\n  Understanding: fix the login timeout\n"},
	{"lower-case label", "[ACK] T-1 - RECEIVED\nunderstanding: fix the login timeout\n"},
	{"upper-case label", "[ACK] T-1 - RECEIVED\nUNDERSTANDING: fix the login timeout\n"},
	{"label on its own line", "[ACK] T-1 - RECEIVED\nUnderstanding:\nfix the login timeout\n"},
	{"bold label on its own line", "[ACK] T-1 - RECEIVED\n**Understanding:**\n- fix the login timeout\n"},
	{"long understanding", "[ACK] T-1 - RECEIVED\nUnderstanding: fix the login timeout so that a session expires after 60s and the test passes\n"},
	{"understanding on two lines", "[ACK] T-1 - RECEIVED\nUnderstanding: fix the login timeout\nso that sessions expire after 60s.\n"},
	{"a note after", "[ACK] T-1 - RECEIVED\nUnderstanding: fix the login timeout\nNote: I will run the tests.\n"},
	{"work right after", "[ACK] T-1 - RECEIVED\nUnderstanding: fix the login timeout\nLet me look at session.go first.\n"},
	{"tab before the label", "[ACK] T-1 - RECEIVED\n\tUnderstanding: fix the login timeout\n"},
	{"quote block", "> [ACK] T-1 - RECEIVED\n> Understanding: fix the login timeout\n"},
	{"em dash before the status", "[ACK] T-1 — RECEIVED\nUnderstanding: fix the login timeout\n"},
	{"understanding on the ACK line", "[ACK] T-1 - RECEIVED. Understanding: fix the login timeout\n"},
	{"emoji before", "✅ [ACK] T-1 - RECEIVED\nUnderstanding: fix the login timeout\n"},
	{"blank line and bold label", "**[ACK] T-1 - RECEIVED**\n\n**Understanding:** fix the login timeout\n"},
	{"whitespace-only line", "[ACK] T-1 - RECEIVED\n   \nUnderstanding: fix the login timeout\n"},
}

// scanAck feeds out to a scanner line by line, with a pause (the settle a
// stream's silence causes) after every line, and returns the ACK text it
// makes ready first.
func scanAck(out string, pauseAfterEachLine bool) string {
	s := &scanner{wantAck: true}
	var got string
	take := func() {
		if t, _ := s.take(); t != "" && got == "" {
			got = t
		}
	}
	for _, l := range strings.SplitAfter(out, "\n") {
		if l == "" {
			continue
		}
		s.line(strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r"))
		if pauseAfterEachLine {
			s.settle()
		}
		take()
	}
	s.flush() // the turn ended
	take()
	return got
}

func TestAckAsModelsWriteItIsNeverCorrected(t *testing.T) {
	t.Parallel()
	if len(ackShapes) < 30 {
		t.Fatalf("%d shapes", len(ackShapes))
	}
	for _, c := range ackShapes {
		for _, pause := range []bool{false, true} {
			text := scanAck(c.out, pause)
			r, err := ack.Parse(text)
			if err != nil || r.Kind != ack.KindAck || r.TaskID != "T-1" || r.Status != ack.Received ||
				!strings.Contains(strings.ToLower(r.Understanding), "login timeout") {
				t.Errorf("%s (a pause after each line: %v): the ACK read is %q → %+v, %v", c.name, pause, text, r, err)
			}
		}
	}
}

func TestAckIsJudgedOnlyWhenComplete(t *testing.T) {
	t.Parallel()
	s := &scanner{wantAck: true}
	s.line("[ACK] T-1 - RECEIVED")
	s.settle() // the model pauses in the stream
	s.line("")
	s.settle()
	if text, _ := s.take(); text != "" {
		t.Fatalf("an ACK without its Understanding was judged: %q", text)
	}
	s.line("Understanding: fix the login timeout")
	s.settle()
	if text, _ := s.take(); !strings.Contains(text, "Understanding: fix the login timeout") {
		t.Fatalf("the complete ACK was not made ready: %q", text)
	}
	// An ACK that never gets its Understanding is judged at the end of the
	// turn, as it is.
	s = &scanner{wantAck: true}
	s.line("[ACK] T-1 - RECEIVED")
	s.line("Working on it.")
	s.settle()
	if text, _ := s.take(); text != "" {
		t.Fatalf("judged before the turn ended: %q", text)
	}
	s.flush()
	if text, _ := s.take(); !strings.HasPrefix(text, "[ACK] T-1 - RECEIVED") {
		t.Fatalf("at the end of the turn: %q", text)
	}
}

// FuzzAckScanner feeds the [ACK] scanner any output: it never panics,
// what it reads as the ACK is made of the output's own lines, and pauses
// in the stream never change which ACK a complete block is.
func FuzzAckScanner(f *testing.F) {
	for _, c := range ackShapes {
		f.Add(c.out)
	}
	f.Fuzz(func(t *testing.T, out string) {
		a, b := scanAck(out, false), scanAck(out, true)
		for _, text := range []string{a, b} {
			for _, l := range strings.Split(text, "\n") {
				if !strings.Contains(out, strings.TrimSuffix(l, "\r")) {
					t.Fatalf("the ACK read has a line the output lacks: %q in %q", l, out)
				}
			}
		}
		if a != "" && b != "" && ackComplete(strings.Split(a, "\n")) && a != b {
			if r1, e1 := ack.Parse(a); e1 == nil {
				if r2, e2 := ack.Parse(b); e2 != nil || r1.TaskID != r2.TaskID || r1.Status != r2.Status {
					t.Fatalf("a pause changed the ACK: %q vs %q", a, b)
				}
			}
		}
	})
}
