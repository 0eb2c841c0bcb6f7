package blackbox

import (
	"strings"
	"time"
)

// loginLink is the one-time login link `wilco serve` printed.
func (in *Instance) LoginLink() string {
	in.T.Helper()
	var link string
	in.Until("wilco serve to print the page's login link", 30*time.Second, func() bool {
		for _, f := range strings.Fields(in.Stderr.String()) {
			if strings.HasPrefix(f, "http://") && strings.Contains(f, "/#login=") {
				link = f
				return true
			}
		}
		return false
	})
	return link
}
