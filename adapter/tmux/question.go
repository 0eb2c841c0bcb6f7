package tmux

import "time"

// A permission question is answered once it has shown unchanged for
// questionStill: a program may draw its question before what the
// question asks (opencode draws its box, then the command in it), and the
// question is read whole. Once answered, a question the pane still shows,
// unchanged, answerAgainAfter later is answered again (up to answerSends
// more times): a program may show its question a moment before it takes
// keys for it, and a key sent then is lost. A question the pane stopped
// showing a moment (less than questionGone) is the same question, redrawn.
// One the pane has not shown for questionGone is gone; shown again, the
// same (the same text, and the conversation above it holds nothing it did
// not hold when the question was answered: the agent drew no step of its
// work in between) it is still the same question — a program may draw its
// question again, unchanged, a while after it took the answer (a redraw
// of its whole screen, a question it shows again while it still works on
// the answer) — not answered and reported again, though its answer is
// sent again as for an answer not taken. The same question asked after the
// agent went on (the same command run twice: the first one's result drawn
// above the second question) is one of its own, answered and reported
// again; so is a question of another text.
const (
	questionStill    = 500 * time.Millisecond
	answerAgainAfter = 5 * time.Second
	answerSends      = 3
	questionGone     = time.Second
)

// question follows the permission question a turn's pane shows.
type question struct {
	// text is the question as it shows (its PermissionText), unchanged
	// since since.
	text  string
	since time.Time
	// answered: it was answered (or left to the user) and reported;
	// answer is how ("allowed", "denied", "": left to the user); above is
	// the conversation above it then (its PermissionAbove).
	answered bool
	answer   string
	above    []string
	// screen is the pane as it has shown, unchanged, since at; sends
	// counts the answers sent again.
	screen string
	at     time.Time
	sends  int
	// hiddenAt is when the pane stopped showing the question; gone, that
	// it has not shown it for questionGone since.
	hiddenAt time.Time
	gone     bool
}

// show takes the question the pane shows now (text), the conversation
// above it (above) and the whole pane (screen): whether to answer it now
// (it is new, and has shown unchanged for questionStill), and whether to
// send its answer again.
func (q *question) show(text string, above []string, screen string, now time.Time) (answer, again bool) {
	q.hiddenAt = time.Time{}
	if q.gone {
		q.gone = false
		if q.answered && text == q.text && len(added(q.above, above)) == 0 {
			// Drawn again, unchanged, with nothing new above it: the
			// answer may not have been taken.
			q.screen, q.at, q.sends = screen, now, 0
			return false, false
		}
		*q = question{text: text, since: now}
		return false, false
	}
	if text != q.text {
		*q = question{text: text, since: now}
		return false, false
	}
	if !q.answered {
		return now.Sub(q.since) >= questionStill, false
	}
	if q.answer == "" || q.sends >= answerSends {
		return false, false
	}
	if screen != q.screen {
		// The program redrew: it may be taking the answer.
		q.screen, q.at = screen, now
		return false, false
	}
	if now.Sub(q.at) < answerAgainAfter {
		return false, false
	}
	q.sends++
	q.at = now
	return false, true
}

// answeredAs records how the question was answered, on the pane as it
// shows, with the conversation above the question.
func (q *question) answeredAs(answer string, above []string, screen string, now time.Time) {
	q.answered, q.answer, q.above, q.screen, q.at = true, answer, above, screen, now
}

// hidden: the pane shows no question now.
func (q *question) hidden(now time.Time) {
	switch {
	case q.text == "" || q.gone:
	case q.hiddenAt.IsZero():
		q.hiddenAt = now
	case now.Sub(q.hiddenAt) >= questionGone:
		q.gone = true
	}
}
