package core

import (
	"strings"
	"testing"
)

const (
	trainOnto = "0000000000000000000000000000000000000000"
	trainA    = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	trainB    = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	trainB2   = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
)

// twoVerified makes two tasks worked in parallel, verified in turn: the
// first's landing is asked for.
func twoVerified(t *testing.T) (*testBundle, string, string) {
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	a := submit(b, TaskSpec{Description: "one"}).ID
	c := submit(b, TaskSpec{Description: "two"}).ID
	prepared(b, a, "base")
	prepared(b, c, "base")
	toLanding(b, a)
	toLanding(b, c)
	return b, a, c
}

// landsOf are the LandTask effects asked for a task.
func (b *testBundle) landsOf(id string) []LandTask {
	var out []LandTask
	for _, l := range b.landsAsked() {
		if l.TaskID == id {
			out = append(out, l)
		}
	}
	return out
}

func (b *testBundle) combined(id, commit, onto string) RunVerify {
	b.t.Helper()
	_, err := b.c.Report(b.now, Landed{TaskID: id, RunID: RunID(id, 1), Branch: "main", Combined: commit, Onto: onto})
	b.ok(err)
	rv := last[RunVerify](b)
	if rv.TaskID != id {
		b.t.Fatalf("%s's combination is not verified: %+v", id, rv)
	}
	return rv
}

func (b *testBundle) integrationEnds(rv RunVerify, pass bool) {
	b.t.Helper()
	step := StepRun{Name: "unit", Command: "go test ./...", Output: "ok\n"}
	if !pass {
		step.ExitCode, step.Output = 1, failingGoTest
	}
	_, err := b.c.EndVerify(b.now, VerifyResult{TaskID: rv.TaskID, RunID: rv.RunID, Steps: []StepRun{step}})
	b.ok(err)
}

func (b *testBundle) landedAs(id, commit string) {
	b.t.Helper()
	_, err := b.c.Report(b.now, Landed{TaskID: id, RunID: RunID(id, 1), Branch: "main", Commit: commit})
	b.ok(err)
}

// While a task's combination with the target is verified, the next
// verified task is combined on that combination and verified at the same
// time; the target still moves one task at a time, in order, and only to
// combinations that passed.
func TestTheNextTaskIsCombinedBehindTheOneLandingAndVerifiedWhileItLands(t *testing.T) {
	t.Parallel()
	b, a, c := twoVerified(t)
	rvA := b.combined(a, trainA, trainOnto)
	behind := b.landsOf(c)
	if len(behind) != 1 || behind[0].On != trainA || behind[0].Advance != "" || !b.task(c).LandStarted {
		t.Fatalf("%s is not combined behind %s: %+v", c, a, behind)
	}
	if m := b.task(c).Milestone; m != MilestoneLandingBehind {
		t.Fatalf("milestone %q", m)
	}
	rvC := b.combined(c, trainB, trainA)
	// The one behind passes first: it waits for the one ahead.
	b.integrationEnds(rvC, true)
	for _, l := range b.landsAsked() {
		if l.Advance != "" {
			t.Fatalf("the target was asked to move before the task ahead landed: %+v", l)
		}
	}
	b.integrationEnds(rvA, true)
	if l := b.landsOf(a); l[len(l)-1].Advance != trainA || l[len(l)-1].Onto != trainOnto {
		t.Fatalf("%s's landing: %+v", a, l)
	}
	b.landedAs(a, trainA)
	if got := b.task(a); got.State != Success {
		t.Fatalf("%s: %s", a, got.State)
	}
	// The one behind is first: its combination is on the target's head.
	l := b.landsOf(c)
	if last := l[len(l)-1]; last.Advance != trainB || last.Onto != trainA || last.On != "" || b.task(c).LandOn != "" {
		t.Fatalf("%s's landing once %s landed: %+v", c, a, l)
	}
	b.landedAs(c, trainB)
	if got := b.task(c); got.State != Success || got.LandedCommit != trainB {
		t.Fatalf("%s: %s %q", c, got.State, got.LandedCommit)
	}
}

// A task combined behind one that then does not land — its combination
// fails — is combined again on the target's head: what it was verified
// with never lands.
func TestATaskCombinedBehindOneThatDidNotLandIsCombinedAgainOnTheTarget(t *testing.T) {
	t.Parallel()
	for _, behindFirst := range []bool{true, false} {
		b, a, c := twoVerified(t)
		rvA := b.combined(a, trainA, trainOnto)
		rvC := b.combined(c, trainB, trainA)
		if behindFirst {
			b.integrationEnds(rvC, true)
		}
		b.integrationEnds(rvA, false)
		if got := b.task(a); got.Phase == Landing {
			t.Fatalf("%s is still landing", a)
		}
		if !behindFirst {
			// Its verification was under way: its end is set aside.
			if n := len(b.landsOf(c)); n != 1 {
				t.Fatalf("%s combined again while its verification runs: %+v", c, b.landsOf(c))
			}
			b.integrationEnds(rvC, true)
		}
		l := b.landsOf(c)
		if last := l[len(l)-1]; len(l) != 2 || last.On != "" || last.Advance != "" || b.task(c).Integration != nil {
			t.Fatalf("%s is not combined again on the target: %+v", c, l)
		}
		for _, l := range b.landsAsked() {
			if l.Advance == trainB {
				t.Fatalf("the target was asked to move to %s's combination with %s: %+v", c, a, l)
			}
		}
		b.combined(c, trainB2, trainOnto)
	}
}

// A task whose combination behind the tasks ahead of it conflicts waits
// to be first (that conflict may be with a task that will not land); then
// it is combined on the target, and a conflict there is its merge
// conflict.
func TestAConflictBehindTheTasksAheadIsTriedAgainOnceTheTaskIsFirst(t *testing.T) {
	t.Parallel()
	b, a, c := twoVerified(t)
	rvA := b.combined(a, trainA, trainOnto)
	_, err := b.c.Report(b.now, Landed{TaskID: c, RunID: RunID(c, 1), Branch: "main", Conflict: []string{"calc.go"}})
	b.ok(err)
	if got := b.task(c); len(got.Failures) != 0 || got.Phase != Landing || got.Integration == nil || !got.Integration.Void {
		t.Fatalf("%s after a conflict behind %s: %s/%s %+v %d failures", c, a, got.State, got.Phase, got.Integration, len(got.Failures))
	}
	// A restart asks for nothing of it.
	before := len(b.landsOf(c))
	b.c.RecoverTasks(b.now)
	b.collect()
	if n := len(b.landsOf(c)); n != before {
		t.Fatalf("a restart asked again for %s's void combination", c)
	}
	b.integrationEnds(rvA, true)
	b.landedAs(a, trainA)
	l := b.landsOf(c)
	if last := l[len(l)-1]; len(l) != 2 || last.On != "" || last.Advance != "" {
		t.Fatalf("%s is not combined again once first: %+v", c, l)
	}
	_, err = b.c.Report(b.now, Landed{TaskID: c, RunID: RunID(c, 1), Branch: "main", Conflict: []string{"calc.go"}, Between: []TargetCommit{{Hash: "aaaaaaa", Subject: "one"}}})
	b.ok(err)
	if got := b.task(c); len(got.Failures) != 1 || got.Failures[0].FailureType != MergeConflict || !strings.Contains(got.Failures[0].Details, "aaaaaaa one") {
		t.Fatalf("%s's conflict on the target: %+v", c, got.Failures)
	}
}
