package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The scripted agent acknowledges, guesses wrong without the failure, and
// fixes the bug once the retry context names the failing test. It changes
// the working directory, so the test is not parallel.
func TestScriptedAgentFixesOnlyWithTheFailureInItsPrompt(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("WILCO_TASK_ID", "T-7")
	for _, tc := range []struct {
		prompt, want string
	}{
		{"## Task: T-7\nFix Add", calcWrong},
		{"<retry_context attempt=\"2\"> no details </retry_context>", calcWrong},
		{"<retry_context attempt=\"2\">--- FAIL: TestAdd</retry_context>", calcFixed},
	} {
		var out bytes.Buffer
		if code := RunAgent(strings.NewReader(tc.prompt), &out); code != 0 {
			t.Fatalf("exit %d: %s", code, out.String())
		}
		if !strings.HasPrefix(out.String(), "[ACK] T-7 - RECEIVED\nUnderstanding: ") {
			t.Fatalf("no ACK: %q", out.String())
		}
		got, _ := os.ReadFile(filepath.Join(dir, "calc.go"))
		if string(got) != tc.want {
			t.Fatalf("prompt %q wrote:\n%s", tc.prompt, got)
		}
	}
}
