package tmux

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"wilco/core"
)

// BenchmarkDeliveryToAConfirmedSubmit measures, over b.N prompts typed
// into the scripted agent that is ready for each (run it with
// -benchtime=200x), the time from the prompt being handed to the adapter
// to a confirmed submit (the prompt left the input box, the agent went
// busy), with the adapter's default poll interval; the scripted agent
// swallows the first submit key of a prompt with probability 0 (every
// key taken) and 0.3. It
// reports the median and the 99th percentile, and how many first submits
// were lost and recovered (the key sent again) and how many prompts were
// lost for good.
func BenchmarkDeliveryToAConfirmedSubmit(b *testing.B) {
	for _, rate := range []string{"0", "0.3"} {
		b.Run("swallow="+rate, func(b *testing.B) { benchDelivery(b, rate) })
	}
}

func benchDelivery(b *testing.B, swallowRate string) {
	needTmux(b)
	dir := b.TempDir()
	rec := newRecorder()
	submits := make(chan SubmitRecord, b.N+1)
	a, err := New(Options{Dir: dir, StateDir: filepath.Join(dir, ".wilco"), Report: rec, OnSubmit: func(s SubmitRecord) { submits <- s }})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		a.Close()
		a.KillSessions(context.Background())
		srv, _ := PrivateServer("", filepath.Join(dir, ".wilco"), nil)
		_ = srv.KillServer(context.Background())
	}()
	err = a.Add(AgentConfig{Name: "tui", Command: []string{tuiAgent}, Ready: `^> ?$`, Busy: `working…`, Settle: 300 * time.Millisecond,
		Env: map[string]string{"TUIAGENT_SWALLOW_RATE": swallowRate, "TUIAGENT_SEED": "1", "TUIAGENT_BUSY": "150ms"}})
	if err != nil {
		b.Fatal(err)
	}
	// The program starts, and is ready, before the clock runs.
	a.Deliver("tui", core.InboxMessage{ID: "M-0", Type: string(core.TypeConversation), Attempt: 1, Body: "warm up"})
	rec.wait(b, "the warm-up answer", time.Minute, func() bool { return len(rec.replies) == 1 })
	<-submits
	var waits []time.Duration
	lost, recovered, repasted, twice := 0, 0, 0, 0
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		id := fmt.Sprintf("M-%d", i)
		a.Deliver("tui", core.InboxMessage{ID: id, Type: string(core.TypeConversation), Attempt: 1, Body: "ping " + id})
		select {
		case s := <-submits:
			waits = append(waits, s.Confirmed.Sub(s.Queued))
			if s.Submits > 1 {
				recovered++
			}
			if s.Submits > 2 {
				twice++
			}
			if s.Pastes > 1 {
				repasted++
			}
		case <-time.After(30 * time.Second):
			lost++
			continue
		}
		// The agent is ready again before the next prompt is assigned.
		rec.wait(b, "the answer to "+id, time.Minute, func() bool { return len(rec.replies) == i+1 })
	}
	b.StopTimer()
	slices.Sort(waits)
	pct := func(p float64) time.Duration { return waits[min(len(waits)-1, int(float64(len(waits))*p))] }
	b.ReportMetric(float64(pct(0.5).Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(pct(0.99).Microseconds())/1000, "ms-p99")
	b.ReportMetric(float64(recovered), "first-submits-lost-and-recovered")
	b.ReportMetric(float64(lost), "prompts-lost")
	b.Logf("%d prompts: assigned → confirmed submit median %s, p90 %s, p99 %s, max %s; first submit lost and recovered %d times (%.0f%%), the key sent 3 times or more %d times, pasted again %d times; lost for good %d",
		len(waits), pct(0.5), pct(0.9), pct(0.99), waits[len(waits)-1], recovered, 100*float64(recovered)/float64(max(1, len(waits))), twice, repasted, lost)
}
