package intake

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/core"
	"wilco/forge"
	"wilco/forge/forgetest"
	"wilco/runtime"
)

// stateRuntime runs commands and reads on a core of its own, as the
// runtime's loop does (one at a time).
type stateRuntime struct {
	mu  sync.Mutex
	c   *core.State
	now time.Time
}

func (r *stateRuntime) Do(_ context.Context, fn runtime.Func) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, err := fn(r.c, r.now)
	r.c.TakeReady()
	return v, err
}

func (r *stateRuntime) Read(fn func(*core.State)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(r.c)
	return nil
}

func newStateRuntime(t *testing.T) *stateRuntime {
	t.Helper()
	r := &stateRuntime{c: core.New(), now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := r.c.RegisterAgent(r.now, core.AgentSpec{Name: "a", Adapter: "mailbox"}); err != nil {
		t.Fatal(err)
	}
	r.c.TakeReady()
	return r
}

func newForge(t *testing.T, s *forgetest.Server) forge.Forge {
	t.Helper()
	f, err := forge.New(forge.Options{Kind: forge.GitHub, API: s.API(forge.GitHub), Repo: s.Repo, Token: s.Token, Attempts: 2, Backoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestACommentTheForgeRefusesIsAFailedAttemptAndTheNextOneWritesIt(t *testing.T) {
	t.Parallel()
	s := forgetest.New(t, forgetest.Options{})
	n := s.AddIssue("alice", "Fix it", "", "wilco")
	rt := newStateRuntime(t)
	v, err := rt.Do(context.Background(), func(c *core.State, now time.Time) (any, error) {
		return c.SubmitTask(now, core.TaskSpec{Description: "Fix it", Issue: n})
	})
	if err != nil {
		t.Fatal(err)
	}
	tk := v.(core.Task)
	th := &Thread{Forge: newForge(t, s), Runtime: rt}
	e := core.Notify{Notification: core.Notification{ID: "N-1", Hook: core.IssueHook, Event: core.NotifyAcknowledged, TaskID: tk.ID, Reason: "I will fix it"}, Attempt: 1}
	s.Fail(forgetest.Fault{Method: "POST", Path: "/comments", Times: 1, Status: 502})
	r, ok := th.Make(context.Background(), e)
	if !ok || r.Error == "" || r.Permanent || r.ID != "N-1" || r.Attempt != 1 {
		t.Fatalf("a refused comment: %+v %v", r, ok)
	}
	if len(s.Comments(n)) != 0 {
		t.Fatal("a comment was written")
	}
	e.Attempt = 2
	r, ok = th.Make(context.Background(), e)
	if !ok || r.Error != "" || r.Status/100 != 2 {
		t.Fatalf("the next attempt: %+v %v", r, ok)
	}
	cs := s.Comments(n)
	if len(cs) != 1 || !strings.HasPrefix(cs[0].Body, Marker) || !strings.Contains(cs[0].Body, "> I will fix it") {
		t.Fatalf("comments %+v", cs)
	}
	e.Notification.TaskID = "T-99"
	if r, ok := th.Make(context.Background(), e); !ok || !r.Permanent {
		t.Fatalf("a notification of no task: %+v %v", r, ok)
	}
}

// A poll makes a task of each labelled issue once, reads the comments
// already there as read, and acts on a collaborator's command once, in
// the same commit as its being read.
func TestAPollMakesEachIssueOneTaskAndActsOnACommandOnce(t *testing.T) {
	t.Parallel()
	s := forgetest.New(t, forgetest.Options{})
	s.AddCollaborator("alice")
	n := s.AddIssue("alice", "Fix it", "- [ ] it is fixed", "wilco")
	s.AddComment(n, "alice", "/wilco abort")
	rt := newStateRuntime(t)
	in := New(Options{Forge: newForge(t, s), Runtime: rt, Label: "wilco", Poll: time.Minute})
	ctx := context.Background()
	if err := in.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	tasks := rt.c.Tasks(func(t *core.Task) bool { return t.Issue == n })
	if len(tasks) != 1 || tasks[0].IssueSeen == 0 || tasks[0].State.Terminal() {
		t.Fatalf("the issue's task: %+v", tasks)
	}
	id := tasks[0].ID
	if err := in.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rt.c.Tasks(func(t *core.Task) bool { return t.Issue == n }); len(got) != 1 || got[0].State.Terminal() {
		t.Fatalf("after a second poll: %+v", got)
	}
	s.AddComment(n, "mallory", "/wilco abort")
	if err := in.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	tk, _ := rt.c.Task(id)
	if tk.State.Terminal() || tk.IssueSeen != s.Comments(n)[1].ID {
		t.Fatalf("a stranger's command: %+v", tk)
	}
	s.CloseIssue(n)
	if err := in.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := rt.c.Task(id); ok {
		if tk, _ := rt.c.Task(id); tk.State != core.TaskCancelled {
			t.Fatalf("the closed issue's task: %s", tk.State)
		}
	}
}
