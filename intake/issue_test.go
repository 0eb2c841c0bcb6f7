package intake

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"wilco/core"
	"wilco/forge"
)

func TestAnIssuesChecklistIsTheTasksAcceptanceCriteria(t *testing.T) {
	t.Parallel()
	s := Submission(forge.Issue{Number: 4, Title: "  Fix the login timeout ", Body: "The session ends after 5s.\r\n\n- [ ] sessions last 30 minutes\n  * [x] a test says so\n- not a criterion\n+ [ ]   \n"})
	if s.Description != "Fix the login timeout\n\nThe session ends after 5s.\n\n- not a criterion" {
		t.Fatalf("description %q", s.Description)
	}
	if !slices.Equal(s.AcceptanceCriteria, []string{"sessions last 30 minutes", "a test says so"}) {
		t.Fatalf("criteria %q", s.AcceptanceCriteria)
	}
	if s := Submission(forge.Issue{Number: 9}); s.Description != "Issue #9" || len(s.AcceptanceCriteria) != 0 {
		t.Fatalf("an empty issue: %+v", s)
	}
}

func TestACommentIsACommandOrAPlainReply(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body string
		want Command
		ok   bool
	}{
		{"/wilco retry", Command{Action: "retry"}, true},
		{"  /WILCO Skip\n", Command{Action: "skip"}, true},
		{"/wilco abort please", Command{Action: "abort"}, true},
		{"/wilco fix use the v2 client\nand keep the old test", Command{Action: "fix", Instruction: "use the v2 client\nand keep the old test"}, true},
		{"/wilco fix: add a retry", Command{Action: "fix", Instruction: "add a retry"}, true},
		{"/wilco fix", Command{}, false},
		{"/wilco dance", Command{}, false},
		{"   ", Command{}, false},
		{"Use port 8080.\r\nThanks", Command{Text: "Use port 8080.\nThanks"}, true},
		{"/wilcox retry", Command{Text: "/wilcox retry"}, true},
	} {
		got, ok := ParseCommand(c.body)
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %+v %v, want %+v %v", c.body, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/wilco retry", "/wilco fix do it\nnow", "/wilco", "/wilco  fix:", "hello", "", "\r\n/wilco skip"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		c, ok := ParseCommand(body)
		if !ok {
			return
		}
		switch c.Action {
		case "":
			if strings.TrimSpace(c.Text) == "" {
				t.Fatalf("a plain reply of nothing from %q", body)
			}
		case "retry", "skip", "abort":
		case "fix":
			if c.Instruction == "" {
				t.Fatalf("a fix without instruction from %q", body)
			}
		default:
			t.Fatalf("action %q from %q", c.Action, body)
		}
		if utf8.ValidString(body) && !utf8.ValidString(c.Text+c.Instruction) {
			t.Fatalf("invalid text from %q", body)
		}
	})
}

func FuzzSubmission(f *testing.F) {
	f.Add("Title", "body\n- [ ] one\n- [x] two")
	f.Add("", "")
	f.Add("x", "* [ ]")
	f.Fuzz(func(t *testing.T, title, body string) {
		s := Submission(forge.Issue{Number: 1, Title: title, Body: body})
		if strings.TrimSpace(s.Description) == "" {
			t.Fatalf("no description from %q %q", title, body)
		}
		for _, c := range s.AcceptanceCriteria {
			if c == "" || strings.Contains(c, "\n") {
				t.Fatalf("criterion %q", c)
			}
		}
	})
}

func TestTheCommentsOfTheThreadSayWhatHappenedAndHowToAnswer(t *testing.T) {
	t.Parallel()
	tk := core.Task{ID: "T-3", Agent: "claude", Issue: 4,
		Escalation: &core.TaskEscalation{Reason: "max_retries", Message: "## Task Escalation Required\n\n**Task:** x\n\n---\n\n**Your options:**\n- `retry` - Try"},
		Summary:    &core.TaskSummary{Text: "Changed login.go because the session ended."}}
	for _, c := range []struct {
		n    core.Notification
		want []string
		not  []string
	}{
		{core.Notification{Event: core.NotifyAcknowledged, Reason: "Make sessions last 30 minutes"}, []string{"acknowledged by claude", "> Make sessions last 30 minutes"}, nil},
		{core.Notification{Event: core.NotifyClarification, Reason: "the agent asks: Which port?"}, []string{"> Which port?", "Reply to this issue"}, nil},
		{core.Notification{Event: core.NotifyEscalated, Reason: "max_retries"}, []string{"## Task Escalation Required", "`/wilco fix <instruction>`", "`/wilco retry`", "`/wilco skip`", "`/wilco abort`"}, []string{"**Your options:**"}},
		{core.Notification{Event: core.NotifyPullRequest, Reason: "pull request #7: https://forge.example/o/r/pull/7"}, []string{"https://forge.example/o/r/pull/7"}, nil},
		{core.Notification{Event: core.NotifySuccess, Reason: "done"}, []string{"succeeded", "Changed login.go"}, nil},
		{core.Notification{Event: core.NotifyFailed, Reason: "malformed"}, []string{"failed: malformed"}, nil},
	} {
		got := Comment(c.n, tk)
		if !strings.HasPrefix(got, Marker+"\n") {
			t.Errorf("%s: no marker:\n%s", c.n.Event, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q missing:\n%s", c.n.Event, w, got)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q there:\n%s", c.n.Event, w, got)
			}
		}
	}
}
