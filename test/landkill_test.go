package test

// Black-box tests of a landing cut short (wilco killed with SIGKILL)
// between the update of the user's checkout and the target's move, and
// right after the move: after a restart nothing is half merged, the
// user's own edits are where they were, and each task landed once.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"

	"wilco/perform"
)

func TestWilcoKilledBetweenTheCheckoutsUpdateAndTheTargetsMoveLeavesNothingHalfMerged(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"merge", "squash", "rebase"} {
		for _, kill := range []string{"land:update-ref", "land:after-update-ref"} {
			t.Run(how+"_"+strings.ReplaceAll(kill, ":", "_"), func(t *testing.T) {
				t.Parallel()
				dir := blackbox.ParallelRepo(t, "parallel: 2\nland: {how: "+how+"}\nagents:\n"+ownFileAgent(t, "agent", 2), blackbox.OwnFilesCheck)
				// The user's own, uncommitted: a change of a tracked file
				// and a new file, neither of which a landing touches.
				mine := map[string]string{"file.txt": "the user's edit\n", "scratch.txt": "the user's scratch\n"}
				for name, content := range mine {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				const userStatus = " M file.txt\n?? scratch.txt\n"
				in := blackbox.ServeRepo(t, dir, perform.EnvKillBefore+"="+kill)
				ids := []string{"L-1", "L-2"}
				for _, id := range ids {
					in.Submit(map[string]any{"id": id, "description": "Write " + id + " into files/" + id + ".txt"})
				}
				in.WaitKilled(2 * time.Minute)
				// Killed: the checkout's index and files agree (both the old
				// target's or both the new one's), the user's edits are
				// there.
				if diff := blackbox.GitRun(t, dir, "diff", "--name-only", "--", "files"); diff != "" {
					t.Fatalf("the checkout's files differ from its index after the kill:\n%s", diff)
				}
				for _, id := range ids {
					if b, err := os.ReadFile(filepath.Join(dir, "files", id+".txt")); err == nil && string(b) != id+"\n" {
						t.Fatalf("the checkout's files/%s.txt after the kill: %q, neither the old target's nor the new one's", id, b)
					}
				}
				checkMine(t, dir, mine)

				again := blackbox.ServeRepo(t, dir)
				for _, id := range ids {
					again.WaitTask(id, 2*time.Minute, "success")
				}
				for _, id := range ids {
					if n := strings.Count(blackbox.GitRun(t, dir, "log", "--no-merges", "--format=%H", "--grep=^Wilco-Task: "+id+"$", "main"), "\n"); n != 1 {
						t.Fatalf("%d commits of %s on main:\n%s", n, id, blackbox.GitRun(t, dir, "log", "--graph", "--oneline", "main"))
					}
					if b, err := os.ReadFile(filepath.Join(dir, "files", id+".txt")); err != nil || string(b) != id+"\n" {
						t.Fatalf("the checkout's files/%s.txt: %q %v", id, b, err)
					}
				}
				for _, c := range blackbox.FirstParents(t, dir) {
					if err := blackbox.CheckTreeOf(t, dir, c); err != nil {
						t.Fatalf("main was at %s, which fails the check: %v", c[:7], err)
					}
				}
				// The checkout is main, index and files, with the user's
				// edits and nothing else.
				if staged := blackbox.GitRun(t, dir, "diff", "--cached", "--name-only"); staged != "" {
					t.Fatalf("the checkout's index is not main's:\n%s", staged)
				}
				if st := blackbox.GitRun(t, dir, "status", "--porcelain"); st != userStatus {
					t.Fatalf("the checkout after the restart:\n%s", st)
				}
				checkMine(t, dir, mine)
			})
		}
	}
}

// checkMine fails the test when one of the user's files does not hold
// what the user wrote.
func checkMine(t *testing.T, dir string, mine map[string]string) {
	t.Helper()
	for name, content := range mine {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != content {
			t.Fatalf("the user's %s: %q %v", name, b, err)
		}
	}
}
