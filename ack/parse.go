package ack

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Parse interprets any text an agent wrote. It finds the first
// acknowledgment form in the text, in order of appearance:
//
//   - an [ACK] line — "[ACK] {task_id} - {STATUS}" — anywhere in prose or
//     markdown, with the Understanding:, Questions: and Note: lines that
//     follow it;
//   - a JSON object of one of the JSON forms (task-acknowledgment,
//     task-acknowledgment-error, checkpoint-ack, task-complete,
//     acknowledgment), bare, inside ``` fences or nested in another object
//     (an AI Maestro message's "content").
//
// When there is none, the reply is Kind KindMessage with Text. Parse returns
// an error (a *ParseError) only for a form that is recognisably an
// acknowledgment but broken — "[ACK] - RECEIVED" without an id, an unknown
// STATUS word, a task-acknowledgment without task_id — and then the Reply is
// a KindMessage with Text, so that a caller can still log it. When the first
// form is broken Parse reports it, even if a good one follows: the agent
// must be told.
//
// Parse is lenient on form and strict on the task id; see the package
// documentation for the exact rules. It never panics.
func Parse(text string) (Reply, error) {
	items := scan(text)
	if len(items) == 0 {
		return Reply{Kind: KindMessage, Text: text}, nil
	}
	if items[0].err != nil {
		return Reply{Kind: KindMessage, Text: text}, items[0].err
	}
	r := items[0].reply
	r.Text = text
	return r, nil
}

// ParseAll returns every acknowledgment form of text, in order of appearance,
// each with Text set to the whole text: an agent's output may hold its ACK
// line and, at the end of its turn, a task-complete object. Broken forms are
// left out and reported together in the error (errors.Join of *ParseError).
// A text without any form gives no replies and no error.
func ParseAll(text string) ([]Reply, error) {
	var replies []Reply
	var errs []error
	for _, it := range scan(text) {
		if it.err != nil {
			errs = append(errs, it.err)
			continue
		}
		it.reply.Text = text
		replies = append(replies, it.reply)
	}
	return replies, errors.Join(errs...)
}

// item is one form found in a text: a reply or the error of a broken form.
type item struct {
	pos   int // byte offset where the form starts
	reply Reply
	err   error
}

// scan finds every form of text: [ACK] lines and JSON objects, sorted by
// position.
func scan(text string) []item {
	items := append(scanACKLines(text), scanJSON(text)...)
	items = append(items, scanCompletions(text)...)
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.pos, b.pos) })
	return items
}

// scanACKLines finds every [ACK] line of text and reads the lines that follow
// it up to the next [ACK] line.
func scanACKLines(text string) []item {
	if !strings.Contains(strings.ToLower(text), "ack") {
		return nil
	}
	lines := splitLines(text)
	var items []item
	for i := 0; i < len(lines); i++ {
		al, ok, err := parseACKLine(lines[i].s)
		if !ok {
			continue
		}
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				pe.Line = i + 1
			}
			items = append(items, item{pos: lines[i].start, err: err})
			continue
		}
		r := Reply{Kind: KindAck, TaskID: al.id, Status: al.status}
		next := parseBody(lines, i+1, al.rest, &r)
		items = append(items, item{pos: lines[i].start, reply: r})
		i = next - 1
	}
	return items
}

// ackLine is what an [ACK] line says.
type ackLine struct {
	id     string
	status Status
	rest   string // the text after STATUS
}

// parseACKLine reads s as an [ACK] line. ok is false when s is not one. A
// line that starts (after markdown) with "[ACK]" in any case is one, and err
// says what is wrong with it; a line that starts with a bare "ACK" or "ACK:"
// is one only when the rest is a good ACK, since prose may start so too.
func parseACKLine(s string) (al ackLine, ok bool, err error) {
	t, _ := stripDecoration(s)
	// A symbol before it, as models write one: "✅ [ACK] T-3 - RECEIVED".
	t = strings.TrimLeftFunc(t, func(r rune) bool {
		return unicode.IsSymbol(r) || unicode.IsSpace(r) || unicode.Is(unicode.Mn, r) || r == '\uFE0F'
	})
	rest, bracket, ok := cutACKHead(t)
	if !ok {
		return ackLine{}, false, nil
	}
	al, msg := parseACKRest(rest)
	if msg != "" {
		if !bracket {
			return ackLine{}, false, nil
		}
		return ackLine{}, true, &ParseError{Form: formACKLine, Msg: msg, Input: strings.TrimSpace(s)}
	}
	return al, true, nil
}

// cutACKHead removes "[ACK]" ("[ack]", "[ ACK ]") or a bare "ACK" from the
// start of t.
func cutACKHead(t string) (rest string, bracket, ok bool) {
	if strings.HasPrefix(t, "[") {
		end := strings.IndexByte(t[:min(len(t), 10)], ']')
		if end > 0 && strings.EqualFold(strings.TrimSpace(t[1:end]), "ack") {
			return t[end+1:], true, true
		}
		return "", false, false
	}
	if len(t) >= 3 && strings.EqualFold(t[:3], "ack") && (len(t) == 3 || !isWordByte(t[3])) {
		return t[3:], false, true
	}
	return "", false, false
}

// idEnd reports whether c may follow a task id in an [ACK] line.
func idEnd(c byte) bool {
	return c == ' ' || c == '\t' || c >= 0x80 || strings.IndexByte("*`~\"')],;!?|", c) >= 0
}

// parseACKRest reads "{task_id} - {STATUS} …", the part of an [ACK] line
// after its head. msg says what is wrong, or is "". A word "Task" or "Task
// ID:" before the id is allowed ("[ACK] Task GH-42 - RECEIVED") when what
// follows it is a good ACK.
func parseACKRest(rest string) (al ackLine, msg string) {
	al, msg = parseIDStatus(rest)
	if msg == "" {
		return al, ""
	}
	t := strings.TrimLeft(rest, " \t:*~`\"'([_")
	for _, prefix := range []string{"task id:", "task_id:", "task-id:", "task:", "task", "id:"} {
		if len(t) > len(prefix) && strings.EqualFold(t[:len(prefix)], prefix) && (t[len(prefix)] == ' ' || t[len(prefix)] == '\t') {
			if al2, msg2 := parseIDStatus(t[len(prefix):]); msg2 == "" {
				return al2, ""
			}
			break
		}
	}
	return al, msg
}

// parseIDStatus reads "{task_id} - {STATUS} …"; msg says what is wrong.
func parseIDStatus(rest string) (al ackLine, msg string) {
	s := strings.TrimLeft(rest, " \t:*~`\"'([_")
	underscored := strings.HasSuffix(strings.TrimRight(rest[:len(rest)-len(s)], " \t"), "_") // "_T-3_"
	if s == "" {
		return al, `no task id and no STATUS (want "[ACK] {task_id} - RECEIVED")`
	}
	tok, _, _ := strings.Cut(s, " ")
	if strings.TrimLeftFunc(tok, isDash) == "" || startsWithNonASCIIDash(s) {
		return al, fmt.Sprintf(`no task id before %q (want "[ACK] {task_id} - STATUS")`, strings.TrimSpace(s))
	}
	n := 0
	for n < len(s) && isIDChar(s[n]) {
		n++
	}
	if n == 0 {
		return al, fmt.Sprintf("task id expected, found %q (a task id has only A-Z a-z 0-9 . _ : -)", tok)
	}
	if n < len(s) && !idEnd(s[n]) {
		return al, fmt.Sprintf("task id %q goes on with %q (a task id has only A-Z a-z 0-9 . _ : -)", s[:n], tok[n:])
	}
	al.id = s[:n]
	if underscored {
		al.id = strings.TrimRight(al.id, "_")
	}
	al.id = cleanID(al.id)
	if al.id == "" || !isASCIIAlnum(al.id[0]) {
		return al, fmt.Sprintf("task id expected, found %q (a task id starts with a letter or a digit)", tok)
	}
	if len(al.id) > MaxTaskIDLen {
		return al, fmt.Sprintf("task id %q is longer than %d characters", short(al.id), MaxTaskIDLen)
	}
	s = trimLeftSet(s[n:], "*`~\"')]_,;:!?|")
	if s == "" {
		if _, isStatus := statusWords[normWord(al.id)]; isStatus {
			return al, fmt.Sprintf("no task id before STATUS %q", al.id)
		}
		return al, fmt.Sprintf("no STATUS after task id %q (want %s)", al.id, statusOptions)
	}
	word, s := statusWord(s)
	if word == "" {
		tok, _, _ := strings.Cut(s, " ")
		return al, fmt.Sprintf("STATUS expected after task id %q, found %q (want %s)", al.id, tok, statusOptions)
	}
	st, ok := statusWords[normWord(word)]
	if !ok {
		// Two words: "CLARIFICATION NEEDED", "Needs clarification".
		switch normWord(word) {
		case "clarification", "needs", "need":
			second, s2 := statusWord(strings.TrimLeft(s, " \t*_"))
			if st, ok = statusWords[normWord(word+"_"+second)]; ok {
				s = s2
			}
		}
	}
	if !ok {
		return al, fmt.Sprintf("unknown STATUS %q after task id %q (want %s)", word, al.id, statusOptions)
	}
	al.status, al.rest = st, s
	return al, ""
}

// statusWord cuts the word that starts s: ASCII letters, digits, '_' and '-'.
func statusWord(s string) (word, rest string) {
	n := 0
	for n < len(s) && (isASCIIAlnum(s[n]) || s[n] == '_' || s[n] == '-') {
		n++
	}
	return s[:n], s[n:]
}

// startsWithNonASCIIDash reports whether s starts with a dash other than '-',
// which cannot start a task id.
func startsWithNonASCIIDash(s string) bool {
	for _, r := range s {
		return r != '-' && isDash(r)
	}
	return false
}

// inlineRest reads what follows STATUS on the [ACK] line: a label
// ("Understanding: …"), or free text ("- will start after GH-3") with
// labelNone.
func inlineRest(rest string) (label, string) {
	s := trimLeftSet(rest, "*`~\"')],;:.!?|_")
	s = strings.TrimRightFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '*' || r == '`' || r == '~' || r == '|' })
	if s == "" {
		return labelNone, ""
	}
	if l, v, ok := parseLabel(s); ok {
		return l, v
	}
	if len(s) >= 2 && s[0] == '(' && s[len(s)-1] == ')' {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return labelNone, s
}

// parseBody reads the lines of an ACK from lines[i] on — Understanding:,
// Questions: with its list, Note: or Reason: — up to the next [ACK] line, and
// returns the index of the first line it did not read. The first
// Understanding and the first note win; a note given as Note: wins over
// Reason:, which wins over the text after STATUS.
func parseBody(lines []lineRef, i int, inline string, r *Reply) int {
	p := &bodyParser{lines: lines, r: r}
	if l, v := inlineRest(inline); l == labelNone {
		p.inlineNote = v
	} else {
		p.apply(l, v)
	}
	for ; i < len(lines); i++ {
		s := lines[i].s
		blank := strings.TrimSpace(s) == ""
		switch p.state {
		case inQuestions:
			var taken bool
			if i, taken = p.question(i, s, blank); taken {
				continue
			}
		case inUnderstanding:
			if p.understandingLine(s, blank) {
				continue
			}
		}
		if blank {
			continue
		}
		if isACKLine(s) {
			break
		}
		if l, v, ok := parseLabel(s); ok {
			p.apply(l, v)
		}
	}
	if len(p.parts) > 0 {
		r.Understanding = strings.Join(p.parts, " ")
	}
	r.Note = cmp.Or(p.note, p.reason, p.inlineNote)
	return i
}

// The states of a reply's body as its lines are read.
const (
	normal          = iota
	inQuestions     // a list of questions
	inUnderstanding // "Understanding:" with its value on the next lines
)

// bodyParser reads the labelled lines of a reply's body into its Reply.
type bodyParser struct {
	lines                    []lineRef
	r                        *Reply
	state                    int
	listSeen, plainOK        bool
	note, reason, inlineNote string
	parts                    []string // of an Understanding given on the lines below its label
	understandingSet         bool
}

// apply takes a label and its value.
func (p *bodyParser) apply(l label, v string) {
	switch l {
	case labelUnderstanding:
		switch {
		case p.understandingSet:
		case v != "":
			p.r.Understanding, p.understandingSet = v, true
		default:
			p.state, p.understandingSet = inUnderstanding, true
		}
	case labelQuestions:
		p.state, p.listSeen, p.plainOK = inQuestions, false, v == ""
		if v != "" {
			p.r.Questions = append(p.r.Questions, v)
		}
	case labelNote:
		if p.note == "" {
			p.note = v
		}
	case labelReason:
		if p.reason == "" {
			p.reason = v
		}
	}
}

// question takes line i, s, in a list of questions: next is the line read
// last, and taken is false when the list ended there and s is read as any
// other line.
func (p *bodyParser) question(i int, s string, blank bool) (next int, taken bool) {
	if blank {
		if len(p.r.Questions) > 0 || p.listSeen {
			j := i + 1
			for j < len(p.lines) && strings.TrimSpace(p.lines[j].s) == "" {
				j++
			}
			if p.listSeen && j < len(p.lines) && isListItem(p.lines[j].s) {
				return j - 1, true
			}
			p.state = normal
		}
		return i, true
	}
	if isListItem(s) {
		if q := stripListMarker(s); q != "" {
			p.r.Questions = append(p.r.Questions, q)
		}
		p.listSeen = true
		return i, true
	}
	if p.plainOK && !p.listSeen && !isLabel(s) && !isACKLine(s) {
		p.r.Questions = append(p.r.Questions, strings.TrimSpace(s))
		return i, true
	}
	p.state = normal
	return i, false
}

// understandingLine takes s, a line of an Understanding given below its
// label; false when the Understanding ended there and s is read as any
// other line.
func (p *bodyParser) understandingLine(s string, blank bool) bool {
	if blank {
		if len(p.parts) > 0 {
			p.state = normal
		}
		return true
	}
	if !isLabel(s) && !isACKLine(s) {
		if v := stripListMarker(s); v != "" {
			p.parts = append(p.parts, v)
		}
		return true
	}
	p.state, p.understandingSet = normal, len(p.parts) > 0
	return false
}

// isACKLine reports whether s is an [ACK] line, good or broken.
func isACKLine(s string) bool {
	_, ok, _ := parseACKLine(s)
	return ok
}
