package test

// Black-box tests of tasks worked in parallel by tmux agents (an instance,
// a session of its own in the task's worktree, per task) and by mailbox
// agents (told where the task's worktree is).

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"
)

// ownTxtCheck is the verify step of these tests: the task's own file,
// <id>.txt, holds what the scripted agents write.
const ownTxtCheck = `if [ -n "$WILCO_TASK_ID" ]; then
	[ "$(cat "$WILCO_TASK_ID.txt" 2>/dev/null)" = "attempt 1" ] || { echo "check: $WILCO_TASK_ID.txt does not hold attempt 1"; exit 1; }
fi
`

func TestTwoTmuxInstancesWorkTwoTasksAtOnceEachInItsWorktreeAndBothLand(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	agent := strings.TrimSuffix(tuiAgentYAML(t, "", ""), "\n") + "\n    instances: 2\n"
	dir := blackbox.ParallelRepo(t, "parallel: 2\nagents:\n"+agent, ownTxtCheck)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	srv := blackbox.TmuxServer(t, dir)
	for _, id := range []string{"P-1", "P-2"} {
		in.Submit(map[string]any{"id": id, "description": "Please write " + id + ".txt for the user. BUSY=4s"})
	}
	// Both at once: each task's session runs its program, in the task's
	// worktree.
	wantDir := map[string]string{}
	for _, id := range []string{"P-1", "P-2"} {
		d, err := filepath.EvalSymlinks(filepath.Join(dir, ".wilco", "worktrees"))
		if err != nil {
			d = filepath.Join(dir, ".wilco", "worktrees")
		}
		wantDir["wilco-tui@"+id] = filepath.Join(d, id)
	}
	paneDir := func(session string) string {
		out, err := exec.Command("tmux", srv.Args("display-message", "-p", "-t", "="+session+":", "#{pane_current_path}")...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	if !blackbox.Eventually(60*time.Second, 50*time.Millisecond, func() bool {
		for s, want := range wantDir {
			if got := paneDir(s); got != want && got != strings.TrimPrefix(want, "/private") {
				return false
			}
		}
		return true
	}) {
		out, _ := exec.Command("tmux", srv.Args("list-sessions", "-F", "#{session_name} #{pane_current_path}")...).CombinedOutput()
		t.Fatalf("the two tasks' sessions never ran at once in their worktrees; sessions:\n%s\nwilco:\n%s", out, in.Stderr)
	}
	// The agent's pane lists the tasks' sessions, and wilco attach opens
	// the one of a task.
	var a struct {
		Pane struct {
			Instances []struct{ Task, Session string }
		}
	}
	in.Must(200, in.Call("GET", "/v1/agents/tui", blackbox.AdminToken, nil), &a)
	sessions := map[string]string{}
	for _, i := range a.Pane.Instances {
		sessions[i.Task] = i.Session
	}
	if len(a.Pane.Instances) != 2 || sessions["P-1"] != "wilco-tui@P-1" || sessions["P-2"] != "wilco-tui@P-2" {
		t.Fatalf("the agent's pane lists the sessions %+v", a.Pane.Instances)
	}
	blackbox.MustContain(t, "wilco attach tui --task P-1 --print", in.Cli("attach", "tui", "--task", "P-1", "--print"), "attach-session -t =wilco-tui@P-1")
	blackbox.MustContain(t, "wilco agents", in.Cli("agents"), "P-1's pane ", "P-2's pane ")
	for _, id := range []string{"P-1", "P-2"} {
		if got := in.WaitTask(id, 2*time.Minute, "success"); got.LandedCommit == "" || got.Attempt != 1 {
			t.Fatalf("%s: landed %q at attempt %d", id, got.LandedCommit, got.Attempt)
		}
	}
	for _, id := range []string{"P-1", "P-2"} {
		if got := strings.TrimSpace(blackbox.GitRun(t, dir, "show", "main:"+id+".txt")); got != "attempt 1" {
			t.Fatalf("main's %s.txt = %q", id, got)
		}
		if _, err := os.Stat(filepath.Join(dir, id+".txt")); err != nil {
			t.Fatalf("the checkout was not moved to what landed: %v", err)
		}
	}
	// Each session ended with its task.
	if !blackbox.Eventually(20*time.Second, 50*time.Millisecond, func() bool {
		for s := range wantDir {
			if exec.Command("tmux", srv.Args("has-session", "-t", "="+s)...).Run() == nil {
				return false
			}
		}
		return true
	}) {
		out, _ := exec.Command("tmux", srv.Args("list-sessions")...).CombinedOutput()
		t.Fatalf("a task's session runs on after the task ended:\n%s", out)
	}
}

func TestAMailboxAgentIsToldTheWorktreeAndBranchItsTaskWorksIn(t *testing.T) {
	t.Parallel()
	dir := blackbox.ParallelRepo(t, "parallel: 2\nagents: []\n", ownTxtCheck)
	in := blackbox.ServeRepo(t, dir)
	tok := in.Agent("remote")
	in.Submit(map[string]any{"id": "R-1", "description": "Write attempt 1 into R-1.txt", "agent": "remote"})
	var m blackbox.InboxMessage
	in.Until("R-1's delegation in the inbox", 30*time.Second, func() bool {
		for _, x := range in.Inbox(tok, time.Second) {
			if x.TaskID == "R-1" {
				m = x
				return true
			}
		}
		return false
	})
	worktree := filepath.Join(dir, ".wilco", "worktrees", "R-1")
	for _, want := range []string{"WORKTREE: task R-1 works in its own git worktree, " + worktree + " (branch wilco/R-1)", "Work there and only there: cd " + worktree} {
		if !strings.Contains(m.Body, want) {
			t.Fatalf("the delegation does not say %q:\n%s", want, m.Body)
		}
	}
	// The agent works where it is told.
	if err := os.WriteFile(filepath.Join(worktree, "R-1.txt"), []byte("attempt 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in.ReplyAs(tok, map[string]any{"in_reply_to": m.ID, "text": "[ACK] R-1 - RECEIVED\nUnderstanding: Will write attempt 1 into R-1.txt in the worktree\n\nDone.\n\nStatus: complete"})
	if got := in.WaitTask("R-1", time.Minute, "success"); got.LandedCommit == "" {
		t.Fatalf("R-1 did not land: %+v", got)
	}
	if got := strings.TrimSpace(blackbox.GitRun(t, dir, "show", "main:R-1.txt")); got != "attempt 1" {
		t.Fatalf("main's R-1.txt = %q", got)
	}
}

// The sessions of a tmux agent's tasks worked in parallel outlive wilco:
// killed (kill -9) while both work, wilco started again finds each task's
// session running in its worktree, follows each turn to its end, and both
// tasks land; a task's session whose task is no more (a stray) is ended.
func TestTmuxInstancesOutliveAKilledWilcoAndTheirTasksLand(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	agent := strings.TrimSuffix(tuiAgentYAML(t, "", ""), "\n") + "\n    instances: 2\n"
	dir := blackbox.ParallelRepo(t, "parallel: 2\nagents:\n"+agent, ownTxtCheck)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	for _, id := range []string{"K-1", "K-2"} {
		in.Submit(map[string]any{"id": id, "description": "Please write " + id + ".txt for the user. BUSY=6s"})
	}
	for _, id := range []string{"K-1", "K-2"} {
		waitMilestone(t, in, id, "Implementing", time.Minute)
	}
	in.Kill()
	srv := blackbox.TmuxServer(t, dir)
	runs := func(session string) bool {
		return exec.Command("tmux", srv.Args("has-session", "-t", "="+session)...).Run() == nil
	}
	for _, id := range []string{"K-1", "K-2"} {
		if !runs("wilco-tui@" + id) {
			t.Fatalf("the session of %s died with wilco", id)
		}
	}
	// The session of a task that is no more.
	if out, err := exec.Command("tmux", srv.Args("new-session", "-d", "-s", "wilco-tui@K-9", "-c", dir, "--", tuiAgent(t))...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	again := blackbox.ServeRepo(t, dir)
	for _, id := range []string{"K-1", "K-2"} {
		got := again.WaitTask(id, 2*time.Minute, "success", "escalated", "stuck")
		if got.State != "success" || got.LandedCommit == "" {
			t.Fatalf("%s ended %s (landed %q):\n%s\nthe agent's logs:\n%s", id, got.State, got.LandedCommit, got, blackbox.AgentLogs(t, dir))
		}
		if content := strings.TrimSpace(blackbox.GitRun(t, dir, "show", "main:"+id+".txt")); content != "attempt 1" {
			t.Fatalf("main's %s.txt = %q", id, content)
		}
	}
	blackbox.MustContain(t, "the server's log", again.Stderr.String(), "following again the turn of a tmux agent", "wilco-tui@K-9")
	if runs("wilco-tui@K-9") {
		t.Fatal("the session of a task that is no more runs on")
	}
}

// An agent that reads its messages in AI Maestro's shapes is told the
// worktree and branch its task works in too.
func TestAnAIMaestroAgentIsToldTheWorktreeItsTaskWorksIn(t *testing.T) {
	t.Parallel()
	dir := blackbox.ParallelRepo(t, "parallel: 2\nagents:\n  - {name: remote, adapter: mailbox}\ncompat: {aimaestro: true}\n", ownTxtCheck)
	in := blackbox.ServeRepo(t, dir)
	tok := strings.TrimSpace(in.Cli("agents", "token", "remote"))
	in.Submit(map[string]any{"id": "R-2", "description": "Write attempt 1 into R-2.txt"})
	want := "WORKTREE: task R-2 works in its own git worktree, " + filepath.Join(dir, ".wilco", "worktrees", "R-2") + " (branch wilco/R-2)"
	var list struct {
		Messages []struct{ ID, Subject string }
	}
	in.Until("R-2's message in the AI Maestro inbox", 30*time.Second, func() bool {
		r := in.Call("GET", "/api/messages?agent=remote&box=inbox&status=unread", tok, nil)
		return r.Status == 200 && json.Unmarshal(r.Body, &list) == nil && len(list.Messages) > 0 && strings.Contains(list.Messages[0].Subject, "R-2")
	})
	r := in.Call("GET", "/api/messages?agent=remote&box=inbox&id="+list.Messages[0].ID, tok, nil)
	body := string(r.Body)
	if r.Status != 200 || !strings.Contains(body, want) {
		t.Fatalf("the AI Maestro inbox does not say %q:\n%s", want, body)
	}
}
