package tmux

import (
	"testing"
	"time"
)

// A permission question is answered once it has shown unchanged a moment
// (opencode draws its box, then the command in it): the box alone, then
// the whole question, is answered once, as the whole question.
func TestAQuestionIsAnsweredOnceItShowsWhole(t *testing.T) {
	t.Parallel()
	var q question
	t0 := time.Unix(1000, 0)
	box, whole := "△ Permission required\n# Shell command", "△ Permission required\n# Shell command\n$ rm -f keep.txt"
	for _, step := range []struct {
		text   string
		at     time.Duration
		answer bool
	}{
		{box, 0, false},
		{box, 100 * time.Millisecond, false},
		{whole, 200 * time.Millisecond, false}, // the command drawn: a question of its own
		{whole, 600 * time.Millisecond, false},
		{whole, 700 * time.Millisecond, true},
	} {
		if answer, again := q.show(step.text, step.text, t0.Add(step.at)); answer != step.answer || again {
			t.Fatalf("at %s, %q: answer %v, again %v", step.at, step.text, answer, again)
		}
	}
}

// An answer the program did not take — the question still shows, the pane
// unchanged — is sent again a while later, a few times at most; not while
// the pane changes (the program may be taking it), nor for a question
// left to the user.
func TestAnAnswerNotTakenIsSentAgain(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	ask := func(answer string) *question {
		q := &question{}
		q.show("q", "pane", t0)
		if a, _ := q.show("q", "pane", t0.Add(questionStill)); !a {
			t.Fatal("the question was not answered")
		}
		q.answeredAs(answer, "pane", t0.Add(questionStill))
		return q
	}
	q := ask("denied")
	at := t0.Add(questionStill)
	if _, again := q.show("q", "pane", at.Add(answerAgainAfter-time.Millisecond)); again {
		t.Fatal("sent again too soon")
	}
	if _, again := q.show("q", "pane redrawn", at.Add(answerAgainAfter)); again {
		t.Fatal("sent again while the pane changed")
	}
	sends := 0
	for i := 1; i <= 10; i++ {
		answer, again := q.show("q", "pane redrawn", at.Add(answerAgainAfter+time.Duration(i)*answerAgainAfter))
		if answer {
			t.Fatal("answered as a new question")
		}
		if again {
			sends++
		}
	}
	if sends != answerSends {
		t.Fatalf("sent again %d times, want %d", sends, answerSends)
	}
	q = ask("")
	if _, again := q.show("q", "pane", t0.Add(time.Hour)); again {
		t.Fatal("a question left to the user was answered")
	}
}

// A question the pane stopped showing a moment (a redraw) is the same
// one; one asked again once it was gone is a question of its own,
// answered again.
func TestAQuestionAskedAgainAfterItWasGoneIsANewOne(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	var q question
	q.show("q", "pane", t0)
	q.show("q", "pane", t0.Add(questionStill))
	q.answeredAs("allowed", "pane", t0.Add(questionStill))
	at := t0.Add(questionStill)
	q.hidden(at.Add(100 * time.Millisecond))
	q.hidden(at.Add(200 * time.Millisecond))
	if answer, _ := q.show("q", "pane", at.Add(300*time.Millisecond)); answer || !q.answered {
		t.Fatal("a redraw made the question a new one")
	}
	q.hidden(at.Add(time.Second))
	q.hidden(at.Add(time.Second + questionGone))
	q.show("q", "pane", at.Add(3*time.Second))
	if answer, _ := q.show("q", "pane", at.Add(3*time.Second+questionStill)); !answer {
		t.Fatal("the question asked again was not answered")
	}
}
