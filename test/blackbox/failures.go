package blackbox

import (
	"strings"
	"time"
)

// envEscalation checks that task id escalated at its first attempt with
// one failure of type environment, and a reason that holds every want.
func (in *Instance) EnvEscalation(id string, want ...string) Task {
	in.T.Helper()
	got := in.WaitTask(id, 60*time.Second, "escalated")
	if got.Attempt != 1 || len(got.Failures) != 1 || got.Failures[0].FailureType != "environment" || got.Escalation == nil {
		in.T.Fatalf("task %s is not escalated at once as an environment failure:\n%s", id, got)
	}
	for _, w := range want {
		if !strings.Contains(got.Escalation.Reason, w) {
			in.T.Fatalf("the escalation of %s does not say %q:\n%s", id, w, got.Escalation.Reason)
		}
	}
	return got
}
