package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wilco/forge"
	"wilco/forge/forgetest"
	"wilco/test/blackbox"
)

// BenchmarkCIResultToNextTurn measures, for a task landing as a pull
// request, the time from a failed check appearing on the forge to the
// agent's next turn starting (its prompt written), polling alone
// (land.poll 5s) and with the forge's webhook (land.poll 1h). Each
// iteration is a wilco serve of its own. The medians go in
// docs/BENCHMARKS.md:
//
//	go test ./test -run '^$' -bench CIResultToNextTurn -benchtime 10x
func BenchmarkCIResultToNextTurn(b *testing.B) {
	for _, c := range []struct {
		name, poll string
		hook       bool
	}{{"poll-5s", "5s", false}, {"webhook", "1h", true}} {
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			for i := 0; i < b.N; i++ {
				lat = append(lat, ciToNextTurn(b, c.poll, c.hook))
			}
			med, mx := blackbox.MedianMax(lat)
			b.ReportMetric(float64(med.Microseconds())/1000, "median-ms")
			b.ReportMetric(float64(mx.Microseconds())/1000, "max-ms")
		})
	}
}

// ciToNextTurn is one measure: a task's pull request opened and looked
// at once, then a failed check set, then the agent's second prompt.
func ciToNextTurn(b *testing.B, poll string, hook bool) time.Duration {
	srv, prompts, in := prRepo(b, poll, hook)
	task := in.Submit(map[string]any{"description": "fix file.txt", "agent": "builder"})
	var pr forge.PullRequest
	if !blackbox.Eventually(time.Minute, 10*time.Millisecond, func() bool {
		var ok bool
		pr, ok = srv.Pull(1)
		if !ok {
			return false
		}
		if p := in.Task(task.ID).Phase; p == nil || *p != "pull_request" {
			return false
		}
		for _, r := range srv.Requests() {
			if strings.HasSuffix(r.Path, "/commits/"+pr.HeadSHA+"/check-runs") {
				return true
			}
		}
		return false
	}) {
		b.Fatal("the pull request was not opened and looked at")
	}
	at := time.Now()
	srv.SetCheckRun(pr.HeadSHA, forgetest.CheckRun{Name: "ci", Status: "completed", Conclusion: "failure", Summary: "failed", Text: "boom"})
	path := filepath.Join(prompts, "prompt-2.txt")
	var st os.FileInfo
	if !blackbox.Eventually(time.Minute, 5*time.Millisecond, func() bool {
		var err error
		st, err = os.Stat(path)
		return err == nil
	}) {
		b.Fatal("no second turn")
	}
	in.Stop()
	return st.ModTime().Sub(at)
}
