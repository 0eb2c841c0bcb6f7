package ack

import (
	"errors"
	"strings"
	"unicode"
)

// ParseOperationReply reads an agent's answer to a pre-operation request:
// "ok", "OK", "okay", "ready" → AnswerOK;
// "wait", "not ready" → AnswerWait; "cancel", "abort" → AnswerCancel;
// anything else → AnswerInfo (log it, keep waiting).
//
// It is lenient on form — case, punctuation, markdown, words around the
// answer: "ok, ready to go!" and "**ok**" are ok — and careful about meaning:
//
//   - Only whole words count: "token", "look", "already" are not ok.
//   - A word after a negation in the same clause (not, no, never, cannot,
//     without, any "…n't") is negated: "not ok", "don't cancel", "no need to
//     wait" and "I cannot wait" are info; a negated ready ("not ready", "not
//     quite ready") is wait, as in the table.
//   - A ready still to come is wait: "almost ready", "I'll be ready soon",
//     "ready in 5 minutes". So are "not yet", "hold on", "more time",
//     "a moment", "one minute", "30 more seconds".
//   - A question does not say ok or cancel: "ok?", "should I cancel?" are
//     info; "can you wait?" is wait.
//   - Clauses end at . , ; : ! ? line breaks, parentheses and "but".
//   - When a reply says several things the most cautious wins: cancel, then
//     wait, then ok. "ok, but wait 30s" is wait.
//   - An operation's JSON acknowledgment in the text ({"type":
//     "acknowledgment", "message": "ok", …}) decides by itself, as ParseJSON
//     reads it; a broken one is info.
func ParseOperationReply(text string) OperationAnswer {
	if strings.Contains(text, `"type"`) {
		for _, it := range scanJSON(text) {
			var pe *ParseError
			switch {
			case it.err == nil && it.reply.Kind == KindOperationReply:
				return it.reply.Answer
			case errors.As(it.err, &pe) && pe.Form == TypeAcknowledgment:
				return AnswerInfo
			}
		}
	}
	var ok, wait, cancel bool
	for _, c := range clauses(text) {
		negated, future := false, false
		for i, w := range c.words {
			prev, next := "", ""
			if i > 0 {
				prev = c.words[i-1]
			}
			if i+1 < len(c.words) {
				next = c.words[i+1]
			}
			switch {
			case isNegator(w):
				negated = true
			case w == "ok" || w == "okay":
				ok = ok || (!negated && !c.question)
			case w == "ready":
				switch {
				case negated || future || next == "soon" || next == "shortly" || next == "in":
					wait = true
				case !c.question:
					ok = true
				}
			case w == "wait":
				wait = wait || !negated
			case w == "cancel" || w == "cancelled" || w == "canceled" || w == "cancellation" || w == "abort" || w == "aborted":
				cancel = cancel || (!negated && !c.question)
			case w == "yet" && negated && (prev == "not" || prev == "no"):
				wait = true
			case w == "on" && prev == "hold",
				moreTime[w] && prev == "more",
				(w == "moment" || w == "minute" || w == "sec" || w == "second") && (prev == "a" || prev == "one"):
				wait = wait || !negated
			case futureWords[w]:
				future = true
			}
		}
	}
	switch {
	case cancel:
		return AnswerCancel
	case wait:
		return AnswerWait
	case ok:
		return AnswerOK
	}
	return AnswerInfo
}

// moreTime are the words of "more time", "more seconds"…
var moreTime = map[string]bool{
	"time": true, "seconds": true, "second": true, "secs": true, "minutes": true, "minute": true, "mins": true,
}

// futureWords put a following "ready" in the future: "almost ready", "will be
// ready", "once ready".
var futureWords = map[string]bool{
	"be": true, "almost": true, "nearly": true, "until": true, "till": true, "once": true,
	"when": true, "getting": true, "get": true, "soon": true, "after": true, "before": true,
}

// isNegator reports whether w negates what follows it in its clause.
func isNegator(w string) bool {
	switch w {
	case "not", "no", "never", "cannot", "nor", "neither", "without", "hardly", "nope",
		"dont", "cant", "wont", "isnt", "arent", "didnt", "doesnt", "shouldnt", "wouldnt",
		"couldnt", "havent", "hasnt", "aint", "mustnt", "wasnt", "werent":
		return true
	}
	return strings.HasSuffix(w, "n't")
}

// clause is a run of words between punctuation.
type clause struct {
	words    []string
	question bool
}

// clauses splits text into lowercased words grouped in clauses. Words are
// letters, digits and inner apostrophes (’ read as ').
func clauses(text string) []clause {
	var out []clause
	var cur clause
	var word strings.Builder
	flushWord := func() {
		w := strings.Trim(word.String(), "'")
		word.Reset()
		if w == "" {
			return
		}
		if w == "but" {
			out = append(out, cur)
			cur = clause{}
			return
		}
		cur.words = append(cur.words, w)
	}
	flushClause := func(question bool) {
		flushWord()
		if len(cur.words) > 0 {
			cur.question = question
			out = append(out, cur)
		}
		cur = clause{}
	}
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word.WriteRune(unicode.ToLower(r))
		case r == '\'' || r == '’':
			word.WriteByte('\'')
		case r == '?':
			flushClause(true)
		case strings.ContainsRune(".,;:!\n()[]{}\"", r) || r == '—' || r == '–':
			flushClause(false)
		default:
			flushWord()
		}
	}
	flushClause(false)
	return out
}
