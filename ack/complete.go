package ack

import (
	"cmp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// completeWords maps the words a completion report may give its status
// with, normalised (normWord), to the status. The JSON status and the text
// forms share it: "done" is a success wherever it is written.
var completeWords = map[string]CompleteStatus{
	"success":    CompleteSuccess,
	"successful": CompleteSuccess,
	"succeeded":  CompleteSuccess,
	"complete":   CompleteSuccess,
	"completed":  CompleteSuccess,
	"done":       CompleteSuccess,
	"finished":   CompleteSuccess,
	"failure":    CompleteFailure,
	"failed":     CompleteFailure,
	"fail":       CompleteFailure,
	"blocked":    CompleteBlocked,
	"impossible": CompleteImpossible,
}

// ParseCompleteStatus reads the status of a completion report in any case,
// with its synonyms: success (complete, completed, done, finished,
// succeeded, successful), failure (failed, fail), blocked, impossible.
func ParseCompleteStatus(word string) (CompleteStatus, bool) {
	s, ok := completeWords[normWord(word)]
	return s, ok
}

// The plain-text completion reports.
//
// An agent that was never taught the JSON task-complete reports the end of
// its work in words. scanCompletions reads these forms, each at the start of
// a line (after markdown: blanks, block quotes, headings, list markers,
// emphasis), in any case:
//
//	Status: complete            (done, success, finished, …; blocked,
//	Status: blocked               impossible, failed) — also YAML's
//	Reason: the key expired       "status: success" of an executor output
//	TASK COMPLETE [T-3]         (TASK DONE, TASK FINISHED, TASK BLOCKED, …)
//	[COMPLETE] T-3 - summary    ([DONE], [BLOCKED], [IMPOSSIBLE], [FAILED] …)
//	BLOCKED: the key expired
//	IMPOSSIBLE: the API was removed
//
// The lines around the form, up to two blank lines, give its details:
// Reason: (or Blocker:, Blocked by:), Error:, Summary: and a task id label
// (Task ID:, task_id:, or Task: followed by an id alone). Text after the
// status on the form's line is its reason (blocked, impossible, failure)
// or its summary (success).
//
// A form is not read when the status is one of a list of options ("status:
// success | failure | blocked"), when its paragraph is a checkpoint report
// (a line that starts with "Checkpoint"), or inside a <retry_context> block
// (wilco's own prompt, echoed). The task id is the one the form names, else
// the one its paragraph names, else the last one named before it (a task id
// label or an [ACK] line); a report that names none is for the task its
// reply answers. Reply.For then refuses a report for another task.

// maxCompletionBody bounds the lines read around a completion form.
const maxCompletionBody = 40

// completionHint is a cheap test before scanCompletions: every form holds
// one of these words.
func completionHint(low string) bool {
	for _, w := range []string{"status", "complete", "done", "finished", "blocked", "impossible", "success", "fail"} {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// scanCompletions finds the plain-text completion reports of text.
func scanCompletions(text string) []item {
	if !completionHint(strings.ToLower(text)) {
		return nil
	}
	lines := splitLines(text)
	var items []item
	lastID := ""     // the last task id named so far
	inRetry := false // inside <retry_context>…</retry_context>
	for i := 0; i < len(lines); i++ {
		s := lines[i].s
		t := strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(t, "<retry_context"):
			inRetry = !strings.Contains(t, "</retry_context>")
			continue
		case inRetry:
			inRetry = !strings.HasPrefix(t, "</retry_context>")
			continue
		}
		if id := namedID(s); id != "" {
			lastID = id
		}
		f, ok := completionLine(s)
		if !ok {
			continue
		}
		start, end := paragraph(lines, i)
		if isCheckpointReport(lines[start:end]) {
			i = end - 1
			continue
		}
		r := Reply{Kind: KindComplete, Complete: f.status, TaskID: f.id}
		details := completionDetails(lines, start, i, end, &r)
		if f.rest != "" {
			if r.Complete == CompleteSuccess {
				if r.Summary == "" {
					r.Summary = f.rest
				}
			} else if r.Reason == "" {
				r.Reason = f.rest
			}
		}
		if r.TaskID == "" {
			r.TaskID = cmp.Or(details, lastID)
		}
		if r.TaskID != "" {
			lastID = r.TaskID
		}
		items = append(items, item{pos: lines[i].start, reply: r})
		i = max(i, end-1)
	}
	return items
}

// completionForm is what a completion line says.
type completionForm struct {
	status CompleteStatus
	id     string // the task id the line names, or ""
	rest   string // the text after the status
}

// completionLine reads s as the line of a completion form.
func completionLine(s string) (completionForm, bool) {
	t, _ := stripDecoration(s)
	t = strings.TrimRight(t, " \t")
	if t == "" {
		return completionForm{}, false
	}
	if t[0] == '[' {
		return bracketForm(t)
	}
	if name, value, ok := cutLabel(t); ok {
		switch name {
		case "status", "task status", "final status", "result":
			return statusValue(value)
		case "blocked", "impossible":
			v := cleanValue(value)
			switch strings.ToLower(strings.TrimRight(v, ".!")) {
			case "", "no", "none", "nothing", "n/a", "false", "not blocked", "-":
				return completionForm{}, false // "Blocked: no" says the opposite
			}
			return completionForm{status: completeWords[name], rest: v}, true
		}
	}
	return taskWordsForm(t)
}

// statusValue reads the value of a "Status:" line: one status word, then
// nothing, or a separator and a note. A list of options ("success |
// failure") or a word that is not a status is not a report.
func statusValue(v string) (completionForm, bool) {
	v = trimSymbols(v)
	word, rest := letters(v)
	if normWord(word) == "task" { // "Status: task complete"
		word, rest = letters(trimSymbols(rest))
	}
	st, ok := completeWords[normWord(word)]
	if !ok {
		return completionForm{}, false
	}
	rest, ok = afterStatus(rest)
	if !ok {
		return completionForm{}, false
	}
	return completionForm{status: st, rest: rest}, true
}

// afterStatus reads what follows a status word: nothing, or a note after a
// separator or a blank. ok is false for a list of options or a question.
func afterStatus(rest string) (string, bool) {
	rest = strings.TrimLeft(rest, "*_`~\"'")
	t := strings.TrimSpace(rest)
	low := strings.ToLower(t)
	switch {
	case t == "":
		return "", true
	case strings.ContainsAny(t[:1], "|/?"), strings.Contains(t, " | "),
		low == "or" || strings.HasPrefix(low, "or ") || strings.HasPrefix(low, "and/or"):
		return "", false
	case rest[0] != ' ' && rest[0] != '\t' && isWordByte(rest[0]):
		return "", false // "Status: doneness"
	}
	return dropConnective(cleanValue(t)), true
}

// bracketForm reads "[COMPLETE] T-3 - summary", "[BLOCKED] reason",
// "[TASK COMPLETE]".
func bracketForm(t string) (completionForm, bool) {
	end := strings.IndexByte(t[:min(len(t), 24)], ']')
	if end < 0 {
		return completionForm{}, false
	}
	tag := normWord(t[1:end])
	tag = strings.TrimPrefix(tag, "task_")
	st, ok := completeWords[tag]
	if !ok {
		return completionForm{}, false
	}
	id, rest := leadingID(t[end+1:])
	rest, ok = afterStatus(" " + strings.TrimLeft(rest, " \t"))
	if !ok {
		return completionForm{}, false
	}
	return completionForm{status: st, id: id, rest: rest}, true
}

// taskWordsForm reads "TASK COMPLETE", "Task complete: T-3", "TASK
// BLOCKED - reason".
func taskWordsForm(t string) (completionForm, bool) {
	word, rest := letters(t)
	if normWord(word) != "task" || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
		return completionForm{}, false
	}
	word, rest = letters(strings.TrimLeft(rest, " \t"))
	st, ok := completeWords[normWord(word)]
	if !ok {
		return completionForm{}, false
	}
	rest = strings.TrimLeft(rest, "*_`~")
	if rest != "" && (rest[0] == '!' || rest[0] == '.') {
		rest = rest[1:]
	}
	id, after := leadingID(rest)
	if id == "" {
		after = rest
	}
	note, ok := afterStatus(" " + strings.TrimLeft(after, " \t"))
	if !ok {
		return completionForm{}, false
	}
	if st == CompleteSuccess && id == "" && note != "" && !separated(rest) {
		// "Task completed successfully", "Task done by Bob": prose that
		// says the same thing, taken as it is.
		note = strings.TrimSpace(rest)
	}
	return completionForm{status: st, id: id, rest: note}, true
}

// separated reports whether s starts with a separator: a dash, a colon, a
// parenthesis or a comma (after blanks).
func separated(s string) bool {
	s = strings.TrimLeft(s, " \t")
	if s == "" {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s)
	return isDash(r) || strings.ContainsRune(":;,(", r)
}

// leadingID reads the task id that may start s (after blanks, a separator
// or markdown). A token with a digit or one of - . : _ in it is an id
// ("T-3", "03-01:task-2"), with trailing '.' and ':' stripped. A plain word
// is one only when nothing but a separator follows it ("[COMPLETE]
// refactor", "refactor: done"): "missing key", "successfully." and "by
// Bob" are words. A report that names a task is refused when that is not
// the task it answers, never taken for it.
func leadingID(s string) (id, rest string) {
	t := trimLeftSet(s, ":*`~\"'(")
	underscored := strings.HasPrefix(t, "_") // "_T-3_"
	if underscored {
		t = t[1:]
	}
	n := 0
	for n < len(t) && isIDChar(t[n]) {
		n++
	}
	if n == 0 {
		return "", s
	}
	raw := t[:n]
	if underscored {
		raw = strings.TrimRight(raw, "_")
	}
	tok, after := cleanID(raw), t[n:]
	after = strings.TrimLeft(after, "*`~\"')")
	if ValidateTaskID(tok) != nil {
		return "", s
	}
	a := strings.TrimLeft(after, " \t")
	switch {
	case strings.ContainsAny(tok, "0123456789-.:_"):
	case strings.HasSuffix(raw, "."):
		return "", s // the end of a sentence
	case raw != tok, a == "", separated(a):
	default:
		return "", s
	}
	return tok, after
}

// letters cuts the run of ASCII letters that starts s.
func letters(s string) (word, rest string) {
	n := 0
	for n < len(s) && isASCIILetter(s[n]) {
		n++
	}
	return s[:n], s[n:]
}

// trimSymbols trims blanks, emphasis, quotes and symbols (✅, ❌) from the
// start of s.
func trimSymbols(s string) string {
	return strings.TrimLeftFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("*_`~\"'", r) || unicode.IsSymbol(r) || r == '\ufe0f'
	})
}

// cleanValue trims a value of its markdown, its quotes and the separators
// before it, and a pair of parentheses around it.
func cleanValue(v string) string {
	v = strings.TrimSpace(trimLeftSet(v, ":;,"))
	for len(v) >= 2 {
		c, last := v[0], v[len(v)-1]
		if !(c == last && strings.IndexByte("\"'`*_~", c) >= 0 || c == '(' && last == ')') {
			break
		}
		v = strings.TrimSpace(v[1 : len(v)-1])
	}
	if strings.IndexFunc(v, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return "" // "." or "—" says nothing
	}
	return v
}

// dropConnective removes the word that ties a note to its status ("blocked
// on the review", "failed because of X").
func dropConnective(v string) string {
	for _, w := range []string{"on ", "by ", "because ", "due to ", "since "} {
		if len(v) > len(w) && strings.EqualFold(v[:len(w)], w) {
			return strings.TrimSpace(v[len(w):])
		}
	}
	return v
}

// cutLabel reads "Label: value" at the start of t (decoration already
// removed): a label of at most four words of letters, '_' or '-', in any
// case, with emphasis around it ("**Status**: x", "**Status:** x"). name is
// normalised: lower case, words joined by one space.
func cutLabel(t string) (name, value string, ok bool) {
	i := 0
	for i < len(t) && i <= 32 && (isASCIILetter(t[i]) || t[i] == ' ' || t[i] == '\t' || t[i] == '_' || t[i] == '-') {
		i++
	}
	raw := t[:i]
	rest := t[i:]
	rest = strings.TrimLeft(rest, "*_`")
	rest = strings.TrimLeft(rest, " \t")
	if !strings.HasPrefix(rest, ":") {
		return "", "", false
	}
	fields := strings.FieldsFunc(strings.ToLower(raw), func(r rune) bool { return r == ' ' || r == '\t' || r == '_' || r == '-' })
	if len(fields) == 0 || len(fields) > 4 {
		return "", "", false
	}
	value = strings.TrimLeft(rest[1:], "*_`")
	return strings.Join(fields, " "), strings.TrimSpace(value), true
}

// paragraph returns the lines of the report around lines[i]: back to the
// previous blank line or form, forward up to two blank lines in a row, an
// [ACK] line, a form of another status ("Status: blocked" then "BLOCKED:
// why" is one report), or maxCompletionBody lines.
func paragraph(lines []lineRef, i int) (start, end int) {
	here, _ := completionLine(lines[i].s)
	start = i
	for start > 0 && i-start < maxCompletionBody && strings.TrimSpace(lines[start-1].s) != "" {
		if _, ok := completionLine(lines[start-1].s); ok || isACKLine(lines[start-1].s) {
			break
		}
		start--
	}
	end = i + 1
	blanks := 0
	for end < len(lines) && end-i <= maxCompletionBody {
		s := lines[end].s
		if strings.TrimSpace(s) == "" {
			blanks++
			if blanks == 2 {
				break
			}
			end++
			continue
		}
		blanks = 0
		if f, ok := completionLine(s); ok && (f.status != here.status || f.id != "" && here.id != "" && f.id != here.id) || isACKLine(s) {
			break
		}
		end++
	}
	for end > i+1 && strings.TrimSpace(lines[end-1].s) == "" {
		end--
	}
	return start, end
}

// isCheckpointReport reports whether a paragraph reports a checkpoint, not
// the end of the task.
func isCheckpointReport(lines []lineRef) bool {
	for _, l := range lines {
		t, _ := stripDecoration(l.s)
		w, _ := letters(t)
		if strings.EqualFold(w, "checkpoint") {
			return true
		}
	}
	return false
}

// completionDetails reads the labels of a report's lines (lines[start:end],
// the form's own line at form) into r, and returns the task id the lines
// name.
func completionDetails(lines []lineRef, start, form, end int, r *Reply) (id string) {
	for j := start; j < end; j++ {
		if j == form {
			continue
		}
		s := lines[j].s
		if v := namedID(s); v != "" && id == "" {
			id = v
			continue
		}
		if f, ok := completionLine(s); ok {
			if r.Reason == "" && f.status == r.Complete && f.rest != "" && f.status != CompleteSuccess {
				r.Reason = f.rest // "Status: blocked" and "BLOCKED: why"
			}
			continue
		}
		t, _ := stripDecoration(s)
		name, value, ok := cutLabel(t)
		if !ok {
			continue
		}
		value = cleanValue(value)
		if value == "" {
			value = continuation(lines, j+1, end)
		}
		switch name {
		case "reason", "reasons", "blocker", "blockers", "blocked by", "blocked on", "why":
			if r.Reason == "" {
				r.Reason = value
			}
		case "error", "errors", "error message":
			if r.Error == "" {
				r.Error = value
			}
		case "summary", "what i did", "changes":
			if r.Summary == "" {
				r.Summary = value
			}
		}
	}
	return id
}

// continuation is the value of a label given on the lines below it: the
// lines up to a blank line or another label, joined.
func continuation(lines []lineRef, j, end int) string {
	var parts []string
	for ; j < end && len(parts) < 10; j++ {
		s := lines[j].s
		if strings.TrimSpace(s) == "" {
			break
		}
		t, _ := stripDecoration(s)
		if _, _, ok := cutLabel(t); ok {
			break
		}
		parts = append(parts, strings.TrimSpace(stripListMarker(s)))
	}
	return strings.Join(parts, " ")
}

// namedID returns the task id a line names: a task id label ("Task ID:
// T-3", "task_id: T-3", "## Task: T-3 — login", "Task: refactor") or an
// [ACK] line; "" for none. "Task: Refactor the parser" is a title.
func namedID(s string) string {
	t, _ := stripDecoration(s)
	if al, ok, err := parseACKLine(s); ok && err == nil {
		return al.id
	}
	name, value, ok := cutLabel(t)
	if !ok {
		return ""
	}
	switch name {
	case "task id", "taskid", "task":
	default:
		return ""
	}
	id, _ := leadingID(value)
	return id
}

// FormatComplete writes r as a plain-text completion report, the form
// Parse reads:
//
//	Task ID: {task_id}
//	Status: {status}
//	Reason: {reason}
//	Summary: {summary}
//	Error: {error}
//
// Lines with nothing to say are left out; values are flattened to one line.
// A claim without a status is written "Status: success" (verification
// decides either way).
func FormatComplete(r Reply) string {
	var b strings.Builder
	st := r.Complete
	if st == "" {
		st = CompleteSuccess
	}
	if r.TaskID != "" {
		b.WriteString("Task ID: " + r.TaskID + "\n")
	}
	b.WriteString("Status: " + string(st))
	for _, kv := range [][2]string{{"Reason", r.Reason}, {"Summary", r.Summary}, {"Error", r.Error}} {
		if v := flatten(kv[1]); v != "" {
			b.WriteString("\n" + kv[0] + ": " + v)
		}
	}
	return b.String()
}
