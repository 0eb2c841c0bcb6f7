package tmux

import "time"

// A permission question is answered once it has shown unchanged for
// questionStill: a program may draw its question before what the
// question asks (opencode draws its box, then the command in it), and the
// question is read whole. Once answered, a question the pane still shows,
// unchanged, answerAgainAfter later is answered again (up to answerSends
// more times): a program may show its question a moment before it takes
// keys for it, and a key sent then is lost. A question is gone once the
// pane has not shown it for questionGone (not a redraw): the same question
// asked after that is one of its own, answered and reported again.
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
	// answer is how ("allowed", "denied", "": left to the user).
	answered bool
	answer   string
	// screen is the pane as it has shown, unchanged, since at; sends
	// counts the answers sent again.
	screen string
	at     time.Time
	sends  int
	// hiddenAt is when the pane stopped showing the question.
	hiddenAt time.Time
}

// show takes the question the pane shows now (text) and the whole pane
// (screen): whether to answer it now (it is new, and has shown unchanged
// for questionStill), and whether to send its answer again.
func (q *question) show(text, screen string, now time.Time) (answer, again bool) {
	q.hiddenAt = time.Time{}
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
// shows.
func (q *question) answeredAs(answer, screen string, now time.Time) {
	q.answered, q.answer, q.screen, q.at = true, answer, screen, now
}

// hidden: the pane shows no question now.
func (q *question) hidden(now time.Time) {
	switch {
	case q.text == "":
	case q.hiddenAt.IsZero():
		q.hiddenAt = now
	case now.Sub(q.hiddenAt) >= questionGone:
		*q = question{}
	}
}
