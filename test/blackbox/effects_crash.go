package blackbox

import (
	"strconv"
	"strings"
	"time"
)

// waitKilled waits until the server has died of the SIGKILL it sent
// itself.
func (in *Instance) WaitKilled(timeout time.Duration) {
	in.T.Helper()
	select {
	case err := <-in.Exited:
		in.Exited <- err
		if err == nil || !strings.Contains(err.Error(), "killed") {
			in.T.Fatalf("wilco serve ended with %v, not killed:\n%s", err, Tail(in.Stderr.String(), 30))
		}
	case <-time.After(timeout):
		in.T.Fatalf("wilco serve was not killed in %s:\n%s", timeout, Tail(in.Stderr.String(), 30))
	}
}

// eventsOf returns the events of a type in the log.
func (in *Instance) EventsOf(typ string) []Event {
	in.T.Helper()
	evs, _ := in.Events(0)
	var out []Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// EffectsPending is how many effects wilco has decided on and not yet
// performed (wilco_effects_pending of /metrics).
func (in *Instance) EffectsPending() int {
	in.T.Helper()
	r := in.Must(200, in.Call("GET", "/metrics", AdminToken, nil))
	for _, line := range strings.Split(string(r.Body), "\n") {
		if v, ok := strings.CutPrefix(line, "wilco_effects_pending "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				in.T.Fatalf("wilco_effects_pending %q: %v", v, err)
			}
			return int(n)
		}
	}
	in.T.Fatalf("/metrics has no wilco_effects_pending:\n%s", r.Body)
	return 0
}

// WaitEffectsPerformed waits until wilco has performed every effect it
// decided on so far and recorded their outcomes: right after a start,
// everything its recovery asked for.
func (in *Instance) WaitEffectsPerformed(timeout time.Duration) {
	in.T.Helper()
	in.Until("the effects decided on to be performed", timeout, func() bool { return in.EffectsPending() == 0 })
}
