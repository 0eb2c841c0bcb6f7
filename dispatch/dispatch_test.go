package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/adapter"
	"wilco/core"
	"wilco/runtime"
	"wilco/store/sqlite"
	"wilco/workspace"
)

// runGit runs git for the test itself, isolated from the machine's config
// and from variables that would point it at another repository.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=Test", "-c", "user.email=test@example.com",
		"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
		t.Fatal(err)
	}
}

// committed is the content every file of repo is committed with.
func committed(name string) string { return "committed " + name + "\n" }

// repo makes a git repository with one commit of the files named, each
// with its committed content, and a dispatcher on it.
func repo(t *testing.T, files ...string) (string, *Dispatcher) {
	t.Helper()
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	for _, f := range files {
		write(t, dir, f, committed(f))
	}
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "initial")
	d := open(t, dir)
	if d.ws == nil {
		t.Fatal("a dispatcher on a git work tree has no workspace")
	}
	return d.ws.Root(), d
}

// open makes a dispatcher on dir, closed when the test ends.
func open(t *testing.T, dir string, logger ...*slog.Logger) *Dispatcher {
	t.Helper()
	opts := Options{Dir: dir}
	if len(logger) > 0 {
		opts.Logger = logger[0]
	}
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d
}

// notGit returns a directory that is not inside a git work tree.
func notGit(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := workspace.Open(dir); err == nil {
		t.Skip("the temporary directory is inside a git work tree")
	}
	return dir
}

func changed(t *testing.T, d *Dispatcher, task string, full bool) []core.FileState {
	t.Helper()
	files, err := d.changedByTask(context.Background(), task, full)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(t *testing.T, got, want []core.FileState) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("files changed:\n got %+v\nwant %+v", got, want)
	}
}

// hasBaseline says whether the task has a baseline.
func hasBaseline(d *Dispatcher, task string) bool {
	_, ok := d.baseline(task)
	return ok
}

func TestTheSummaryListsWhatTheTaskChangedNotWhatWasAlreadyDirty(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "kept.txt", "again.txt", "clean.txt", "gone.txt")
	// Already dirty when the task begins.
	write(t, dir, "kept.txt", "the user's edit\n")
	write(t, dir, "again.txt", "the user's edit\n")
	write(t, dir, "untracked.txt", "the user's notes\n")
	d.recordBaseline(context.Background(), "T-1")

	// The task's work.
	write(t, dir, "again.txt", "the user's edit\nand the task's\n")
	write(t, dir, "clean.txt", "changed by the task\n")
	write(t, dir, "dir/new.txt", "made by the task\n")
	remove(t, dir, "gone.txt")

	sameFiles(t, changed(t, d, "T-1", false), []core.FileState{
		{Path: "again.txt", Status: workspace.StatusModified},
		{Path: "clean.txt", Status: workspace.StatusModified},
		{Path: "dir/new.txt", Status: workspace.StatusAdded},
		{Path: "gone.txt", Status: workspace.StatusDeleted},
	})
}

func TestAFileTheTaskRestoredToItsCommittedContentIsListedAsRestored(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "edited.txt", "deleted.txt", "other.txt")
	write(t, dir, "edited.txt", "the user's edit\n")
	remove(t, dir, "deleted.txt")
	d.recordBaseline(context.Background(), "T-1")

	write(t, dir, "edited.txt", committed("edited.txt"))
	runGit(t, dir, "checkout", "--", "deleted.txt")

	sameFiles(t, changed(t, d, "T-1", false), []core.FileState{
		{Path: "deleted.txt", Status: "restored"},
		{Path: "edited.txt", Status: "restored"},
	})
}

func TestAnUntrackedFileTheTaskDeletedIsListedAsDeleted(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "kept.txt")
	write(t, dir, "notes.txt", "the user's scratch notes\n")
	d.recordBaseline(context.Background(), "T-1")

	remove(t, dir, "notes.txt")

	sameFiles(t, changed(t, d, "T-1", false), []core.FileState{{Path: "notes.txt", Status: workspace.StatusDeleted}})
}

func TestATasksBaselineOutlivesARestart(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "dirty.txt", "work.txt")
	write(t, dir, "dirty.txt", "dirty\n")
	d.RecordBaseline(context.Background(), core.RecordBaseline{TaskID: "T-1"})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "work.txt", "the task's work\n")

	again := open(t, dir)
	sameFiles(t, changed(t, again, "T-1", false), []core.FileState{{Path: "work.txt", Status: workspace.StatusModified}})
}

func TestATaskWithoutABaselineListsEverythingChanged(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "a.txt", "b.txt", "c.txt")
	write(t, dir, "a.txt", "dirty before any task\n")
	d.recordBaseline(context.Background(), "T-other")
	write(t, dir, "b.txt", "changed\n")
	remove(t, dir, "c.txt")
	write(t, dir, "new.txt", "new\n")

	want := []core.FileState{
		{Path: "a.txt", Status: workspace.StatusModified},
		{Path: "b.txt", Status: workspace.StatusModified},
		{Path: "c.txt", Status: workspace.StatusDeleted},
		{Path: "new.txt", Status: workspace.StatusAdded},
	}
	sameFiles(t, changed(t, d, "T-1", false), want)
	all, err := d.ws.ChangedPaths(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, all, want)
}

func TestTheSummaryIsSortedByPath(t *testing.T) {
	t.Parallel()
	// Restored files are found after the changed ones: the sort puts them
	// in their place.
	dir, d := repo(t, "a-restored.txt", "b-changed.txt", "m-restored.txt", "z-changed.txt")
	write(t, dir, "a-restored.txt", "dirty\n")
	write(t, dir, "m-restored.txt", "dirty\n")
	d.recordBaseline(context.Background(), "T-1")
	write(t, dir, "a-restored.txt", committed("a-restored.txt"))
	write(t, dir, "m-restored.txt", committed("m-restored.txt"))
	write(t, dir, "b-changed.txt", "changed\n")
	write(t, dir, "z-changed.txt", "changed\n")
	write(t, dir, "k-new.txt", "new\n")

	sameFiles(t, changed(t, d, "T-1", false), []core.FileState{
		{Path: "a-restored.txt", Status: "restored"},
		{Path: "b-changed.txt", Status: workspace.StatusModified},
		{Path: "k-new.txt", Status: workspace.StatusAdded},
		{Path: "m-restored.txt", Status: "restored"},
		{Path: "z-changed.txt", Status: workspace.StatusModified},
	})
}

func TestTheFailureRecordCountsTheLinesOfOnlyWhatTheTaskChanged(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "kept.txt", "again.txt")
	write(t, dir, "kept.txt", "one\ntwo\n")
	write(t, dir, "again.txt", "one\n")
	d.recordBaseline(context.Background(), "T-1")
	write(t, dir, "again.txt", "one\ntwo\nthree\n")
	write(t, dir, "new.txt", "a\nb\n")

	// again.txt against HEAD: one line removed, three added.
	sameFiles(t, changed(t, d, "T-1", true), []core.FileState{
		{Path: "again.txt", Status: workspace.StatusModified, LinesChanged: 4},
		{Path: "new.txt", Status: workspace.StatusAdded, LinesChanged: 2},
	})
}

func TestABaselineAskedAgainAfterARestartKeepsTheFirst(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "dirty.txt", "work.txt")
	write(t, dir, "dirty.txt", "dirty\n")
	if r := d.RecordBaseline(context.Background(), core.RecordBaseline{TaskID: "T-1"}); r.Error != "" || r.TaskID != "T-1" {
		t.Fatalf("%+v", r)
	}
	write(t, dir, "work.txt", "the task's work\n")
	// Asked again (wilco stopped before its end was recorded): the task's
	// own work in the tree must not become the baseline.
	if r := d.RecordBaseline(context.Background(), core.RecordBaseline{TaskID: "T-1"}); r.Error != "" {
		t.Fatalf("%+v", r)
	}
	sameFiles(t, changed(t, d, "T-1", false), []core.FileState{{Path: "work.txt", Status: workspace.StatusModified}})
}

func TestADispatcherOutsideAGitWorkTreeStartsWithoutAWorkspace(t *testing.T) {
	t.Parallel()
	d := open(t, notGit(t))
	if d.ws != nil {
		t.Fatal("a workspace outside a git work tree")
	}
	// No baseline can be recorded: its end says why.
	if r := d.RecordBaseline(context.Background(), core.RecordBaseline{TaskID: "T-1"}); r.Error == "" {
		t.Fatal("a baseline recorded without a work tree")
	}
	if hasBaseline(d, "T-1") {
		t.Fatal("a baseline recorded without a work tree")
	}
}

func TestReportsWithoutARuntimeFail(t *testing.T) {
	t.Parallel()
	d := open(t, notGit(t))
	if _, err := d.Reply(context.Background(), core.ReplyInput{Agent: "a", Text: "hi"}); !errors.Is(err, ErrNoRuntime) {
		t.Fatalf("Reply without a runtime: %v", err)
	}
	if err := d.Report(context.Background(), adapter.TurnEnded{Result: core.TurnResult{TaskID: "T-1", Attempt: 1}}); !errors.Is(err, ErrNoRuntime) {
		t.Fatalf("a turn's end without a runtime: %v", err)
	}
	if err := d.Recover(context.Background()); !errors.Is(err, ErrNoRuntime) {
		t.Fatalf("Recover without a runtime: %v", err)
	}
}

// recorder is the runtime's effector: it keeps the task effects, for the
// test to hand to the dispatcher.
type recorder struct {
	mu      sync.Mutex
	effects []core.Effect
}

// take keeps the effects the runtime hands out.
func (r *recorder) take(rt *runtime.Runtime) {
	r.mu.Lock()
	r.effects = append(r.effects, rt.TakeEffects()...)
	r.mu.Unlock()
}

// last returns the last effect of type T the runtime handed out.
func last[T core.Effect](t *testing.T, b *coreBundle) T {
	t.Helper()
	r := b.eff
	r.take(b.rt)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.effects) - 1; i >= 0; i-- {
		if e, ok := r.effects[i].(T); ok {
			return e
		}
	}
	var zero T
	t.Fatalf("no %T effect", zero)
	return zero
}

// coreBundle is a running runtime on a fresh store, with an exec agent.
type coreBundle struct {
	t   *testing.T
	rt  *runtime.Runtime
	eff *recorder
}

func openCore(t *testing.T) *coreBundle {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "wilco.db"))
	if err != nil {
		t.Fatal(err)
	}
	b := &coreBundle{t: t, eff: &recorder{}}
	if b.rt, err = runtime.Open(context.Background(), runtime.Config{Store: st}); err != nil {
		st.Close()
		t.Fatal(err)
	}
	b.rt.Start()
	t.Cleanup(func() {
		if err := b.rt.Close(); err != nil {
			t.Error(err)
		}
		st.Close()
	})
	b.do(func(c *core.State, now time.Time) (any, error) {
		return nil, c.RegisterAgent(now, core.AgentSpec{Name: "claude", Adapter: "exec"})
	})
	return b
}

func (b *coreBundle) do(fn runtime.Func) any {
	b.t.Helper()
	v, err := b.rt.Do(context.Background(), fn)
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

func (b *coreBundle) task(id string) core.Task {
	b.t.Helper()
	var tk core.Task
	var ok bool
	if err := b.rt.Read(func(c *core.State) { tk, ok = c.Task(id) }); err != nil {
		b.t.Fatal(err)
	}
	if !ok {
		b.t.Fatalf("no task %s", id)
	}
	return tk
}

// proposing submits a dry run and takes it to where its diff is asked for.
func (b *coreBundle) proposing() (core.Task, core.MakeProposal) {
	b.t.Helper()
	tk := b.do(func(c *core.State, now time.Time) (any, error) {
		return c.SubmitTask(now, core.TaskSpec{Description: "Add a flag", DryRun: true})
	}).(core.Task)
	b.do(func(c *core.State, now time.Time) (any, error) {
		return c.Reply(now, core.ReplyInput{Agent: tk.Agent, InReplyTo: tk.Delivery, Text: "[ACK] " + tk.ID + " - RECEIVED\nUnderstanding: Add a flag"})
	})
	b.do(func(c *core.State, now time.Time) (any, error) {
		return c.EndTurn(now, core.TurnResult{TaskID: tk.ID, Attempt: tk.Attempt, Summary: "added it"})
	})
	mk := last[core.MakeProposal](b.t, b)
	if mk.TaskID != tk.ID {
		b.t.Fatalf("the diff asked for is %s's, not %s's", mk.TaskID, tk.ID)
	}
	if got := b.task(tk.ID); got.State != core.Running || got.Milestone != core.MilestoneProposing {
		b.t.Fatalf("the dry run is %s (%s), not proposing", got.State, got.Milestone)
	}
	return b.task(tk.ID), mk
}

// applying takes a dry run to where its diff is to be written into the
// working tree.
func (b *coreBundle) applying() (core.Task, core.ApplyProposal) {
	b.t.Helper()
	tk, mk := b.proposing()
	b.do(func(c *core.State, now time.Time) (any, error) {
		return c.EndProposal(now, core.ProposalResult{TaskID: tk.ID, RunID: mk.RunID, Files: []string{"flag.go"}})
	})
	b.do(func(c *core.State, now time.Time) (any, error) { return c.ApplyTask(now, tk.ID) })
	ap := last[core.ApplyProposal](b.t, b)
	if ap.TaskID != tk.ID || ap.RunID != mk.RunID {
		b.t.Fatalf("apply %+v, want task %s run %s", ap, tk.ID, mk.RunID)
	}
	if got := b.task(tk.ID); !got.Applying {
		b.t.Fatalf("the dry run is %s, not applying", got.State)
	}
	return b.task(tk.ID), ap
}

// bound opens a running core and a dispatcher on dir reporting to it.
func bound(t *testing.T, dir string) (*coreBundle, *Dispatcher) {
	t.Helper()
	b := openCore(t)
	d := open(t, dir)
	d.rt = b.rt
	return b, d
}

// dryRunDiff writes, as the diff of a dry run's run, what setting file to
// content would change, and leaves the working tree as it was.
func dryRunDiff(t *testing.T, d *Dispatcher, dir, runID, file, content string) {
	t.Helper()
	write(t, dir, file, content)
	diff := runGit(t, dir, "diff")
	runGit(t, dir, "checkout", "--", file)
	if err := writeFile(d.DiffPath(runID), []byte(diff)); err != nil {
		t.Fatal(err)
	}
}

// perform performs a task effect as the executor does, and reports its
// outcome to the core.
func perform(t *testing.T, b *coreBundle, d *Dispatcher, e core.Effect) {
	t.Helper()
	ctx := context.Background()
	var o core.Outcome
	var then func(any)
	ok := false
	switch e := e.(type) {
	case core.MakeProposal:
		o, ok = d.MakeProposal(ctx, e)
	case core.ApplyProposal:
		o, ok = d.ApplyProposal(ctx, e)
	case core.RunVerify:
		o, then, ok = d.RunVerify(ctx, e)
	default:
		t.Fatalf("perform %T", e)
	}
	if !ok {
		return
	}
	v, err := b.rt.Report(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if then != nil {
		then(v)
	}
}

func TestADryRunOutsideAGitWorkTreeFailsItsAttemptForWantOfADiff(t *testing.T) {
	t.Parallel()
	b, d := bound(t, notGit(t))
	tk, mk := b.proposing()

	perform(t, b, d, mk)

	got := b.task(tk.ID)
	if len(got.Failures) != 1 {
		t.Fatalf("%d failures recorded, want 1: %+v", len(got.Failures), got.Failures)
	}
	f := got.Failures[0]
	if f.FailureType != core.ExecutionError || f.Attempt != tk.Attempt || f.ExecutorOutput.Error != "making the diff: dry runs need a git work tree" {
		t.Fatalf("failure %+v", f)
	}
	if got.State == core.Proposed || got.Proposal != nil {
		t.Fatalf("a dry run without a diff was proposed: %s %+v", got.State, got.Proposal)
	}
	if _, err := os.Stat(d.DiffPath(mk.RunID)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a diff was written: %v", err)
	}
}

func TestApplyingAProposalWhoseDiffIsGoneEscalatesTheTask(t *testing.T) {
	t.Parallel()
	b, d := bound(t, notGit(t))
	tk, ap := b.applying()

	perform(t, b, d, ap)

	got := b.task(tk.ID)
	if got.State != core.Escalated || got.Escalation == nil {
		t.Fatalf("the task is %s, not escalated", got.State)
	}
	if want := "the proposed diff does not apply: the proposed diff is gone: "; !strings.HasPrefix(got.Escalation.Reason, want) ||
		!strings.Contains(got.Escalation.Reason, DiffName) {
		t.Fatalf("escalation reason %q, want %q and the diff's path", got.Escalation.Reason, want)
	}
}

func TestVerifyingAnAppliedDryRunListsWhatItsDiffChangedNotWhatWasAlreadyDirty(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "dirty.txt", "flag.go")
	b := openCore(t)
	d.rt = b.rt
	tk, ap := b.applying()
	// The dry run's diff, made in its worktree: flag.go changed.
	dryRunDiff(t, d, dir, ap.RunID, "flag.go", "package flag\n")
	// Meanwhile the user edits another file.
	write(t, dir, "dirty.txt", "the user's edit\n")

	perform(t, b, d, ap)

	if got := b.task(tk.ID); got.Applying || got.Phase != core.Verifying {
		t.Fatalf("after applying, the task is %s (%s, applying %v): %+v", got.State, got.Phase, got.Applying, got.Escalation)
	}
	sameFiles(t, changed(t, d, tk.ID, false), []core.FileState{{Path: "flag.go", Status: workspace.StatusModified}})
}

func TestAnApplyCutShortByShutdownIsNotReportedAsAFailure(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "flag.go")
	b := openCore(t)
	d.rt = b.rt
	tk, ap := b.applying()
	dryRunDiff(t, d, dir, ap.RunID, "flag.go", "package flag\n")
	// wilco is stopping: the git it runs is killed.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	if r, ok := d.ApplyProposal(ctx, ap); ok {
		t.Fatalf("an apply cut short has an outcome to report: %+v", r)
	}

	// Still applying, to be applied again at the next start; not escalated
	// for a diff that "does not apply".
	if got := b.task(tk.ID); !got.Applying || got.State == core.Escalated {
		t.Fatalf("after an interrupted apply the task is %s (applying %v): %+v", got.State, got.Applying, got.Escalation)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "flag.go")); err != nil || string(b) != committed("flag.go") {
		t.Fatalf("flag.go after an interrupted apply: %q, %v", b, err)
	}
}

func TestApplyingAProposalOutsideAGitWorkTreeEscalatesTheTask(t *testing.T) {
	t.Parallel()
	b, d := bound(t, notGit(t))
	tk, ap := b.applying()
	// The diff is there: what is missing is the work tree.
	if err := writeFile(d.DiffPath(ap.RunID), []byte("diff --git a/flag.go b/flag.go\n")); err != nil {
		t.Fatal(err)
	}

	perform(t, b, d, ap)

	got := b.task(tk.ID)
	if got.State != core.Escalated || got.Escalation == nil {
		t.Fatalf("the task is %s, not escalated", got.State)
	}
	if want := "the proposed diff does not apply: applying needs a git work tree"; got.Escalation.Reason != want {
		t.Fatalf("escalation reason %q, want %q", got.Escalation.Reason, want)
	}
}
