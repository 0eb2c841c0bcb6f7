package loadgen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"wilco/client"
	"wilco/core"
	"wilco/daemon"
	"wilco/wire"
)

// ParallelOptions describe a run of the parallel benchmark: Tasks tasks,
// Parallel at once, each worked Work by a scripted exec agent; a fraction
// Conflicting of them edit the same line of a file as another task worked
// at the same time, so that one of the two lands in conflict and resolves
// it.
type ParallelOptions struct {
	Tasks, Parallel int
	Work            time.Duration
	// Verify is how long the verify step takes beyond its check (a
	// sleep): a project's tests.
	Verify      time.Duration
	Conflicting float64
	// How is land.how: merge (the default), rebase or squash.
	How string
	// Dir holds the repository and wilco's state; a temporary directory,
	// removed at the end, when empty.
	Dir string
}

// ParallelDefaults is the workload of the goal: 40 tasks, 8 at once, 2 s
// of work each, none in conflict.
func ParallelDefaults() ParallelOptions {
	return ParallelOptions{Tasks: 40, Parallel: 8, Work: 2 * time.Second, How: core.LandMerge}
}

// MaxConflicting is the largest fraction of tasks that can conflict: each
// conflicts with a partner that does not.
const MaxConflicting = 0.5

// Validate reports the first bad option.
func (o ParallelOptions) Validate() error {
	switch {
	case o.Tasks <= 0:
		return fmt.Errorf("--tasks must be positive, got %d", o.Tasks)
	case o.Parallel < 2:
		return fmt.Errorf("--parallel must be at least 2, got %d", o.Parallel)
	case o.Work < 0:
		return fmt.Errorf("--work must not be negative, got %s", o.Work)
	case o.Verify < 0:
		return fmt.Errorf("--verify must not be negative, got %s", o.Verify)
	case o.Conflicting < 0 || o.Conflicting > MaxConflicting:
		return fmt.Errorf("--conflicting must be within 0..%g (each conflicting task has a partner that is not), got %g", MaxConflicting, o.Conflicting)
	}
	switch o.How {
	case "", core.LandMerge, core.LandRebase, core.LandSquash:
		return nil
	}
	return fmt.Errorf("--land must be merge, rebase or squash, got %q", o.How)
}

// ParallelResult is what the parallel benchmark prints. Every duration is
// from the timestamps of the events wilco recorded.
type ParallelResult struct {
	System      string  `json:"system"`
	Tasks       int     `json:"tasks"`
	Parallel    int     `json:"parallel"`
	WorkMS      float64 `json:"work_ms"`
	Conflicting float64 `json:"conflicting"`
	How         string  `json:"land"`
	// VerifySleepMS is the verify step's time beyond its check.
	VerifySleepMS float64 `json:"verify_sleep_ms,omitempty"`
	// Succeeded counts the tasks that ended in success, landed.
	Succeeded int `json:"succeeded"`
	// Conflicts counts the merge_conflict failures, Combined the tasks
	// whose combination with the target was verified again before they
	// landed.
	Conflicts int `json:"merge_conflicts"`
	Combined  int `json:"combined"`
	// WallMS: from the first task queued to the last one ended.
	WallMS float64 `json:"wall_ms"`
	// VerifyMS is the median time the verify steps ran (a task's own
	// verification).
	VerifyMS float64 `json:"verify_ms"`
	// IdealMS is ceil(tasks/parallel) rounds of work and verification;
	// Ratio is IdealMS/WallMS.
	IdealMS float64 `json:"ideal_ms"`
	Ratio   float64 `json:"ratio"`
	// LandP50MS and LandP99MS are a landing's own cost: from its turn to
	// land to its landed record (commit, combination, its verification
	// again, the target's move).
	LandP50MS float64 `json:"land_p50_ms"`
	LandP99MS float64 `json:"land_p99_ms"`
	// VerifiedToLandedP50MS and P99 add the wait for the turn to land.
	VerifiedToLandedP50MS float64 `json:"verified_to_landed_p50_ms"`
	VerifiedToLandedP99MS float64 `json:"verified_to_landed_p99_ms"`
	// LandGapP50MS and P99 are how often the target can move: the time
	// between a landing and the next one, when the next task was
	// verified before the first landed (it waited for the target).
	LandGapP50MS float64 `json:"land_gap_p50_ms"`
	LandGapP99MS float64 `json:"land_gap_p99_ms"`
	// Phases are the medians of where a task's time goes, in ms: see
	// parallelPhases.
	Phases    map[string]float64 `json:"phases_p50_ms"`
	PeakRSSMB float64            `json:"peak_rss_mb"`
}

// benchAgent is the parallel benchmark's exec agent: it acknowledges its
// task, works BENCH_WORK seconds, then writes its task's id into each file
// its description names ("Write ID into FILE [FILE...]"). A retry after a
// merge conflict merges the target, keeps both sides of every conflict
// and leaves the resolved merge for wilco to commit.
const benchAgent = `#!/bin/sh
desc=$(sed -n '/^## Task: /{n;n;p;q;}' "$WILCO_PROMPT_FILE")
printf '[ACK] %s - RECEIVED\nUnderstanding: Will do this: %s\n\n' "$WILCO_TASK_ID" "$desc"
if grep -q merge_conflict "$WILCO_PROMPT_FILE"; then
	git -c user.name=agent -c user.email=agent@wilco.invalid merge -q --no-edit "$BENCH_TARGET" >/dev/null 2>&1
	for f in $(git diff --name-only --diff-filter=U); do
		sed -i '/^<<<<<<< /d; /^=======$/d; /^>>>>>>> /d' "$f"
	done
	echo "Resolved the conflict keeping both lines."
	exit 0
fi
sleep "$BENCH_WORK"
for f in $(printf '%s\n' "$desc" | sed -n 's/^Write [^ ]* into //p'); do
	mkdir -p "$(dirname "$f")"
	echo "$WILCO_TASK_ID" >"$f"
done
echo "Wrote $WILCO_TASK_ID."
`

// benchCheck is the verify step: every file of files/ holds its own name,
// and the task's files hold its id.
const benchCheck = `for f in files/*.txt; do
	[ -e "$f" ] || continue
	[ "$(cat "$f")" = "$(basename "$f" .txt)" ] || { echo "check: $f holds $(cat "$f")"; exit 1; }
done
[ -z "$WILCO_TASK_ID" ] || grep -qx "$WILCO_TASK_ID" "files/$WILCO_TASK_ID.txt" || { echo "check: files/$WILCO_TASK_ID.txt"; exit 1; }
`

// benchTarget is the branch the benchmark's tasks land on.
const benchTarget = "main"

// parallelTask is one task of the workload: its id and the files it
// writes (its own, and a shared one when it conflicts or is a partner).
type parallelTask struct {
	id    string
	files []string
}

// parallelWorkload lays out n tasks of which a fraction f conflict: task
// i conflicts when floor((i+1)·f) > floor(i·f) (spread evenly), with task
// i-1, submitted just before it (so that both are worked at once): both
// write the one line of shared/<i-1's id>.txt.
func parallelWorkload(n int, f float64) []parallelTask {
	tasks := make([]parallelTask, n)
	for i := range tasks {
		id := fmt.Sprintf("B-%02d", i+1)
		tasks[i] = parallelTask{id: id, files: []string{"files/" + id + ".txt"}}
	}
	for i := 1; i < n; i++ {
		if math.Floor(float64(i+1)*f) > math.Floor(float64(i)*f) {
			shared := "shared/" + tasks[i-1].id + ".txt"
			tasks[i-1].files = append(tasks[i-1].files, shared)
			tasks[i].files = append(tasks[i].files, shared)
		}
	}
	return tasks
}

// RunParallel runs the parallel benchmark: a real wilco (the daemon, its
// SQLite store, its exec adapter) on a git repository made for the run,
// one scripted exec agent with Parallel instances, Tasks tasks submitted
// at once; it waits for every task to end and measures from the events.
func RunParallel(ctx context.Context, o ParallelOptions) (ParallelResult, error) {
	if o.How == "" {
		o.How = core.LandMerge
	}
	if err := o.Validate(); err != nil {
		return ParallelResult{}, err
	}
	dir, cleanup, err := workdir(o.Dir)
	if err != nil {
		return ParallelResult{}, err
	}
	defer cleanup()
	work := parallelWorkload(o.Tasks, o.Conflicting)
	repo := filepath.Join(dir, "repo")
	if err := parallelRepo(ctx, dir, repo, o, work); err != nil {
		return ParallelResult{}, err
	}
	d, err := daemon.Start(ctx, daemon.Options{ConfigPath: filepath.Join(repo, "wilco.yaml"), Addr: "127.0.0.1:0", Token: "bench-token",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return ParallelResult{}, err
	}
	defer d.Close()
	c := client.New(d.URL, d.Token)
	ids := make([]string, len(work))
	for i, w := range work {
		t, err := c.Submit(ctx, wire.SubmitTask{ID: w.id, Description: "Write " + w.id + " into " + strings.Join(w.files, " ")})
		if err != nil {
			return ParallelResult{}, err
		}
		ids[i] = t.ID
	}
	if err := waitAllEnd(ctx, c, ids); err != nil {
		return ParallelResult{}, err
	}
	tl, err := parallelTimelines(ctx, c)
	if err != nil {
		return ParallelResult{}, err
	}
	res := measureParallel(o, ids, tl)
	res.PeakRSSMB = PeakRSSMB()
	if res.Succeeded != len(ids) {
		return res, fmt.Errorf("%d of %d tasks succeeded", res.Succeeded, len(ids))
	}
	return res, nil
}

// parallelRepo writes the agent into dir and makes repo a git repository
// on branch main with the configuration, the check and the shared files,
// committed.
func parallelRepo(ctx context.Context, dir, repo string, o ParallelOptions, work []parallelTask) error {
	agent := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(agent, []byte(benchAgent), 0o755); err != nil {
		return err
	}
	yaml := fmt.Sprintf(`version: 1
parallel: %d
agents:
  - name: bench
    adapter: exec
    command: [sh, %s]
    prompt: stdin
    handshake: inline
    timeout: 10m
    instances: %d
    env: {BENCH_WORK: "%s", BENCH_TARGET: %s}
verify:
  steps:
    - {name: check, run: "%ssh check.sh"}
land: {to: %s, how: %s}
`, o.Parallel, strconv.Quote(agent), o.Parallel, seconds(o.Work), benchTarget, verifySleep(o.Verify), benchTarget, o.How)
	files := map[string]string{"wilco.yaml": yaml, "check.sh": benchCheck, ".gitignore": ".wilco/\n", "files/.keep": ""}
	for _, w := range work {
		for _, f := range w.files[1:] {
			files[f] = "base\n"
		}
	}
	for name, content := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", benchTarget}, {"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@wilco.invalid", "commit", "-qm", "bench"}} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = repo
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, b)
		}
	}
	return nil
}

// waitAllEnd follows the events until every task of ids has ended.
func waitAllEnd(ctx context.Context, c *client.Client, ids []string) error {
	open := map[string]bool{}
	for _, id := range ids {
		open[id] = true
	}
	err := c.Follow(ctx, client.EventQuery{}, func(ev wire.Event) error {
		if ev.Type != core.TypeTaskState || !open[ev.TaskID] {
			return nil
		}
		data, err := core.DecodeEventData(ev.Type, ev.Data)
		if s, ok := data.(core.TaskStateChanged); ok && err == nil && s.To.Terminal() {
			delete(open, ev.TaskID)
			if len(open) == 0 {
				return client.ErrStop
			}
		}
		return nil
	})
	if errors.Is(err, client.ErrStop) {
		return nil
	}
	return err
}

// timeline is when each step of a task was recorded (its last attempt's,
// for those an attempt repeats).
type timeline struct {
	queued, prepare, prepared, attempt, turnEnded, verified, landStarted, landed, ended time.Time
	// integrating and integrated: its combination with the target made,
	// and verified (the last ones).
	integrating, integrated time.Time
	// turn is the agent's own time in its last turn, verify the verify
	// steps' (the task's own verification).
	turn, verify time.Duration
	success      bool
	conflicts    int
	combined     bool
}

// parallelTimelines reads every task's timeline from the event log.
func parallelTimelines(ctx context.Context, c *client.Client) (map[string]*timeline, error) {
	tl := map[string]*timeline{}
	err := c.EachEvent(ctx, client.EventQuery{}, func(ev wire.Event) error {
		if ev.TaskID == "" {
			return nil
		}
		data, err := core.DecodeEventData(ev.Type, ev.Data)
		if err != nil {
			return nil
		}
		t := tl[ev.TaskID]
		if t == nil {
			t = &timeline{}
			tl[ev.TaskID] = t
		}
		switch d := data.(type) {
		case core.TaskQueued:
			t.queued = ev.Time
		case core.TaskStateChanged:
			switch {
			case d.To == core.Running && d.Phase == core.Preparing:
				t.prepare = ev.Time
			case d.To == core.Running && d.Phase == core.Landing && t.verified.IsZero():
				t.verified = ev.Time
			case d.To.Terminal():
				t.ended = ev.Time
				t.success = d.To == core.Success
			}
		case core.TaskWorktreePrepared:
			t.prepared = ev.Time
		case core.TaskAttempt:
			t.attempt = ev.Time
			t.verified, t.landStarted, t.integrating, t.integrated = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		case core.TaskTurnEnded:
			t.turnEnded = ev.Time
			t.turn = time.Duration(d.DurationMS) * time.Millisecond
		case core.TaskLandStarted:
			// Recorded again when it becomes first of the landings:
			// its landing started at the first.
			if t.landStarted.IsZero() {
				t.landStarted = ev.Time
			}
		case core.TaskIntegrating:
			t.combined = true
			if d.Integration != nil && !d.Integration.Void {
				t.integrating = ev.Time
			}
		case core.TaskIntegrated:
			t.integrated = ev.Time
		case core.TaskLanded:
			t.landed = ev.Time
		case core.TaskSucceeded:
			t.verify = time.Duration(d.VerifyMS) * time.Millisecond
		case core.TaskFailure:
			if d.Record.FailureType == core.MergeConflict {
				t.conflicts++
			}
		}
		return nil
	})
	return tl, err
}

// measureParallel makes the result from the tasks' timelines.
func measureParallel(o ParallelOptions, ids []string, tl map[string]*timeline) ParallelResult {
	res := ParallelResult{System: "wilco", Tasks: o.Tasks, Parallel: o.Parallel, WorkMS: ms(o.Work), Conflicting: o.Conflicting, How: o.How, VerifySleepMS: ms(o.Verify)}
	var first, last time.Time
	var verify, land, toLanded []time.Duration
	phases := map[string][]time.Duration{}
	add := func(name string, from, to time.Time) {
		if !from.IsZero() && !to.IsZero() {
			phases[name] = append(phases[name], to.Sub(from))
		}
	}
	for _, id := range ids {
		t := tl[id]
		if t == nil {
			continue
		}
		if first.IsZero() || t.queued.Before(first) {
			first = t.queued
		}
		if t.ended.After(last) {
			last = t.ended
		}
		res.Conflicts += t.conflicts
		if t.combined {
			res.Combined++
		}
		if !t.success {
			continue
		}
		res.Succeeded++
		verify = append(verify, t.verify)
		if !t.landStarted.IsZero() && !t.landed.IsZero() {
			land = append(land, t.landed.Sub(t.landStarted))
		}
		if !t.verified.IsZero() && !t.landed.IsZero() {
			toLanded = append(toLanded, t.landed.Sub(t.verified))
		}
		add("prepare", t.prepare, t.prepared)
		add("to_agent", t.prepared, t.attempt)
		add("turn", t.attempt, t.turnEnded)
		if t.turn > 0 {
			phases["turn_beyond_work"] = append(phases["turn_beyond_work"], t.turn-o.Work)
		}
		add("turn_to_verified", t.turnEnded, t.verified)
		add("land_wait", t.verified, t.landStarted)
		add("landing", t.landStarted, t.landed)
		add("landed_to_end", t.landed, t.ended)
		if !t.integrating.IsZero() {
			add("land_combine", t.landStarted, t.integrating)
			add("land_verify", t.integrating, t.integrated)
			add("land_advance", t.integrated, t.landed)
		}
	}
	res.WallMS = ms(last.Sub(first))
	res.VerifyMS = percentile(verify, 0.5)
	rounds := (o.Tasks + o.Parallel - 1) / o.Parallel
	res.IdealMS = float64(rounds) * (res.WorkMS + res.VerifyMS)
	if res.WallMS > 0 {
		res.Ratio = res.IdealMS / res.WallMS
	}
	res.LandP50MS, res.LandP99MS = percentile(land, 0.5), percentile(land, 0.99)
	res.VerifiedToLandedP50MS, res.VerifiedToLandedP99MS = percentile(toLanded, 0.5), percentile(toLanded, 0.99)
	gaps := landGaps(ids, tl)
	res.LandGapP50MS, res.LandGapP99MS = percentile(gaps, 0.5), percentile(gaps, 0.99)
	res.Phases = map[string]float64{}
	for name, xs := range phases {
		res.Phases[name] = percentile(xs, 0.5)
	}
	return res
}

// landGaps are the times between consecutive landings where the later
// task was verified before the earlier one landed: it waited for the
// target, so the gap is what a landing holds the target for.
func landGaps(ids []string, tl map[string]*timeline) []time.Duration {
	var landed []*timeline
	for _, id := range ids {
		if t := tl[id]; t != nil && t.success && !t.landed.IsZero() {
			landed = append(landed, t)
		}
	}
	slices.SortFunc(landed, func(a, b *timeline) int { return a.landed.Compare(b.landed) })
	var gaps []time.Duration
	for i := 1; i < len(landed); i++ {
		if !landed[i].verified.IsZero() && landed[i].verified.Before(landed[i-1].landed) {
			gaps = append(gaps, landed[i].landed.Sub(landed[i-1].landed))
		}
	}
	return gaps
}

// seconds is d as sleep(1) takes it.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// verifySleep is what the verify step runs before its check.
func verifySleep(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return "sleep " + seconds(d) + "; "
}
