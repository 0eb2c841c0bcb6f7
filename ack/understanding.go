package ack

import (
	"slices"
	"strings"
	"unicode"
)

// Task is what the understanding check compares an ACK with.
type Task struct {
	ID                 string
	Description        string
	AcceptanceCriteria []string
}

// Verdict is the result of an understanding check.
type Verdict struct {
	OK       bool     // the ACK is for this task and its Understanding covers it
	WrongID  bool     // the ACK names another task (or none): resend naming the id
	Missing  []string // acceptance items not covered, verbatim (the description when there are none)
	Coverage float64  // 0 to 1: the mean (weighted) coverage of the items, or the description's when there are none
}

// Checker checks an ACK's Understanding against its task. It is
// replaceable: wilco calls it with SaidSoFar's reply, whose
// Understanding is everything the agent said it understood of the task so
// far.
type Checker interface {
	Check(t Task, r Reply) Verdict
}

// SaidSoFar returns r with its Understanding replaced by everything the
// agent has said it understood of the task: the earlier understandings,
// oldest first (the one it gave with its questions, the ones a correction
// answered), then r's — one per line, blank and repeated ones left out.
// After questions and answers, an agent confirms only the clarified points
// ("JWT with 24h expiry + refresh tokens"); judged with what it said before,
// its understanding covers the task, as it should.
func SaidSoFar(earlier []string, r Reply) Reply {
	var said []string
	seen := map[string]bool{}
	for _, u := range append(slices.Clip(earlier), r.Understanding) {
		u = flatten(u)
		if u == "" || seen[strings.ToLower(u)] {
			continue
		}
		seen[strings.ToLower(u)] = true
		said = append(said, u)
	}
	r.Understanding = strings.Join(said, "\n")
	return r
}

// DefaultMinItemCoverage is the share of an acceptance item's key terms the
// Understanding must contain for the item to count as covered, when
// TermCoverage.MinItemCoverage is zero: half. A one-line summary paraphrases;
// it cannot repeat every word, but it must name what matters.
const DefaultMinItemCoverage = 0.5

// TermCoverage is the default Checker, a deterministic heuristic: an
// acceptance item is covered when at least MinItemCoverage of its key terms
// appear in the ACK's Understanding. Key terms are the lowercased words of
// the item minus stop words, lightly stemmed (KeyTerms), so "--sort flag" is
// covered by "all CLI flags (--sort, --reverse)". A term that several items
// share weighs less (1/n for n items), so that "flags" alone does not cover
// both "--sort flag" and "--human flag". A task without acceptance
// criteria is checked on its description with half the threshold; when that
// fails, Missing holds the description. An item without key terms is
// covered.
//
// The heuristic reads words, not meaning: "will not add --sort" covers
// "--sort flag". It catches the forgotten item, not the lie.
type TermCoverage struct {
	MinItemCoverage float64 // 0 means DefaultMinItemCoverage; values above 1 mean 1
}

// Check implements Checker. A reply that names another task (or none) is
// WrongID and never OK; a reply that is not an ACK (Kind KindAck) is never OK
// either. OK says that the understanding is right, not that work may begin:
// that is the Status's business.
func (c TermCoverage) Check(t Task, r Reply) Verdict {
	threshold := c.MinItemCoverage
	if threshold <= 0 {
		threshold = DefaultMinItemCoverage
	}
	if threshold > 1 {
		threshold = 1
	}
	const eps = 1e-9
	v := Verdict{WrongID: r.For(t.ID) != nil}
	have := map[string]bool{}
	for _, term := range KeyTerms(r.Understanding) {
		have[term] = true
	}
	var items []string
	for _, a := range t.AcceptanceCriteria {
		if strings.TrimSpace(a) != "" {
			items = append(items, a)
		}
	}
	if len(items) == 0 {
		v.Coverage = coverage(KeyTerms(t.Description), nil, have)
		if v.Coverage+eps < threshold/2 {
			v.Missing = []string{t.Description}
		}
	} else {
		terms := make([][]string, len(items))
		shared := map[string]int{} // how many items have each term
		for i, a := range items {
			terms[i] = KeyTerms(a)
			for _, term := range terms[i] {
				shared[term]++
			}
		}
		sum := 0.0
		for i, a := range items {
			cov := coverage(terms[i], shared, have)
			sum += cov
			if cov+eps < threshold {
				v.Missing = append(v.Missing, a)
			}
		}
		v.Coverage = sum / float64(len(items))
	}
	v.OK = !v.WrongID && r.Kind == KindAck && len(v.Missing) == 0
	return v
}

// coverage is the weighted share of terms found in have; a term shared by n
// items weighs 1/n. No terms is full coverage.
func coverage(terms []string, shared map[string]int, have map[string]bool) float64 {
	if len(terms) == 0 {
		return 1
	}
	found, total := 0.0, 0.0
	for _, term := range terms {
		w := 1.0
		if n := shared[term]; n > 1 {
			w = 1 / float64(n)
		}
		total += w
		if have[term] {
			found += w
		}
	}
	return found / total
}

// KeyTerms returns the key terms of s, deduplicated, in order: its words
// (runs of letters and digits) lowercased, without stop words and one-letter
// words, stemmed by stripping a plural or -ing/-ed ending and a final e or
// y ("flags" → "flag", "listing" → "list", "expires", "expired", "expiring",
// "expiry" → "expir"). It is what TermCoverage compares.
func KeyTerms(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(w)) < 2 || stopWords[w] {
			continue
		}
		w = stem(w)
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// stem strips one English ending from w, crudely but the same way on both
// sides of the comparison.
func stem(w string) string {
	n := len(w)
	switch {
	case n >= 5 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y"
	case n >= 5 && strings.HasSuffix(w, "ied"):
		w = w[:n-3] + "y"
	case n >= 6 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:n-3])
	case n >= 5 && strings.HasSuffix(w, "ed"):
		w = undouble(w[:n-2])
	case n >= 5 && strings.HasSuffix(w, "es") && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") ||
		strings.HasSuffix(w, "zes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		w = w[:n-2]
	case n >= 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:n-1]
	}
	switch {
	case len(w) >= 4 && strings.HasSuffix(w, "e"):
		w = w[:len(w)-1]
	case len(w) >= 5 && strings.HasSuffix(w, "y"):
		w = w[:len(w)-1] // "expiry" is "expire", "query" is "queries"
	}
	return w
}

// undouble drops a doubled final consonant left by -ing or -ed ("running" →
// "run"), except l, s, z and f ("install", "pass").
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && strings.IndexByte("bdgkmnprt", w[n-1]) >= 0 {
		return w[:n-1]
	}
	return w
}

// stopWords are left out of key terms: function words, and the verbs every
// task uses ("implement", "add", "ensure") that say nothing about which task.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a an the and or nor but of to in on at by for with from into onto via per as than then
		so if else when while where which who whom whose what how why that this these those
		it its it's is are was were be been being am do does did done doing have has had having
		will would shall should can could may might must need needs i me my we us our you your
		he she they them their his her there here all any each every some no not only also just
		both either neither such same other more most very too again further once up down out
		over under about above below between after before during until both new
		implement implemented implementing implementation add added adding ensure ensures make
		makes made sure use uses used using work works working properly correctly correct
		task tasks should able via etc e.g i.e ok yes
	`) {
		m[w] = true
	}
	return m
}()
