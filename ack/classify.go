package ack

import (
	"regexp"
	"strings"
)

// MessageType says whether a message needs an ACK.
type MessageType string

// The two message types of the ACK protocol.
const (
	Delegation   MessageType = "task_delegation" // needs an ACK
	Conversation MessageType = "conversation"    // the reply is the acknowledgment
)

// The markers Classify reports in Classification.Reasons, in this order.
const (
	ReasonTaskID             = "task id"                        // "## Task: GH-42-feature", "Task ID: T-3", "task_id: T-3"
	ReasonTaskAssignment     = "task-assignment JSON"           // {"type": "task-assignment", …}
	ReasonAckRequest         = "acknowledgment request"         // "ACKNOWLEDGMENT REQUIRED: Reply with [ACK] …", as Teach writes
	ReasonAcceptanceCriteria = "acceptance criteria section"    // "## Acceptance Criteria", "Acceptance criteria:"
	ReasonGitWorkflow        = "git workflow section"           // "## Git Workflow", "Branch: …", "Pull request:"
	ReasonVerification       = "verification commands section"  // "## Verification Commands", "Verify:"
	ReasonOutputFormat       = "required output format section" // "## Required Output Format", "Output format:"
	ReasonChecklist          = "- [ ] checklist"                // an unchecked "- [ ] item"
	ReasonPlaceholders       = "template placeholders"          // "{task_id}", "{{name}}" outside code
)

// Classification is what Classify found.
type Classification struct {
	Type    MessageType
	Reasons []string // the markers that matched (the Reason… constants); empty for a conversation
	TaskID  string   // the task id found, e.g. "GH-42-feature" from "## Task: GH-42-feature"; "" if none
}

// sectionReasons maps section titles, lowercased, to their marker. A title
// that says what it is counts in any "Title: value" line; a short, ambiguous
// one ("Branch", "PR", "Verify") only as a heading, an emphasised line or a
// "Title:" line with nothing after it, since "PR: looks good" is feedback.
var sectionReasons = map[string]struct {
	reason    string
	ambiguous bool
}{
	"acceptance criteria":    {ReasonAcceptanceCriteria, false},
	"acceptance criterion":   {ReasonAcceptanceCriteria, false},
	"git workflow":           {ReasonGitWorkflow, false},
	"git":                    {ReasonGitWorkflow, true},
	"branch":                 {ReasonGitWorkflow, true},
	"branching":              {ReasonGitWorkflow, true},
	"pull request":           {ReasonGitWorkflow, true},
	"pr":                     {ReasonGitWorkflow, true},
	"verification commands":  {ReasonVerification, false},
	"verification steps":     {ReasonVerification, false},
	"verification":           {ReasonVerification, true},
	"verify":                 {ReasonVerification, true},
	"required output format": {ReasonOutputFormat, false},
	"output format":          {ReasonOutputFormat, false},
	"expected output format": {ReasonOutputFormat, false},
	"required output":        {ReasonOutputFormat, true},
}

var (
	// taskLabel is "Task: X", "Task ID: X", "task_id: X", "Task #X" at the
	// start of a line (after markdown).
	taskLabel = regexp.MustCompile(`^(?i:task(?:[ _-]?id)?)\s*[*_]*\s*[:#]\s*[*_` + "`" + `"']*\s*([A-Za-z0-9._:-]+)`)
	// checklist is an unchecked markdown task-list item.
	checklist = regexp.MustCompile(`^\s*(?:>\s*)*[-*+]\s+\[ \]`)
	// placeholder is "{name}" (no blank inside the braces: "{ return x }" is
	// code) or "{{ name }}"; preceded by a word character, '$' or '%' it is
	// code ("T{x}", "${HOME}"), not a placeholder.
	placeholder = regexp.MustCompile(`(?:^|[^A-Za-z0-9_$%{])(?:\{\{\s*[A-Za-z_][A-Za-z0-9_.]*\s*\}\}|\{[A-Za-z0-9](?:[A-Za-z0-9 _.,/'-]{0,60}[A-Za-z0-9_'])?\})`)
	// inlineCode is a `code span`.
	inlineCode = regexp.MustCompile("`[^`]*`")
	// assignment is the JSON task-assignment, with its task_id.
	assignment   = regexp.MustCompile(`"type"\s*:\s*"task-assignment"`)
	jsonTaskID   = regexp.MustCompile(`"task_id"\s*:\s*"([A-Za-z0-9._:-]{1,64})"`)
	ackRequestID = regexp.MustCompile(`\[ACK\]\s+([A-Za-z0-9._:{}-]+)`)
)

// Classify tells a task delegation from a conversation. A message is a Delegation when it has any of:
// a task id ("## Task: GH-42-feature", "Task ID: T-3", "task_id: T-3", a JSON
// task-assignment), an ACK request block, an Acceptance Criteria, Git
// Workflow, Verification Commands or Required Output Format section (a
// heading or a "Title:" line), an unchecked "- [ ]" checklist, or template
// placeholders ("{task_id}", "{{name}}") outside code. Everything else — a
// question, feedback, a discussion, a status inquiry — is a Conversation and
// needs no ACK.
//
// A task id must look like one: it has a digit or an inner '-', '_', '.' or
// ':' ("T-3", "GH-42-feature", "03-01:task-3"), so "Task: implement login"
// names no id. Merely mentioning acceptance criteria in a sentence is not a
// section. Classify is pure and never panics; callers that know better may
// state the type themselves.
func Classify(message string) Classification {
	found := map[string]bool{}
	taskID := ""
	setID := func(id string) {
		if taskID == "" && looksLikeID(id) {
			taskID = cleanID(id)
		}
	}
	inFence := false
	for _, l := range splitLines(message) {
		s := l.s
		trimmed := strings.TrimSpace(s)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
			continue
		}
		if checklist.MatchString(s) {
			found[ReasonChecklist] = true
		}
		t, _ := stripDecoration(s)
		if m := taskLabel.FindStringSubmatch(t); m != nil && looksLikeID(m[1]) {
			found[ReasonTaskID] = true
			setID(m[1])
		}
		if title, strong := sectionTitle(s); title != "" {
			if sec, ok := sectionReasons[title]; ok && (strong || !sec.ambiguous) {
				found[sec.reason] = true
			}
		}
		if strings.Contains(strings.ToUpper(s), "ACKNOWLEDGMENT REQUIRED") {
			if m := ackRequestID.FindStringSubmatch(s); m != nil {
				found[ReasonAckRequest] = true
				setID(m[1])
			}
		}
		if !inFence && placeholder.MatchString(inlineCode.ReplaceAllString(s, "")) {
			found[ReasonPlaceholders] = true
		}
	}
	if assignment.MatchString(message) {
		found[ReasonTaskAssignment] = true
		if m := jsonTaskID.FindStringSubmatch(message); m != nil {
			setID(m[1])
		}
	}
	c := Classification{Type: Conversation, TaskID: taskID}
	for _, r := range []string{ReasonTaskID, ReasonTaskAssignment, ReasonAckRequest, ReasonAcceptanceCriteria,
		ReasonGitWorkflow, ReasonVerification, ReasonOutputFormat, ReasonChecklist, ReasonPlaceholders} {
		if found[r] {
			c.Reasons = append(c.Reasons, r)
		}
	}
	if len(c.Reasons) > 0 {
		c.Type = Delegation
	}
	return c
}

// looksLikeID reports whether s is a task id with a digit or an inner
// separator, so that a plain word ("implement") is not taken for one.
func looksLikeID(s string) bool {
	s = cleanID(s)
	if ValidateTaskID(s) != nil {
		return false
	}
	if strings.ContainsAny(s, "0123456789") {
		return true
	}
	inner := strings.Trim(s, "-_.:")
	return strings.ContainsAny(inner, "-_.:")
}

// sectionTitle returns the title of a section line, lowercased: the text of
// a heading or of an emphasised line, or the "Title" of "Title: value" when it
// has at most four words. strong is true for a heading, a fully emphasised
// title and a "Title:" with nothing after it.
func sectionTitle(line string) (title string, strong bool) {
	t, emph := stripDecoration(line)
	heading := headingLen(strings.TrimLeft(line, " \t>")) > 0
	head, value, colon := strings.Cut(t, ":")
	value = strings.Trim(value, " \t*_~`")
	closed := emph != "" && strings.HasSuffix(strings.TrimRight(head, " \t:"), emph)
	words := strings.Fields(strings.ToLower(strings.Trim(head, " \t*_~`#")))
	if len(words) == 0 || len(words) > 4 {
		return "", false
	}
	return strings.Join(words, " "), heading || closed || (colon && value == "")
}
