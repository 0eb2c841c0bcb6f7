package ack

import (
	"strings"
	"testing"
)

// A reviewer's verdict is read as reviewers write it; a verdict word in a
// sentence is not a verdict.
func TestParseVerdictReadsReviewersAnswers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text    string
		v       ReviewVerdict
		reasons string
		ok      bool
	}{
		{"APPROVED", ReviewApproved, "", true},
		{"APPROVED\n", ReviewApproved, "", true},
		{"Approved.", ReviewApproved, "", true},
		{"**APPROVED**", ReviewApproved, "", true},
		{"## Verdict: APPROVED\nThe change does what the task asks.", ReviewApproved, "The change does what the task asks.", true},
		{"Verdict: **REJECTED**\n- the empty input still panics\n- no test for it", ReviewRejected, "- the empty input still panics\n- no test for it", true},
		{"REJECTED: the fix writes the wrong value", ReviewRejected, "the fix writes the wrong value", true},
		{"REJECTED - missing the error case", ReviewRejected, "missing the error case", true},
		{"I looked at the diff.\n\nREJECTED\nIt changes session storage, which a constraint forbids.", ReviewRejected, "It changes session storage, which a constraint forbids.", true},
		{"NOT APPROVED: tests are missing", ReviewRejected, "tests are missing", true},
		{"CHANGES REQUESTED\nrename x", ReviewRejected, "rename x", true},
		{"LGTM", ReviewApproved, "", true},
		{"> APPROVED", ReviewApproved, "", true},
		{"`REJECTED` because it is incomplete", ReviewRejected, "because it is incomplete", true},
		{"APPROVED\r\nAll good.\r\n", ReviewApproved, "All good.", true},
		{"Once approved, the change can be merged.", "", "", false},
		{"Approves of nothing", "", "", false},
		{"The rejection was wrong.", "", "", false},
		{"", "", "", false},
		{"looks fine to me", "", "", false},
	} {
		v, reasons, ok := ParseVerdict(c.text)
		if v != c.v || ok != c.ok || strings.TrimSpace(reasons) != c.reasons {
			t.Errorf("ParseVerdict(%q) = %q, %q, %v; want %q, %q, %v", c.text, v, reasons, ok, c.v, c.reasons, c.ok)
		}
	}
}

func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{"APPROVED", "REJECTED: x", "## Verdict: **REJECTED**\n- a", "Once approved", "NOT APPROVED", "\r\n**LGTM**"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, reasons, ok := ParseVerdict(s)
		if ok != (v != "") || !ok && reasons != "" {
			t.Fatalf("%q: %q %q %v", s, v, reasons, ok)
		}
		if ok && v != ReviewApproved && v != ReviewRejected {
			t.Fatalf("%q: verdict %q", s, v)
		}
		if len(reasons) > len(s) {
			t.Fatalf("%q: reasons longer than the text: %q", s, reasons)
		}
	})
}
