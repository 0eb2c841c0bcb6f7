package blackbox

import (
	"os/exec"
	"strings"
	"testing"
)

// GitRun runs git in dir for the test (the machine's git configuration,
// as a user's) and returns its output.
func GitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Trailer is the value of a commit's trailer key ("" when it has none).
func Trailer(t *testing.T, dir, commit, key string) string {
	t.Helper()
	return strings.TrimSpace(GitRun(t, dir, "log", "-1", "--format=%(trailers:key="+key+",valueonly,unfold)", commit))
}
