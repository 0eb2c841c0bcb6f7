package core

import "testing"

// A landing that does not land — its change conflicts with the target,
// its combination fails a check, or a git hook refuses its commit — hands
// the turn to land to the next verified task at once: the landing queue
// does not wait for another task to be verified or to end.
func TestALandingThatEndsWithoutLandingHandsTheTurnToTheNextVerifiedTask(t *testing.T) {
	t.Parallel()
	const combined, onto = "cccccccccccccccccccccccccccccccccccccccc", "dddddddddddddddddddddddddddddddddddddddd"
	for name, fail := range map[string]func(b *testBundle, id string){
		"merge conflict": func(b *testBundle, id string) {
			_, err := b.c.Report(b.now, Landed{TaskID: id, RunID: RunID(id, 1), Branch: "main", Conflict: []string{"calc.go"}})
			b.ok(err)
		},
		"integration failed": func(b *testBundle, id string) {
			_, err := b.c.Report(b.now, Landed{TaskID: id, RunID: RunID(id, 1), Branch: "main", Combined: combined, Onto: onto})
			b.ok(err)
			step := StepRun{Name: "unit", Command: "go test ./...", ExitCode: 1, Output: failingGoTest}
			_, err = b.c.EndVerify(b.now, VerifyResult{TaskID: id, RunID: last[RunVerify](b).RunID, Steps: []StepRun{step}})
			b.ok(err)
		},
		"commit refused": func(b *testBundle, id string) {
			_, err := b.c.Report(b.now, Landed{TaskID: id, RunID: RunID(id, 1), Branch: "main", Refused: true, ExitCode: 1, Output: "pre-commit: no"})
			b.ok(err)
		},
		"commit error": func(b *testBundle, id string) {
			_, err := b.c.Report(b.now, Landed{TaskID: id, RunID: RunID(id, 1), Branch: "main", Error: "disk full"})
			b.ok(err)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := parallelBundle(t, 2, map[string]int{"claude": 2})
			first := submit(b, TaskSpec{Description: "one"}).ID
			second := submit(b, TaskSpec{Description: "two"}).ID
			prepared(b, first, "base")
			prepared(b, second, "base")
			toLanding(b, first)
			toLanding(b, second)
			if asked := b.landsAsked(); len(asked) != 1 || asked[0].TaskID != first {
				t.Fatalf("landings asked: %#v", asked)
			}
			fail(b, first)
			if got := b.task(first); got.Phase == Landing {
				t.Fatalf("%s is still landing: %s/%s", first, got.State, got.Phase)
			}
			asked := b.landsAsked()
			if l := asked[len(asked)-1]; l.TaskID != second || !b.task(second).LandStarted {
				t.Fatalf("%s's turn to land did not come: %#v", second, asked)
			}
		})
	}
}

// A task worked in parallel escalated because its verified change could
// not land, answered retry, takes its turn in the landing queue again:
// its landing is asked for as the queue's, and its outcome is recorded.
func TestALandingEscalatedAndRetriedTakesItsTurnInTheLandingQueueAgain(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	id := submit(b, TaskSpec{Description: "one"}).ID
	prepared(b, id, "base")
	toLanding(b, id)
	_, err := b.c.Report(b.now, Landed{TaskID: id, RunID: RunID(id, 1), Branch: "main", Error: "disk full"})
	b.ok(err)
	if got := b.task(id); got.State != Escalated {
		t.Fatalf("after the error: %s", got.State)
	}
	_, err = b.c.Respond(b.now, id, RespondRetry, "")
	b.ok(err)
	asked := b.landsOf(id)
	if got := b.task(id); len(asked) != 2 || !got.LandStarted || got.Phase != Landing {
		t.Fatalf("after retry: %s/%s started %v, landings %+v", got.State, got.Phase, got.LandStarted, asked)
	}
	b.landedAs(id, trainA)
	if got := b.task(id); got.State != Success || got.LandedCommit != trainA {
		t.Fatalf("after its landing: %s %q", got.State, got.LandedCommit)
	}
}
