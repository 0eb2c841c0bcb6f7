package taskview

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"wilco/core"
	"wilco/wire"
)

// readEvents reads a file of testdata: one event of the API per line.
func readEvents(t testing.TB, path string) []wire.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []wire.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev wire.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		evs = append(evs, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return evs
}

// foldText folds evs and writes, for each event, its seq, what it is
// about (the task, else the agent), "!" for an important line or "." for
// another, and its line; then each task's view.
func foldText(evs []wire.Event) string {
	var b strings.Builder
	v := New()
	for _, ev := range evs {
		_, l := v.Apply(ev)
		subject := ev.TaskID
		if subject == "" {
			subject = orDash(ev.Agent)
		}
		mark := "."
		if l.Important {
			mark = "!"
		}
		fmt.Fprintf(&b, "%d\t%s\t%s\t%s\n", ev.Seq, subject, mark, l.Text)
	}
	var ids []string
	for id := range v.tasks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		t := v.Task(id)
		fmt.Fprintf(&b, "view %s state=%s phase=%s attempt=%d/%d milestone=%q start=%s end=%s\n", t.ID, t.State, t.Phase,
			t.Attempt, t.MaxAttempts, t.Milestone, t.Start.Format(time.RFC3339Nano), t.End.Format(time.RFC3339Nano))
	}
	return b.String()
}

// update writes testdata/*.golden from the fold.
var update = flag.Bool("update", false, "write testdata/*.golden from the fold")

// TestTheFoldOfARealServersEventsIsWhatWatchShows folds the whole event
// log of real runs of wilco (testdata/*.jsonl: a task retried until it
// passes, one replanned until its hard stop, three that land as commits,
// an escalation answered with a fix, a dry run, a plan whose first task is skipped, a task no check
// verified, instructions retried and acknowledged, a delegation
// reassigned, the queue with cancels, every kind of message of an inbox,
// notifications retried) and compares the lines and the tasks' views with
// testdata/*.golden.
//
// The black-box tests that call watchFold write the logs again:
//
//	go test ./test -run '^(TestTaskRetryContextCarriesFailureUntilSuccessOnThirdAttempt|TestTaskReplansEveryThreeFailuresAndHardStopsStuckAtTwelve|TestTaskEscalatesAfterTwoFailuresAndUserFixReachesAgent|TestPlanSkipOfEscalatedTaskWarnsItsDependant|TestTaskDryRunProposesDiffThenApplyVerifiesOrDiscardCancels|TestTaskWithoutVerificationIsNeverSuccess|TestInstructionsSilentAgentRetriedToFailureAnsweringAgentAcknowledged|TestEveryNotifyEventReachesItsHooksSignedAndRetriedUntilDelivered|TestTheInboxSamplesOfTheDocsAreTheServers|TestDelegationACKRequestsWithBackoffThenReassignment|TestTaskQueueFIFOCancelQueuedLeavesNoTraceCancelRunningStopsProcessGroup|TestEachVerifiedTaskLandsAsOneCommitWithItsTrailersAndTheUsersOwnEditsStayUncommitted)$' -args -taskview.events=$PWD/taskview/testdata
//	go test ./taskview -run TestTheFoldOfARealServersEventsIsWhatWatchShows -update
func TestTheFoldOfARealServersEventsIsWhatWatchShows(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(files) < 10 {
		t.Fatalf("testdata: %v %v", files, err)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			golden := strings.TrimSuffix(path, ".jsonl") + ".golden"
			got := foldText(readEvents(t, path))
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("line %d:\ngot  %q\nwant %q", i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("got %d lines, want %d", len(gl), len(wl))
			}
		})
	}
}

// dataTypes are the core event types the view reads each event's data
// into.
var dataTypes = map[string]any{
	"task.queued": core.TaskQueued{}, "task.state": core.TaskStateChanged{}, "task.milestone": core.TaskMilestone{}, "task.warning": core.TaskWarning{},
	"task.attempt": core.TaskAttempt{}, "task.turn_ended": core.TaskTurnEnded{}, "task.failure": core.TaskFailure{}, "task.replan": core.TaskReplan{},
	"task.escalated": core.TaskEscalated{}, "task.response": core.TaskResponse{}, "task.success": core.TaskSucceeded{},
	"task.unverified": core.TaskUnverifiedEnd{}, "task.stuck": core.TaskStuckReported{}, "task.proposed": core.TaskProposedDiff{},
	"task.removed": core.TaskRemoved{}, "plan.created": core.PlanCreated{}, "plan.state": core.PlanStateChanged{},
	"task.landing": core.TaskLandRequested{}, "task.landed": core.TaskLanded{},
	"delivery.sent": core.DeliverySent{}, "delivery.retried": core.DeliveryRetried{}, "delivery.notice": core.DeliveryNotice{},
	"delivery.acknowledged": core.DeliveryAcknowledged{}, "delivery.clarifying": core.DeliveryClarifying{},
	"delivery.deferred": core.DeliveryDeferred{}, "delivery.cancelled": core.DeliveryCancelled{}, "delivery.escalated": core.DeliveryEscalated{},
	"delivery.failed": core.DeliveryFailed{}, "delivery.reassigned": core.DeliveryReassigned{}, "delivery.reply": core.DeliveryReply{},
	"agent.cycle": core.AgentCycle{}, "agent.status": core.AgentStatusChanged{},
	"operation.reminder": core.OperationReminder{}, "operation.reply": core.OperationReply{}, "operation.state": core.OperationStateChanged{},
	"operation.started": core.OperationStarted{}, "notification.queued": core.NotificationQueued{}, "notification.retried": core.NotificationRetried{},
	"notification.attempt": core.NotificationAttempt{}, "notification.delivered": core.NotificationDelivered{},
	"notification.failed": core.NotificationFailed{}, "notification.pruned": core.NotificationsPruned{},
}

// TestTheViewReadsARealServersEventsWhole: every event of the real runs
// whose data the view reads decodes into its core type with no error (a
// field the server writes with another type would be left empty), and
// every event the view says more of than its type and data has a type in
// dataTypes, the type of its name (core.DecodeEventData's).
func TestTheViewReadsARealServersEventsWhole(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/*.jsonl")
	seen := map[string]bool{}
	for _, path := range files {
		for _, ev := range readEvents(t, path) {
			typ, known := dataTypes[ev.Type]
			if text, _ := other(ev); !known {
				if _, l := New().Apply(ev); l.Text != text {
					t.Errorf("%s: the view says %q of a %s, whose data type dataTypes does not name", path, l.Text, ev.Type)
				}
				continue
			}
			seen[ev.Type] = true
			v := reflect.New(reflect.TypeOf(typ))
			if err := json.Unmarshal(ev.Data, v.Interface()); err != nil {
				t.Errorf("%s: event %d (%s): %v\n%s", path, ev.Seq, ev.Type, err, ev.Data)
			}
			if d, err := core.DecodeEventData(ev.Type, ev.Data); err != nil || reflect.TypeOf(d) != reflect.TypeOf(typ) {
				t.Errorf("%s: event %d (%s) is core's %T (%v), not %T", path, ev.Seq, ev.Type, d, err, typ)
			}
		}
	}
	if len(seen) < 35 {
		t.Errorf("the real runs have only %d of the %d kinds of events the view reads", len(seen), len(dataTypes))
	}
}

func TestWatchSaysWhatNotificationsDid(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ, data, want string
		important       bool
	}{
		{"notification.queued", `{"notification":{"id":"N-4","hook":"ops","event":"escalated"}}`, "notifying ops: escalated (N-4)", true},
		{"notification.attempt", `{"id":"N-4","attempt":1,"status":500,"error":"HTTP 500: oops","retry_at":"2026-01-26T14:30:01Z"}`, "notification N-4: attempt 1 failed: HTTP 500: oops", false},
		{"notification.retried", `{"id":"N-4","attempt":2}`, "notification N-4: attempt 2", false},
		{"notification.delivered", `{"id":"N-4","attempt":2,"status":200}`, "notification N-4 delivered (attempt 2)", true},
		{"notification.failed", `{"id":"N-5","attempts":10,"error":"no answer in 10s"}`, "notification N-5 failed after 10 attempts: no answer in 10s", true},
		{"notification.pruned", `{"ids":["N-1","N-2"],"ended_before":"2026-01-01T00:00:00Z"}`, "2 notifications that ended over 30 days ago pruned", false},
	} {
		task, l := New().Apply(wire.Event{Type: c.typ, Data: json.RawMessage(c.data)})
		if task != nil || l.Text != c.want || l.Important != c.important {
			t.Errorf("%s: %v %q %v, want %q %v", c.typ, task, l.Text, l.Important, c.want, c.important)
		}
	}
}

// TestAnEventIsSaidInOneLine: a reason, an error or a summary written
// over several lines is said in one (the lines follow each other, and a
// terminal's status line is redrawn under the last).
func TestALandingBehindTheTaskAheadIsSaidSo(t *testing.T) {
	t.Parallel()
	for data, want := range map[string]string{
		`{"on":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}`: "combined behind the task landing ahead of it (on aaaaaaa), verified while that one lands",
		`{}`: "its turn to land",
	} {
		if _, l := New().Apply(wire.Event{Type: "task.land_started", TaskID: "T-1", Data: json.RawMessage(data)}); l.Text != want {
			t.Errorf("%s: %q, want %q", data, l.Text, want)
		}
	}
	void := `{"integration":{"combined":"","onto":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","run_id":"T-1-a1-land1","void":true}}`
	if _, l := New().Apply(wire.Event{Type: "task.integrating", TaskID: "T-1", Data: json.RawMessage(void)}); !strings.Contains(l.Text, "combined again once first to land") {
		t.Errorf("a void combination: %q", l.Text)
	}
}

func TestAnEventIsSaidInOneLine(t *testing.T) {
	t.Parallel()
	for _, ev := range []wire.Event{
		{Type: "task.state", TaskID: "T-1", Data: json.RawMessage(`{"from":"running","to":"escalated","reason":"the check says:\npermission denied"}`)},
		{Type: "task.escalated", TaskID: "T-1", Data: json.RawMessage(`{"reason":"two\nlines","message":"## Task Escalation Required\n\n**Task:** x"}`)},
		{Type: "task.warning", TaskID: "T-1", Data: json.RawMessage(`{"text":"a\r\nb"}`)},
		{Type: "task.milestone", TaskID: "T-1", Data: json.RawMessage(`{"text":"Attempt 2/12...\n"}`)},
		{Type: "delivery.failed", Data: json.RawMessage(`{"id":"I-1","reason":"no answer\nat all","attempts":3}`)},
		{Type: "operation.started", Data: json.RawMessage(`{"operation":{"id":"OP-1","operation":"deploy\nnow"}}`)},
		{Type: "agent.registered", Agent: "a", Data: json.RawMessage("{\n  \"name\": \"a\"\n}")},
	} {
		_, l := New().Apply(ev)
		if strings.ContainsAny(l.Text, "\r\n") || l.Text == "" {
			t.Errorf("%s: %q", ev.Type, l.Text)
		}
	}
}

// TestAViewStartsFromTheServersTaskAndFollowsItsEvents: a task loaded from
// GET /v1/tasks/{id} keeps the server's start, attempt and hard stop
// until its events say otherwise, and ends when it settles.
func TestAViewStartsFromTheServersTaskAndFollowsItsEvents(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 26, 14, 30, 0, 0, time.UTC)
	started := t0.Add(time.Second)
	v := New()
	executing := wire.PhaseExecuting
	task := v.Load(&wire.Task{ID: "T-3", State: "running", Phase: &executing, Attempt: 1, MaxAttempts: 5, CreatedAt: t0, StartedAt: &started})
	if v.Task("T-3") != task || task.Start != started || task.MaxAttempts != 5 || task.Settled() {
		t.Fatalf("loaded %+v", task)
	}
	if v.Task("T-4") != nil {
		t.Fatal("a task no event named has a view")
	}
	for i, ev := range []string{
		`{"seq":7,"time":"2026-01-26T14:30:21Z","type":"task.attempt","task_id":"T-3","data":{"attempt":2,"kind":"retry","agent":"claude","max_attempts":6}}`,
		`{"seq":8,"time":"2026-01-26T14:30:21Z","type":"task.milestone","task_id":"T-3","data":{"text":"Verification failed, debugging..."}}`,
		`{"seq":9,"time":"2026-01-26T14:31:05Z","type":"task.state","task_id":"T-3","data":{"from":"running","to":"success"}}`,
	} {
		var e wire.Event
		if err := json.Unmarshal([]byte(ev), &e); err != nil {
			t.Fatal(err)
		}
		if got, _ := v.Apply(e); got != task {
			t.Fatalf("event %d folded into %p, not the loaded task %p", i, got, task)
		}
	}
	want := Task{ID: "T-3", State: "success", Milestone: "Verification failed, debugging...", Attempt: 2, MaxAttempts: 6,
		Start: started, End: t0.Add(65 * time.Second)}
	if *task != want || !task.Settled() {
		t.Fatalf("got  %+v\nwant %+v", *task, want)
	}
}

// FuzzApply: no event data, of any type, makes the fold panic, and what
// it says is one line.
func FuzzApply(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	seen := map[string]bool{}
	for _, path := range files {
		for _, ev := range readEvents(f, path) {
			if !seen[ev.Type] {
				seen[ev.Type] = true
				f.Add(ev.Type, "T-1", []byte(ev.Data))
			}
		}
	}
	f.Add("task.failure", "", []byte(`{"record":{"attempt":"one","executor_output":[]}}`))
	f.Add("delivery.failed", "T-1", []byte(`{"attempts":null}`))
	f.Add("notification.pruned", "", []byte(`{"ids":"N-1"}`))
	f.Add("task.state", "T-1", []byte(`not json`))
	f.Add("task.queued", "T-1", []byte(``))
	f.Fuzz(func(t *testing.T, typ, task string, data []byte) {
		v := New()
		for range 2 {
			got, l := v.Apply(wire.Event{Type: typ, TaskID: task, Data: data})
			if (got == nil) != (task == "") {
				t.Fatalf("task %q folded into %v", task, got)
			}
			if strings.ContainsAny(l.Text, "\r\n") {
				t.Fatalf("%s %q: %q is not one line", typ, data, l.Text)
			}
		}
	})
}
