package blackbox

import (
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
