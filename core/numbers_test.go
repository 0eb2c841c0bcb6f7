package core

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func pageIDs(p TaskPage) []string {
	var out []string
	for _, t := range p.Tasks {
		out = append(out, t.ID)
	}
	return out
}

// A page of tasks is a slice of the order of Tasks (or its reverse), with
// every task's queue position, the count of the tasks that match and of
// every task by state; a page resumes after the key of the last task of
// the previous one, even when that task is gone.
func TestTaskPageIsASliceOfTheOrderResumableAfterAGoneTask(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	for i := range 7 {
		submit(b, TaskSpec{Description: fmt.Sprintf("task %d", i+1)})
		b.now = b.now.Add(time.Second)
	}
	// T-1 holds the queue (awaiting_ack); T-2…T-7 are queued.
	all := b.c.TaskPage(TaskQuery{})
	if got := pageIDs(all); !slices.Equal(got, []string{"T-1", "T-2", "T-3", "T-4", "T-5", "T-6", "T-7"}) || all.More || all.Total != 7 {
		t.Fatalf("every task: %v more %v total %d", got, all.More, all.Total)
	}
	if !slices.Equal(all.Positions, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Fatalf("positions %v", all.Positions)
	}
	if all.Counts[AwaitingAck] != 1 || all.Counts[Queued] != 6 {
		t.Fatalf("counts %v", all.Counts)
	}

	first := b.c.TaskPage(TaskQuery{Newest: true, Limit: 3})
	if got := pageIDs(first); !slices.Equal(got, []string{"T-7", "T-6", "T-5"}) || !first.More || first.Total != 7 {
		t.Fatalf("newest first: %v more %v", got, first.More)
	}
	// The last task of the page is cancelled (a queued task: no trace);
	// the next page starts after where it was.
	key := first.Tasks[2].Key()
	_, removed, err := b.c.CancelTask(b.now, "T-5")
	b.ok(err)
	if !removed {
		t.Fatal("T-5 was not removed")
	}
	next := b.c.TaskPage(TaskQuery{Newest: true, Limit: 3, After: &key})
	if got := pageIDs(next); !slices.Equal(got, []string{"T-4", "T-3", "T-2"}) || !next.More {
		t.Fatalf("the next page: %v more %v", got, next.More)
	}
	if !slices.Equal(next.Positions, []int{3, 2, 1}) {
		t.Fatalf("positions after the cancel: %v", next.Positions)
	}
	key = next.Tasks[2].Key()
	last := b.c.TaskPage(TaskQuery{Newest: true, Limit: 3, After: &key})
	if got := pageIDs(last); !slices.Equal(got, []string{"T-1"}) || last.More {
		t.Fatalf("the last page: %v more %v", got, last.More)
	}

	// Oldest first, from a cursor, filtered by state.
	key = TaskKey{CreatedAt: b.task("T-2").CreatedAt, ID: "T-2"}
	q := b.c.TaskPage(TaskQuery{States: []TaskState{Queued}, After: &key, Limit: 2})
	if got := pageIDs(q); !slices.Equal(got, []string{"T-3", "T-4"}) || !q.More || q.Total != 5 {
		t.Fatalf("queued after T-2: %v more %v total %d", got, q.More, q.Total)
	}
	none := b.c.TaskPage(TaskQuery{States: []TaskState{Success, Stuck}})
	if len(none.Tasks) != 0 || none.Total != 0 || none.Counts[Queued] != 5 {
		t.Fatalf("no task in success or stuck: %+v", none)
	}
}

// Tasks created at the same time keep the order of Tasks (by id, numbers
// as numbers) on a page.
func TestTaskPageOrdersTasksOfTheSameTimeByID(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	for range 11 {
		submit(b, TaskSpec{Description: "same time"})
	}
	var want []string
	for _, tk := range b.c.Tasks(nil) {
		want = append(want, tk.ID)
	}
	var got []string
	var after *TaskKey
	for {
		p := b.c.TaskPage(TaskQuery{Limit: 4, After: after})
		got = append(got, pageIDs(p)...)
		if !p.More {
			break
		}
		k := p.Tasks[len(p.Tasks)-1].Key()
		after = &k
	}
	if !slices.Equal(got, want) || want[9] != "T-10" {
		t.Fatalf("pages %v, Tasks %v", got, want)
	}
}

// The numbers of a day count the tasks that ended that day as the retry
// summary does, the failures and escalations of that day, and its cost.
func TestDailyNumbersCountEachDayAsTheRetrySummaryDoes(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	b.ok(b.c.Configure(b.now, func() Policies { p := b.c.Policies(); p.Loop.EscalateAfter = 2; return p }()))
	day1 := b.now

	// Day 1: T-1 succeeds at once; T-2 fails once, then succeeds.
	first := submit(b, TaskSpec{Description: "one"})
	ackTask(b, first.ID)
	endTurn(b, first.ID, 0)
	verify(b, first.ID, true)
	second := submit(b, TaskSpec{Description: "two"})
	failAttempt(b, second.ID)
	ackTask(b, second.ID)
	endTurn(b, second.ID, 0)
	verify(b, second.ID, true)

	// Day 2: T-3 fails twice and escalates; the user aborts it.
	b.now = day1.Add(24 * time.Hour)
	third := submit(b, TaskSpec{Description: "three"})
	failAttempt(b, third.ID)
	failAttempt(b, third.ID)
	if got := b.task(third.ID); got.State != Escalated {
		t.Fatalf("T-3 is %s", got.State)
	}
	_, err := b.c.Respond(b.now, third.ID, RespondAbort, "")
	b.ok(err)

	days := b.c.Daily(day1.Add(-24*time.Hour), b.now)
	if len(days) != 3 || days[0].Day != "2026-01-25" || days[1].Day != "2026-01-26" || days[2].Day != "2026-01-27" {
		t.Fatalf("days %+v", days)
	}
	if d := days[0]; d.Finished != 0 || len(d.Failures) != 0 {
		t.Fatalf("a day with nothing: %+v", d)
	}
	if d := days[1]; d.Finished != 2 || d.Success != 2 || d.FirstAttemptSuccess != 1 || d.Retried != 1 || d.RetrySuccess != 1 ||
		d.Escalations != 0 || d.Failures[VerificationFailed] != 1 {
		t.Fatalf("day 1: %+v", d)
	}
	if d := days[2]; d.Finished != 1 || d.Success != 0 || d.Retried != 1 || d.Escalations != 1 || d.Failures[VerificationFailed] != 2 {
		t.Fatalf("day 2: %+v", d)
	}
	if got := b.c.Daily(b.now, day1); len(got) != 0 {
		t.Fatalf("to before from: %+v", got)
	}
}

// An agent's record names the task it holds and counts the tasks it ended
// and those that succeeded at the first attempt.
func TestAgentRecordNamesItsTaskAndCountsFirstAttemptSuccess(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	first := submit(b, TaskSpec{Description: "one"})
	ackTask(b, first.ID)
	endTurn(b, first.ID, 0)
	verify(b, first.ID, true)
	second := submit(b, TaskSpec{Description: "two"})
	failAttempt(b, second.ID)
	ackTask(b, second.ID)
	endTurn(b, second.ID, 0)
	verify(b, second.ID, true)
	third := submit(b, TaskSpec{Description: "three"})
	r := b.c.AgentRecords()["claude"]
	if r.CurrentTask != third.ID || r.Finished != 2 || r.FirstAttemptSuccess != 1 {
		t.Fatalf("record %+v", r)
	}
}

// An agent's LastSeen is the last time wilco heard from it — a poll, an
// answer, the end of its turn — and not what wilco did to it; it survives
// a replay (the bundle checks it).
func TestAgentLastSeenIsTheLastTimeWilcoHeardFromIt(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	b.agent("remote", "mailbox")
	if a, _ := b.c.Agent("remote"); !a.LastSeen.IsZero() {
		t.Fatalf("a new agent was seen at %s", a.LastSeen)
	}
	b.now = b.now.Add(time.Minute)
	polled := b.now
	_, err := b.c.Cycle(b.now, "remote")
	b.ok(err)
	if a, _ := b.c.Agent("remote"); !a.LastSeen.Equal(polled) {
		t.Fatalf("after a poll: last seen %s, want %s", a.LastSeen, polled)
	}
	// Sending to it is not hearing from it.
	b.now = b.now.Add(time.Minute)
	b.ok(b.c.SetAgentStatus(b.now, "remote", Hibernating, "test"))
	if a, _ := b.c.Agent("remote"); !a.LastSeen.Equal(polled) {
		t.Fatalf("a status wilco set moved last seen to %s", a.LastSeen)
	}

	tk := submit(b, TaskSpec{Description: "Add a flag"})
	b.now = b.now.Add(time.Minute)
	acked := b.now
	ackTask(b, tk.ID)
	if a, _ := b.c.Agent("claude"); !a.LastSeen.Equal(acked) {
		t.Fatalf("after the ACK: last seen %s, want %s", a.LastSeen, acked)
	}
	b.now = b.now.Add(time.Minute)
	ended := b.now
	endTurn(b, tk.ID, 0)
	if a, _ := b.c.Agent("claude"); !a.LastSeen.Equal(ended) {
		t.Fatalf("after the turn: last seen %s, want %s", a.LastSeen, ended)
	}
	b.now = b.now.Add(time.Minute)
	verify(b, tk.ID, true) // wilco's verification, not the agent
	if a, _ := b.c.Agent("claude"); !a.LastSeen.Equal(ended) {
		t.Fatalf("verification moved last seen to %s", a.LastSeen)
	}
}
