package loadgen

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAConflictingTaskSharesOneFileWithTheTaskSubmittedJustBeforeIt(t *testing.T) {
	t.Parallel()
	work := parallelWorkload(40, 0.25)
	shared := map[string][]string{}
	for _, w := range work {
		if w.files[0] != "files/"+w.id+".txt" {
			t.Fatalf("%s writes %v first", w.id, w.files)
		}
		for _, f := range w.files[1:] {
			shared[f] = append(shared[f], w.id)
		}
	}
	// A quarter of the tasks conflict, each with a partner that does not.
	if len(shared) != 10 {
		t.Fatalf("%d shared files, want 10: %v", len(shared), shared)
	}
	var all []string
	for f, ids := range shared {
		if len(ids) != 2 || f != "shared/"+ids[0]+".txt" {
			t.Fatalf("%s is written by %v", f, ids)
		}
		all = append(all, ids...)
	}
	slices.Sort(all)
	if len(slices.Compact(all)) != 20 {
		t.Fatalf("the pairs share tasks: %v", shared)
	}
	for _, w := range parallelWorkload(8, 0) {
		if len(w.files) != 1 {
			t.Fatalf("with no conflict %s writes %v", w.id, w.files)
		}
	}
}

func TestParallelOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, mut := range []func(*ParallelOptions){
		func(o *ParallelOptions) { o.Tasks = 0 },
		func(o *ParallelOptions) { o.Parallel = 1 },
		func(o *ParallelOptions) { o.Work = -time.Second },
		func(o *ParallelOptions) { o.Verify = -time.Second },
		func(o *ParallelOptions) { o.Conflicting = 0.6 },
		func(o *ParallelOptions) { o.How = "commit" },
	} {
		o := ParallelDefaults()
		mut(&o)
		if o.Validate() == nil {
			t.Fatalf("accepted %+v", o)
		}
	}
	if err := ParallelDefaults().Validate(); err != nil {
		t.Fatal(err)
	}
}

// Every task of a run lands, the conflicting ones after resolving their
// conflict, and the run says where the time went.
func TestRunParallelLandsEveryTaskAndMeasuresItsLandings(t *testing.T) {
	t.Parallel()
	o := ParallelOptions{Tasks: 6, Parallel: 3, Work: 300 * time.Millisecond, Verify: 100 * time.Millisecond, Conflicting: 0.5, Dir: t.TempDir()}
	res, err := RunParallel(context.Background(), o)
	if err != nil {
		t.Fatalf("%v: %+v", err, res)
	}
	if res.Succeeded != 6 || res.WallMS <= 0 || res.IdealMS <= 0 || res.Ratio <= 0 || res.LandP50MS <= 0 || res.LandP99MS < res.LandP50MS || res.VerifyMS < 100 {
		t.Fatalf("measurements: %+v", res)
	}
	for _, p := range []string{"prepare", "turn", "landing"} {
		if res.Phases[p] <= 0 {
			t.Fatalf("no %s phase: %+v", p, res.Phases)
		}
	}
	log := gitOut(t, o.Dir+"/repo", "log", "--format=%s", "main")
	if n := strings.Count(log, "Write B-"); n < 6 {
		t.Fatalf("%d task commits on main:\n%s", n, log)
	}
	t.Logf("%+v", res)
}

// BenchmarkParallelTasks is a small run of `wilco bench --tasks N
// --parallel P`: 16 tasks, 8 at once, 500 ms of work; it reports the
// ratio to the ideal and a landing's cost.
func BenchmarkParallelTasks(b *testing.B) {
	for b.Loop() {
		res, err := RunParallel(context.Background(), ParallelOptions{Tasks: 16, Parallel: 8, Work: 500 * time.Millisecond, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.Ratio, "ratio")
		b.ReportMetric(res.LandP50MS, "land-p50-ms")
		b.ReportMetric(res.LandP99MS, "land-p99-ms")
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
