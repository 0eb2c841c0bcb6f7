package ack

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds the small text helpers every parser of the package shares:
// lines, markdown decoration, list items, labels and dashes.

// lineRef is one line of a text and the byte offset where it starts.
type lineRef struct {
	start int
	s     string // without the line break (and without a trailing '\r')
}

// splitLines splits text at '\n'; a trailing '\r' is dropped from each line.
func splitLines(text string) []lineRef {
	lines := make([]lineRef, 0, strings.Count(text, "\n")+1)
	start := 0
	for start <= len(text) {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			lines = append(lines, lineRef{start, strings.TrimSuffix(text[start:], "\r")})
			break
		}
		lines = append(lines, lineRef{start, strings.TrimSuffix(text[start:start+end], "\r")})
		start += end + 1
	}
	return lines
}

// isDash reports whether r is a dash of any kind: - ‐ ‑ ‒ – — ― − ﹘ －.
func isDash(r rune) bool {
	switch r {
	case '-', '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\ufe58', '\uff0d':
		return true
	}
	return false
}

// isEmphasis reports whether c is a markdown emphasis or code character.
func isEmphasis(c byte) bool { return c == '*' || c == '_' || c == '~' || c == '`' }

// emphasisRun returns the length of the run of emphasis characters that
// starts s.
func emphasisRun(s string) int {
	n := 0
	for n < len(s) && isEmphasis(s[n]) {
		n++
	}
	return n
}

// bulletLen returns the length of the list marker that starts s ("- ", "* ",
// "+ ", "• ", "1. ", "12) "), marker and following blanks included, or 0.
func bulletLen(s string) int {
	n := 0
	switch {
	case s == "":
		return 0
	case s[0] == '-' || s[0] == '*' || s[0] == '+':
		n = 1
	case strings.HasPrefix(s, "•"), strings.HasPrefix(s, "‣"), strings.HasPrefix(s, "◦"):
		n = len("•")
	case '0' <= s[0] && s[0] <= '9':
		for n < len(s) && n < 4 && '0' <= s[n] && s[n] <= '9' {
			n++
		}
		if n >= len(s) || (s[n] != '.' && s[n] != ')') {
			return 0
		}
		n++
	default:
		return 0
	}
	if n < len(s) && s[n] != ' ' && s[n] != '\t' {
		return 0
	}
	for n < len(s) && (s[n] == ' ' || s[n] == '\t') {
		n++
	}
	return n
}

// headingLen returns the length of a markdown heading marker ("## ") that
// starts s, or 0.
func headingLen(s string) int {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(s) && s[n] != ' ' && s[n] != '\t') {
		return 0
	}
	return n
}

// stripDecoration removes what markdown puts before the words of a line:
// blanks, block quotes, headings, one or more list markers, emphasis. It
// returns the rest and the last emphasis run it removed ("**" for
// "**Understanding:** …"), so that a caller can remove the matching closer.
func stripDecoration(s string) (rest, emphasis string) {
	for {
		t := strings.TrimLeft(s, " \t")
		if t != "" && t[0] == '>' {
			t = t[1:]
		} else if n := headingLen(t); n > 0 {
			t = t[n:]
		} else if n := bulletLen(t); n > 0 {
			t = t[n:]
		} else if n := emphasisRun(t); n > 0 {
			emphasis = t[:n]
			t = t[n:]
		}
		if t == s {
			return t, emphasis
		}
		s = t
	}
}

// isListItem reports whether s is an item of a bulleted or numbered list.
func isListItem(s string) bool {
	t := strings.TrimLeft(s, " \t>")
	return bulletLen(strings.TrimLeft(t, " \t")) > 0
}

// stripListMarker removes one list marker (and the blanks and block quotes
// before it) from s and trims the rest.
func stripListMarker(s string) string {
	t := strings.TrimLeft(strings.TrimLeft(s, " \t>"), " \t")
	return strings.TrimSpace(t[bulletLen(t):])
}

// label is the kind of a "Label: value" line of an ACK.
type label int

const (
	labelNone label = iota
	labelUnderstanding
	labelQuestions
	labelNote
	labelReason
)

// labels maps the names a label may have, lowercased, to its kind.
var labels = map[string]label{
	"understanding":           labelUnderstanding,
	"my understanding":        labelUnderstanding,
	"questions":               labelQuestions,
	"question":                labelQuestions,
	"open questions":          labelQuestions,
	"clarifying questions":    labelQuestions,
	"clarification questions": labelQuestions,
	"note":                    labelNote,
	"notes":                   labelNote,
	"reason":                  labelReason,
	"reasons":                 labelReason,
	"rejection reason":        labelReason,
	"reason for rejection":    labelReason,
}

// parseLabel reads a line of the form "Understanding: value", in any case and
// with markdown around the label ("**Understanding:** x", "**Understanding**:
// x", "- Note: x", "_Questions_:").
func parseLabel(s string) (label, string, bool) {
	t, emph := stripDecoration(s)
	i := 0
	for i < len(t) && i <= 32 && (isASCIILetter(t[i]) || t[i] == ' ' || t[i] == '\t') {
		i++
	}
	l, ok := labels[strings.Join(strings.Fields(strings.ToLower(t[:i])), " ")]
	if !ok {
		return labelNone, "", false
	}
	rest := t[i:]
	closed := false
	if n := emphasisRun(rest); n > 0 {
		rest, closed = rest[n:], true
	}
	rest = strings.TrimLeft(rest, " \t")
	switch {
	case strings.HasPrefix(rest, ":"):
		rest = rest[1:]
	case dashLabel(rest):
		// "Understanding - value", as models write it too.
		_, n := utf8.DecodeRuneInString(rest)
		rest = rest[n:]
	default:
		return labelNone, "", false
	}
	if emph != "" && !closed {
		if n := emphasisRun(rest); n > 0 && (n == len(rest) || rest[n] == ' ' || rest[n] == '\t') {
			rest, closed = rest[n:], true
		}
	}
	value := strings.TrimSpace(rest)
	if emph != "" && !closed {
		value = strings.TrimSpace(strings.TrimSuffix(value, emph))
	}
	return l, value, true
}

// dashLabel reports whether rest (what follows a label's name) is a dash
// and a blank, then a value: "- value", "– value", "— value".
func dashLabel(rest string) bool {
	r, n := utf8.DecodeRuneInString(rest)
	if !isDash(r) || n >= len(rest) || (rest[n] != ' ' && rest[n] != '\t') {
		return false
	}
	return strings.TrimSpace(rest[n:]) != ""
}

// isLabel reports whether s is a label line.
func isLabel(s string) bool {
	_, _, ok := parseLabel(s)
	return ok
}

func isASCIILetter(c byte) bool { return 'A' <= c&^0x20 && c&^0x20 <= 'Z' }

func isASCIIAlnum(c byte) bool { return isASCIILetter(c) || '0' <= c && c <= '9' }

// isWordByte reports whether c continues a word: an ASCII letter or digit,
// '_' or any byte of a non-ASCII character.
func isWordByte(c byte) bool { return isASCIIAlnum(c) || c == '_' || c >= utf8.RuneSelf }

// trimLeftSet trims from s the leading runes that are blanks, dashes or in set.
func trimLeftSet(s, set string) string {
	return strings.TrimLeftFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || isDash(r) || strings.ContainsRune(set, r)
	})
}

// flatten turns s into one line: runs of white space (line breaks included)
// become one space, and the ends are trimmed.
func flatten(s string) string { return strings.Join(strings.Fields(s), " ") }
