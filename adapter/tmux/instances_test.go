package tmux

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/core"
)

// worktree makes the folder of a task worked in parallel under the
// bundle's repository and returns it, relative to the repository.
func (b *bundle) worktree(t *testing.T, task string) string {
	t.Helper()
	rel := core.TaskWorktree(task)
	if err := os.MkdirAll(filepath.Join(b.dir, filepath.FromSlash(rel)), 0o755); err != nil {
		t.Fatal(err)
	}
	return rel
}

// inWorktree is a delegation of a task worked in parallel.
func inWorktree(m core.InboxMessage, worktree string) core.InboxMessage {
	m.Worktree = worktree
	return m
}

// paneOf is what tmux says of a session's pane: its program's pid and the
// folder it runs in.
func paneOf(t *testing.T, srv Server, session string) (pid, dir string) {
	t.Helper()
	out, err := srv.run(context.Background(), nil, "display-message", "-p", "-t", target(session), "#{pane_pid}|#{pane_current_path}")
	if err != nil {
		t.Fatalf("session %s: %v", session, err)
	}
	pid, dir, _ = strings.Cut(strings.TrimSpace(out), "|")
	return pid, dir
}

func (b *bundle) server(t *testing.T) Server {
	t.Helper()
	srv, err := PrivateServer("", filepath.Join(b.dir, ".wilco"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestTasksWorkedInParallelAreWorkedAtOnceEachInASessionInItsWorktree(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	wt1, wt2 := b.worktree(t, "T-1"), b.worktree(t, "T-2")
	b.adapter.Deliver("tui", inWorktree(delegation("M-1", "T-1", 1, "Please write file.txt for the user. BUSY=6s"), wt1))
	b.adapter.Deliver("tui", inWorktree(delegation("M-2", "T-2", 1, "Please write file.txt for the user. BUSY=6s"), wt2))
	for range 2 {
		select {
		case <-b.submits:
		case <-time.After(30 * time.Second):
			t.Fatal("the two prompts were not both submitted")
		}
	}
	b.rec.mu.Lock()
	ended := len(b.rec.turns)
	b.rec.mu.Unlock()
	if ended != 0 {
		t.Fatalf("a turn ended before the other task's prompt was submitted: the tasks were not worked at once (%d turns ended)", ended)
	}
	b.rec.wait(t, "the end of both turns", 60*time.Second, func() bool { return len(b.rec.turns) == 2 })
	for _, tr := range b.rec.turns {
		if tr.Status != "success" {
			t.Fatalf("turn %+v", tr)
		}
	}
	srv := b.server(t)
	ctx := context.Background()
	for task, wt := range map[string]string{"T-1": wt1, "T-2": wt2} {
		dir := filepath.Join(b.dir, filepath.FromSlash(wt))
		if got, _ := os.ReadFile(filepath.Join(dir, "file.txt")); string(got) != "attempt 1\n" {
			t.Fatalf("%s: file.txt in its worktree = %q", task, got)
		}
		session := "wilco-tui@" + task
		if _, in := paneOf(t, srv, session); in != dir {
			t.Fatalf("the session %s runs in %s, want the task's worktree %s", session, in, dir)
		}
	}
	if _, err := os.Stat(filepath.Join(b.dir, "file.txt")); err == nil {
		t.Fatal("a task worked in parallel wrote in the repository's checkout")
	}
	if srv.HasSession(ctx, "wilco-tui") {
		t.Fatal("the agent's own session was started, though only tasks worked in parallel came")
	}
	st, _ := b.adapter.State("tui")
	if len(st.Instances) != 2 || st.Instances[0].Task != "T-1" || st.Instances[0].Session != "wilco-tui@T-1" || st.Instances[1].Task != "T-2" {
		t.Fatalf("the agent's state: %+v", st)
	}

	// A retry of a task goes to its session, whose program goes on.
	pid, _ := paneOf(t, srv, "wilco-tui@T-1")
	b.adapter.Deliver("tui", inWorktree(delegation("M-3", "T-1", 2, "<retry_context attempt=\"2\">\nfile.txt is wrong.\n</retry_context>\n\nPlease write file.txt for the user."), wt1))
	b.rec.wait(t, "the retry's turn", 30*time.Second, func() bool { return len(b.rec.turns) == 3 })
	if again, _ := paneOf(t, srv, "wilco-tui@T-1"); again != pid {
		t.Fatalf("the retry started another program (pid %s, then %s)", pid, again)
	}
	if got, _ := os.ReadFile(filepath.Join(b.dir, filepath.FromSlash(wt1), "file.txt")); string(got) != "fixed T-1\n" {
		t.Fatalf("file.txt after the retry = %q", got)
	}

	// The task's end ends its session, and only its.
	if err := b.adapter.EndTask(ctx, "T-1"); err != nil {
		t.Fatal(err)
	}
	if srv.HasSession(ctx, "wilco-tui@T-1") || !srv.HasSession(ctx, "wilco-tui@T-2") {
		t.Fatalf("after T-1 ended: its session runs %v, T-2's %v", srv.HasSession(ctx, "wilco-tui@T-1"), srv.HasSession(ctx, "wilco-tui@T-2"))
	}
	if st, _ := b.adapter.State("tui"); len(st.Instances) != 1 || st.Instances[0].Task != "T-2" {
		t.Fatalf("the agent's state after T-1 ended: %+v", st)
	}
}

// Each instance answers its own permission questions and is stopped on
// its own when it shows nothing new for idle_timeout.
func TestEachInstanceAnswersItsPermissionQuestionsAndStallsOnItsOwn(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, func(c *AgentConfig) {
		c.Allow = []string{`write to file\.txt`}
		c.IdleTimeout = 2 * time.Second
	})
	wt1, wt2 := b.worktree(t, "T-1"), b.worktree(t, "T-2")
	b.adapter.Deliver("tui", inWorktree(delegation("M-1", "T-1", 1, "Please write file.txt for the user. PERMISSION"), wt1))
	b.adapter.Deliver("tui", inWorktree(delegation("M-2", "T-2", 1, "Please write other.txt for the user. IDLE"), wt2))
	b.rec.wait(t, "both turns' ends", 60*time.Second, func() bool { return len(b.rec.turns) == 2 })
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	byTask := map[string]core.TurnResult{}
	for _, tr := range b.rec.turns {
		byTask[tr.TaskID] = tr
	}
	if tr := byTask["T-1"]; tr.Status != "success" {
		t.Fatalf("T-1's turn: %+v", tr)
	}
	if tr := byTask["T-2"]; !tr.TimedOut || !strings.Contains(tr.Error, "idle_timeout") {
		t.Fatalf("T-2's turn: %+v", tr)
	}
	if len(b.rec.permissions) != 1 || b.rec.permissions[0].TaskID != "T-1" || b.rec.permissions[0].Answer != "allowed" {
		t.Fatalf("permissions: %+v", b.rec.permissions)
	}
	if got, _ := os.ReadFile(filepath.Join(b.dir, filepath.FromSlash(wt1), "file.txt")); string(got) != "attempt 1\n" {
		t.Fatalf("file.txt = %q", got)
	}
}

// A hibernation ends every session of the agent, its instances' too, and
// the wake starts each again in its own folder.
func TestAHibernationAndAWakeReachEveryInstance(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	wt := b.worktree(t, "T-1")
	b.adapter.Deliver("tui", inWorktree(delegation("M-1", "T-1", 1, "Please write file.txt for the user."), wt))
	b.rec.wait(t, "the turn's end", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	srv, ctx := b.server(t), context.Background()
	if _, action, err := b.adapter.Hibernate(ctx, "tui"); err != nil || !strings.Contains(action, "1 task(s)") {
		t.Fatalf("hibernate: %q, %v", action, err)
	}
	if srv.HasSession(ctx, "wilco-tui@T-1") {
		t.Fatal("the instance's session runs on after the hibernation")
	}
	action, err := b.adapter.Wake(ctx, "tui", "")
	if err != nil || !strings.Contains(action, "1 task(s)") {
		t.Fatalf("wake: %q, %v", action, err)
	}
	if _, dir := paneOf(t, srv, "wilco-tui@T-1"); dir != filepath.Join(b.dir, filepath.FromSlash(wt)) {
		t.Fatalf("the woken instance runs in %s", dir)
	}
	b.adapter.Deliver("tui", inWorktree(delegation("M-2", "T-1", 2, "Please write again.txt for the user."), wt))
	b.rec.wait(t, "the turn after the wake", 30*time.Second, func() bool { return len(b.rec.turns) == 2 })
	if got, _ := os.ReadFile(filepath.Join(b.dir, filepath.FromSlash(wt), "again.txt")); string(got) != "attempt 1\n" {
		t.Fatalf("again.txt = %q", got)
	}
}

// wilco started again finds the session of a task under way and uses it
// as it is (Adopt); the session of a task that ended while it was down is
// a stray, ended; the removal of the agent ends its instances' sessions.
func TestAnInstanceSessionOutlivesWilcoAndAStrayOneIsEnded(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	wt := b.worktree(t, "T-1")
	stray := b.worktree(t, "T-9")
	b.adapter.Deliver("tui", inWorktree(delegation("M-1", "T-1", 1, "Please write file.txt for the user."), wt))
	b.adapter.Deliver("tui", inWorktree(delegation("M-9", "T-9", 1, "Please write file.txt for the user."), stray))
	b.rec.wait(t, "the turns' ends", 30*time.Second, func() bool { return len(b.rec.turns) == 2 })
	srv, ctx := b.server(t), context.Background()
	pid, _ := paneOf(t, srv, "wilco-tui@T-1")
	b.adapter.Close()

	rec := newRecorder()
	a, err := New(Options{Dir: b.dir, StateDir: filepath.Join(b.dir, ".wilco"), Report: rec, Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if err := a.Add(AgentConfig{Name: "tui", Command: []string{tuiAgent}, Ready: `^> ?$`, Busy: `working…|thinking`, Permission: `Allow .*\? \(y/n\)`,
		Settle: 400 * time.Millisecond, Width: 120, Height: 30}); err != nil {
		t.Fatal(err)
	}
	a.Adopt("tui", "T-1", wt)
	ended, err := a.EndStrays(ctx)
	if err != nil || len(ended) != 1 || ended[0] != "wilco-tui@T-9" {
		t.Fatalf("strays ended: %q, %v", ended, err)
	}
	a.Deliver("tui", inWorktree(delegation("M-2", "T-1", 2, "Please write again.txt for the user."), wt))
	rec.wait(t, "the turn in the adopted session", 30*time.Second, func() bool { return len(rec.turns) == 1 })
	if again, _ := paneOf(t, srv, "wilco-tui@T-1"); again != pid {
		t.Fatalf("the session's program was started again (pid %s, then %s)", pid, again)
	}
	if err := a.Remove(ctx, "tui"); err != nil {
		t.Fatal(err)
	}
	if srv.HasSession(ctx, "wilco-tui@T-1") {
		t.Fatal("the removed agent's instance session runs on")
	}
}

// An instance's session is named after its agent and its task so that it
// is never another agent's: no agent name holds '@'.
func TestAnInstanceSessionIsNamedAfterItsAgentAndTask(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ agent, task, want string }{
		{"tui", "T-3", "wilco-tui@T-3"},
		{"a.b", "03-01:task-3", "wilco-a_b@03-01%3Atask-3"},
		{"x", "v1.2", "wilco-x@v1%2E2"},
	} {
		if got := InstanceSessionName(c.agent, c.task); got != c.want {
			t.Errorf("InstanceSessionName(%q, %q) = %q, want %q", c.agent, c.task, got, c.want)
		}
	}
}

// claudeFolder is Claude Code's folder of a conversation held in dir:
// every byte but ASCII letters and digits as '-'.
func claudeFolder(dir string) string {
	out := []byte(dir)
	for i, c := range out {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			out[i] = '-'
		}
	}
	return string(out)
}

// Each instance reads the record its program keeps of its conversation in
// the folder it runs in: Claude Code's projects/<folder> of the task's
// worktree, not the repository's; the conversation it finds is the
// instance's own, kept for it alone.
func TestEachInstanceReadsTheRecordOfItsOwnWorktree(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	config := t.TempDir()
	if err := b.adapter.Add(AgentConfig{Name: "claude", Preset: PresetClaudeCode, Env: map[string]string{"CLAUDE_CONFIG_DIR": config}}); err != nil {
		t.Fatal(err)
	}
	home, err := b.adapter.agent("claude")
	if err != nil {
		t.Fatal(err)
	}
	folder := claudeFolder
	now := time.Now()
	for _, c := range []struct{ task, conv string }{{"T-1", "conv-one"}, {"T-2", "conv-two"}, {"", "conv-home"}} {
		dir := b.dir
		if c.task != "" {
			dir = filepath.Join(b.dir, filepath.FromSlash(b.worktree(t, c.task)))
		}
		p := filepath.Join(config, "projects", folder(dir), c.conv+".jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		line := `{"type":"user","message":{"role":"user","content":"prompt of ` + firstOf(c.task, "home") + `"},"timestamp":"` + now.UTC().Format(time.RFC3339Nano) + `"}` + "\n"
		if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, task := range []string{"T-1", "T-2"} {
		ag := b.adapter.instanceFor(home, task, core.TaskWorktree(task), true)
		ag.opMu.Lock()
		ag.startedAt = now.Add(-time.Second)
		var path string
		for deadline := time.Now().Add(5 * time.Second); ag.rec.log == nil && time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
			ag.recordEntries(time.Now())
		}
		if ag.rec.log != nil {
			path = ag.rec.log.Path()
		}
		ag.opMu.Unlock()
		want := filepath.Join(config, "projects", folder(filepath.Join(b.dir, ".wilco", "worktrees", task)))
		if filepath.Dir(path) != want {
			t.Fatalf("%s's instance reads %q, want its worktree's record in %s", task, path, want)
		}
		conv := map[string]string{"T-1": "conv-one", "T-2": "conv-two"}[task]
		if st, _ := b.adapter.State("claude"); st.Conversation != "" {
			t.Fatalf("an instance's conversation was taken for the agent's own: %+v", st)
		}
		if got := ag.savedConversation(); got != conv {
			t.Fatalf("%s's instance keeps conversation %q, want %q", task, got, conv)
		}
	}
}

// An agent that works in a session of the user's works a task worked in
// parallel in a session wilco makes (the user's is the agent's own, in
// the repository), on the user's tmux server it names, and ends with the
// task; the user's session is never ended.
func TestATaskOfAnAgentInAUsersSessionGetsASessionOfItsOwn(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := t.TempDir()
	user := Server{Socket: filepath.Join(dir, "user.sock")}
	ctx := context.Background()
	if err := user.NewSession(ctx, "mine", dir, nil, []string{"sh"}, 100, 30); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = user.KillServer(context.Background()) })
	b := setup(t, nil, func(c *AgentConfig) { c.Session, c.Socket = "mine", user.Socket })
	wt := b.worktree(t, "T-1")
	b.adapter.Deliver("tui", inWorktree(delegation("M-1", "T-1", 1, "Please write file.txt for the user."), wt))
	b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	if _, in := paneOf(t, user, "wilco-tui@T-1"); in != filepath.Join(b.dir, filepath.FromSlash(wt)) {
		t.Fatalf("the task's session runs in %q", in)
	}
	if err := b.adapter.EndTask(ctx, "T-1"); err != nil {
		t.Fatal(err)
	}
	if user.HasSession(ctx, "wilco-tui@T-1") || !user.HasSession(ctx, "mine") {
		t.Fatalf("after the task ended: its session runs %v, the user's %v", user.HasSession(ctx, "wilco-tui@T-1"), user.HasSession(ctx, "mine"))
	}
}

// A task's turn whose worktree is gone fails as an execution error that
// says so: no program is started elsewhere in its place.
func TestATurnWhoseWorktreeIsGoneFailsSayingSo(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	b.adapter.Deliver("tui", inWorktree(delegation("M-1", "T-1", 1, "Please write file.txt for the user."), core.TaskWorktree("T-1")))
	b.rec.wait(t, "the end of the turn", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	if tr := b.rec.turns[0]; tr.ExitCode != -1 || !strings.Contains(tr.Error, "the task's worktree") || !strings.Contains(tr.Error, "is missing") {
		t.Fatalf("turn %+v", tr)
	}
	if b.server(t).HasSession(context.Background(), "wilco-tui@T-1") {
		t.Fatal("a session was made for a task whose worktree is gone")
	}
}

// A task that comes while the agent hibernates waits for the wake: no
// session is started for it until then.
func TestATaskThatComesWhileTheAgentHibernatesWaitsForTheWake(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	ctx := context.Background()
	if _, _, err := b.adapter.Hibernate(ctx, "tui"); err != nil {
		t.Fatal(err)
	}
	wt := b.worktree(t, "T-1")
	b.adapter.Deliver("tui", inWorktree(delegation("M-1", "T-1", 1, "Please write file.txt for the user."), wt))
	home, err := b.adapter.agent("tui")
	if err != nil {
		t.Fatal(err)
	}
	inst := b.adapter.instanceFor(home, "T-1", wt, false)
	if inst == nil {
		t.Fatal("no instance of the agent took the task")
	}
	stepped(t, inst)
	srv := b.server(t)
	if srv.HasSession(ctx, "wilco-tui@T-1") {
		t.Fatal("a session was started for a task while the agent hibernates")
	}
	if _, err := b.adapter.Wake(ctx, "tui", ""); err != nil {
		t.Fatal(err)
	}
	b.rec.wait(t, "the turn after the wake", 30*time.Second, func() bool { return len(b.rec.turns) == 1 })
	if tr := b.rec.turns[0]; tr.Status != "success" {
		t.Fatalf("turn %+v", tr)
	}
}

// stepped waits until ag's loop has taken a whole step (read its pane, or
// passed it by, hibernating) that began after the call: the loop takes a
// wake only between two steps, so once a second wake sent is taken, the
// step after the first one is over.
func stepped(t *testing.T, ag *agent) {
	t.Helper()
	for range 2 {
		ag.signal()
		deadline := time.Now().Add(10 * time.Second)
		for len(ag.wake) > 0 {
			if time.Now().After(deadline) {
				t.Fatal("the agent's loop took no step")
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// copies is an Options.ReadOnly that makes each scout's copy a folder of
// its own and records what it was asked for and what was removed.
type copies struct {
	root    string
	changed []string // what done says the scout changed
	mu      sync.Mutex
	asked   []string // message id and worktree
	removed []string
}

func (c *copies) readOnly(_ context.Context, messageID, worktree string) (string, func(context.Context) ([]string, error), error) {
	dir := filepath.Join(c.root, "scout-"+messageID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	c.mu.Lock()
	c.asked = append(c.asked, messageID+" "+worktree)
	c.mu.Unlock()
	return dir, func(context.Context) ([]string, error) {
		c.mu.Lock()
		c.removed = append(c.removed, dir)
		c.mu.Unlock()
		return c.changed, os.RemoveAll(dir)
	}, nil
}

// askedFrom delivers a message about task T-1, worked in parallel, and
// returns the answer's text once the session made for it has ended.
func (b *bundle) askedFrom(t *testing.T, typ core.MessageType, wt string) string {
	t.Helper()
	b.adapter.Deliver("tui", core.InboxMessage{ID: "M-5", Type: string(typ), TaskID: "T-1", Worktree: wt, Attempt: 1,
		Subject: "A question", Body: "WHERE do you work?"})
	b.rec.wait(t, "the answer", 30*time.Second, func() bool { return len(b.rec.replies) == 1 })
	srv := b.server(t)
	ctx := context.Background()
	session := AskSessionName("tui", "T-1", "M-5")
	b.rec.wait(t, "the end of the session made for the message", 10*time.Second, func() bool {
		return b.rec.logged("ended the agent's session", "session="+session)
	})
	if srv.HasSession(ctx, session) {
		t.Fatalf("the session %s made for the message still runs after its answer", session)
	}
	if srv.HasSession(ctx, SessionName("tui")) {
		t.Fatal("the agent's own session was started for a message about a task worked in parallel")
	}
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	if r := b.rec.replies[0]; r.InReplyTo != "M-5" {
		t.Fatalf("reply %+v", r)
	}
	return strings.ReplaceAll(b.rec.replies[0].Text, "\n", "")
}

func TestAScoutOfATaskWorkedInParallelAnswersInASessionOfItsOwnInACopyOfTheTasksWorktree(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	c := &copies{root: filepath.Join(b.dir, ".wilco", "copies")}
	b.adapter.opts.ReadOnly = c.readOnly
	wt := b.worktree(t, "T-1")
	text := b.askedFrom(t, core.TypeScoutQuery, wt)
	copyDir := filepath.Join(c.root, "scout-M-5")
	if !strings.Contains(text, "working in "+copyDir) {
		t.Fatalf("the scout did not answer in the copy of the task's worktree %s: %q", copyDir, text)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.asked) != 1 || c.asked[0] != "M-5 "+wt {
		t.Fatalf("copies asked for: %q", c.asked)
	}
	if len(c.removed) != 1 {
		t.Fatalf("the scout's copy was not removed once its answer was read: %q", c.removed)
	}
}

func TestTheReviewerOfATaskWorkedInParallelAnswersInASessionOfItsOwnInTheTasksWorktree(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	wt := b.worktree(t, "T-1")
	text := b.askedFrom(t, core.TypeReview, wt)
	if dir := filepath.Join(b.dir, filepath.FromSlash(wt)); !strings.Contains(text, "working in "+dir) {
		t.Fatalf("the reviewer did not answer in the task's worktree %s: %q", dir, text)
	}
}

func TestAScoutOfATaskNotWorkedInParallelAnswersInTheAgentsOwnSession(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	b.adapter.Deliver("tui", core.InboxMessage{ID: "M-6", Type: string(core.TypeScoutQuery), TaskID: "T-2", Attempt: 1,
		Subject: "A question", Body: "WHERE do you work?"})
	b.rec.wait(t, "the answer", 30*time.Second, func() bool { return len(b.rec.replies) == 1 })
	b.rec.mu.Lock()
	text := strings.ReplaceAll(b.rec.replies[0].Text, "\n", "")
	b.rec.mu.Unlock()
	if !strings.Contains(text, "working in "+b.dir) || strings.Contains(text, ".wilco") {
		t.Fatalf("the scout did not answer in the repository %s: %q", b.dir, text)
	}
	if !b.server(t).HasSession(context.Background(), SessionName("tui")) {
		t.Fatal("the agent's own session does not run")
	}
}

func TestAScoutThatChangedItsCopyOfATasksWorktreeHasItsAnswerRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	c := &copies{root: filepath.Join(b.dir, ".wilco", "copies"), changed: []string{"file.txt"}}
	b.adapter.opts.ReadOnly = c.readOnly
	wt := b.worktree(t, "T-1")
	b.adapter.Deliver("tui", core.InboxMessage{ID: "M-7", Type: string(core.TypeScoutQuery), TaskID: "T-1", Worktree: wt, Attempt: 1,
		Subject: "A question", Body: "WHERE do you work?"})
	b.rec.wait(t, "the failed answer", 30*time.Second, func() bool { return len(b.rec.failed) == 1 })
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	if f := b.rec.failed[0]; f.MessageID != "M-7" || !strings.Contains(f.Reason, "file.txt") {
		t.Fatalf("failed: %+v", f)
	}
	if len(b.rec.replies) != 0 {
		t.Fatalf("the answer of a scout that changed files was taken: %+v", b.rec.replies)
	}
}

// A prompt the agent's record holds was taken, though the pane still
// shows it in the input box (a program slow to redraw, starting under
// load): the submit key is not sent again, which would submit it a second
// time; one the record does not hold has the key sent again.
func TestAPromptTheRecordHoldsIsNotSubmittedAgainWhileTheInputBoxStillShowsIt(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	config := t.TempDir()
	if err := b.adapter.Add(AgentConfig{Name: "claude", Preset: PresetClaudeCode, Env: map[string]string{"CLAUDE_CONFIG_DIR": config}}); err != nil {
		t.Fatal(err)
	}
	ag, err := b.adapter.agent("claude")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	p := filepath.Join(config, "projects", claudeFolder(b.dir), "conv.jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	line := `{"type":"user","message":{"role":"user","content":"Write the fix into file.txt, then say done."},"timestamp":"` + now.UTC().Format(time.RFC3339Nano) + `"}` + "\n"
	if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	ag.opMu.Lock()
	defer ag.opMu.Unlock()
	ag.startedAt = now.Add(-time.Second)
	for deadline := time.Now().Add(5 * time.Second); ag.rec.log == nil && time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		ag.recordEntries(time.Now())
	}
	log := slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		prompt  string
		submits int
		phase   phase
	}{
		{"Write the fix into file.txt, then say done.", 1, phaseWorking},
		{"Another prompt the record does not hold at all.", 2, phaseConfirming},
	} {
		j := &job{msg: core.InboxMessage{ID: "M-1"}, prompt: c.prompt, log: log, phase: phaseConfirming,
			pastedAt: now.Add(-500 * time.Millisecond), submits: 1, submittedAt: now.Add(-10 * time.Second)}
		ag.confirm(context.Background(), j, Pane{}, Typing, time.Now())
		if j.submits != c.submits || j.phase != c.phase {
			t.Errorf("%q, its input box still showing it: submit key sent %d times, phase %v; want %d, %v", c.prompt, j.submits, j.phase, c.submits, c.phase)
		}
	}
}

// The sessions wilco made on a user's tmux server for an agent's tasks
// that ended while wilco was down are ended at the next start, as on
// wilco's own server; the user's sessions, and a task's still under way,
// are left.
func TestATasksSessionLeftOnAUsersServerIsEndedAtTheNextStart(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := t.TempDir()
	user := Server{Socket: filepath.Join(dir, "user.sock")}
	ctx := context.Background()
	for _, s := range []string{"mine", "wilco-other@T-3"} {
		if err := user.NewSession(ctx, s, dir, nil, []string{"sh"}, 100, 30); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = user.KillServer(context.Background()) })
	inUsers := func(c *AgentConfig) { c.Session, c.Socket = "mine", user.Socket }
	b := setup(t, nil, inUsers)
	wt, stray := b.worktree(t, "T-1"), b.worktree(t, "T-9")
	b.adapter.Deliver("tui", inWorktree(delegation("M-1", "T-1", 1, "Please write file.txt for the user."), wt))
	b.adapter.Deliver("tui", inWorktree(delegation("M-9", "T-9", 1, "Please write file.txt for the user."), stray))
	b.rec.wait(t, "the turns' ends", 30*time.Second, func() bool { return len(b.rec.turns) == 2 })
	b.adapter.Close()

	a, err := New(Options{Dir: b.dir, StateDir: filepath.Join(b.dir, ".wilco"), Report: newRecorder(), Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	c := AgentConfig{Name: "tui", Command: []string{tuiAgent}, Ready: `^> ?$`, Busy: `working…|thinking`, Permission: `Allow .*\? \(y/n\)`,
		Settle: 400 * time.Millisecond, Width: 120, Height: 30}
	inUsers(&c)
	if err := a.Add(c); err != nil {
		t.Fatal(err)
	}
	a.Adopt("tui", "T-1", wt)
	ended, err := a.EndStrays(ctx)
	if err != nil || len(ended) != 1 || ended[0] != "wilco-tui@T-9" {
		t.Fatalf("strays ended: %q, %v", ended, err)
	}
	for s, want := range map[string]bool{"mine": true, "wilco-other@T-3": true, "wilco-tui@T-1": true, "wilco-tui@T-9": false} {
		if got := user.HasSession(ctx, s); got != want {
			t.Errorf("after the sweep, the user's server has %s: %v, want %v", s, got, want)
		}
	}
}
