package test

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"wilco/forge"
	"wilco/forge/forgetest"
	"wilco/test/blackbox"
)

// BenchmarkForgeCallsPerTask counts the forge API calls a task landing as
// a pull request spends over its life: pushed and opened, a failed check
// whose log is read, the fix pushed, green checks and an approval, merged
// by wilco. Polled every second (land.poll 1s) and on a signed webhook
// alone (land.poll 1h). Each iteration is a wilco serve of its own; the
// calls are counted by the forge, by endpoint (the git pushes and fetches
// over smart HTTP are not API calls and are left out). The numbers go in
// docs/BENCHMARKS.md:
//
//	go test ./test -run '^$' -bench ForgeCallsPerTask -benchtime 3x -v
func BenchmarkForgeCallsPerTask(b *testing.B) {
	for _, c := range []struct {
		name, poll string
		hook       bool
	}{{"poll-1s", "1s", false}, {"webhook", "1h", true}} {
		b.Run(c.name, func(b *testing.B) {
			var calls, counted, rounds, idle []float64
			for i := 0; i < b.N; i++ {
				m := forgeCallsOfATask(b, c.poll, c.hook)
				calls = append(calls, float64(sum(m.all)))
				counted = append(counted, float64(sum(m.all)-sum(m.notModified)))
				rounds = append(rounds, float64(m.all["GET /pulls/{n}"]))
				idle = append(idle, m.perRound)
				b.Logf("%s: %d calls, %d of them 304: %s", c.name, sum(m.all), sum(m.notModified), endpoints(m.all))
			}
			b.ReportMetric(median(calls), "calls/task")
			b.ReportMetric(median(counted), "limited-calls/task")
			b.ReportMetric(median(rounds), "rounds/task")
			if !c.hook {
				b.ReportMetric(median(idle), "limited-calls/round-waiting")
			}
		})
	}
}

// taskCalls are the API calls of one task's life, by endpoint: all of
// them, those answered 304 Not Modified (which GitHub does not count
// against the rate limit), and the calls counted against it per round
// while its check was pending.
type taskCalls struct {
	all, notModified map[string]int
	perRound         float64
}

// forgeCallsOfATask is one task's life on the forge.
func forgeCallsOfATask(b *testing.B, poll string, hook bool) taskCalls {
	srv, prompts, in := prRepo(b, poll, hook)
	task := in.Submit(map[string]any{"description": "fix file.txt", "agent": "builder"})
	var pr forge.PullRequest
	if !blackbox.Eventually(time.Minute, 10*time.Millisecond, func() bool {
		var ok bool
		pr, ok = srv.Pull(1)
		return ok
	}) {
		b.Fatal("no pull request")
	}
	// A pending check, while a few rounds look at it.
	srv.SetCheckRun(pr.HeadSHA, forgetest.CheckRun{Name: "ci", Status: "in_progress"})
	var perRound float64
	if !hook {
		before, beforeNM := apiCalls(srv.Requests())
		time.Sleep(5 * time.Second) // the interval measured: rounds every land.poll meanwhile
		during, duringNM := apiCalls(srv.Requests())
		rounds := during["GET /pulls/{n}"] - before["GET /pulls/{n}"]
		limited := (sum(during) - sum(duringNM)) - (sum(before) - sum(beforeNM))
		perRound = float64(limited) / float64(max(rounds, 1))
	}
	srv.SetCheckRun(pr.HeadSHA, forgetest.CheckRun{Name: "ci", Status: "completed", Conclusion: "failure", Actions: true,
		Log: "compiling\nFAIL: TestWidget (0.01s)\n    widget_test.go:12: the widget is upside down\n"})
	if !blackbox.Eventually(time.Minute, 10*time.Millisecond, func() bool { return blackbox.Exists(prompts + "/prompt-2.txt") }) {
		b.Fatal("no second turn")
	}
	var head string
	if !blackbox.Eventually(time.Minute, 10*time.Millisecond, func() bool {
		p, _ := srv.Pull(1)
		head = p.HeadSHA
		return head != pr.HeadSHA
	}) {
		b.Fatal("the fix was not pushed")
	}
	srv.SetCheckRun(head, forgetest.CheckRun{Name: "ci", Status: "completed", Conclusion: "success"})
	srv.AddReview(1, "reviewer", forge.ReviewApproved, "looks right")
	in.WaitTask(task.ID, time.Minute, "success")
	in.Stop()
	all, nm := apiCalls(srv.Requests())
	return taskCalls{all: all, notModified: nm, perRound: perRound}
}

// pathNumber matches the numbers and commit ids of a path.
var pathNumber = regexp.MustCompile(`/(\d+|[0-9a-f]{40})(/|$)`)

// apiCalls counts the API requests by method and path, numbers and
// commits as {n}: all of them, and those answered 304.
func apiCalls(rs []forgetest.Request) (map[string]int, map[string]int) {
	out, nm := map[string]int{}, map[string]int{}
	for _, r := range rs {
		_, p, ok := strings.Cut(r.Path, "/repos/acme/widget")
		if !ok {
			continue // git's smart HTTP
		}
		p = pathNumber.ReplaceAllString(p, "/{n}$2")
		p = pathNumber.ReplaceAllString(p, "/{n}$2")
		out[r.Method+" "+p]++
		if r.Status == http.StatusNotModified {
			nm[r.Method+" "+p]++
		}
	}
	return out, nm
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// endpoints is the counts, most called first.
func endpoints(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
