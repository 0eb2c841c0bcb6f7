package blackbox

import (
	"strings"
)

// Tail is the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = append([]string{"…\n"}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "")
}
