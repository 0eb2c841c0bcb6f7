package untested

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestAChangedSourceFileIsUntestedUnlessItsPackagesTestsChangedToo(t *testing.T) {
	t.Parallel()
	tree := fstest.MapFS{
		"web/package.json":      {Data: []byte("{}")},
		"api/pyproject.toml":    {Data: []byte("")},
		"engine/Cargo.toml":     {Data: []byte("")},
		"engine/src/lib.rs":     {Data: []byte("pub fn f() {}\n#[cfg(test)]\nmod tests {}\n")},
		"engine/src/parse.rs":   {Data: []byte("pub fn p() {}\n")},
		"engine/src/lexer.rs":   {Data: []byte("pub fn l() {}\n")},
		"engine/tests/parse.rs": {Data: []byte("")},
	}
	for _, c := range []struct {
		name     string
		changed  []string
		untested []string
	}{
		{"go without a test", []string{"calc/calc.go"}, []string{"calc/calc.go (Go: no _test.go changed in calc)"}},
		{"go with its test", []string{"calc/calc.go", "calc/calc_test.go"}, nil},
		{"go with a test of another package", []string{"calc/calc.go", "other/other_test.go"}, []string{"calc/calc.go (Go"}},
		{"go generated and test data", []string{"api/api.pb.go", "calc/testdata/x.go", "vendor/x/x.go"}, nil},
		{"docs and config", []string{"README.md", "wilco.yaml", "go.mod"}, nil},
		{"node without a test", []string{"web/src/app.ts"}, []string{"web/src/app.ts (Node: no test file changed in its package (web))"}},
		{"node with a spec", []string{"web/src/app.ts", "web/src/app.spec.ts"}, nil},
		{"node with __tests__", []string{"web/src/app.js", "web/src/__tests__/app.js"}, nil},
		{"node test in another package", []string{"web/src/app.ts", "other/app.test.ts"}, []string{"web/src/app.ts"}},
		{"python without a test", []string{"api/app/views.py"}, []string{"api/app/views.py (Python: no test_*.py or *_test.py changed in api)"}},
		{"python with tests/", []string{"api/app/views.py", "api/tests/test_views.py"}, nil},
		{"rust with inline tests", []string{"engine/src/lib.rs"}, nil},
		{"rust with tests/", []string{"engine/src/parse.rs", "engine/tests/parse.rs"}, nil},
		{"rust without", []string{"engine/src/lexer.rs"}, []string{"engine/src/lexer.rs (Rust"}},
	} {
		got := Find(c.changed, tree)
		if len(got) != len(c.untested) {
			t.Errorf("%s: %q, want %q", c.name, got, c.untested)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], c.untested[i]) {
				t.Errorf("%s: %q, want %q", c.name, got, c.untested)
			}
		}
	}
}
