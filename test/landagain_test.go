package test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"

	"wilco/perform"
)

// TestASquashLandedBeforeWilcoWasKilledLandsOnce: a task whose branch
// holds two commits lands by squash as one commit; wilco killed after the
// target moved and before the landing was recorded finds it landed at
// the next start, and adds no second, empty commit.
func TestASquashLandedBeforeWilcoWasKilledLandsOnce(t *testing.T) {
	t.Parallel()
	agent := execAgent(t, "agent", "two_commits.sh", nil)
	dir := blackbox.ParallelRepo(t, "parallel: 2\nland: {how: squash}\nagents:\n"+agent, blackbox.OwnFilesCheck)
	in := blackbox.ServeRepo(t, dir, perform.EnvKillBefore+"=report:Landed")
	body, _ := json.Marshal(map[string]any{"id": "sq-1", "description": "Write sq-1 into files/sq-1.txt"})
	req, _ := http.NewRequest("POST", in.Url+"/v1/tasks", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+blackbox.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	in.WaitKilled(2 * time.Minute)
	again := blackbox.ServeRepo(t, dir)
	again.WaitTask("sq-1", 2*time.Minute, "success")
	if n := strings.Count(blackbox.GitRun(t, dir, "log", "--format=%H", "--grep=^Wilco-Task: sq-1$", "main"), "\n"); n != 1 {
		t.Fatalf("%d commits of sq-1 on main:\n%s", n, blackbox.GitRun(t, dir, "log", "--stat", "--format=%h %s", "main"))
	}
	for _, c := range blackbox.FirstParents(t, dir) {
		if err := blackbox.CheckTreeOf(t, dir, c); err != nil {
			t.Fatalf("main was at %s, which fails the check: %v", c[:7], err)
		}
	}
}
