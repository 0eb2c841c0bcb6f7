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
)

func TestVerifiedTasksAreCombinedBehindTheOneLandingAndTheTargetOnlyHoldsVerifiedWork(t *testing.T) {
	t.Parallel()
	// A check that takes a while: tasks verified together queue behind
	// the first one's combination while it is verified.
	dir := parallelRepo(t, "parallel: 6\nagents:\n"+ownFileAgent(t, "agent", 6), "sleep 0.5\n"+ownFilesCheck)
	before := firstParents(t, dir)
	in := serveRepo(t, dir)
	var ids []string
	for i := 1; i <= 6; i++ {
		id := fmt.Sprintf("L-%d", i)
		ids = append(ids, id)
		in.submit(map[string]any{"id": id, "description": "Write " + id + " into files/" + id + ".txt"})
	}
	for _, id := range ids {
		in.waitTask(id, 3*time.Minute, "success")
	}
	// Some task was combined on the combination of the one ahead of it
	// (not landed yet) and verified while that one landed.
	evs, _ := in.events(0)
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
			if gitRun(t, dir, "cat-file", "-t", d.On) != "commit\n" {
				t.Fatalf("%s was combined on %q, no commit", e.TaskID, d.On)
			}
		}
	}
	if behind == 0 {
		t.Fatal("no task was combined behind the one landing ahead of it")
	}
	// main moved once for each task, each time to work that passes the
	// checks, and holds each task's commit once.
	moves := firstParents(t, dir)
	if len(moves) != len(before)+6 {
		t.Fatalf("main pointed at %d commits since the check, want %d:\n%s", len(moves), len(before)+6, gitRun(t, dir, "reflog", "main"))
	}
	for _, c := range moves {
		if err := checkTreeOf(t, dir, c); err != nil {
			t.Fatalf("main was at %s, which fails the check: %v", c[:7], err)
		}
	}
	var landed []string
	for _, c := range strings.Fields(gitRun(t, dir, "log", "--no-merges", "--format=%H", before[0]+"..main")) {
		landed = append(landed, trailer(t, dir, c, "Wilco-Task"))
	}
	slices.Sort(landed)
	if !slices.Equal(landed, ids) {
		t.Fatalf("the task commits on main are of %v", landed)
	}
	if st := gitRun(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("the checkout after the landings:\n%s", st)
	}
	for _, id := range ids {
		if b, err := os.ReadFile(filepath.Join(dir, "files", id+".txt")); err != nil || string(b) != id+"\n" {
			t.Fatalf("the checkout's files/%s.txt: %q %v", id, b, err)
		}
	}
	if !eventually(10*time.Second, 20*time.Millisecond, func() bool {
		return strings.Count(gitRun(t, dir, "worktree", "list"), "\n") == 1 && gitRun(t, dir, "branch", "--list", "wilco/*") == ""
	}) {
		t.Fatalf("worktrees or branches left:\n%s%s", gitRun(t, dir, "worktree", "list"), gitRun(t, dir, "branch", "--list"))
	}
}
