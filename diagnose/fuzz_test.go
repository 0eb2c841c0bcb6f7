package diagnose

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var updateCorpus = flag.Bool("update-corpus", false, "write the analyser's samples to testdata/fuzz/FuzzAnalyse")

func checkBounded(t *testing.T, a Analysis) {
	t.Helper()
	for name, f := range map[string]struct {
		s   string
		max int
	}{"Summary": {a.Summary, MaxSummary}, "Error": {a.Error, MaxText}, "RootCause": {a.RootCause, MaxText}, "SuggestedFix": {a.SuggestedFix, MaxText}} {
		if len(f.s) > f.max || !utf8.ValidString(f.s) || strings.ContainsAny(f.s, "\n\r\x00\x1b") {
			t.Errorf("%s is not one bounded line of UTF-8 (%d bytes): %q", name, len(f.s), f.s)
		}
	}
	if len(a.Tests) > MaxTests {
		t.Errorf("%d tests listed", len(a.Tests))
	}
	for _, n := range a.Tests {
		if len(n) > MaxSummary || !utf8.ValidString(n) || strings.ContainsAny(n, "\n\r\x00") {
			t.Errorf("test name %q", n)
		}
	}
	switch a.Escalate {
	case "", EscalatePermissionDenied, EscalateServiceUnavailable:
	default:
		t.Errorf("Escalate = %q", a.Escalate)
	}
}

// fuzzExtras are hostile inputs for the corpus.
var fuzzExtras = []struct {
	name, output string
	timedOut     bool
}{
	{"invalid-utf8", "\xff\xfe--- FAIL: Test\xc3\x28 (0.00s)\n    x_test.go:1: \xe2\x82\n", false},
	{"escapes-only", "\x1b[31m\x1b]0;title\x07\x1b[0m\r\r\n\x00\x07", false},
	{"many-failures", strings.Repeat("--- FAIL: TestAVeryLongNameThatGoesOnAndOn/with_a_subtest_too (0.00s)\n", 200), false},
	{"panic-without-goroutine", "panic: \npanic: \n\tpanic: x", false},
	{"unterminated-quotes", "Cannot find module '\nNo module named '\nerror[E0432]: unresolved import `\n", true},
	{"host-soup", "connection refused http://[::1 ECONNREFUSED :: 10.0.0.1: lookup .: host='' Could not resolve host:", false},
}

// FuzzAnalyse: the analyser never panics and its result stays bounded,
// whatever a step prints.
func FuzzAnalyse(f *testing.F) {
	for _, c := range analyseCases {
		f.Add(c.command, c.exit, c.output, c.timedOut)
	}
	for _, c := range fuzzExtras {
		f.Add("sh -c x", 1, c.output, c.timedOut)
	}
	f.Fuzz(func(t *testing.T, command string, exit int, output string, timedOut bool) {
		a := Analyse(Input{Command: command, ExitCode: exit, Output: output, TimedOut: timedOut, Timeout: time.Second})
		checkBounded(t, a)
		if a.Summary == "" || a.RootCause == "" || a.SuggestedFix == "" {
			t.Errorf("empty field: %+v", a)
		}
	})
}

// TestAnalyseLargeOutput: a big output with the cause buried in it.
func TestAnalyseLargeOutput(t *testing.T) {
	t.Parallel()
	out := strings.Repeat("=== RUN   TestSomething\n--- PASS: TestSomething (0.00s)\n", 20000) +
		"--- FAIL: TestLast (0.00s)\n    last_test.go:9: " + strings.Repeat("x", 10000) + "\nFAIL\n"
	a := Analyse(Input{Command: "go test -v ./...", ExitCode: 1, Output: out})
	checkBounded(t, a)
	if !strings.Contains(a.RootCause, "TestLast") || a.Summary != "20000 passed, 1 failed" {
		t.Fatalf("analysis: %+v", a)
	}
}

// TestWriteCorpus writes the samples as the fuzz corpus (go test
// ./diagnose -run TestWriteCorpus -update-corpus); the corpus is committed.
func TestWriteCorpus(t *testing.T) {
	if !*updateCorpus {
		t.Skip("run with -update-corpus to rewrite testdata/fuzz/FuzzAnalyse")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzAnalyse")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range fuzzExtras {
		body := fmt.Sprintf("go test fuzz v1\nstring(%s)\nint(1)\nstring(%s)\nbool(%v)\n", strconv.Quote("sh -c x"), strconv.Quote(c.output), c.timedOut)
		if err := os.WriteFile(filepath.Join(dir, "hostile-"+c.name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range analyseCases {
		name := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return r
			}
			return '-'
		}, strings.ToLower(c.name))
		body := fmt.Sprintf("go test fuzz v1\nstring(%s)\nint(%d)\nstring(%s)\nbool(%v)\n",
			strconv.Quote(c.command), c.exit, strconv.Quote(c.output), c.timedOut)
		if err := os.WriteFile(filepath.Join(dir, "sample-"+name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
