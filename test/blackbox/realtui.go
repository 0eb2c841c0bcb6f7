package blackbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// AgentLogs are the agent.log files of a repository's runs, for failure
// messages.
func AgentLogs(t testing.TB, dir string) string {
	paths, _ := filepath.Glob(filepath.Join(dir, ".wilco", "runs", "*", "agent.log"))
	var out []string
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		out = append(out, "=== "+p+"\n"+Tail(string(b), 60))
	}
	return strings.Join(out, "\n")
}
