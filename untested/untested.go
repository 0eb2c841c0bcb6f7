// Package untested finds the source files a change touched whose package
// gained or changed no test: the definition of done's "new or changed
// behaviour has tests", by each language's own convention.
//
//   - Go: a .go file is tested when a _test.go file of its directory (its
//     package) changed too.
//   - Node (JavaScript, TypeScript): a source file is tested when a test
//     file (*.test.*, *.spec.*, or one under __tests__/, test/ or tests/)
//     of its package — the folder of the nearest package.json — changed.
//   - Python: a .py file is tested when a test file (test_*.py, *_test.py,
//     or one under tests/ or test/) of its project — the folder of the
//     nearest pyproject.toml, setup.py or setup.cfg — changed.
//   - Rust: a .rs file is tested when a file under its crate's tests/ (the
//     folder of the nearest Cargo.toml) changed, or the file itself holds
//     its unit tests (#[cfg(test)] or #[test]).
//
// Other files (documentation, configuration, data) need no test.
package untested

import (
	"bytes"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Find returns, for each source file among changed (slash-separated paths
// relative to the root of tree, deleted files left out) that its
// language's convention says is untested, the file and why: "calc/calc.go
// (Go: no _test.go changed in calc)". tree is the working tree as it is
// now.
func Find(changed []string, tree fs.FS) []string {
	var out []string
	for _, f := range changed {
		lang, ok := source(f)
		if !ok {
			continue
		}
		var tested bool
		var where string
		switch lang {
		case "Go":
			dir := path.Dir(f)
			where = "no _test.go changed in " + dir
			tested = slices.ContainsFunc(changed, func(c string) bool { return path.Dir(c) == dir && strings.HasSuffix(c, "_test.go") })
		case "Node":
			root := nearest(tree, path.Dir(f), "package.json")
			where = "no test file changed in its package (" + root + ")"
			tested = slices.ContainsFunc(changed, func(c string) bool { return within(c, root) && isNodeTest(c) })
		case "Python":
			root := nearest(tree, path.Dir(f), "pyproject.toml", "setup.py", "setup.cfg")
			where = "no test_*.py or *_test.py changed in " + root
			tested = slices.ContainsFunc(changed, func(c string) bool { return within(c, root) && isPythonTest(c) })
		case "Rust":
			root := nearest(tree, path.Dir(f), "Cargo.toml")
			where = "no test changed in " + path.Join(root, "tests") + " and no unit tests in the file"
			tested = slices.ContainsFunc(changed, func(c string) bool { return within(c, path.Join(root, "tests")) }) || hasRustTests(tree, f)
		}
		if !tested {
			out = append(out, f+" ("+lang+": "+where+")")
		}
	}
	return out
}

// source reports whether f is a source file that needs tests, and its
// language. Test files, generated or vendored code and test data do not.
func source(f string) (string, bool) {
	base := path.Base(f)
	for _, seg := range strings.Split(path.Dir(f), "/") {
		switch seg {
		case "vendor", "node_modules", "testdata", "fixtures", "__tests__", "test", "tests", "examples", "docs", ".github":
			return "", false
		}
	}
	switch ext := path.Ext(base); ext {
	case ".go":
		if strings.HasSuffix(base, "_test.go") || strings.HasSuffix(base, ".pb.go") || strings.HasPrefix(base, "zz_generated") {
			return "", false
		}
		return "Go", true
	case ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs":
		if isNodeTest(f) || strings.HasSuffix(base, ".d.ts") || strings.Contains(base, ".config.") || strings.HasSuffix(base, ".min.js") {
			return "", false
		}
		return "Node", true
	case ".py":
		if isPythonTest(f) || base == "setup.py" || base == "conftest.py" {
			return "", false
		}
		return "Python", true
	case ".rs":
		if base == "build.rs" {
			return "", false
		}
		return "Rust", true
	}
	return "", false
}

func isNodeTest(f string) bool {
	base := path.Base(f)
	return strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") || inDir(f, "__tests__", "test", "tests")
}

func isPythonTest(f string) bool {
	base := path.Base(f)
	if path.Ext(base) != ".py" {
		return false
	}
	return strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py" || inDir(f, "tests", "test")
}

// inDir reports whether one of f's folders is named one of names.
func inDir(f string, names ...string) bool {
	for _, seg := range strings.Split(path.Dir(f), "/") {
		if slices.Contains(names, seg) {
			return true
		}
	}
	return false
}

// nearest is the closest folder at or above dir holding one of the
// marker files; "." (the root) when none does.
func nearest(tree fs.FS, dir string, markers ...string) string {
	for {
		for _, m := range markers {
			if _, err := fs.Stat(tree, path.Join(dir, m)); err == nil {
				return dir
			}
		}
		if dir == "." || dir == "/" || dir == "" {
			return "."
		}
		dir = path.Dir(dir)
	}
}

// within reports whether f is in folder root ("." is everything).
func within(f, root string) bool {
	return root == "." || strings.HasPrefix(f, root+"/")
}

// hasRustTests reports whether a Rust file holds unit tests.
func hasRustTests(tree fs.FS, f string) bool {
	b, err := fs.ReadFile(tree, f)
	return err == nil && (bytes.Contains(b, []byte("#[cfg(test)]")) || bytes.Contains(b, []byte("#[test]")))
}
