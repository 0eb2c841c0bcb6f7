package ack

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// formKinds maps each JSON form an agent may send to the Kind of its reply.
var formKinds = map[string]Kind{
	TypeTaskAcknowledgment:      KindAck,
	TypeTaskAcknowledgmentError: KindAckError,
	TypeCheckpointAck:           KindCheckpoint,
	TypeTaskComplete:            KindComplete,
	TypeAcknowledgment:          KindOperationReply,
}

// normType normalises a JSON "type": lower case, '_' read as '-'.
func normType(t string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(t)), "_", "-")
}

// ParseJSON interprets one JSON reply of the protocol's forms. typ is one of
// "task-acknowledgment", "task-acknowledgment-error", "checkpoint-ack",
// "task-complete" or "acknowledgment" (the operation reply {message,
// ready, notes}); "" means read it from data's "type". When both are given
// they must agree.
//
// ParseJSON is strict: bad JSON, an unknown type, a missing or malformed
// task_id, an unknown status or error_code, a field of the wrong JSON type
// are errors (a *ParseError naming the field). Type names and enumerated
// values are read in any case, with '_' or '-'. Unknown fields are ignored.
// Null is the same as a missing field. Reply.Text is data as a string.
//
// The fields, per form (required ones marked *):
//
//	task-acknowledgment        task_id*, status* (received | needs-clarification | confirmed |
//	                           rejected | queued), understanding, questions, note|notes|reason,
//	                           estimated_checkpoints
//	task-acknowledgment-error  task_id*, error_code*, error_message, retry_after_minutes (≥ 0),
//	                           alternative_agents
//	checkpoint-ack             task_id*, checkpoint* (integer ≥ 0), status, summary, next_checkpoint
//	task-complete              task_id, status (success | failure | blocked | impossible, with
//	                           their synonyms: done, complete, failed…; absent: a claim of
//	                           completion), summary, reason|blocked_by, files_modified, error,
//	                           verification {command, exit_code, output_summary}
//	acknowledgment             message and/or ready* (at least one), notes, task_id (optional)
//
// A task-complete without task_id is for the task its reply answers (the
// caller knows which); every other form but acknowledgment must name it.
//
// For acknowledgment, message is read by ParseOperationReply; when it says
// nothing the table knows (AnswerInfo), ready decides (true: ok, false:
// wait). A message and a ready that contradict each other ("ok" with ready
// false, "wait" with ready true) are an error.
func ParseJSON(typ string, data []byte) (Reply, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		msg := "want a JSON object"
		if err != nil {
			msg += ": " + err.Error()
		}
		return Reply{Text: string(data)}, &ParseError{Form: cmp.Or(typ, "JSON reply"), Msg: msg}
	}
	return parseObject(typ, data, m)
}

// parseObject is ParseJSON after data was decoded into m.
func parseObject(typ string, data []byte, m map[string]json.RawMessage) (Reply, error) {
	r := Reply{Text: string(data)}
	form := cmp.Or(typ, "JSON reply")
	o := object{form: form, m: m}
	dataType, _, err := o.str("type", false)
	if err != nil {
		return r, err
	}
	t := normType(typ)
	switch {
	case t == "" && dataType == "":
		return r, &ParseError{Form: form, Field: "type", Msg: "missing (want one of task-acknowledgment, task-acknowledgment-error, checkpoint-ack, task-complete, acknowledgment)"}
	case t == "":
		t = normType(dataType)
	case dataType != "" && normType(dataType) != t:
		return r, &ParseError{Form: typ, Field: "type", Msg: fmt.Sprintf("%q contradicts the type %q the reply was sent as", dataType, typ)}
	}
	kind, ok := formKinds[t]
	if !ok {
		return r, &ParseError{Form: form, Field: "type", Msg: fmt.Sprintf("unknown type %q (want one of task-acknowledgment, task-acknowledgment-error, checkpoint-ack, task-complete, acknowledgment)", cmp.Or(dataType, typ))}
	}
	o.form = t
	r.Kind = kind
	if r.TaskID, err = o.taskID(kind != KindOperationReply && kind != KindComplete); err != nil {
		return r, err
	}
	switch kind {
	case KindAck:
		err = o.ack(&r)
	case KindAckError:
		err = o.ackError(&r)
	case KindCheckpoint:
		err = o.checkpoint(&r)
	case KindComplete:
		err = o.complete(&r)
	case KindOperationReply:
		err = o.operationReply(&r)
	}
	return r, err
}

// ack reads the fields of a task-acknowledgment.
func (o object) ack(r *Reply) error {
	s, _, err := o.str("status", true)
	if err != nil {
		return err
	}
	if r.Status, err = ParseStatus(s); err != nil {
		return o.errf("status", "unknown status %q (want received, needs-clarification, confirmed, rejected or queued)", s)
	}
	if r.Understanding, _, err = o.str("understanding", false); err != nil {
		return err
	}
	if r.Questions, err = o.strs("questions"); err != nil {
		return err
	}
	for _, k := range []string{"note", "notes", "reason"} {
		if r.Note != "" {
			break
		}
		if r.Note, _, err = o.str(k, false); err != nil {
			return err
		}
	}
	r.EstimatedCheckpoints, err = o.strs("estimated_checkpoints")
	return err
}

// maxRetryMinutes keeps retry_after_minutes inside a time.Duration.
const maxRetryMinutes = float64(math.MaxInt64/int64(time.Minute)) - 1

// ackError reads the fields of a task-acknowledgment-error.
func (o object) ackError(r *Reply) error {
	s, _, err := o.str("error_code", true)
	if err != nil {
		return err
	}
	if r.ErrorCode, err = ParseErrorCode(s); err != nil {
		return o.errf("error_code", "%v", err)
	}
	if r.ErrorMessage, _, err = o.str("error_message", false); err != nil {
		return err
	}
	minutes, ok, err := o.number("retry_after_minutes")
	if err != nil {
		return err
	}
	if ok {
		if minutes < 0 || minutes > maxRetryMinutes {
			return o.errf("retry_after_minutes", "%v is out of range (want 0 to %.0f)", minutes, maxRetryMinutes)
		}
		r.RetryAfter = time.Duration(math.Round(minutes*60000)) * time.Millisecond
	}
	r.AlternativeAgents, err = o.strs("alternative_agents")
	return err
}

// checkpoint reads the fields of a checkpoint-ack.
func (o object) checkpoint(r *Reply) error {
	n, _, err := o.integer("checkpoint", true)
	if err != nil {
		return err
	}
	if n < 0 {
		return o.errf("checkpoint", "%d is negative", n)
	}
	r.Checkpoint = n
	if r.CheckpointStatus, _, err = o.str("status", false); err != nil {
		return err
	}
	if r.Summary, _, err = o.str("summary", false); err != nil {
		return err
	}
	if n, _, err = o.integer("next_checkpoint", false); err != nil {
		return err
	}
	if n < 0 {
		return o.errf("next_checkpoint", "%d is negative", n)
	}
	r.NextCheckpoint = n
	return nil
}

// complete reads the fields of a task-complete.
func (o object) complete(r *Reply) error {
	s, _, err := o.str("status", false)
	if err != nil {
		return err
	}
	if strings.TrimSpace(s) != "" {
		st, ok := ParseCompleteStatus(s)
		if !ok {
			return o.errf("status", "unknown status %q (want success, failure, blocked or impossible, or no status: a claim of completion)", s)
		}
		r.Complete = st
	}
	if r.Summary, _, err = o.str("summary", false); err != nil {
		return err
	}
	for _, k := range []string{"reason", "blocked_by"} {
		if r.Reason != "" {
			break
		}
		if r.Reason, _, err = o.str(k, false); err != nil {
			return err
		}
	}
	if r.FilesModified, err = o.strs("files_modified"); err != nil {
		return err
	}
	if r.Error, _, err = o.str("error", false); err != nil {
		return err
	}
	raw, ok := o.get("verification")
	if !ok {
		return nil
	}
	var vm map[string]json.RawMessage
	if err := json.Unmarshal(raw, &vm); err != nil || vm == nil {
		return o.errf("verification", "want an object, got JSON %s", jsonKind(raw))
	}
	v := object{form: o.form, prefix: "verification.", m: vm}
	r.Verification = &Verification{}
	if r.Verification.Command, _, err = v.str("command", false); err != nil {
		return err
	}
	if r.Verification.ExitCode, _, err = v.integer("exit_code", false); err != nil {
		return err
	}
	r.Verification.OutputSummary, _, err = v.str("output_summary", false)
	return err
}

// operationReply reads the fields of an operation's JSON acknowledgment.
func (o object) operationReply(r *Reply) error {
	msg, hasMsg, err := o.str("message", false)
	if err != nil {
		return err
	}
	ready, hasReady, err := o.boolean("ready")
	if err != nil {
		return err
	}
	if r.Note, _, err = o.str("notes", false); err != nil {
		return err
	}
	if !hasMsg && !hasReady {
		return o.errf("message", "missing (an acknowledgment needs a message, ready, or both)")
	}
	byReady := AnswerWait
	if ready {
		byReady = AnswerOK
	}
	r.Answer = AnswerInfo
	if hasMsg {
		r.Answer = ParseOperationReply(msg)
	}
	switch {
	case !hasReady:
	case r.Answer == AnswerInfo:
		r.Answer = byReady
	case (r.Answer == AnswerOK || r.Answer == AnswerWait) && r.Answer != byReady:
		answer := r.Answer
		r.Answer = ""
		return o.errf("ready", "%v contradicts the message %q (read as %q)", ready, short(msg), answer)
	}
	return nil
}

// object is a decoded JSON object of one form, read field by field so that
// every error names its field.
type object struct {
	form   string
	prefix string // "verification." for a nested object
	m      map[string]json.RawMessage
}

// errf returns a *ParseError about field.
func (o object) errf(field, format string, args ...any) error {
	return &ParseError{Form: o.form, Field: o.prefix + field, Msg: fmt.Sprintf(format, args...)}
}

// get returns the field's raw JSON; null counts as missing.
func (o object) get(key string) (json.RawMessage, bool) {
	raw, ok := o.m[key]
	if !ok || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// jsonKind names the JSON type of raw for an error.
func jsonKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// str reads a string field.
func (o object) str(key string, required bool) (string, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		if required {
			return "", false, o.errf(key, "missing")
		}
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, o.errf(key, "want a string, got JSON %s", jsonKind(raw))
	}
	if required && strings.TrimSpace(s) == "" {
		return "", false, o.errf(key, "empty")
	}
	return s, true, nil
}

// strs reads an array of strings.
func (o object) strs(key string) ([]string, error) {
	raw, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, o.errf(key, "want an array of strings, got JSON %s", jsonKind(raw))
	}
	out := make([]string, 0, len(elems))
	for i, e := range elems {
		var s string
		if err := json.Unmarshal(e, &s); err != nil {
			return nil, o.errf(key, "element %d: want a string, got JSON %s", i, jsonKind(e))
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// number reads a number field.
func (o object) number(key string) (float64, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		return 0, false, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, false, o.errf(key, "want a number, got JSON %s", jsonKind(raw))
	}
	return f, true, nil
}

// integer reads an integer field (2.0 is 2).
func (o object) integer(key string, required bool) (int, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		if required {
			return 0, false, o.errf(key, "missing")
		}
		return 0, false, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil || jsonKind(raw) != "number" {
		return 0, false, o.errf(key, "want an integer, got JSON %s", jsonKind(raw))
	}
	if i, err := strconv.ParseInt(string(n), 10, 32); err == nil {
		return int(i), true, nil
	}
	if f, err := strconv.ParseFloat(string(n), 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= math.MaxInt32 {
		return int(f), true, nil
	}
	return 0, false, o.errf(key, "want an integer, got %s", short(string(n)))
}

// boolean reads a true or false field.
func (o object) boolean(key string) (bool, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		return false, false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, false, o.errf(key, "want true or false, got JSON %s", jsonKind(raw))
	}
	return b, true, nil
}

// taskID reads task_id: trimmed, cleaned like an [ACK] line's id, and valid.
func (o object) taskID(required bool) (string, error) {
	s, ok, err := o.str("task_id", required)
	if err != nil || !ok {
		return "", err
	}
	id := cleanID(strings.TrimSpace(s))
	if err := ValidateTaskID(id); err != nil {
		return "", o.errf("task_id", "%v", err)
	}
	return id, nil
}

// JSON objects embedded in text.

// maxJSONScan bounds the bytes scanJSON examines in one text, whatever the
// text: prose full of unbalanced braces would otherwise cost quadratic time.
const maxJSONScan = 16 << 20

// formLiteral finds a "type" of a known form, to recognise a broken object.
var formLiteral = regexp.MustCompile(`"type"\s*:\s*"((?i:task[-_]acknowledgment[-_]error|task[-_]acknowledgment|checkpoint[-_]ack|task[-_]complete|acknowledgment))"`)

// scanJSON finds the JSON objects of known forms in text: a balanced
// {"…": …} whose "type" is a known form is parsed by ParseJSON; any other
// object is searched for nested ones. An object that does not parse (bad
// JSON, or no closing brace) yet holds a known "type" is reported broken.
func scanJSON(text string) []item {
	if !strings.Contains(text, `"type"`) {
		return nil
	}
	literals := formLiteral.FindAllStringSubmatchIndex(text, -1)
	if len(literals) == 0 {
		return nil
	}
	var items []item
	var spans [][2]int // of parsed objects
	var brokens []broken
	budget := maxJSONScan
	known := map[int]span{} // ends of the brackets seen so far
	for i := 0; i < len(text) && budget > 0; {
		j := strings.IndexByte(text[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		i = start + 1
		if !opensObject(text[start+1:]) {
			continue
		}
		// The first known "type" after the brace: none, and no object can hold one.
		k, _ := slices.BinarySearchFunc(literals, start, func(l []int, p int) int { return cmp.Compare(l[0], p) })
		if k == len(literals) {
			break
		}
		sp, ok := known[start]
		if !ok {
			sp = matchObject(text, start, known)
			budget -= sp.end - start
		}
		end, closed := sp.end, sp.closed
		cand := text[start:end]
		if literals[k][1] > end {
			continue // no known "type" inside
		}
		msg := "invalid JSON: no closing brace"
		if closed {
			var m map[string]json.RawMessage
			err := json.Unmarshal([]byte(cand), &m)
			if err == nil {
				var t string
				if json.Unmarshal(m["type"], &t) == nil {
					if _, isForm := formKinds[normType(t)]; isForm {
						r, err := parseObject("", []byte(cand), m)
						if err != nil {
							r = Reply{}
						}
						items = append(items, item{pos: start, reply: r, err: err})
						spans = append(spans, [2]int{start, end})
						i = end
					}
				}
				continue // valid JSON: look inside for nested forms
			}
			msg = "invalid JSON: " + err.Error()
		}
		t := normType(text[literals[k][2]:literals[k][3]])
		brokens = append(brokens, broken{pos: start, lit: literals[k][0], err: &ParseError{Form: t, Msg: msg}})
	}
	return append(items, unparsed(brokens, spans)...)
}

// broken is a candidate object that holds a form's "type" but does not
// parse: at pos, its "type" at lit.
type broken struct {
	pos, lit int
	err      error
}

// unparsed are the errors of the broken candidates.
// A broken candidate is the innermost object around its "type" (the last
// one found with it); it does not count when that "type" belongs to an
// object that parsed (spans: the parsed objects, sorted, not overlapping).
func unparsed(brokens []broken, spans [][2]int) []item {
	var items []item
	innermost := make(map[int]int, len(brokens)) // literal → index in brokens
	for n, b := range brokens {
		innermost[b.lit] = n
	}
	for n, b := range brokens {
		if innermost[b.lit] != n {
			continue
		}
		k, _ := slices.BinarySearchFunc(spans, b.lit, func(s [2]int, lit int) int { return cmp.Compare(s[0], lit+1) })
		if k > 0 && b.lit < spans[k-1][1] {
			continue
		}
		items = append(items, item{pos: b.pos, err: b.err})
	}
	return items
}

// opensObject reports whether the text after a '{' starts like a JSON
// object: blanks, then '"' or '}'. Prose braces ("{task_id}") do not.
func opensObject(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	return s != "" && (s[0] == '"' || s[0] == '}')
}

// span is where a bracketed JSON value ends; closed is false when it does
// not close (end is then where the search stopped).
type span struct {
	end    int
	closed bool
}

// matchObject returns the end of the JSON value that starts at text[start]
// ('{'), counting brackets outside strings. A string cannot hold a line
// break, so an unclosed string ends the search at the line's end. Along the
// way it records in known the end of every bracket it meets outside strings:
// a search from there would give the same answer, so scanJSON need not do
// it again.
func matchObject(text string, start int, known map[int]span) span {
	var open []int // positions of the brackets not yet closed
	inString, escaped := false, false
	stop := func(end int) span {
		for _, p := range open {
			known[p] = span{end, false}
		}
		return span{end, false}
	}
	for k := start; k < len(text); k++ {
		c := text[k]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case c == '\n':
				return stop(k)
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			open = append(open, k)
		case '}', ']':
			p := open[len(open)-1]
			open = open[:len(open)-1]
			known[p] = span{k + 1, true}
			if len(open) == 0 {
				return known[p]
			}
		}
	}
	return stop(len(text))
}
