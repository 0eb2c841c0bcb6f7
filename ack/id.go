package ack

import (
	"fmt"
	"strings"
)

// MaxTaskIDLen is the longest task id.
const MaxTaskIDLen = 64

// isIDChar reports whether c may appear in a task id: A-Z a-z 0-9 . _ : -.
func isIDChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c == '.' || c == '_' || c == ':' || c == '-'
}

// cleanID strips the trailing '.' and ':' that prose puts after an id
// ("[ACK] T-3: RECEIVED", "task T-3.").
func cleanID(id string) string {
	return strings.TrimRight(id, ".:")
}

// ValidateTaskID reports why id cannot be a task id, or nil. A task id is 1 to
// 64 of the characters A-Z a-z 0-9 . _ : -. Two more rules make
// every id one an agent can acknowledge in text: it starts with a letter or a
// digit ("-" reads as a dash, "_T_" as emphasis, "-x" as a flag on a command
// line), and it does not end with '.' or ':' (prose cannot tell "T-3." from
// "T-3" followed by a full stop). Whoever creates task ids should refuse the
// ids this refuses: they could never be acknowledged.
func ValidateTaskID(id string) error {
	if id == "" {
		return fmt.Errorf("empty task id")
	}
	if len(id) > MaxTaskIDLen {
		return fmt.Errorf("task id %q is longer than %d characters", short(id), MaxTaskIDLen)
	}
	for i := 0; i < len(id); i++ {
		if !isIDChar(id[i]) {
			return fmt.Errorf("task id %q has the character %q (allowed: A-Z a-z 0-9 . _ : -)", short(id), rune(id[i]))
		}
	}
	if !isASCIIAlnum(id[0]) {
		return fmt.Errorf("task id %q starts with %q (want a letter or a digit)", id, id[:1])
	}
	if cleanID(id) != id {
		return fmt.Errorf("task id %q ends with %q", id, id[len(id)-1:])
	}
	return nil
}

// short shortens s for an error message.
func short(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	// Cut on a rune boundary.
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// ParseError reports a reply that is recognisably an acknowledgment form but
// broken: an [ACK] line without a task id or with an unknown STATUS, a JSON
// task-acknowledgment without task_id, … Its message says exactly what was
// wrong.
type ParseError struct {
	Form  string // "[ACK] line" or a JSON type such as "task-acknowledgment"
	Line  int    // 1-based line of the text where the form starts; 0 for ParseJSON
	Field string // the JSON field at fault ("task_id", "status"…), or ""
	Msg   string // what was wrong
	Input string // the [ACK] line at fault (shortened); "" for JSON
}

// Error implements error.
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString("ack: ")
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	b.WriteString(e.Form)
	b.WriteString(": ")
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Msg)
	if e.Input != "" {
		fmt.Fprintf(&b, " (in %q)", short(e.Input))
	}
	return b.String()
}

// formACKLine is the Form of errors about text ACK lines.
const formACKLine = "[ACK] line"
