package core

import (
	"fmt"
	"path"
	"strings"
)

// A monorepo's task is scoped to one package: a folder of the repository
// (package: in wilco.yaml for every task, or the task's own). Its verify
// steps run there — or at the root with {package} replaced, for a command
// that names the package (go test ./{package}/..., npm test -w {package}) —
// and a change to a file outside it fails verification as a boundary does:
// a change that needs two packages is two tasks (a plan).

// CheckPackage reports whether p names a package: a relative,
// slash-separated path inside the repository ("" is the whole repository).
func CheckPackage(p string) error {
	if p == "" {
		return nil
	}
	clean := path.Clean(p)
	switch {
	case strings.ContainsAny(p, ",;"):
		return fmt.Errorf("%q: a task is scoped to one package; a change that needs two packages must be split into tasks, one per package (a plan: wilco plan submit)", p)
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\"):
		return fmt.Errorf("%q: a package is a folder of the repository, written relative to its root with slashes (services/api)", p)
	case clean == "." || clean == ".." || strings.HasPrefix(clean, "../"):
		return fmt.Errorf("%q: a package is a folder inside the repository", p)
	case len(p) > 256:
		return fmt.Errorf("a package path is at most 256 bytes")
	}
	return nil
}

// cleanPackage is p as the task keeps it: slash-separated, no ./ or
// trailing slash.
func cleanPackage(p string) string {
	if p == "" {
		return ""
	}
	return path.Clean(strings.TrimPrefix(p, "./"))
}

// PackageBoundary is what a task scoped to pkg may change: pkg and what is
// under it.
func PackageBoundary(pkg string) string { return strings.TrimSuffix(pkg, "/") + "/**" }
