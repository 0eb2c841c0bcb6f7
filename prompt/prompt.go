package prompt

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Task is what a prompt says about a task.
type Task struct {
	ID                 string
	Description        string
	Constraints        []string
	NonGoals           []string
	Boundaries         []string
	AcceptanceCriteria []string
	// Context is extra material placed after the task (a resumed task's
	// stuck report, a plan's dependency warnings).
	Context string
	// Package is the monorepo package the task is scoped to ("" none).
	Package string
	// Scouts are the read-only helpers the agent may consult.
	Scouts []string
}

// Failure is one failed attempt, as the retry context shows it.
type Failure struct {
	Attempt        int
	Timestamp      time.Time
	Type           string
	RunID          string
	Command        string
	ExitCode       int
	OutputSummary  string
	Error          string
	Details        string
	FilesModified  []string
	RootCauseGuess string
	SuggestedFix   string
}

// Render writes the task itself: the description, the immutable
// constraints, non-goals and boundaries, and the acceptance criteria.
func Render(t Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Task: %s\n\n%s\n", t.ID, strings.TrimSpace(t.Description))
	section(&b, "Constraints (must be preserved; they never change)", t.Constraints)
	section(&b, "Non-goals (do not do these)", t.NonGoals)
	section(&b, "Boundaries (out of scope: do not change these files or modules)", t.Boundaries)
	if t.Package != "" {
		fmt.Fprintf(&b, "\n## Package\nThis task is scoped to the package %s/ of this repository: change files under %s/ only. "+
			"A change that would need another package is a separate task: say so (Status: blocked) instead of making it.\n", t.Package, t.Package)
	}
	if len(t.Scouts) > 0 {
		fmt.Fprintf(&b, "\n## Scouts\nRead-only helpers you may consult before you change anything: %s. "+
			"Ask one with the command `wilco ask <scout> \"<question>\"` (or the wilco_ask tool); it prints the scout's answer.\n", strings.Join(t.Scouts, ", "))
	}
	if len(t.AcceptanceCriteria) > 0 {
		b.WriteString("\n## Acceptance Criteria\n")
		for _, c := range t.AcceptanceCriteria {
			fmt.Fprintf(&b, "- [ ] %s\n", c)
		}
	}
	if t.Context != "" {
		fmt.Fprintf(&b, "\n## Context\n%s\n", strings.TrimSpace(t.Context))
	}
	return b.String()
}

func section(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## %s\n", title)
	for _, it := range items {
		fmt.Fprintf(b, "- %s\n", it)
	}
}

// Retry is what a retry prompt carries besides the task.
type Retry struct {
	Attempt     int
	MaxAttempts int
	Failures    []Failure
	Learnings   []string
	// Intervention is the user's fix, placed first as high priority.
	Intervention string
}

// RetryContext renders the <retry_context> block placed before the task in
// every retry prompt.
func RetryContext(r Retry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<retry_context attempt=\"%d\" max_attempts=\"%d\">\n", r.Attempt, r.MaxAttempts)
	if r.Intervention != "" {
		b.WriteString("  <user_intervention>\n")
		fmt.Fprintf(&b, "    <instruction priority=\"high\">\n      User provided fix: %s\n    </instruction>\n", xmlText(r.Intervention))
		b.WriteString("    <context>\n      This instruction comes from the user after automated recovery failed.\n      Treat this as authoritative guidance.\n    </context>\n")
		b.WriteString("  </user_intervention>\n\n")
	}
	b.WriteString("  <previous_failures>\n")
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "    <failure attempt=\"%d\">\n", f.Attempt)
		fmt.Fprintf(&b, "      <type>%s</type>\n", xmlText(f.Type))
		fmt.Fprintf(&b, "      <timestamp>%s</timestamp>\n", f.Timestamp.UTC().Format(time.RFC3339))
		if f.RunID != "" {
			fmt.Fprintf(&b, "      <run_id>%s</run_id>\n", xmlText(f.RunID))
		}
		fmt.Fprintf(&b, "      <error_summary>\n%s\n      </error_summary>\n", indent(errorSummary(f), 8))
		if f.Details != "" {
			fmt.Fprintf(&b, "      <error_details>\n%s\n      </error_details>\n", indent(xmlText(f.Details), 8))
		}
		if len(f.FilesModified) > 0 {
			b.WriteString("      <files_affected>\n")
			for _, p := range f.FilesModified {
				fmt.Fprintf(&b, "        - %s\n", xmlText(p))
			}
			b.WriteString("      </files_affected>\n")
		}
		if f.RootCauseGuess != "" {
			fmt.Fprintf(&b, "      <root_cause_guess>%s</root_cause_guess>\n", xmlText(f.RootCauseGuess))
		}
		if f.SuggestedFix != "" {
			fmt.Fprintf(&b, "      <suggested_fix>\n%s\n      </suggested_fix>\n", indent(xmlText(f.SuggestedFix), 8))
		}
		b.WriteString("    </failure>\n")
	}
	b.WriteString("  </previous_failures>\n\n")
	b.WriteString("  <accumulated_learnings>\n")
	for _, l := range r.Learnings {
		fmt.Fprintf(&b, "    - %s\n", xmlText(l))
	}
	b.WriteString("  </accumulated_learnings>\n\n")
	fmt.Fprintf(&b, "  <instruction>\n    This is retry attempt %d of %d.\n    Review the previous failure(s) above.\n    Address the specific issues before re-executing.\n    If you believe the task is impossible, report status: blocked.\n  </instruction>\n", r.Attempt, r.MaxAttempts)
	b.WriteString("</retry_context>\n")
	return b.String()
}

func errorSummary(f Failure) string {
	var lines []string
	if f.Command != "" {
		lines = append(lines, fmt.Sprintf("%s returned exit code %d", f.Command, f.ExitCode))
	}
	if f.OutputSummary != "" {
		lines = append(lines, f.OutputSummary)
	}
	if f.Error != "" {
		lines = append(lines, f.Error)
	}
	if len(lines) == 0 {
		lines = append(lines, f.Type)
	}
	return xmlText(strings.Join(lines, "\n"))
}

// Replan renders the REPLAN prompt: start over with a fresh plan, knowing
// every failure so far; the constraints do not change.
func Replan(t Task, r Retry, replan, maxReplans int) string {
	var b strings.Builder
	b.WriteString(RetryContext(r))
	fmt.Fprintf(&b, "\n<replan number=\"%d\" of=\"%d\">\n", replan, maxReplans)
	fmt.Fprintf(&b, "  The last %d attempts failed in a row. Do not continue the previous approach.\n", countTail(r.Failures))
	b.WriteString("  Make a fresh plan from scratch: list the failures above, say what each one tells you,\n")
	b.WriteString("  then choose an approach that avoids all of them. The constraints, non-goals and\n")
	b.WriteString("  boundaries below are unchanged and must be respected by the new plan.\n")
	b.WriteString("</replan>\n\n")
	b.WriteString(Render(t))
	return b.String()
}

func countTail(fs []Failure) int { return min(len(fs), 3) }

// Escalation is what the user is told when a task needs them.
type Escalation struct {
	TaskID      string
	TaskName    string
	Plan        string
	Attempts    int
	MaxAttempts int
	Reason      string
	Failures    []Failure
	LastError   string
	Files       []string
}

// EscalationMessage renders the "Task Escalation Required" message.
func EscalationMessage(e Escalation) string {
	var b strings.Builder
	b.WriteString("## Task Escalation Required\n\n")
	fmt.Fprintf(&b, "**Task:** %s\n", firstNonEmpty(e.TaskName, e.TaskID))
	if e.Plan != "" {
		fmt.Fprintf(&b, "**Plan:** %s\n", e.Plan)
	}
	fmt.Fprintf(&b, "**Attempts:** %d of %d\n", e.Attempts, e.MaxAttempts)
	fmt.Fprintf(&b, "**Reason:** %s\n\n", e.Reason)
	b.WriteString("### Failure Summary\n\n")
	fmt.Fprintf(&b, "This task has failed %d times. %s\n\n", len(e.Failures), reasonSentence(e.Reason))
	if len(e.Failures) > 0 {
		b.WriteString("### Attempt History\n\n| Attempt | Timestamp | Failure Type | Error |\n|---------|-----------|--------------|-------|\n")
		for _, f := range e.Failures {
			fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", f.Attempt, f.Timestamp.UTC().Format("2006-01-02 15:04"), f.Type, oneLine(firstNonEmpty(f.OutputSummary, f.Error, f.Type), 80))
		}
		b.WriteString("\n")
	}
	if e.LastError != "" {
		fmt.Fprintf(&b, "### Last Error Details\n\n```\n%s\n```\n\n", strings.TrimSpace(e.LastError))
	}
	if len(e.Files) > 0 {
		b.WriteString("### Files Modified (Partial State)\n\n")
		for _, f := range e.Files {
			fmt.Fprintf(&b, "- `%s`\n", f)
		}
		b.WriteString("\n")
	}
	b.WriteString("### Suggested Actions\n\n1. **Review task definition** - Are the acceptance criteria achievable?\n2. **Check test expectations** - Are tests correct?\n3. **Manual intervention** - Fix the specific issue\n4. **Skip task** - Mark as skipped and continue\n5. **Abort plan** - Stop execution entirely\n\n---\n\n")
	b.WriteString("**Your options:**\n- `retry` - Try one more time (resets counter)\n- `skip` - Skip this task, continue with next\n- `abort` - Stop plan execution\n- `fix: <instruction>` - Provide specific fix instruction\n")
	return b.String()
}

func reasonSentence(reason string) string {
	if strings.HasPrefix(reason, "max_retries") || strings.HasPrefix(reason, "escalate_after") {
		return "Automated recovery has been exhausted."
	}
	return "It cannot be fixed automatically: " + reason + "."
}

// StuckReport is what a hard stop leaves for a later retry.
type StuckReport struct {
	TaskID      string
	Description string
	Loops       int
	Replans     int
	Failures    []Failure
	Hypotheses  []string
	RunIDs      []string
	Files       []string
}

// Hypotheses derives deterministic hypotheses from the failures: what
// failed most, what the analyses kept guessing, which files every attempt
// touched.
func Hypotheses(fs []Failure) []string {
	if len(fs) == 0 {
		return []string{"No failure was recorded: the task may be ill-defined."}
	}
	var out []string
	types := map[string]int{}
	causes := map[string]int{}
	files := map[string]int{}
	for _, f := range fs {
		types[f.Type]++
		if f.RootCauseGuess != "" {
			causes[f.RootCauseGuess]++
		}
		for _, p := range f.FilesModified {
			files[p]++
		}
	}
	for _, kv := range ranked(types) {
		out = append(out, fmt.Sprintf("%d of %d attempts failed with %s.", kv.n, len(fs), kv.k))
	}
	for _, kv := range ranked(causes) {
		if kv.n > 1 {
			out = append(out, fmt.Sprintf("The same cause recurred %d times: %s — the approach may not address it.", kv.n, kv.k))
		} else {
			out = append(out, "Possible cause: "+kv.k+".")
		}
		if len(out) >= 6 {
			break
		}
	}
	for _, kv := range ranked(files) {
		if kv.n == len(fs) && len(fs) > 1 {
			out = append(out, fmt.Sprintf("Every attempt changed %s: the fix may belong elsewhere.", kv.k))
		}
	}
	last := fs[len(fs)-1]
	if last.OutputSummary != "" {
		out = append(out, "The last failure: "+oneLine(last.OutputSummary, 160)+".")
	}
	return out
}

type kv struct {
	k string
	n int
}

func ranked(m map[string]int) []kv {
	out := make([]kv, 0, len(m))
	for k, n := range m {
		out = append(out, kv{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].k < out[j].k
	})
	return out
}

// StuckMarkdown renders the stuck report written to .wilco/stuck/<id>.md.
func StuckMarkdown(r StuckReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Stuck report: %s\n\n", r.TaskID)
	fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(r.Description))
	fmt.Fprintf(&b, "Hard stop after %d verify loops and %d replans.\n\n", r.Loops, r.Replans)
	b.WriteString("## Hypotheses\n\n")
	for _, h := range r.Hypotheses {
		fmt.Fprintf(&b, "- %s\n", h)
	}
	b.WriteString("\n## Attempts\n\n| Attempt | Failure type | Run | Summary |\n|---|---|---|---|\n")
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", f.Attempt, f.Type, f.RunID, oneLine(firstNonEmpty(f.OutputSummary, f.Error), 100))
	}
	b.WriteString("\n## Artifacts (run ids)\n\n")
	for _, id := range r.RunIDs {
		fmt.Fprintf(&b, "- %s (`.wilco/runs/%s/`)\n", id, id)
	}
	if len(r.Files) > 0 {
		b.WriteString("\n## Files left modified in the working tree\n\n")
		for _, f := range r.Files {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	return b.String()
}

// Summary is what a successful task reports.
type Summary struct {
	Files    []string
	Why      string
	RunID    string
	Command  string
	Attempts int
	// Unverified: no verify step is configured, nothing checked the work.
	Unverified bool
	// Warnings are what the definition of done found and let pass.
	Warnings []string
	// Land says what became of the change on the target branch; nil when
	// it was not to land (land none).
	Land *Landed
}

// Landed is what became of a verified change that was to land as a
// commit: the commit (its short hash) on Branch, or none when no file of
// the change could be committed; Left are the files it changed that had
// uncommitted changes before it began, which are not committed.
type Landed struct {
	Commit string
	Branch string
	Left   []string
}

// SummaryText renders the success summary: what changed, why, how it was
// verified.
func SummaryText(s Summary) string {
	var b strings.Builder
	b.WriteString("What changed:\n")
	if len(s.Files) == 0 {
		b.WriteString("- (no files changed)\n")
	}
	for _, f := range s.Files {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	fmt.Fprintf(&b, "Why: %s\n", firstNonEmpty(strings.TrimSpace(s.Why), "as the task asked"))
	if s.Unverified {
		fmt.Fprintf(&b, "How it was verified: NOT VERIFIED: no verify step is configured, so nothing checked the agent's work (attempt %d). Add a check under verify.steps in wilco.yaml (see docs/CONFIG.md).\n", s.Attempts)
		return b.String()
	}
	fmt.Fprintf(&b, "How it was verified: %s passed in run %s (attempt %d).\n", firstNonEmpty(s.Command, "the verify steps"), s.RunID, s.Attempts)
	if l := s.Land; l != nil {
		switch {
		case l.Commit != "":
			fmt.Fprintf(&b, "Landed as %s on %s.\n", l.Commit, l.Branch)
		case len(l.Left) > 0:
			fmt.Fprintf(&b, "Nothing was committed on %s: every file the task changed had uncommitted changes before it began.\n", l.Branch)
		default:
			fmt.Fprintf(&b, "Nothing was committed on %s: the task left no file changed.\n", l.Branch)
		}
		if len(l.Left) > 0 {
			fmt.Fprintf(&b, "Left uncommitted: %s (%s).\n", strings.Join(l.Left, ", "), LeftUncommitted)
		}
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "Warning: %s\n", w)
	}
	return b.String()
}

// LeftUncommitted says why a file the task changed is not in its commit.
const LeftUncommitted = "they had uncommitted changes before the task began; wilco commits no change it did not make, so the task's edits to them are left in the working tree with the earlier ones"

// Commit is what a verified change's commit message says: the task, the
// success summary of what it commits, and the trailers that name the
// task, its run and its agent.
type Commit struct {
	Description string
	TaskID      string
	Agent       string
	// Summary is the change's summary; its Files are the files the commit
	// holds, its Land is ignored.
	Summary Summary
	// Left are the files the task changed that the commit leaves out.
	Left []string
}

// Commit trailers: the keys of the lines that end a commit wilco makes.
const (
	TrailerTask  = "Wilco-Task"
	TrailerRun   = "Wilco-Run"
	TrailerAgent = "Wilco-Agent"
)

// maxSubject bounds a commit's first line, in runes.
const maxSubject = 72

// CommitSubject is a commit's first line: the description's first line
// with text, its blanks collapsed, cut to 72 runes (bytes that are not
// UTF-8 written as U+FFFD).
func CommitSubject(description string) string {
	line := ""
	for l := range strings.SplitSeq(strings.ToValidUTF8(description, "\uFFFD"), "\n") {
		if line = strings.Join(strings.Fields(l), " "); line != "" {
			break
		}
	}
	if r := []rune(line); len(r) > maxSubject {
		line = strings.TrimRight(string(r[:maxSubject-1]), " ") + "…"
	}
	return firstNonEmpty(line, "wilco task")
}

// CommitMessage renders a verified change's commit message: the subject,
// the summary of what it commits and why, the files left out, and the
// trailers (Wilco-Task, Wilco-Run, Wilco-Agent) in a paragraph of their
// own, where git reads trailers.
func CommitMessage(c Commit) string {
	sum := c.Summary
	sum.Land = nil
	var b strings.Builder
	b.WriteString(CommitSubject(c.Description) + "\n\n")
	b.WriteString(SummaryText(sum))
	if len(c.Left) > 0 {
		fmt.Fprintf(&b, "Left uncommitted: %s (%s).\n", strings.Join(c.Left, ", "), LeftUncommitted)
	}
	fmt.Fprintf(&b, "\n%s: %s\n%s: %s\n", TrailerTask, c.TaskID, TrailerRun, sum.RunID)
	if c.Agent != "" {
		fmt.Fprintf(&b, "%s: %s\n", TrailerAgent, c.Agent)
	}
	return b.String()
}

func xmlText(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}

func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pad + l
	}
	return strings.Join(lines, "\n")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) > n {
		s = s[:n-1] + "…"
	}
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// Review is what a review request says: the task, the passed verification
// and the change.
type Review struct {
	Task     Task
	Attempt  int
	RunID    string
	Command  string
	Files    []ReviewFile
	Diff     string
	SizeNote string
}

// ReviewFile is a file of the change under review.
type ReviewFile struct {
	Path   string
	Status string
	Lines  int
}

// ReviewRequest renders the message that asks a reviewer for its verdict
// on a change whose verification passed: the task with its criteria and
// constraints, the files, the diff, and the answer it must give (APPROVED,
// or REJECTED with reasons, on the first line).
func ReviewRequest(r Review) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Review: task %s (attempt %d)\n\n", r.Task.ID, r.Attempt)
	fmt.Fprintf(&b, "An agent carried out the task below and its verification passed (%s, run %s). "+
		"Review the change against the task, its acceptance criteria and its constraints. Do not change any file.\n\n",
		firstNonEmpty(r.Command, "the verify steps"), r.RunID)
	fmt.Fprintf(&b, "### Task\n\n%s\n", strings.TrimSpace(r.Task.Description))
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n### %s\n\n", title)
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	list("Acceptance criteria", r.Task.AcceptanceCriteria)
	list("Constraints", r.Task.Constraints)
	list("Non-goals", r.Task.NonGoals)
	list("Boundaries (files out of scope)", r.Task.Boundaries)
	b.WriteString("\n### Files changed\n\n")
	if len(r.Files) == 0 {
		b.WriteString("- (none listed)\n")
	}
	for _, f := range r.Files {
		fmt.Fprintf(&b, "- %s (%s, %d lines)\n", f.Path, firstNonEmpty(f.Status, "changed"), f.Lines)
	}
	if r.SizeNote != "" {
		fmt.Fprintf(&b, "\nNote: %s. Judge whether that size is what the task needs.\n", r.SizeNote)
	}
	if d := strings.TrimRight(r.Diff, "\n"); d != "" {
		fence := "```"
		for strings.Contains(d, fence) {
			fence += "`"
		}
		fmt.Fprintf(&b, "\n### Diff\n\n%sdiff\n%s\n%s\n", fence, d, fence)
	}
	b.WriteString("\n### Your answer\n\n" +
		"Answer APPROVED on the first line if the change does what the task asks and meets every acceptance criterion and constraint.\n" +
		"Otherwise answer REJECTED on the first line, then your reasons, one per line: what is wrong or missing, and what to change.\n")
	return b.String()
}

// Worktree is what an agent that runs in its own environment (a mailbox
// agent) is told of a task worked in parallel: the task works in the
// worktree at dir (an absolute path), on branch, and the agent must work
// there — or, for a scout's question or a review (read), read there.
func Worktree(dir, branch, taskID string, read bool) string {
	if read {
		return fmt.Sprintf("WORKTREE: task %s works in its own git worktree, %s (branch %s). "+
			"Read the files there, not in the repository's main checkout, and change nothing.", taskID, dir, branch)
	}
	return fmt.Sprintf("WORKTREE: task %s works in its own git worktree, %s (branch %s). "+
		"Work there and only there: cd %s before anything else, change files only under it, run commands from it, "+
		"and do not switch its branch, merge it or push it, nor touch the repository's main checkout. "+
		"wilco runs the verify steps there and lands the branch itself once they pass.", taskID, dir, branch, shellQuote(dir))
}

// shellQuote quotes a path for a shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-%+@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// PullRequest is what a task's pull request says: the task and its
// criteria, what changed and why, how it was verified, its attempts and
// what they cost, and the issue it fixes.
type PullRequest struct {
	TaskID, Description string
	Criteria            []string
	Summary             Summary
	// VerifyMS is how long the verification that passed ran.
	VerifyMS int64
	// Attempts are the failed attempts, oldest first: "attempt 1:
	// verification_failed (run T-3-a1): …".
	Failed []string
	// Tokens and CostUSD are what the task's turns cost.
	InputTokens, OutputTokens int64
	CostUSD                   float64
	Agent                     string
	// Issue is the issue the task was made from (0: none).
	Issue int
}

// PullRequestTitle is a task's pull request's title: its description's
// first line.
func PullRequestTitle(description string) string { return CommitSubject(description) }

// PullRequestBody is the Markdown body of a task's pull request: the proof
// of its work, for the reviewer.
func PullRequestBody(p PullRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Task %s\n\n%s\n", p.TaskID, strings.TrimSpace(p.Description))
	if len(p.Criteria) > 0 {
		b.WriteString("\nAcceptance criteria:\n")
		for _, c := range p.Criteria {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	b.WriteString("\n## What changed, and why\n\n")
	for _, f := range p.Summary.Files {
		fmt.Fprintf(&b, "- `%s`\n", f)
	}
	if why := strings.TrimSpace(p.Summary.Why); why != "" {
		fmt.Fprintf(&b, "\n%s\n", why)
	}
	b.WriteString("\n## How it was verified\n\n")
	cmd := firstNonEmpty(p.Summary.Command, "the verify steps")
	fmt.Fprintf(&b, "`%s` passed in run `%s`", cmd, p.Summary.RunID)
	if p.VerifyMS > 0 {
		fmt.Fprintf(&b, " (%s)", (time.Duration(p.VerifyMS) * time.Millisecond).Round(time.Millisecond))
	}
	fmt.Fprintf(&b, ", attempt %d.\n", max(p.Summary.Attempts, 1))
	for _, w := range p.Summary.Warnings {
		fmt.Fprintf(&b, "- warning: %s\n", w)
	}
	b.WriteString("\n## Attempts\n\n")
	if len(p.Failed) == 0 {
		b.WriteString("Verified at the first attempt.\n")
	}
	for _, f := range p.Failed {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	fmt.Fprintf(&b, "\nAgent %s; tokens: %d in, %d out", firstNonEmpty(p.Agent, "?"), p.InputTokens, p.OutputTokens)
	if p.CostUSD > 0 {
		fmt.Fprintf(&b, "; cost $%.2f", p.CostUSD)
	}
	b.WriteString(".\n")
	if p.Issue > 0 {
		fmt.Fprintf(&b, "\nFixes #%d\n", p.Issue)
	}
	fmt.Fprintf(&b, "\n%s: %s\n%s: %s\n", TrailerTask, p.TaskID, TrailerRun, p.Summary.RunID)
	return b.String()
}
