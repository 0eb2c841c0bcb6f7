package test

// Black-box tests of the landing train: verified tasks are combined
// behind the one landing and verified at the same time, and the target
// still moves one task at a time, only to verified work.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"
)

func TestVerifiedTasksAreCombinedBehindTheOneLandingAndTheTargetOnlyHoldsVerifiedWork(t *testing.T) {
	t.Parallel()
	// A check that takes a while: tasks verified together queue behind
	// the first one's combination while it is verified.
	dir := blackbox.ParallelRepo(t, "parallel: 6\nagents:\n"+ownFileAgent(t, "agent", 6), "sleep 0.5\n"+blackbox.OwnFilesCheck)
	before := blackbox.FirstParents(t, dir)
	in := blackbox.ServeRepo(t, dir)
	var ids []string
	for i := 1; i <= 6; i++ {
		id := fmt.Sprintf("L-%d", i)
		ids = append(ids, id)
		in.Submit(map[string]any{"id": id, "description": "Write " + id + " into files/" + id + ".txt"})
	}
	for _, id := range ids {
		in.WaitTask(id, 3*time.Minute, "success")
	}
	// Some task was combined on the combination of the one ahead of it
	// (not landed yet) and verified while that one landed.
	evs, _ := in.Events(0)
	behind := 0
	for _, e := range evs {
		if e.Type != "task.land_started" {
			continue
		}
		var d struct{ On string }
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.On != "" {
			behind++
			if blackbox.GitRun(t, dir, "cat-file", "-t", d.On) != "commit\n" {
				t.Fatalf("%s was combined on %q, no commit", e.TaskID, d.On)
			}
		}
	}
	if behind == 0 {
		t.Fatal("no task was combined behind the one landing ahead of it")
	}
	// main moved once for each task, each time to work that passes the
	// checks, and holds each task's commit once.
	moves := blackbox.FirstParents(t, dir)
	if len(moves) != len(before)+6 {
		t.Fatalf("main pointed at %d commits since the check, want %d:\n%s", len(moves), len(before)+6, blackbox.GitRun(t, dir, "reflog", "main"))
	}
	for _, c := range moves {
		if err := blackbox.CheckTreeOf(t, dir, c); err != nil {
			t.Fatalf("main was at %s, which fails the check: %v", c[:7], err)
		}
	}
	var landed []string
	for _, c := range strings.Fields(blackbox.GitRun(t, dir, "log", "--no-merges", "--format=%H", before[0]+"..main")) {
		landed = append(landed, blackbox.Trailer(t, dir, c, "Wilco-Task"))
	}
	slices.Sort(landed)
	if !slices.Equal(landed, ids) {
		t.Fatalf("the task commits on main are of %v", landed)
	}
	if st := blackbox.GitRun(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("the checkout after the landings:\n%s", st)
	}
	for _, id := range ids {
		if b, err := os.ReadFile(filepath.Join(dir, "files", id+".txt")); err != nil || string(b) != id+"\n" {
			t.Fatalf("the checkout's files/%s.txt: %q %v", id, b, err)
		}
	}
	if !blackbox.Eventually(10*time.Second, 20*time.Millisecond, func() bool {
		return strings.Count(blackbox.GitRun(t, dir, "worktree", "list"), "\n") == 1 && blackbox.GitRun(t, dir, "branch", "--list", "wilco/*") == ""
	}) {
		t.Fatalf("worktrees or branches left:\n%s%s", blackbox.GitRun(t, dir, "worktree", "list"), blackbox.GitRun(t, dir, "branch", "--list"))
	}
}

// A landing that ends in a merge conflict hands the turn to land to the
// next verified task at once: it does not wait for the conflicting task's
// retry (here held until the next task has landed).
func TestAMergeConflictHandsTheTurnToLandToTheNextVerifiedTask(t *testing.T) {
	t.Parallel()
	holds := t.TempDir()
	holdCommit, holdRetry := filepath.Join(holds, "commit"), filepath.Join(holds, "retry")
	for _, f := range []string{holdCommit, holdRetry} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A's retry after its conflict waits for holdRetry to go.
	retryWaits := `case "$(cat "$WILCO_PROMPT_FILE")" in *merge_conflict*) while [ -e "$HOLD_RETRY" ]; do sleep 0.1; done;; esac; exec sh "$OWN_FILE"`
	agentA := fmt.Sprintf("  - {name: a, adapter: exec, command: [sh, -c, %s], prompt: stdin, handshake: inline, timeout: 2m, env: {WILCO_TARGET: main, OWN_FILE_SLEEP: \"1.5\", HOLD_RETRY: %s, OWN_FILE: %s}}\n",
		blackbox.Quoted(retryWaits), blackbox.Quoted(holdRetry), blackbox.Quoted(blackbox.ScriptPath(t, "own_file.sh")))
	const check = `[ "$WILCO_TASK_ID" != B-1 ] || grep -qx B-1 files/B-1.txt || { echo "check: files/B-1.txt"; exit 1; }` + "\n"
	dir := blackbox.ParallelRepo(t, "parallel: 3\nagents:\n"+ownFileAgent(t, "x", 1)+agentA+ownFileAgent(t, "b", 1, "OWN_FILE_SLEEP=2.5"), check)
	if err := os.WriteFile(filepath.Join(dir, "shared.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	blackbox.GitRun(t, dir, "add", "shared.txt")
	blackbox.GitRun(t, dir, "-c", "user.name=wilco test", "-c", "user.email=test@wilco.invalid", "commit", "-qm", "shared")
	// The commit of A's verified change waits for holdCommit to go: B is
	// verified while A's landing is under way.
	hook := "#!/bin/sh\n[ \"$(cat shared.txt 2>/dev/null)\" = A-1 ] || exit 0\nwhile [ -e " + blackbox.Quoted(holdCommit) + " ]; do sleep 0.1; done\n"
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "pre-commit"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "X-1", "description": "Write X-1 into shared.txt", "agent": "x"})
	in.Submit(map[string]any{"id": "A-1", "description": "Write A-1 into shared.txt", "agent": "a"})
	in.Submit(map[string]any{"id": "B-1", "description": "Write B-1 into files/B-1.txt", "agent": "b"})
	in.WaitTask("X-1", time.Minute, "success")
	if !blackbox.Eventually(time.Minute, 20*time.Millisecond, func() bool {
		return in.Task("B-1").Milestone == "Verified: waiting for its turn to land..." && in.Task("A-1").Phase != nil && *in.Task("A-1").Phase == "landing"
	}) {
		t.Fatalf("B-1 is not waiting behind A-1's landing: %s / %s\n%s", in.Task("B-1"), in.Task("A-1"), in.Problems())
	}
	if err := os.Remove(holdCommit); err != nil {
		t.Fatal(err)
	}
	// A-1 conflicts with X-1 and is retried; its retry waits: B-1 lands.
	b := in.WaitTask("B-1", time.Minute, "success")
	if a := in.Task("A-1"); a.State != "running" && a.State != "awaiting_ack" || len(a.Failures) == 0 || a.Failures[0].FailureType != "merge_conflict" {
		t.Fatalf("A-1 when B-1 landed: %s", a)
	}
	if err := os.Remove(holdRetry); err != nil {
		t.Fatal(err)
	}
	a := in.WaitTask("A-1", time.Minute, "success")
	if b.LandedCommit == "" || a.LandedCommit == "" {
		t.Fatalf("landed: B-1 %q, A-1 %q", b.LandedCommit, a.LandedCommit)
	}
	got, err := os.ReadFile(filepath.Join(dir, "shared.txt"))
	if err != nil || !strings.Contains(string(got), "X-1\n") || !strings.Contains(string(got), "A-1\n") {
		t.Fatalf("shared.txt on main: %q %v", got, err)
	}
}
