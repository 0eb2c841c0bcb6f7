package blackbox

import (
	"encoding/json"
)

// consultations is the task's questions to scouts, as GET /v1/tasks/{id}
// gives them.
func (in *Instance) Consultations(id string) []map[string]any {
	in.T.Helper()
	raw := in.TaskRaw(id)
	var out []map[string]any
	b, _ := json.Marshal(raw["consultations"])
	_ = json.Unmarshal(b, &out)
	return out
}
