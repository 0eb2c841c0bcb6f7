package shellcmd

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// lines are verify steps as users write them, and the programs each runs.
var lines = []struct {
	line string
	want []string
}{
	{`go test ./...`, []string{"go"}},
	{`test -f fixed.txt || { echo "fixed.txt is missing"; exit 1; }`, nil},
	{`[ -f fixed.txt ] && [ "$(cat fixed.txt)" = ok ]`, []string{"cat"}},
	{`[[ -n $(git status --porcelain) ]] && exit 1 || true`, []string{"git"}},
	{`cd web && npm ci && npm test`, []string{"npm"}},
	{`go vet ./... && gofmt -l . | grep . && exit 1; true`, []string{"go", "gofmt", "grep"}},
	{`(cd svc && make check) || (echo failed; exit 1)`, []string{"make"}},
	{`if command -v golangci-lint >/dev/null; then golangci-lint run; else echo skipped; fi`, []string{"golangci-lint"}},
	{`for d in a b; do cargo test --manifest-path $d/Cargo.toml; done`, []string{"cargo"}},
	{`while read -r f; do python3 -m py_compile "$f"; done < files.txt`, []string{"python3"}},
	{`case "$CI" in true) pytest -x ;; *) pytest ;; esac`, []string{"pytest"}},
	{`env GOFLAGS=-mod=mod CGO_ENABLED=0 go build ./...`, []string{"go"}},
	{`CGO_ENABLED=0 GOOS=linux go build ./...`, []string{"go"}},
	{`sudo -u builder -E make install`, []string{"make"}},
	{`time go test ./...`, []string{"go"}},
	{`time -p go test ./...`, []string{"go"}},
	{`exec node --test`, []string{"node"}},
	{`exec >log 2>&1`, nil},
	{`timeout -k 5s 10m go test -race ./...`, []string{"go"}},
	{`nice -n 10 nohup cargo build`, []string{"cargo"}},
	{`find . -name '*.go' -print0 | xargs -0 -I{} gofmt -l {}`, []string{"find", "gofmt"}},
	{`git ls-files | xargs -n 1 shellcheck`, []string{"git", "shellcheck"}},
	{`command -v go && command go version`, []string{"go"}},
	{`$GO test ./... && "$PYTHON" -m pytest && ${RUNNER:-npx} jest`, nil},
	{`./check.sh && sh check.sh && scripts/lint && bash ci/test.sh && check.sh`, nil},
	{`sh -c 'go test ./... && ruff check'`, []string{"go", "ruff"}},
	{`bash -euo pipefail -c "deno test | tee out.txt"`, []string{"deno", "tee"}},
	{`sh -c "$CMD"`, nil},
	{`export PATH=$PATH:bin; set -e; . ./env; source env.sh; go test`, []string{"go"}},
	{`X=$(git rev-parse HEAD) && echo "$X" | wc -c`, []string{"git", "wc"}},
	{`echo "$(date +%s)" > stamp; printf '%s\n' "$(uname -a)"`, []string{"date", "uname"}},
	{`diff <(sort a.txt) <(sort b.txt)`, []string{"diff", "sort"}},
	{"cat <<EOF\n$(node --version)\nEOF", []string{"cat", "node"}},
	{`check() { go vet ./...; }; check && check`, []string{"go"}},
	{`"go" test && 'npm' test && g"o"fmt -l .`, []string{"go", "npm", "gofmt"}},
	{`go test {package}/... && cd {package} && npm test`, []string{"go", "npm"}},
	{`! grep -r TODO src`, []string{"grep"}},
	{`local x=1; declare -a y; readonly z; let n=1; shift; trap 'rm -f t' EXIT; wait; pwd; type go; unset x; eval "$S"; return 0`, []string{"rm"}},
	{`: ; true; false; read x; umask 022; ulimit -n 1024; kill %1; getopts ab o; hash go`, nil},
	{`g*o test; go\ test x; $'go' x`, nil},
	{"g\\o test && \"node\" x && \"g\\o\" y && ca\\\nrgo z", []string{"go", "node", "cargo"}},
	{`trap 'rm -f "$T"' EXIT; trap - EXIT; eval go vet; eval "$S"`, []string{"rm", "go"}},
	{`go test (`, nil}, // not a command line: none can be told
	{``, nil},
	{"go build ./...\nnode --test\n# a comment naming rustc\n", []string{"go", "node"}},
	{`python3 -c 'import sys' 2>/dev/null || python -c 'import sys'`, []string{"python3", "python"}},
}

func TestProgramsAreTheCommandsTheLineRuns(t *testing.T) {
	t.Parallel()
	for _, c := range lines {
		if got := Programs(c.line); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Programs(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}

func TestAShellLineInsideAShellLineIsReadToADepth(t *testing.T) {
	t.Parallel()
	line := "go version"
	for range maxDepth {
		line = "sh -c " + quote(line)
	}
	if got := Programs(line); !reflect.DeepEqual(got, []string{"go"}) {
		t.Fatalf("%d levels deep: %q", maxDepth, got)
	}
	if got := Programs("sh -c " + quote(line)); got != nil {
		t.Fatalf("past the depth: %q", got)
	}
}

func isWrapper(name string) bool {
	_, ok := wrappers[name]
	return ok
}

// quote single-quotes s for sh.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// FuzzPrograms reads any line. What it returns are program names a probe
// can ask about ("tool NAME:"), each once, none of them a builtin, a
// wrapper or a shell, each written in the line (quotes aside), and the
// same every time.
//
//	go test -run='^$' -fuzz='^FuzzPrograms$' -fuzztime=30s ./shellcmd
func FuzzPrograms(f *testing.F) {
	for _, c := range lines {
		f.Add(c.line)
	}
	f.Add("sh -c 'sh -c \"sh -c go\"'")
	f.Add("env -- go")
	f.Add("sudo -- --")
	f.Add("bash -o")
	f.Fuzz(func(t *testing.T, line string) {
		got := Programs(line)
		unquoted := strings.NewReplacer(`"`, "", `'`, "", "\\", "", "\n", "").Replace(line)
		for i, p := range got {
			switch {
			case !programName.MatchString(p) || strings.HasSuffix(p, ".sh"):
				t.Fatalf("%q: %q is not a program's name", line, p)
			case builtins[p] || shells[p]:
				t.Fatalf("%q: %q is the shell's own", line, p)
			case isWrapper(p):
				t.Fatalf("%q: %q is a wrapper", line, p)
			case slices.Contains(got[:i], p):
				t.Fatalf("%q: %q twice in %q", line, p, got)
			case !strings.Contains(unquoted, p):
				t.Fatalf("%q: %q is not in the line", line, p)
			}
		}
		if again := Programs(line); !reflect.DeepEqual(got, again) {
			t.Fatalf("%q: %q, then %q", line, got, again)
		}
	})
}
