package blackbox

import (
	"strings"
	"testing"
	"time"

	"wilco/forge/forgetest"
)

// WaitComment waits for a comment of wilco's (the scripted forge's token
// user) on issue containing every one of want, and returns it; it fails
// the test with the whole thread when none comes in timeout.
func WaitComment(t testing.TB, fs *forgetest.Server, issue int, timeout time.Duration, want ...string) string {
	t.Helper()
	var found string
	ok := Eventually(timeout, 20*time.Millisecond, func() bool {
		for _, c := range fs.Comments(issue) {
			ok := c.Author == "wilco-bot"
			for _, w := range want {
				ok = ok && strings.Contains(c.Body, w)
			}
			if ok {
				found = c.Body
				return true
			}
		}
		return false
	})
	if !ok {
		var all []string
		for _, c := range fs.Comments(issue) {
			all = append(all, c.Author+": "+c.Body)
		}
		t.Fatalf("no comment on issue #%d saying %q in %s; the comments:\n%s", issue, want, timeout, strings.Join(all, "\n---\n"))
	}
	return found
}
