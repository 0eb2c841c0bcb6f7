package test

// Black-box tests of tasks worked in parallel (parallel > 1): each task in
// a worktree and on a branch of its own, landed on the target one at a
// time, the target only ever at verified work.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"

	"wilco/perform"
)

// ownFileAgent is an exec agent running own_file.sh.
func ownFileAgent(t *testing.T, name string, instances int, env ...string) string {
	line := execAgent(t, name, "own_file.sh", nil, append([]string{"WILCO_TARGET=main"}, env...)...)
	return strings.TrimSuffix(line, "}\n") + fmt.Sprintf(", instances: %d}\n", instances)
}

func TestTwelveTasksOnFourAgentsLandAsTwelveVerifiedCommitsOnTheTarget(t *testing.T) {
	t.Parallel()
	var agents string
	for i := 1; i <= 4; i++ {
		agents += ownFileAgent(t, fmt.Sprintf("agent-%d", i), 1)
	}
	dir := blackbox.ParallelRepo(t, "parallel: 4\nagents:\n"+agents, blackbox.OwnFilesCheck)
	before := blackbox.FirstParents(t, dir)
	in := blackbox.ServeRepo(t, dir)
	var ids []string
	for i := 1; i <= 12; i++ {
		id := fmt.Sprintf("P-%d", i)
		ids = append(ids, id)
		if got := in.Submit(map[string]any{"id": id, "description": "Write " + id + " into files/" + id + ".txt"}); got.Land != "merge" {
			t.Fatalf("%s lands %q, want merge (the default with parallel 4)", id, got.Land)
		}
	}
	// Up to four at once, each in its worktree on its branch.
	var q struct {
		Slots   int `json:"slots"`
		Working []struct {
			ID, Branch, Worktree string
		} `json:"working"`
	}
	most := 0
	if !blackbox.Eventually(30*time.Second, 5*time.Millisecond, func() bool {
		in.Must(200, in.Call("GET", "/v1/queue", blackbox.AdminToken, nil), &q)
		for _, w := range q.Working {
			if w.Branch != "wilco/"+w.ID || w.Worktree != ".wilco/worktrees/"+w.ID {
				t.Fatalf("a slot's task works in %q on %q", w.Worktree, w.Branch)
			}
		}
		most = max(most, len(q.Working))
		if len(q.Working) > 4 || q.Slots != 4 {
			t.Fatalf("%d tasks hold %d slots", len(q.Working), q.Slots)
		}
		return most >= 2
	}) {
		t.Fatalf("tasks were not worked at once (at most %d):\n%s", most, in.Problems())
	}
	if r := blackbox.WilcoCLI(t, dir, in.Url, time.Minute, "queue"); r.Code != 0 || !strings.Contains(r.Stdout, "of 4 held") {
		t.Fatalf("wilco queue: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	combined := 0
	for _, id := range ids {
		tk := in.WaitTask(id, 3*time.Minute, "success")
		if tk.Branch != "wilco/"+id || tk.Worktree != ".wilco/worktrees/"+id || tk.LandedCommit == "" {
			t.Fatalf("%s: branch %q worktree %q landed %q", id, tk.Branch, tk.Worktree, tk.LandedCommit)
		}
		if slices.Contains(tk.RunIDs, id+"-a1-land1") {
			combined++
		}
	}
	// Tasks that started from the same head as one that landed first were
	// combined with it and verified again before they landed.
	if combined == 0 {
		t.Fatal("no task was verified again combined with what landed before it")
	}
	// Twelve task commits on main, each with its trailers.
	tasks := strings.Fields(blackbox.GitRun(t, dir, "log", "--no-merges", "--format=%H", before[0]+"..main"))
	if len(tasks) != 12 {
		t.Fatalf("%d task commits on main, want 12:\n%s", len(tasks), blackbox.GitRun(t, dir, "log", "--graph", "--oneline", "main"))
	}
	var landed []string
	for _, c := range tasks {
		id := blackbox.Trailer(t, dir, c, "Wilco-Task")
		if !slices.Contains(ids, id) || blackbox.Trailer(t, dir, c, "Wilco-Run") != id+"-a1" || !strings.HasPrefix(blackbox.Trailer(t, dir, c, "Wilco-Agent"), "agent-") {
			t.Fatalf("commit %s has the trailers %q %q %q", c, id, blackbox.Trailer(t, dir, c, "Wilco-Run"), blackbox.Trailer(t, dir, c, "Wilco-Agent"))
		}
		landed = append(landed, id)
	}
	slices.Sort(landed)
	if len(slices.Compact(landed)) != 12 {
		t.Fatalf("the task commits are of %v", landed)
	}
	// Every commit main pointed at passes the checks: it moved once for
	// each task.
	moves := blackbox.FirstParents(t, dir)
	if len(moves) != 13 {
		t.Fatalf("main pointed at %d commits since the check, want 13:\n%s", len(moves), blackbox.GitRun(t, dir, "reflog", "main"))
	}
	for _, c := range moves {
		if err := blackbox.CheckTreeOf(t, dir, c); err != nil {
			t.Fatalf("main was at %s, which fails the check: %v", c[:7], err)
		}
	}
	// The checkout (on main) is main, its files there; the worktrees and
	// the landed branches are gone.
	if st := blackbox.GitRun(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("the checkout after the landings:\n%s", st)
	}
	for _, id := range ids {
		if b, err := os.ReadFile(filepath.Join(dir, "files", id+".txt")); err != nil || string(b) != id+"\n" {
			t.Fatalf("the checkout's files/%s.txt: %q %v", id, b, err)
		}
	}
	if !blackbox.Eventually(10*time.Second, 20*time.Millisecond, func() bool {
		entries, _ := os.ReadDir(filepath.Join(dir, ".wilco", "worktrees"))
		n := 0
		for _, e := range entries {
			if e.Name() != ".base" {
				n++
			}
		}
		return n == 0 && blackbox.GitRun(t, dir, "branch", "--list", "wilco/*") == ""
	}) {
		t.Fatalf("worktrees or branches left: %s", blackbox.GitRun(t, dir, "worktree", "list"))
	}
}

func TestTwoTasksOnTheSameLinesMakeAMergeConflictTheSecondResolves(t *testing.T) {
	t.Parallel()
	const sameLine = `grep -qx "$WILCO_TASK_ID" shared.txt || { echo "check: shared.txt lacks $WILCO_TASK_ID"; exit 1; }` + "\n"
	dir := blackbox.ParallelRepo(t, "parallel: 2\nagents:\n"+ownFileAgent(t, "first", 1)+ownFileAgent(t, "second", 1, "OWN_FILE_SLEEP=2"), sameLine)
	if err := os.WriteFile(filepath.Join(dir, "shared.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	blackbox.GitRun(t, dir, "add", "shared.txt")
	blackbox.GitRun(t, dir, "-c", "user.name=wilco test", "-c", "user.email=test@wilco.invalid", "commit", "-qm", "shared")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "C-1", "description": "Write C-1 into shared.txt", "agent": "first"})
	in.Submit(map[string]any{"id": "C-2", "description": "Write C-2 into shared.txt", "agent": "second"})
	first := in.WaitTask("C-1", time.Minute, "success")
	second := in.WaitTask("C-2", 2*time.Minute, "success")
	if len(second.Failures) == 0 {
		t.Fatalf("C-2 landed with no conflict:\n%s", second)
	}
	f := second.Failures[0]
	if f.FailureType != "merge_conflict" || !strings.Contains(f.Details, "shared.txt") || !strings.Contains(f.Details, first.LandedCommit[:7]) {
		t.Fatalf("C-2's first failure does not name the conflict and C-1's commit %s:\n%+v", first.LandedCommit[:7], f)
	}
	r := blackbox.WilcoCLI(t, dir, in.Url, time.Minute, "stats", "--json")
	var st struct {
		Summary struct{ Landed, Conflicted int } `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || st.Summary.Landed != 2 || st.Summary.Conflicted != 1 {
		t.Fatalf("wilco stats: %+v %v\n%s", st, err, r.Stdout)
	}
	// C-1's commit, and C-2's resolved merge with it (run C-2-a2) on top
	// of C-2's first commit.
	for _, run := range []string{"C-1-a1", "C-2-a1", "C-2-a2"} {
		if n := strings.Count(blackbox.GitRun(t, dir, "log", "--format=%H", "--grep=^Wilco-Run: "+run+"$", "main"), "\n"); n != 1 {
			t.Fatalf("%d commits of run %s on main:\n%s", n, run, blackbox.GitRun(t, dir, "log", "--graph", "--oneline", "main"))
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, "shared.txt"))
	if err != nil || !strings.Contains(string(got), "C-1\n") || !strings.Contains(string(got), "C-2\n") {
		t.Fatalf("shared.txt on main: %q %v", got, err)
	}
	for _, c := range blackbox.FirstParents(t, dir)[:2] {
		if strings.TrimSpace(blackbox.GitRun(t, dir, "show", c+":shared.txt")) == "" {
			t.Fatalf("main was at %s, with no shared.txt", c)
		}
	}
}

func TestACombinationThatFailsIsIntegrationFailedAndNeverOnTheTarget(t *testing.T) {
	t.Parallel()
	// Each task passes alone; together they hold two files, which the
	// check refuses.
	const atMostOne = blackbox.OwnFilesCheck + `n=$(ls files | wc -l)
[ "$n" -le 1 ] || { echo "check: files/ holds $n files, at most 1 is allowed"; exit 1; }
`
	dir := blackbox.ParallelRepo(t, "parallel: 2\nagents:\n"+ownFileAgent(t, "first", 1)+ownFileAgent(t, "second", 1, "OWN_FILE_SLEEP=2")+
		"policy:\n  loop: {escalate_after: 1}\n", atMostOne)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "I-1", "description": "Write I-1 into files/I-1.txt", "agent": "first"})
	in.Submit(map[string]any{"id": "I-2", "description": "Write I-2 into files/I-2.txt", "agent": "second"})
	in.WaitTask("I-1", time.Minute, "success")
	second := in.WaitTask("I-2", 2*time.Minute, "escalated")
	if len(second.Failures) == 0 {
		t.Fatalf("I-2 has no failure:\n%s", second)
	}
	f := second.Failures[len(second.Failures)-1]
	if f.FailureType != "integration_failed" || !strings.Contains(f.ExecutorOutput.Error, "sh par.sh") || !strings.Contains(f.Details, "at most 1 is allowed") {
		t.Fatalf("I-2's failure:\n%+v", f)
	}
	r := blackbox.WilcoCLI(t, dir, in.Url, time.Minute, "stats")
	if !strings.Contains(r.Stdout, "| Integration failures (tasks) | 1 |") || !strings.Contains(r.Stdout, "| Landed as commits | 1 |") {
		t.Fatalf("wilco stats:\n%s%s", r.Stdout, r.Stderr)
	}
	for _, c := range blackbox.FirstParents(t, dir) {
		if err := blackbox.CheckTreeOf(t, dir, c); err != nil {
			t.Fatalf("main was at %s, which fails the check: %v", c[:7], err)
		}
		if blackbox.Trailer(t, dir, c, "Wilco-Task") == "I-2" {
			t.Fatalf("I-2's commit %s is on main", c[:7])
		}
	}
}

func TestALandingWaitsWhileTheUserHasUncommittedChangesInAFileItChanges(t *testing.T) {
	t.Parallel()
	dir := blackbox.ParallelRepo(t, "parallel: 2\nagents:\n"+ownFileAgent(t, "agent", 2, "OWN_FILE_ALSO=docs/W-1.md"), blackbox.OwnFilesCheck)
	// The user's own, uncommitted: the two files the landing will write,
	// and one it will not touch.
	mine := map[string]string{"files/W-1.txt": "my draft\n", "docs/W-1.md": "my other draft\n", "notes.txt": "my notes\n"}
	for name, content := range mine {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	head := strings.TrimSpace(blackbox.GitRun(t, dir, "rev-parse", "main"))
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "W-1", "description": "Write W-1 into files/W-1.txt", "keep_worktree": true})
	waitsFor := func(files string) {
		t.Helper()
		var tk blackbox.Task
		if !blackbox.Eventually(time.Minute, 20*time.Millisecond, func() bool {
			tk = in.Task("W-1")
			return strings.Contains(tk.Milestone, "uncommitted changes in "+files+", which the landing changes")
		}) {
			t.Fatalf("the landing does not say it waits for %s:\n%s\n%s", files, tk, in.Problems())
		}
	}
	waitsFor("docs/W-1.md, files/W-1.txt")
	// The user puts one draft away: the landing, looking again, names
	// the other one, which it still waits for.
	if err := os.Remove(filepath.Join(dir, "docs/W-1.md")); err != nil {
		t.Fatal(err)
	}
	delete(mine, "docs/W-1.md")
	waitsFor("files/W-1.txt")
	for name, content := range mine {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != content {
			t.Fatalf("the landing overwrote the user's %s: %q", name, b)
		}
	}
	if blackbox.Exists(filepath.Join(dir, "docs/W-1.md")) {
		t.Fatal("the landing wrote docs/W-1.md while it waited for files/W-1.txt")
	}
	if now := strings.TrimSpace(blackbox.GitRun(t, dir, "rev-parse", "main")); now != head || in.Task("W-1").State != "running" {
		t.Fatal("main moved while the landing waited")
	}
	// The user puts the draft away: the landing goes on.
	if err := os.Remove(filepath.Join(dir, "files/W-1.txt")); err != nil {
		t.Fatal(err)
	}
	in.WaitTask("W-1", time.Minute, "success")
	if b, _ := os.ReadFile(filepath.Join(dir, "files/W-1.txt")); string(b) != "W-1\n" {
		t.Fatalf("files/W-1.txt after the landing: %q", b)
	}
	if st := blackbox.GitRun(t, dir, "status", "--porcelain"); st != "?? notes.txt\n" {
		t.Fatalf("the checkout after the landing:\n%s", st)
	}
	// Asked for, its worktree and branch are kept.
	if b, err := os.ReadFile(filepath.Join(dir, ".wilco/worktrees/W-1/files/W-1.txt")); err != nil || string(b) != "W-1\n" || blackbox.GitRun(t, dir, "branch", "--list", "wilco/W-1") == "" {
		t.Fatalf("the kept worktree: %q %v; branches:\n%s", b, err, blackbox.GitRun(t, dir, "branch", "--list"))
	}
}

// Killed before a landing or before its record, wilco lands each task
// once after its restart, and the target only ever points to verified
// work.
func TestWilcoKilledAroundALandingLandsEachTaskOnceAfterARestart(t *testing.T) {
	t.Parallel()
	for _, kill := range []string{"LandTask", "report:Landed", "PrepareWorktree", "report:WorktreePrepared"} {
		t.Run(strings.ReplaceAll(kill, ":", "_"), func(t *testing.T) {
			t.Parallel()
			dir := blackbox.ParallelRepo(t, "parallel: 3\nagents:\n"+ownFileAgent(t, "agent", 3), blackbox.OwnFilesCheck)
			in := blackbox.ServeRepo(t, dir, perform.EnvKillBefore+"="+kill)
			// One plan of three tasks: submitted in one step, which a kill
			// right after may leave unanswered.
			ids := []string{"k:task-1", "k:task-2", "k:task-3"}
			var tasks []map[string]any
			for _, id := range ids {
				tasks = append(tasks, map[string]any{"description": "Write " + id + " into files/" + id + ".txt"})
			}
			body, _ := json.Marshal(map[string]any{"id": "k", "tasks": tasks})
			req, _ := http.NewRequest("POST", in.Url+"/v1/plans", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+blackbox.AdminToken)
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			in.WaitKilled(2 * time.Minute)
			again := blackbox.ServeRepo(t, dir)
			for _, id := range ids {
				again.WaitTask(id, 2*time.Minute, "success")
			}
			for _, id := range ids {
				if n := strings.Count(blackbox.GitRun(t, dir, "log", "--no-merges", "--format=%H", "--grep=^Wilco-Task: "+id+"$", "main"), "\n"); n != 1 {
					t.Fatalf("%d commits of %s on main:\n%s", n, id, blackbox.GitRun(t, dir, "log", "--graph", "--oneline", "main"))
				}
			}
			for _, c := range blackbox.FirstParents(t, dir) {
				if err := blackbox.CheckTreeOf(t, dir, c); err != nil {
					t.Fatalf("main was at %s, which fails the check: %v", c[:7], err)
				}
			}
			if st := blackbox.GitRun(t, dir, "status", "--porcelain"); st != "" {
				t.Fatalf("the checkout after the restart:\n%s", st)
			}
			if !blackbox.Eventually(10*time.Second, 20*time.Millisecond, func() bool {
				return strings.Count(blackbox.GitRun(t, dir, "worktree", "list"), "\n") == 1 && blackbox.GitRun(t, dir, "branch", "--list", "wilco/*") == ""
			}) {
				t.Fatalf("worktrees or branches left:\n%s%s", blackbox.GitRun(t, dir, "worktree", "list"), blackbox.GitRun(t, dir, "branch", "--list"))
			}
		})
	}
}

func TestThePageShowsATaskWorkedInParallelItsBranchWorktreeAndLanding(t *testing.T) {
	t.Parallel()
	dir := blackbox.ParallelRepo(t, "parallel: 2\nagents:\n"+ownFileAgent(t, "agent", 2), blackbox.OwnFilesCheck)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "B-1", "description": "Write B-1 into files/B-1.txt"})
	got := in.WaitTask("B-1", time.Minute, "success")
	short := got.LandedCommit[:7]

	b := openBrowser(t)
	b.navigate(in.LoginLink())
	b.waitFor("the task list", `document.querySelector('#task-rows') !== null`, 30*time.Second)
	b.goTo("#/tasks/B-1")
	b.waitFor("B-1's summary", `document.getElementById('summary') !== null`, 10*time.Second)
	for key, want := range map[string]string{"branch": "wilco/B-1", "worktree": ".wilco/worktrees/B-1", "landed": short} {
		if shown := b.str(`(document.querySelector('#overview dd[data-key="` + key + `"]') || {}).textContent || ''`); shown != want {
			t.Fatalf("the overview's %s shows %q, want %s", key, shown, want)
		}
	}
	byType := timelineLines(t, b, "task.landed")
	blackbox.MustContain(t, "the timeline", byType["task.worktree"], "Works in .wilco/worktrees/B-1 on branch wilco/B-1, made from main.")
	blackbox.MustContain(t, "the timeline", byType["task.prepared"], "Its worktree starts from ")
	blackbox.MustContain(t, "the timeline", byType["task.land_started"], "Its turn to land came.")
	blackbox.MustContain(t, "the timeline", byType["task.state"], "its worktree is being made")
}
