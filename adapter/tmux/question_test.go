package tmux

import (
	"slices"
	"strings"
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
		if answer, again := q.show(step.text, nil, step.text, t0.Add(step.at)); answer != step.answer || again {
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
		q.show("q", nil, "pane", t0)
		if a, _ := q.show("q", nil, "pane", t0.Add(questionStill)); !a {
			t.Fatal("the question was not answered")
		}
		q.answeredAs(answer, nil, "pane", t0.Add(questionStill))
		return q
	}
	q := ask("denied")
	at := t0.Add(questionStill)
	if _, again := q.show("q", nil, "pane", at.Add(answerAgainAfter-time.Millisecond)); again {
		t.Fatal("sent again too soon")
	}
	if _, again := q.show("q", nil, "pane redrawn", at.Add(answerAgainAfter)); again {
		t.Fatal("sent again while the pane changed")
	}
	sends := 0
	for i := 1; i <= 10; i++ {
		answer, again := q.show("q", nil, "pane redrawn", at.Add(answerAgainAfter+time.Duration(i)*answerAgainAfter))
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
	if _, again := q.show("q", nil, "pane", t0.Add(time.Hour)); again {
		t.Fatal("a question left to the user was answered")
	}
}

// A question the pane stopped showing a moment (a redraw) is the same
// one; the same question asked again once it was gone, after the agent
// drew a step of its work above it, is a question of its own, answered
// again.
func TestAQuestionAskedAgainAfterTheAgentWentOnIsANewOne(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	var q question
	before := []string{"> the task", "[ACK] T-1 - RECEIVED"}
	q.show("q", before, "pane", t0)
	q.show("q", before, "pane", t0.Add(questionStill))
	q.answeredAs("allowed", before, "pane", t0.Add(questionStill))
	at := t0.Add(questionStill)
	q.hidden(at.Add(100 * time.Millisecond))
	q.hidden(at.Add(200 * time.Millisecond))
	if answer, _ := q.show("q", before, "pane", at.Add(300*time.Millisecond)); answer || !q.answered {
		t.Fatal("a redraw made the question a new one")
	}
	q.hidden(at.Add(time.Second))
	q.hidden(at.Add(time.Second + questionGone))
	after := append(before, "✓ Shell rm -f keep.txt")
	q.show("q", after, "pane", at.Add(3*time.Second))
	if answer, _ := q.show("q", after, "pane", at.Add(3*time.Second+questionStill)); !answer {
		t.Fatal("the question asked again was not answered")
	}
}

// poll plays one capture of Gemini CLI's pane to q as the agent reads it
// (see agent.permission): whether the question it shows was answered and
// reported now, and whether its answer was sent again.
func poll(q *question, s Screen, now time.Time) (asked, again bool) {
	st := Presets[PresetGemini].Style
	if state, _ := st.Classify(s); state != Permission {
		q.hidden(now)
		return false, false
	}
	text, above := st.PermissionText(s), st.PermissionAbove(s)
	asked, again = q.show(text, above, s.Text(), now)
	if asked {
		q.answeredAs("allowed", above, s.Text(), now)
	}
	return asked, again
}

// step is what Gemini CLI's pane shows from a moment of a turn on.
type step struct {
	from   time.Duration
	screen Screen
}

// play polls q every 100 ms over steps until end: how many questions were
// answered and reported, and how many answers were sent again.
func play(steps []step, end time.Duration) (asked, again int) {
	var q question
	t0 := time.Unix(1000, 0)
	for at, i := time.Duration(0), 0; at < end; at += 100 * time.Millisecond {
		for i+1 < len(steps) && at >= steps[i+1].from {
			i++
		}
		a, g := poll(&q, steps[i].screen, t0.Add(at))
		if a {
			asked++
		}
		if g {
			again++
		}
	}
	return asked, again
}

// geminiWentOn is Gemini CLI's question to write file.txt asked again
// after it wrote it once: the first write's result, and the model's words,
// drawn above the same question.
func geminiWentOn(t *testing.T) Screen {
	s := loadScreen(t, "gm-permission-write")
	box := slices.IndexFunc(s.Rows, func(r string) bool { return strings.HasPrefix(r, "╭") })
	went := []string{"  ✓  WriteFile  file.txt → Accepted (+1, -1)", "      1 fixed", "", "✦ Once more.", ""}
	s.Rows = slices.Concat(s.Rows[:box], went, s.Rows[box:])
	s.Undimmed = slices.Concat(s.Undimmed[:box], went, s.Undimmed[box:])
	return s
}

// A question drawn again, unchanged, a few seconds after the program took
// the answer (the question gone meanwhile, the pane busy), with nothing new
// above it, is the same question — answered and reported once. Still
// shown, unchanged, a while later, its answer is sent again, as for an
// answer not taken.
func TestAQuestionDrawnAgainUnchangedIsTheSameQuestion(t *testing.T) {
	t.Parallel()
	ask, busy := loadScreen(t, "gm-permission-write"), loadScreen(t, "gm-busy")
	asked, again := play([]step{{0, ask}, {time.Second, busy}, {4 * time.Second, ask}}, 4*time.Second+answerAgainAfter+time.Second)
	if asked != 1 || again != 1 {
		t.Fatalf("the question drawn again: reported %d times (want 1), its answer sent again %d times (want 1)", asked, again)
	}
}

// A question that follows the first, asking something else, is a new one;
// so is the same question asked after the agent drew a step of its work
// above it (the first write's result): each is answered and reported.
func TestAQuestionAfterTheFirstIsANewOneWhenItAsksSomethingElseOrTheAgentWentOn(t *testing.T) {
	t.Parallel()
	ask, busy := loadScreen(t, "gm-permission-write"), loadScreen(t, "gm-busy")
	for name, next := range map[string]Screen{
		"another question":               loadScreen(t, "gm-permission-shell"),
		"the same question after a step": geminiWentOn(t),
	} {
		if asked, _ := play([]step{{0, ask}, {time.Second, busy}, {4 * time.Second, next}}, 6*time.Second); asked != 2 {
			t.Errorf("%s: %d questions reported, want 2", name, asked)
		}
	}
}
