package blackbox

import (
	"encoding/json"
	"strings"
	"testing"
)

// Milestones are the task's milestones, one per line, from its events.
func Milestones(t *testing.T, in *Instance, id string) string {
	t.Helper()
	var evs struct{ Events []Event }
	in.Must(200, in.Call("GET", "/v1/events?task="+id+"&follow=false&limit=1000", AdminToken, nil), &evs)
	var out []string
	for _, e := range evs.Events {
		if e.Type == "task.milestone" || e.Type == "task.state" {
			var d struct{ Text, Milestone string }
			_ = json.Unmarshal(e.Data, &d)
			if m := d.Text + d.Milestone; m != "" {
				out = append(out, m)
			}
		}
	}
	return strings.Join(out, "\n")
}
