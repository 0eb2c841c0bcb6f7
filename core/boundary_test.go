package core

import (
	"slices"
	"testing"
)

func TestMatchPattern(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, file string
		want          bool
	}{
		{"internal/auth", "internal/auth/token.go", true},
		{"internal/auth", "internal/auth", true},
		{"internal/auth", "internal/authz/x.go", false},
		{"internal/auth", "pkg/internal/auth/x.go", false},
		{"internal/auth/", "internal/auth/token.go", true},
		{"./internal/auth", "internal/auth/token.go", true},
		{"/Makefile", "Makefile", true},
		{"/Makefile", "sub/Makefile", false},
		{"Makefile", "sub/Makefile", true},
		{"vendor/", "vendor/a/b.go", true},
		{"vendor/", "vendor", false},
		{"vendor", "x/vendor/a.go", true},
		{"*.lock", "Cargo.lock", true},
		{"*.lock", "deep/dir/yarn.lock", true},
		{"*.lock", "lock.go", false},
		{"internal/auth/**", "internal/auth/a/b/c.go", true},
		{"internal/auth/**", "internal/other/c.go", false},
		{"internal/**/testdata", "internal/a/b/testdata/x.json", true},
		{"internal/**/testdata", "internal/testdata/x.json", true},
		{"**/*.pb.go", "api/v1/x.pb.go", true},
		{"**/*.pb.go", "x.pb.go", true},
		{"**/*.pb.go", "x.go", false},
		{"db/migrations/*.sql", "db/migrations/001.sql", true},
		{"db/migrations/*.sql", "db/migrations/old/001.sql", false},
		{"go.mod", "go.mod", true},
		{"go.mod", "go.sum", false},
		{"src/[", "src/[", true}, // a bad glob is a literal name
		{"", "a.go", false},
		{"/", "a.go", false},
	} {
		if got := MatchPattern(c.pattern, c.file); got != c.want {
			t.Errorf("MatchPattern(%q, %q) = %v, want %v", c.pattern, c.file, got, c.want)
		}
	}
}

func TestBoundaryPatterns(t *testing.T) {
	t.Parallel()
	for b, want := range map[string][]string{
		"internal/auth": {"internal/auth"},
		"  *.lock ":     {"*.lock"},
		"Don't touch `db/migrations` or the schema.": {"db/migrations"},
		"Don't modify internal/auth/** (security).":  {"internal/auth/**"},
		"Don't modify the session storage mechanism": nil,
		"the `session` store":                        {"session"},
		"and/or":                                     {"and/or"},
		"":                                           nil,
	} {
		if got := BoundaryPatterns(b); !slices.Equal(got, want) {
			t.Errorf("BoundaryPatterns(%q) = %q, want %q", b, got, want)
		}
	}
}

// TestBoundariesAreFilesOutOfScope is the rule "Boundaries: files or
// modules out of scope": a changed file inside one is a violation.
func TestBoundariesAreFilesOutOfScope(t *testing.T) {
	t.Parallel()
	files := []string{"internal/auth/token.go", "internal/login/login.go", "go.sum", "Cargo.lock", "README.md"}
	got := OutsideBoundaries(files, []string{"internal/auth", "*.lock", "Don't change the README wording"})
	if want := []string{"internal/auth/token.go", "Cargo.lock"}; !slices.Equal(got, want) {
		t.Fatalf("OutsideBoundaries = %v, want %v", got, want)
	}
	if got := OutsideBoundaries(files, nil); got != nil {
		t.Fatalf("no boundaries: %v", got)
	}
	if got := OutsideBoundaries(nil, []string{"**"}); got != nil {
		t.Fatalf("no files: %v", got)
	}
}
