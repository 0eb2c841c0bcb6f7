package config

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// A tmux agent's ready pattern is matched against the pane's last line
// with the blanks at its end trimmed (package tmux reads the pane so). A
// pattern whose every match needs a blank just before the end of the line
// ('^> $', '^> +$') can therefore never match: the agent would never be
// seen ready, and no prompt would ever be typed into its pane.

// readyWarning is the warning of a tmux agent's ready pattern that can
// never match a line with no blank at its end, "" when it can (or when it
// does not parse: that is an error of its own).
func readyWarning(agent, expr string) string {
	if !needsTrailingBlank(expr) {
		return ""
	}
	msg := fmt.Sprintf("%s of agent %q can never match: wilco trims the blanks at the end of each line of the pane before it matches, "+
		"and this pattern needs a blank just before the end of the line, so the agent would never be seen ready", yamlQuote(expr), agent)
	if fixes := readyFixes(expr); len(fixes) > 0 {
		quoted := make([]string, len(fixes))
		for i, f := range fixes {
			quoted[i] = yamlQuote(f)
		}
		return msg + "; use " + strings.Join(quoted, " or ")
	}
	return msg + `; let the blank before the end be optional (\s* for it) or leave it out`
}

// needsTrailingBlank reports whether expr can match some line but no line
// that does not end with a blank: every match of it needs a blank (a space,
// a tab, \s, a class of blanks only) just before an end of line or of text.
func needsTrailingBlank(expr string) bool {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return false
	}
	re = re.Simplify()
	start := lastSet(1 << lastNone)
	untrimmed, trimmed := reacher{memo: map[reachKey]lastSet{}}, reacher{trimmed: true, memo: map[reachKey]lastSet{}}
	return untrimmed.reach(re, start) != 0 && trimmed.reach(re, start) == 0
}

// last is what the match consumed last, as far as a line's end cares.
type last uint8

const (
	lastNone  last = iota // nothing yet
	lastBlank             // a blank
	lastOther             // a character that is not a blank
	lastEnd               // the end of the line was matched: nothing may follow
)

// lastSet is a set of lasts: the ways a partial match may stand.
type lastSet uint8

func (s lastSet) has(l last) bool { return s&(1<<l) != 0 }

// consume is s after one more character, which may be a blank (blank) or
// not (other).
func (s lastSet) consume(blank, other bool) lastSet {
	if s&^(1<<lastEnd) == 0 {
		return 0 // nothing may follow the end
	}
	var out lastSet
	if blank {
		out |= 1 << lastBlank
	}
	if other {
		out |= 1 << lastOther
	}
	return out
}

// reacher computes the sets of ways a match may stand. With trimmed, an
// end of line or text cannot come just after a blank. Its results are kept
// (memo): nested repetitions would otherwise take exponential time.
type reacher struct {
	trimmed bool
	memo    map[reachKey]lastSet
}

type reachKey struct {
	re *syntax.Regexp
	in lastSet
}

// reach is the set of ways a match may stand after re, from in.
func (r reacher) reach(re *syntax.Regexp, in lastSet) lastSet {
	if in == 0 {
		return 0
	}
	k := reachKey{re, in}
	if out, ok := r.memo[k]; ok {
		return out
	}
	out := r.step(re, in)
	r.memo[k] = out
	return out
}

func (r reacher) step(re *syntax.Regexp, in lastSet) lastSet {
	switch re.Op {
	case syntax.OpNoMatch:
		return 0
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return in
	case syntax.OpEndLine, syntax.OpEndText:
		out := in & (1<<lastNone | 1<<lastOther | 1<<lastEnd)
		if !r.trimmed {
			out |= in & (1 << lastBlank)
		}
		if out != 0 {
			return 1 << lastEnd
		}
		return 0
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			in = in.consume(isBlank(c), !isBlank(c))
		}
		return in
	case syntax.OpCharClass:
		blank, other := classKinds(re.Rune)
		return in.consume(blank, other)
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return in.consume(true, true)
	case syntax.OpCapture:
		return r.reach(re.Sub[0], in)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			in = r.reach(sub, in)
		}
		return in
	case syntax.OpAlternate:
		var out lastSet
		for _, sub := range re.Sub {
			out |= r.reach(sub, in)
		}
		return out
	case syntax.OpQuest:
		return in | r.reach(re.Sub[0], in)
	case syntax.OpStar:
		return r.star(re.Sub[0], in)
	case syntax.OpPlus:
		return r.star(re.Sub[0], r.reach(re.Sub[0], in))
	}
	// An op Simplify leaves out (a counted repetition) or unknown here:
	// anything may follow, so that no pattern is said never to match
	// wrongly.
	return 1<<lastNone | 1<<lastBlank | 1<<lastOther | 1<<lastEnd
}

// star is the union of the sets reached from in by any number of re.
func (r reacher) star(re *syntax.Regexp, in lastSet) lastSet {
	out := in
	for {
		next := out | r.reach(re, out)
		if next == out {
			return out
		}
		out = next
	}
}

// isBlank reports whether r is a blank a line's end may be trimmed of.
func isBlank(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// classKinds says whether a character class (ranges lo, hi, …) holds
// blanks, and whether it holds anything else.
func classKinds(ranges []rune) (blank, other bool) {
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		for r := lo; r <= hi && r <= ' '; r++ {
			if isBlank(r) {
				blank = true
			} else {
				other = true
			}
		}
		if hi > ' ' {
			other = true
		}
	}
	return blank, other
}

// trailingBlank is a blank at the end of a pattern's text, before its end
// anchor ($ or \z), with its repetition: ' ', '\s', '\t', '\x20', '[ ]',
// ' +', '\s{2}'…
var trailingBlank = regexp.MustCompile(`(?:\\[ st]|\\x20|\\x\{20\}|\[(?:\\[st]| |\\x20)+\]| )(?:[*+?]|\{\d+(?:,\d*)?\})?\??$`)

// readyFixes suggests patterns like expr that can match: the blanks before
// its end made optional, and left out. None when expr does not end with
// blanks then $ or \z, as written.
func readyFixes(expr string) []string {
	var anchor string
	switch {
	case strings.HasSuffix(expr, `\z`) && !strings.HasSuffix(expr, `\\z`):
		anchor = `\z`
	case strings.HasSuffix(expr, "$") && !strings.HasSuffix(expr, `\$`):
		anchor = "$"
	default:
		return nil
	}
	head := strings.TrimSuffix(expr, anchor)
	for {
		loc := trailingBlank.FindStringIndex(head)
		if loc == nil || oddBackslashes(head[:loc[0]]) {
			break // none, or its first character is escaped: not a blank
		}
		head = head[:loc[0]]
	}
	var out []string
	for _, fix := range []string{head + `\s*` + anchor, head + anchor} {
		if fix == expr || !utf8.ValidString(fix) {
			continue
		}
		if _, err := syntax.Parse(fix, syntax.Perl); err != nil || needsTrailingBlank(fix) {
			continue
		}
		out = append(out, fix)
	}
	return out
}

// oddBackslashes reports whether s ends with an odd number of
// backslashes: the character after it is escaped.
func oddBackslashes(s string) bool {
	n := len(s) - len(strings.TrimRight(s, `\`))
	return n%2 == 1
}

// yamlQuote writes s as a YAML single-quoted scalar, as wilco.yaml's
// patterns are written.
func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
