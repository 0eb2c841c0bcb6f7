package ack_test

import (
	"strings"
	"testing"

	"wilco/ack"
)

func TestTeachStartsWithTheACKRequestVerbatim(t *testing.T) {
	t.Parallel()
	// The ACK request block, verbatim.
	want := "---\n" +
		"ACKNOWLEDGMENT REQUIRED: Reply with [ACK] GH-42 - RECEIVED\n" +
		"Include: Understanding: {1-line summary of what you will do}\n" +
		"Status options: RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED\n" +
		"---\n"
	got := ack.Teach("GH-42")
	if !strings.HasPrefix(got, want) {
		t.Errorf("Teach does not start with the ACK request block:\n%s", got)
	}
}

func TestTeachTeachesAgentsThatNeverHeardOfTheProtocol(t *testing.T) {
	t.Parallel()
	lesson := ack.Teach("GH-42")
	lesson = lesson[strings.Index(lesson, "---\nHow")+4:]
	// The orchestrator must explain the exact format, state that
	// ACK is mandatory before work, and how to ask questions; JSON is the
	// alternative.
	for _, want := range []string{
		`"[ACK] GH-42 - RECEIVED"`, "Understanding:", "mandatory", "Before you do any work",
		"RECEIVED", "CLARIFICATION_NEEDED", "REJECTED", "QUEUED", `"Questions:"`, "numbered question",
		`"Note:"`, "JSON", `"task-acknowledgment"`, `"needs-clarification"`, "exactly as GH-42",
		`"Status: complete"`, `"Status: blocked"`, `"Reason:"`, `"Status: impossible"`,
	} {
		if !strings.Contains(lesson, want) {
			t.Errorf("the lesson does not say %q:\n%s", want, lesson)
		}
	}
	for i, line := range strings.Split(lesson, "\n") {
		if len(line) > 100 {
			t.Errorf("lesson line %d is %d characters long", i+1, len(line))
		}
	}
}

func TestAckRequiredIsTheSeedRequest(t *testing.T) {
	t.Parallel()
	subject, body := ack.AckRequired("GH-42")
	if subject != "ACK REQUIRED: GH-42" {
		t.Errorf("subject = %q", subject)
	}
	// Proactive enforcement, step 3.
	want := "I sent you task GH-42 but have not received acknowledgment.\n" +
		"Please confirm receipt with: [ACK] GH-42 - {status}\n" +
		"\n" +
		"Status options: RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED"
	if body != want {
		t.Errorf("body =\n%s\nwant\n%s", body, want)
	}
}

func TestCorrectionQuotesWhatIsMissing(t *testing.T) {
	t.Parallel()
	subject, body := ack.Correction("GH-4", []string{"--sort flag", "JSON\noutput", " "}, "Implement xls CLI directory browser.")
	if subject != "ACK CORRECTION: GH-4" {
		t.Errorf("subject = %q", subject)
	}
	for _, want := range []string{
		"Your understanding: Implement xls CLI directory browser.\n",
		"Missing:\n- \"--sort flag\"\n- \"JSON output\"\n",
		`"[ACK] GH-4 - RECEIVED"`, "before any work",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body does not say %q:\n%s", want, body)
		}
	}
	_, body = ack.Correction("GH-4", nil, "")
	if !strings.Contains(body, "Your understanding: (none given).") || strings.Contains(body, "Missing") {
		t.Errorf("body without items =\n%s", body)
	}
}

func TestWrongIDNamesBothIDs(t *testing.T) {
	t.Parallel()
	subject, body := ack.WrongID("GH-42", "GH-4")
	if subject != "ACK REQUIRED: GH-42 (wrong task id)" {
		t.Errorf("subject = %q", subject)
	}
	for _, want := range []string{`task "GH-4"`, "about task GH-42", "[ACK] GH-42 - {status}", "Status options: RECEIVED"} {
		if !strings.Contains(body, want) {
			t.Errorf("body does not say %q:\n%s", want, body)
		}
	}
	if _, body := ack.WrongID("GH-42", ""); !strings.Contains(body, "named no task id") {
		t.Errorf("body for a missing id =\n%s", body)
	}
}

func TestAfterTeachingIsTheBodyThenABlankLineThenTheLesson(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"", "Implement login.", "Implement login.\n\n\n", "multi\nline\n"} {
		got := ack.AfterTeaching(body, "GH-42")
		want := strings.TrimRight(body, "\n") + "\n\n" + ack.Teach("GH-42")
		if got != want {
			t.Errorf("AfterTeaching(%q):\n%s\nwant:\n%s", body, got, want)
		}
	}
	if n := strings.Count(ack.Teach("GH-42"), "GH-42"); n != 5 {
		t.Errorf("the lesson names the task %d times, want 5 (every place of the template)", n)
	}
	if strings.Contains(ack.Teach("GH-42"), "{id}") {
		t.Error("a placeholder is left in the lesson")
	}
}
