package ack_test

import (
	"reflect"
	"testing"

	"wilco/ack"
)

// xlsTask is the task behind the ACK protocol examples.
var xlsTask = ack.Task{
	ID:          "GH-4-xls-implementation",
	Description: "Implement xls, a CLI directory browser",
	AcceptanceCriteria: []string{
		"Directory listing uses fs::read_dir",
		"JSON output formatting with serde_json",
		"--sort flag",
		"--reverse flag",
		"--human flag",
	},
}

func mustParse(t *testing.T, text string) ack.Reply {
	t.Helper()
	r, err := ack.Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return r
}

func TestUnderstandingMissingAcceptanceItems(t *testing.T) {
	t.Parallel()
	var c ack.TermCoverage

	// The example RECEIVED ACK covers everything.
	v := c.Check(xlsTask, mustParse(t, exampleAckReceived))
	if !v.OK || v.WrongID || len(v.Missing) != 0 || v.Coverage < 0.8 {
		t.Errorf("Check(good ACK) = %+v, want OK", v)
	}

	// The CLARIFICATION_NEEDED one is a summary: it misses the flags and the
	// libraries, quoted verbatim.
	v = c.Check(xlsTask, mustParse(t, exampleAckClarification))
	want := []string{
		"Directory listing uses fs::read_dir",
		"JSON output formatting with serde_json",
		"--sort flag",
		"--reverse flag",
		"--human flag",
	}
	if v.OK || v.WrongID || !reflect.DeepEqual(v.Missing, want) {
		t.Errorf("Check(summary ACK) = %+v, want these missing: %q", v, want)
	}

	// Partial: one item forgotten.
	r := mustParse(t, "[ACK] GH-4-xls-implementation - RECEIVED\n"+
		"Understanding: list the directory with fs::read_dir, JSON output via serde_json, --sort and --reverse flags")
	v = c.Check(xlsTask, r)
	// "flags" alone does not cover "--human flag": three items share "flag".
	if v.OK || !reflect.DeepEqual(v.Missing, []string{"--human flag"}) {
		t.Errorf("Check(partial ACK) = %+v", v)
	}
	if v.Coverage <= 0.5 || v.Coverage >= 1 {
		t.Errorf("Coverage = %v, want between 0.5 and 1", v.Coverage)
	}
}

func TestUnderstandingWrongTaskIDIsNeverOK(t *testing.T) {
	t.Parallel()
	r := mustParse(t, "[ACK] GH-3 - RECEIVED\n"+
		"Understanding: list the directory with fs::read_dir, JSON output via serde_json, --sort --reverse --human flags with human-readable sizes")
	v := ack.TermCoverage{}.Check(xlsTask, r)
	if v.OK || !v.WrongID {
		t.Errorf("Check(ACK for GH-3) = %+v, want WrongID", v)
	}
	// A reply that is not an ACK is never OK either.
	r.Kind, r.TaskID = ack.KindCheckpoint, xlsTask.ID
	if v := (ack.TermCoverage{}).Check(xlsTask, r); v.OK || v.WrongID {
		t.Errorf("Check(checkpoint) = %+v, want not OK", v)
	}
}

func TestUnderstandingWithoutCriteriaChecksTheDescriptionLeniently(t *testing.T) {
	t.Parallel()
	task := ack.Task{ID: "T-1", Description: "Fix the authentication timeout bug in the login flow"}
	tests := []struct {
		understanding string
		ok            bool
	}{
		{"Will fix the login timeout", true},         // 3 of 5 terms
		{"Fixing the auth bug", true},                // "fix", "bug": 2 of 5, over the lenient 0.25
		{"Will refactor the session storage", false}, // none
		{"", false},
	}
	for _, tt := range tests {
		r := ack.Reply{Kind: ack.KindAck, TaskID: "T-1", Status: ack.Received, Understanding: tt.understanding}
		v := ack.TermCoverage{}.Check(task, r)
		if v.OK != tt.ok {
			t.Errorf("Check(%q) = %+v, want OK=%v", tt.understanding, v, tt.ok)
		}
		if !v.OK && !reflect.DeepEqual(v.Missing, []string{task.Description}) {
			t.Errorf("Check(%q).Missing = %q, want the description", tt.understanding, v.Missing)
		}
	}
	// Nothing to compare with: any ACK for the task will do.
	v := ack.TermCoverage{}.Check(ack.Task{ID: "T-1"}, ack.Reply{Kind: ack.KindAck, TaskID: "T-1"})
	if !v.OK || v.Coverage != 1 {
		t.Errorf("Check(empty task) = %+v", v)
	}
}

func TestUnderstandingThresholdIsConfigurable(t *testing.T) {
	t.Parallel()
	task := ack.Task{ID: "T-1", AcceptanceCriteria: []string{"refresh tokens expire after 24 hours", "  "}}
	r := ack.Reply{Kind: ack.KindAck, TaskID: "T-1", Understanding: "JWT with 24h expiry + refresh tokens"}
	// Terms: refresh, token, expir, 24, hour. The understanding has refresh,
	// token and expir ("expiry"); "24h" is another word. 3 of 5: 0.6.
	tests := []struct {
		min float64
		ok  bool
	}{
		{0, true}, // default 0.5
		{0.4, true},
		{0.6, true},
		{0.7, false},
		{1, false},
		{7, false}, // clamped to 1
		{0.01, true},
	}
	for _, tt := range tests {
		v := ack.TermCoverage{MinItemCoverage: tt.min}.Check(task, r)
		if v.OK != tt.ok {
			t.Errorf("MinItemCoverage %v: %+v, want OK=%v", tt.min, v, tt.ok)
		}
	}
	var _ ack.Checker = ack.TermCoverage{} // the default is one Checker among others
}

func TestKeyTerms(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"All tests pass":                           {"test", "pass"},
		"--sort flag; the --sort FLAGS":            {"sort", "flag"},
		"Directory listing uses fs::read_dir":      {"director", "list", "fs", "read", "dir"},
		"expires, expired, expiring, expire":       {"expir"},
		"expiry, Expiries":                         {"expir"},
		"Running the runner; it runs":              {"run", "runner"},
		"Queries and entries, a query, an entry":   {"quer", "entr"},
		"Implement it. Ensure it works correctly.": nil,
		"Größe über 10 MB":                         {"größ", "über", "10", "mb"},
	}
	for in, want := range tests {
		if got := ack.KeyTerms(in); !reflect.DeepEqual(got, want) {
			t.Errorf("KeyTerms(%q) = %q, want %q", in, got, want)
		}
	}
}
