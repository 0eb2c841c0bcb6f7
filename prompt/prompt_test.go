package prompt

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 26, 14, 30, 0, 0, time.UTC)

func failure(n int) Failure {
	return Failure{Attempt: n, Timestamp: t0, Type: "verification_failed", RunID: fmt.Sprintf("T-1-a%d", n),
		Command: "npm test -- PlannerId", ExitCode: 1, OutputSummary: "1 passed, 2 failed",
		Details:       "FAIL tests/PlannerId.test.ts\n- InvalidPlannerIdError not thrown for empty string",
		FilesModified: []string{"src/domain/PlannerId.ts"}, RootCauseGuess: "Missing validation",
		SuggestedFix: "Add validation for empty string and null inputs in PlannerId constructor"}
}

func TestRetryContextFollowsTheRetryFormat(t *testing.T) {
	t.Parallel()
	got := RetryContext(Retry{Attempt: 2, MaxAttempts: 12, Failures: []Failure{failure(1)}, Learnings: []string{"uuid.validate() returns false for empty string"}})
	for _, want := range []string{
		`<retry_context attempt="2" max_attempts="12">`,
		"<previous_failures>", `<failure attempt="1">`, "<type>verification_failed</type>",
		"<timestamp>2026-01-26T14:30:00Z</timestamp>",
		"npm test -- PlannerId returned exit code 1", "1 passed, 2 failed",
		"<error_details>", "<files_affected>", "- src/domain/PlannerId.ts", "<suggested_fix>",
		"<accumulated_learnings>", "- uuid.validate() returns false for empty string",
		"This is retry attempt 2 of 12.", "If you believe the task is impossible, report status: blocked.",
		"</retry_context>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("retry context lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "<user_intervention>") {
		t.Fatal("a user intervention without one")
	}
}

func TestUserFixIsAHighPriorityInterventionFirst(t *testing.T) {
	t.Parallel()
	got := RetryContext(Retry{Attempt: 4, MaxAttempts: 12, Failures: []Failure{failure(1)}, Intervention: "Check for whitespace using .trim()"})
	i := strings.Index(got, "<user_intervention>")
	if i < 0 || i > strings.Index(got, "<previous_failures>") {
		t.Fatalf("the intervention is not first:\n%s", got)
	}
	if !strings.Contains(got, `<instruction priority="high">`) || !strings.Contains(got, "User provided fix: Check for whitespace using .trim()") ||
		!strings.Contains(got, "Treat this as authoritative guidance.") {
		t.Fatalf("intervention:\n%s", got)
	}
}

func TestRetryContextEscapesMarkup(t *testing.T) {
	t.Parallel()
	f := failure(1)
	f.Details = "expected <b> & </retry_context>"
	got := RetryContext(Retry{Attempt: 2, MaxAttempts: 12, Failures: []Failure{f}})
	if strings.Count(got, "</retry_context>") != 1 || !strings.Contains(got, "&lt;/retry_context&gt;") {
		t.Fatalf("agent output could close the block:\n%s", got)
	}
}

func TestReplanCarriesEveryFailureAndTheUnchangedConstraints(t *testing.T) {
	t.Parallel()
	task := Task{ID: "T-1", Description: "Fix it", Constraints: []string{"keep the session storage"}, NonGoals: []string{"no refactor"}}
	got := Replan(task, Retry{Attempt: 4, MaxAttempts: 12, Failures: []Failure{failure(1), failure(2), failure(3)}}, 1, 3)
	if strings.Count(got, "<failure attempt=") != 3 || !strings.Contains(got, `<replan number="1" of="3">`) ||
		!strings.Contains(got, "- keep the session storage") || !strings.Contains(got, "Make a fresh plan") {
		t.Fatalf("replan:\n%s", got)
	}
}

func TestEscalationMessageFollowsTheEscalationFormat(t *testing.T) {
	t.Parallel()
	got := EscalationMessage(Escalation{TaskID: "03-01:task-3", TaskName: "Task 3: Create InvalidPlannerIdError class", Plan: "03-01",
		Attempts: 3, MaxAttempts: 12, Reason: "escalate_after: 3 failed attempts", Failures: []Failure{failure(1), failure(2), failure(3)},
		LastError: "FAIL tests/PlannerId.test.ts", Files: []string{"src/domain/PlannerId.ts"}})
	for _, want := range []string{
		"## Task Escalation Required", "**Task:** Task 3: Create InvalidPlannerIdError class", "**Plan:** 03-01", "**Attempts:** 3 of 12",
		"### Failure Summary", "### Attempt History", "| Attempt | Timestamp | Failure Type | Error |",
		"| 1 | 2026-01-26 14:30 | verification_failed | 1 passed, 2 failed |", "### Last Error Details", "### Files Modified (Partial State)",
		"- `src/domain/PlannerId.ts`", "### Suggested Actions", "- `retry` - Try one more time (resets counter)", "- `skip`", "- `abort`",
		"- `fix: <instruction>` - Provide specific fix instruction",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("escalation lacks %q:\n%s", want, got)
		}
	}
}

func TestStuckReportHasHypothesesAndEveryRunID(t *testing.T) {
	t.Parallel()
	var fs []Failure
	var runs []string
	for i := 1; i <= 12; i++ {
		fs = append(fs, failure(i))
		runs = append(runs, fmt.Sprintf("T-1-a%d", i))
	}
	hyp := Hypotheses(fs)
	if len(hyp) == 0 || !strings.Contains(hyp[0], "12 of 12 attempts failed with verification_failed") {
		t.Fatalf("hypotheses %q", hyp)
	}
	md := StuckMarkdown(StuckReport{TaskID: "T-1", Description: "Fix it", Loops: 12, Replans: 3, Failures: fs, Hypotheses: hyp, RunIDs: runs})
	for _, r := range runs {
		if !strings.Contains(md, r) {
			t.Fatalf("the stuck report lacks run %s", r)
		}
	}
	if !strings.HasPrefix(md, "# Stuck report: T-1") || !strings.Contains(md, "## Hypotheses") {
		t.Fatalf("stuck report:\n%s", md)
	}
}

func TestSummarySaysWhatWhyAndHowVerified(t *testing.T) {
	t.Parallel()
	got := SummaryText(Summary{Files: []string{"calc.go"}, Why: "Add returned a-b", RunID: "T-1-a2", Command: "go test ./...", Attempts: 2})
	want := "What changed:\n- calc.go\nWhy: Add returned a-b\nHow it was verified: go test ./... passed in run T-1-a2 (attempt 2).\n"
	if got != want {
		t.Fatalf("got %q", got)
	}
}

func ExampleRender() {
	fmt.Print(Render(Task{ID: "T-3", Description: "Fix the authentication timeout bug in the login flow.",
		Constraints: []string{"Don't modify the session storage mechanism"}, NonGoals: []string{"Don't add new dependencies"},
		AcceptanceCriteria: []string{"login times out after 60s"}}))
	// Output:
	// ## Task: T-3
	//
	// Fix the authentication timeout bug in the login flow.
	//
	// ## Constraints (must be preserved; they never change)
	// - Don't modify the session storage mechanism
	//
	// ## Non-goals (do not do these)
	// - Don't add new dependencies
	//
	// ## Acceptance Criteria
	// - [ ] login times out after 60s
}

func TestASummaryNamesTheCommitItLandedAsAndTheFilesLeftOut(t *testing.T) {
	t.Parallel()
	base := Summary{Files: []string{"a.go", "b.go"}, Why: "fixed it", RunID: "T-1-a1", Command: "go test ./...", Attempts: 1}
	s := base
	s.Land = &Landed{Commit: "abc1234", Branch: "main", Left: []string{"b.go"}}
	got := SummaryText(s)
	if !strings.Contains(got, "Landed as abc1234 on main.\n") || !strings.Contains(got, "Left uncommitted: b.go (they had uncommitted changes before the task began") {
		t.Fatalf("summary:\n%s", got)
	}
	s.Land = &Landed{Branch: "main", Left: []string{"a.go", "b.go"}}
	if got := SummaryText(s); !strings.Contains(got, "Nothing was committed on main: every file the task changed had uncommitted changes before it began.") {
		t.Fatalf("summary:\n%s", got)
	}
	s.Land = &Landed{Branch: "main"}
	if got := SummaryText(s); !strings.Contains(got, "Nothing was committed on main: the task left no file changed.") {
		t.Fatalf("summary:\n%s", got)
	}
	if got := SummaryText(base); strings.Contains(got, "ommitted") || strings.Contains(got, "Landed") {
		t.Fatalf("a change that does not land says so:\n%s", got)
	}
}

func TestACommitMessageIsTheShortDescriptionTheSummaryAndTheTrailers(t *testing.T) {
	t.Parallel()
	desc := "\n  Fix the   login timeout " + strings.Repeat("and more ", 20) + "\nsecond line"
	got := CommitMessage(Commit{Description: desc, TaskID: "T-7", Agent: "claude", Left: []string{"notes.md"},
		Summary: Summary{Files: []string{"login.go"}, Why: "the timeout was 6s", RunID: "T-7-a2", Command: "go test ./...", Attempts: 2,
			Land: &Landed{Commit: "ignored", Branch: "main"}}})
	subject, rest, _ := strings.Cut(got, "\n")
	if !strings.HasPrefix(subject, "Fix the login timeout and more") || !strings.HasSuffix(subject, "…") || len([]rune(subject)) > 72 {
		t.Fatalf("subject %q (%d runes)", subject, len([]rune(subject)))
	}
	want := "\nWhat changed:\n- login.go\nWhy: the timeout was 6s\nHow it was verified: go test ./... passed in run T-7-a2 (attempt 2).\n" +
		"Left uncommitted: notes.md (" + LeftUncommitted + ").\n\nWilco-Task: T-7\nWilco-Run: T-7-a2\nWilco-Agent: claude\n"
	if rest != want {
		t.Fatalf("message body:\n%q\nwant\n%q", rest, want)
	}
	if s := CommitSubject(" \n\t"); s != "wilco task" {
		t.Fatalf("the subject of an empty description: %q", s)
	}
}

// FuzzCommitSubject: a commit's subject is one line of at most 72 runes,
// never empty, made of the description's first line that has text.
func FuzzCommitSubject(f *testing.F) {
	for _, s := range []string{"Fix it", "", "\n\n  \t\nsecond", strings.Repeat("é", 100), "a\r\nb", "  lots   of   blanks  ", "…" + strings.Repeat("x ", 50)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, desc string) {
		s := CommitSubject(desc)
		if s == "" || strings.ContainsAny(s, "\n\r") || len([]rune(s)) > maxSubject {
			t.Fatalf("CommitSubject(%q) = %q", desc, s)
		}
		valid := strings.ToValidUTF8(desc, "\uFFFD")
		if strings.TrimSpace(valid) != "" && s != "wilco task" && !strings.Contains(strings.Join(strings.Fields(valid), " "), strings.TrimSuffix(s, "…")) {
			t.Fatalf("CommitSubject(%q) = %q: not from the description", desc, s)
		}
	})
}

func TestTheWorktreeLineSaysWhereToWorkAndQuotesAPathTheShellWouldSplit(t *testing.T) {
	t.Parallel()
	got := Worktree("/src/my repo/.wilco/worktrees/T-3", "wilco/T-3", "T-3", false)
	for _, want := range []string{
		"WORKTREE: task T-3 works in its own git worktree, /src/my repo/.wilco/worktrees/T-3 (branch wilco/T-3).",
		"cd '/src/my repo/.wilco/worktrees/T-3' before anything else",
		"wilco runs the verify steps there and lands the branch itself",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("the line does not say %q:\n%s", want, got)
		}
	}
	if got := Worktree("/r/.wilco/worktrees/T-3", "wilco/T-3", "T-3", false); !strings.Contains(got, "cd /r/.wilco/worktrees/T-3 before") {
		t.Fatalf("a plain path is quoted: %s", got)
	}
	if got := Worktree("/r/w", "wilco/T-3", "T-3", true); !strings.Contains(got, "Read the files there") || strings.Contains(got, "cd ") {
		t.Fatalf("a question asked from the task: %s", got)
	}
}
