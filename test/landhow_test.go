package test

// Black-box tests of how tasks worked in parallel land: rebase replays
// each of a task's commits, a merge conflict names the commits that
// landed in between with their tasks, and a task that lands as none is
// counted as left on its branch.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"
)

func TestARebaseLandsEachOfATasksCommitsOnTheTargetInALine(t *testing.T) {
	t.Parallel()
	second := execAgent(t, "second", "two_commits.sh", nil, "OWN_FILE_SLEEP=2")
	dir := blackbox.ParallelRepo(t, "parallel: 2\nland: {how: rebase}\nagents:\n"+ownFileAgent(t, "first", 1)+second, blackbox.OwnFilesCheck)
	before := strings.TrimSpace(blackbox.GitRun(t, dir, "rev-parse", "main"))
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "R-1", "description": "Write R-1 into files/R-1.txt", "agent": "first"})
	in.Submit(map[string]any{"id": "R-2", "description": "Write R-2 into files/R-2.txt", "agent": "second"})
	in.WaitTask("R-1", time.Minute, "success")
	r2 := in.WaitTask("R-2", 2*time.Minute, "success")
	// R-1 landed first, so R-2 was replayed on it: its agent's commit,
	// then wilco's, each with one parent.
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(blackbox.GitRun(t, dir, "log", "--format=%p%x09%an%x09%s", before+"..main")), "\n") {
		f := strings.Split(l, "\t")
		got = append(got, strings.Join([]string{strings.Repeat("*", len(strings.Fields(f[0]))), f[1], f[2]}, " "))
	}
	if len(got) != 3 || got[1] != "* agent Part of R-2" || !strings.HasPrefix(got[0], "* ") || !strings.HasPrefix(got[2], "* ") {
		t.Fatalf("main gained (newest first) %q, want R-1's commit, then R-2's two replayed in a line:\n%s", got, blackbox.GitRun(t, dir, "log", "--graph", "--oneline", "main"))
	}
	head := strings.TrimSpace(blackbox.GitRun(t, dir, "rev-parse", "main"))
	if r2.LandedCommit != head || blackbox.Trailer(t, dir, head, "Wilco-Task") != "R-2" || blackbox.Trailer(t, dir, "main~2", "Wilco-Task") != "R-1" {
		t.Fatalf("R-2 landed as %s, main is at %s:\n%s", r2.LandedCommit, head, blackbox.GitRun(t, dir, "log", "--format=%h %s%n%b", before+"..main"))
	}
	for _, c := range blackbox.FirstParents(t, dir) {
		if err := blackbox.CheckTreeOf(t, dir, c); err != nil {
			t.Fatalf("main was at %s, which fails the check: %v", c[:7], err)
		}
	}
}

func TestAMergeConflictsMessageNamesTheCommitsThatLandedWithTheirTasksAndTheFiles(t *testing.T) {
	t.Parallel()
	const sameLine = `grep -qx "$WILCO_TASK_ID" shared.txt || { echo "check: shared.txt lacks $WILCO_TASK_ID"; exit 1; }` + "\n"
	dir := blackbox.ParallelRepo(t, "parallel: 2\nagents:\n"+ownFileAgent(t, "first", 1)+ownFileAgent(t, "second", 1, "OWN_FILE_SLEEP=2"), sameLine)
	writeFile(t, dir, "shared.txt", "base\n")
	blackbox.GitRun(t, dir, "add", "shared.txt")
	blackbox.GitRun(t, dir, "-c", "user.name=wilco test", "-c", "user.email=test@wilco.invalid", "commit", "-qm", "shared")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "M-1", "description": "Write M-1 into shared.txt", "agent": "first"})
	in.Submit(map[string]any{"id": "M-2", "description": "Write M-2 into shared.txt", "agent": "second"})
	first := in.WaitTask("M-1", time.Minute, "success")
	second := in.WaitTask("M-2", 2*time.Minute, "success")
	if len(second.Failures) == 0 || second.Failures[0].FailureType != "merge_conflict" {
		t.Fatalf("M-2 landed with no conflict:\n%s", second)
	}
	f := second.Failures[0]
	short := first.LandedCommit[:7]
	for _, want := range []string{"shared.txt", short + " (task M-1)", "main", "wilco/M-2"} {
		if !strings.Contains(f.ExecutorOutput.Error, want) {
			t.Fatalf("the conflict's message lacks %q: %s", want, f.ExecutorOutput.Error)
		}
	}
	if want := short + " Write M-1 into shared.txt (task M-1)"; !strings.Contains(f.Details, want) || !strings.Contains(f.Details, "shared.txt") {
		t.Fatalf("the conflict's details lack %q:\n%s", want, f.Details)
	}
	// The retry the agent was sent carries them.
	r := blackbox.WilcoCLI(t, dir, in.Url, time.Minute, "logs")
	if !strings.Contains(r.Stdout, short+" (task M-1)") {
		t.Fatalf("wilco logs does not name M-1's commit:\n%s%s", r.Stdout, r.Stderr)
	}
}

func TestATaskThatLandsAsNoneIsCountedAsLeftOnItsBranchNotAsLanded(t *testing.T) {
	t.Parallel()
	dir := blackbox.ParallelRepo(t, "parallel: 2\nagents:\n"+ownFileAgent(t, "agent", 2), blackbox.OwnFilesCheck)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "N-1", "description": "Write N-1 into files/N-1.txt", "land": "none"})
	in.Submit(map[string]any{"id": "N-2", "description": "Write N-2 into files/N-2.txt"})
	kept := in.WaitTask("N-1", time.Minute, "success")
	in.WaitTask("N-2", time.Minute, "success")
	if kept.LandedCommit == "" || strings.TrimSpace(blackbox.GitRun(t, dir, "rev-parse", "wilco/N-1")) != kept.LandedCommit {
		t.Fatalf("N-1 is not committed on its branch: %q", kept.LandedCommit)
	}
	r := blackbox.WilcoCLI(t, dir, in.Url, time.Minute, "stats", "--json")
	var st struct {
		Summary struct {
			Landed       int `json:"landed"`
			LeftOnBranch int `json:"left_on_branch"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || st.Summary.Landed != 1 || st.Summary.LeftOnBranch != 1 {
		t.Fatalf("wilco stats --json: %+v %v\n%s", st.Summary, err, r.Stdout)
	}
	r = blackbox.WilcoCLI(t, dir, in.Url, time.Minute, "stats")
	if !strings.Contains(r.Stdout, "| Landed as commits | 1 |") || !strings.Contains(r.Stdout, "| Left on their branch (land none) | 1 |") {
		t.Fatalf("wilco stats:\n%s%s", r.Stdout, r.Stderr)
	}
}
