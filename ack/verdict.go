package ack

import (
	"strings"
)

// ReviewVerdict is a reviewer's answer to a review request.
type ReviewVerdict string

// Verdicts.
const (
	ReviewApproved ReviewVerdict = "APPROVED"
	ReviewRejected ReviewVerdict = "REJECTED"
)

// ParseVerdict reads a reviewer's answer: APPROVED or REJECTED, then the
// reasons. It reads the verdict as reviewers write it — on the first line
// or on a line of its own, in Markdown emphasis or a heading, after
// "ReviewVerdict:", followed by ":" or "-" and reasons on the same line or the
// next ones; "NOT APPROVED" and "CHANGES REQUESTED" are rejections. A
// verdict word inside a sentence ("once approved, …") is not a verdict.
// ok is false when the answer holds none.
func ParseVerdict(text string) (v ReviewVerdict, reasons string, ok bool) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i, raw := range lines {
		l := verdictLine(raw)
		if l == "" {
			continue
		}
		word, rest, found := verdictWord(l)
		if !found {
			continue
		}
		var why []string
		if r := strings.TrimSpace(strings.TrimLeft(rest, ":-–—.,; ")); r != "" {
			why = append(why, r)
		}
		for _, more := range lines[i+1:] {
			if t := strings.TrimSpace(more); t != "" || len(why) > 0 {
				why = append(why, strings.TrimRight(more, " \t"))
			}
		}
		return word, strings.TrimSpace(strings.Join(why, "\n")), true
	}
	return "", "", false
}

// verdictLine is a line without its Markdown: emphasis, a heading's or a
// quote's marks, a bullet, code ticks; and without a "ReviewVerdict:" or
// "Decision:" label.
func verdictLine(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimLeft(s, "#>*-+•` \t")
	s = strings.NewReplacer("**", "", "__", "", "`", "").Replace(s)
	s = strings.TrimSpace(strings.Trim(s, "*_"))
	low := strings.ToLower(s)
	for _, label := range []string{"verdict", "decision", "review", "result", "status"} {
		if strings.HasPrefix(low, label) {
			rest := strings.TrimSpace(s[len(label):])
			if strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "=") {
				s = strings.TrimSpace(strings.TrimLeft(rest, ":-= "))
				s = strings.TrimSpace(strings.Trim(s, "*_"))
			}
			break
		}
	}
	return s
}

// verdictWord reads the verdict a cleaned line starts with, and what
// follows it.
func verdictWord(l string) (ReviewVerdict, string, bool) {
	up := strings.ToUpper(l)
	for _, f := range []struct {
		prefix string
		v      ReviewVerdict
	}{
		{"NOT APPROVED", ReviewRejected},
		{"CHANGES REQUESTED", ReviewRejected},
		{"REQUEST CHANGES", ReviewRejected},
		{"APPROVED", ReviewApproved},
		{"APPROVE", ReviewApproved},
		{"LGTM", ReviewApproved},
		{"REJECTED", ReviewRejected},
		{"REJECT", ReviewRejected},
	} {
		if !strings.HasPrefix(up, f.prefix) {
			continue
		}
		rest := l[len(f.prefix):]
		if rest != "" {
			c := rest[0]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
				continue // a longer word ("Approves…", "Rejection")
			}
		}
		// A verdict is the line's first word, written as one: the whole
		// word in capitals, or alone on its line ("ReviewApproved.").
		word := l[:len(f.prefix)]
		alone := strings.TrimSpace(strings.Trim(rest, ".!:-–— ")) == ""
		if word != strings.ToUpper(word) && !alone {
			continue
		}
		return f.v, rest, true
	}
	return "", "", false
}
