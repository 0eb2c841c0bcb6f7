package diagnose

import (
	"fmt"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Escalation conditions the analyser recognises: retrying cannot fix them, so the task is escalated at once.
const (
	EscalatePermissionDenied   = "permission_denied"
	EscalateServiceUnavailable = "service_unavailable"
)

// Bounds of an Analysis, whatever the output: a failure record stays small
// enough for a retry prompt.
const (
	// MaxSummary bounds Summary (output_summary), in bytes.
	MaxSummary = 200
	// MaxText bounds Error, RootCause and SuggestedFix, in bytes.
	MaxText = 400
	// MaxTests bounds Tests, and MaxSummary each of its names.
	MaxTests = 20
)

// Input is what the analyser reads of a failed step.
type Input struct {
	// Command is the step's command line.
	Command string
	// ExitCode is its exit status (128+n when killed by signal n).
	ExitCode int
	// Output is its combined output (or the part of it that was kept).
	Output string
	// TimedOut: the step ran past its timeout and was killed.
	TimedOut bool
	// Timeout is the step's timeout, for the message.
	Timeout time.Duration
}

// Analysis is what the analyser makes of a failed step: the fields of a
// failure record it can fill. Every field is one line of valid
// UTF-8 within the bounds above.
type Analysis struct {
	// Summary is the verification's output_summary: test counts ("1
	// passed, 2 failed") when the output has them, else the key error line.
	Summary string
	// Error is the line of the output that says what went wrong (the
	// executor output's error).
	Error string
	// RootCause is the guessed cause (root_cause_guess).
	RootCause string
	// SuggestedFix is what to do about it (suggested_fix).
	SuggestedFix string
	// Escalate is EscalatePermissionDenied, EscalateServiceUnavailable or
	// empty.
	Escalate string
	// Tests are the failing tests named in the output.
	Tests []string
}

// Analyse reads a failed step's output and guesses what went wrong, for
// Go, Node (npm, jest, vitest, mocha, node:test, TypeScript), Python
// (pytest, unittest) and Rust (cargo) toolchains, plus missing programs and
// timeouts. It is pure, deterministic, never panics, and its result is
// bounded (see Analysis) whatever the input.
//
// The causes are tried in the order of the rules table, most specific
// first: a missing dependency explains the compile errors and failing
// tests that follow it. An escalation condition (permission denied, an
// external service that cannot be reached) overrides the cause.
func Analyse(in Input) Analysis {
	text := clean(in.Output)
	var a Analysis
	for _, r := range rules {
		if !containsAny(text, r.hints) {
			continue
		}
		loc := r.re.FindStringSubmatchIndex(text)
		if loc == nil {
			continue
		}
		if m := (&match{text: text, loc: loc}); r.build(m, &a) {
			break
		}
	}
	counts := testCounts(text)
	a.Tests = failingTests(text)
	if a.RootCause == "" && (counts.failed > 0 || len(a.Tests) > 0) {
		testFailure(text, counts, &a)
	}
	if a.RootCause == "" {
		uncaught(text, &a)
	}
	if in.TimedOut {
		timedOut(in, text, &a)
	}
	lower := asciiLower(text)
	if esc, rc, fix, line := escalation(text, lower); esc != "" {
		a.Escalate, a.RootCause, a.SuggestedFix = esc, rc, fix
		if a.Error == "" || in.TimedOut {
			a.Error = line
		}
	}
	if a.RootCause == "" {
		line := firstErrorLine(text, lower)
		if line == "" {
			line = lastLine(text)
		}
		a.Error = line
		switch {
		case line != "":
			a.RootCause = fmt.Sprintf("The command exited with code %d: %s", in.ExitCode, line)
			a.SuggestedFix = "Fix the first error the command reports: " + line
		default:
			a.RootCause = fmt.Sprintf("The command exited with code %d without saying why", in.ExitCode)
			a.SuggestedFix = "Run the command by hand to see why it fails: " + in.Command
		}
	}
	a.Summary = summary(in, text, counts, a)
	return a.bounded()
}

// bounded cuts every field to its bound.
func (a Analysis) bounded() Analysis {
	a.Summary = oneLine(a.Summary, MaxSummary)
	a.Error = oneLine(a.Error, MaxText)
	a.RootCause = oneLine(a.RootCause, MaxText)
	a.SuggestedFix = oneLine(a.SuggestedFix, MaxText)
	if len(a.Tests) > MaxTests {
		a.Tests = a.Tests[:MaxTests]
	}
	for i, t := range a.Tests {
		a.Tests[i] = oneLine(t, MaxSummary)
	}
	return a
}

// summary is the analysis in a line; text is in.Output cleaned.
func summary(in Input, text string, c counts, a Analysis) string {
	var s string
	switch {
	case in.TimedOut:
		s = "timed out after " + durationText(in.Timeout)
		switch last := lastLine(text); {
		case c.known:
			s += fmt.Sprintf("; %d passed, %d failed", c.passed, c.failed)
		case last != "":
			s += "; " + last
		}
		return s
	case c.known:
		s = fmt.Sprintf("%d passed, %d failed", c.passed, c.failed)
		switch {
		case c.errors == 1:
			s += ", 1 error"
		case c.errors > 1:
			s += fmt.Sprintf(", %d errors", c.errors)
		}
	case len(a.Tests) > 0:
		s = fmt.Sprintf("%d failed: %s", len(a.Tests), strings.Join(a.Tests, ", "))
	case a.Error != "":
		s = a.Error
	default:
		s = fmt.Sprintf("exit code %d", in.ExitCode)
	}
	return s
}

func durationText(d time.Duration) string {
	if d <= 0 {
		return "its timeout"
	}
	return d.String()
}

// match is one rule's match in the text.
type match struct {
	text string
	loc  []int
}

// group returns submatch i ("" when it did not take part).
func (m *match) group(i int) string {
	if 2*i+1 >= len(m.loc) || m.loc[2*i] < 0 {
		return ""
	}
	return m.text[m.loc[2*i]:m.loc[2*i+1]]
}

// line returns the whole line where the match starts (past the blank
// space a leading \s* may have taken).
func (m *match) line() string {
	i := m.loc[0]
	for i < m.loc[1]-1 && (m.text[i] == ' ' || m.text[i] == '\t' || m.text[i] == '\n') {
		i++
	}
	return lineAt(m.text, i)
}

// after returns up to n bytes of the text after the match.
func (m *match) after(n int) string {
	rest := m.text[m.loc[1]:]
	if len(rest) > n {
		rest = rest[:n]
	}
	return rest
}

// before returns up to n bytes of the text before the match.
func (m *match) before(n int) string {
	return m.text[max(0, m.loc[0]-n):m.loc[0]]
}

// rule is one row of the analyser's table: a pattern and what its first
// match means. build returns false when, on a closer look, the rule does
// not apply.
type rule struct {
	name string
	// hints: the regexp is tried only when the text has one of them
	// (a fast path on large outputs).
	hints []string
	re    *regexp.Regexp
	build func(m *match, a *Analysis) bool
}

func containsAny(text string, subs []string) bool {
	for _, s := range subs {
		if strings.Contains(text, s) {
			return true
		}
	}
	return len(subs) == 0
}

func set(a *Analysis, errLine, cause, fix string) bool {
	a.Error, a.RootCause, a.SuggestedFix = errLine, cause, fix
	return true
}

var (
	rustLocation   = regexp.MustCompile(`-->\s*(\S+?):(\d+):\d+`)
	goUserFrame    = regexp.MustCompile(`(?m)^\s+(\S+\.go):(\d+)(?: \+0x[0-9a-f]+)?$`)
	goTestLog      = regexp.MustCompile(`(?m)^\s+(\S+_test\.go:\d+: .+)$`)
	goRunning      = regexp.MustCompile(`(?m)^\s*=== RUN\s+(\S+)`)
	goDone         = regexp.MustCompile(`(?m)^\s*--- (?:PASS|FAIL|SKIP): (\S+)`)
	goRunningTests = regexp.MustCompile(`running tests:\s*\n\s+(\S+)`)
	jsLocation     = regexp.MustCompile(`(\S+\.(?:[cm]?js|jsx|tsx?|vue|svelte)):(\d+)`)
	pyFileLine     = regexp.MustCompile(`File "([^"]+)", line (\d+)`)
	pyExcLine      = regexp.MustCompile(`(?m)^((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning)): ?(.*)$`)
)

// pipNames maps import names to the package that provides them, where
// they differ.
var pipNames = map[string]string{
	"yaml": "PyYAML", "cv2": "opencv-python", "PIL": "Pillow", "sklearn": "scikit-learn",
	"bs4": "beautifulsoup4", "dateutil": "python-dateutil", "dotenv": "python-dotenv",
	"jwt": "PyJWT", "serial": "pyserial", "Crypto": "pycryptodome", "attr": "attrs",
	"magic": "python-magic", "OpenSSL": "pyOpenSSL", "docx": "python-docx", "git": "GitPython",
}

// npmPackage returns the package a module specifier names: "lodash/fp" is
// lodash, "@scope/pkg/x" is @scope/pkg; "" for a relative or absolute path.
func npmPackage(spec string) string {
	spec = strings.TrimPrefix(spec, "node:")
	if spec == "" || strings.HasPrefix(spec, ".") || strings.HasPrefix(spec, "/") || strings.HasPrefix(spec, "#") || strings.HasPrefix(spec, "~") {
		return ""
	}
	parts := strings.Split(spec, "/")
	if strings.HasPrefix(spec, "@") && len(parts) >= 2 {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// rules is the analyser's table, most specific first.
var rules = []rule{
	// A program the step needs is not there: nothing else ran.
	{"missing-program", []string{"not found"}, regexp.MustCompile(`(?m)^(?:\S*sh|\S*bash|zsh)?:?\s*(?:line )?\d*:?\s*([^\s:]+): (?:command )?not found\s*$`),
		func(m *match, a *Analysis) bool {
			p := m.group(1)
			return set(a, m.line(), "The program "+p+" is not installed or not on PATH",
				"Install "+p+" (or use what the repository already uses), or change the command in verify.steps")
		}},
	{"npm-missing-script", []string{"Missing script"}, regexp.MustCompile(`Missing script: "?([^"\s]+)"?`),
		func(m *match, a *Analysis) bool {
			return set(a, m.line(), "package.json has no \""+m.group(1)+"\" script",
				"Add a \""+m.group(1)+"\" script to package.json, or change the command in verify.steps")
		}},

	// Go: modules and packages.
	{"go-missing-module", []string{"no required module"}, regexp.MustCompile(`no required module provides package ([^\s;:]+)`),
		func(m *match, a *Analysis) bool {
			p := m.group(1)
			return set(a, m.line(), "Missing Go module dependency: no module in go.mod provides package "+p,
				"Run `go get "+p+"` (then `go mod tidy`), or fix the import path if it is wrong")
		}},
	{"go-missing-gosum", []string{"missing go.sum"}, regexp.MustCompile(`missing go\.sum entry for module providing package ([^\s;:(]+)`),
		func(m *match, a *Analysis) bool {
			return set(a, m.line(), "go.sum has no entry for the module providing "+m.group(1),
				"Run `go mod tidy` (or `go get "+m.group(1)+"`) and keep the go.sum changes")
		}},
	{"go-cannot-find-package", []string{"cannot find package"}, regexp.MustCompile(`cannot find package "([^"]+)"`),
		func(m *match, a *Analysis) bool {
			p := m.group(1)
			return set(a, m.line(), "Go cannot find package "+p,
				"Fix the import path of "+p+", or add its module with `go get "+p+"`")
		}},
	{"go-not-in-std", []string{" is not in "}, regexp.MustCompile(`package (\S+) is not in (?:GOROOT|std)`),
		func(m *match, a *Analysis) bool {
			p := m.group(1)
			return set(a, m.line(), "The import "+p+" is neither in the standard library nor in a required module",
				"Fix the import path "+p+" (a module path needs its domain), or add it with `go get`")
		}},
	{"go-mod-tidy", []string{"go.mod", "inconsistent vendoring"}, regexp.MustCompile(`updates to go\.mod needed|go\.mod file indicates go [\d.]+, but maximum supported|inconsistent vendoring`),
		func(m *match, a *Analysis) bool {
			return set(a, m.line(), "go.mod (or vendor/) does not match the code's imports",
				"Run `go mod tidy` (and `go mod vendor` if the repository vendors) and keep the changes")
		}},

	// Node: missing modules.
	{"node-missing-module", []string{"Cannot find "}, regexp.MustCompile(`Cannot find (?:module|package) '([^'\s]+)'`),
		func(m *match, a *Analysis) bool {
			spec := m.group(1)
			if pkg := npmPackage(spec); pkg != "" {
				fix := "Run `npm install " + pkg + "` (it must be in package.json dependencies)"
				if strings.Contains(m.line(), "type declarations") {
					fix += "; if it ships no types, also `npm install -D @types/" + strings.TrimPrefix(strings.ReplaceAll(pkg, "/", "__"), "@") + "`"
				}
				return set(a, m.line(), "Missing dependency: the package "+pkg+" is not installed", fix)
			}
			return set(a, m.line(), "The module "+spec+" does not exist: a wrong relative import or a file not created",
				"Create "+spec+" or fix the import path")
		}},
	{"vite-missing-import", []string{"Failed to resolve import"}, regexp.MustCompile(`Failed to resolve import "([^"]+)" from "([^"]+)"`),
		func(m *match, a *Analysis) bool {
			if pkg := npmPackage(m.group(1)); pkg != "" {
				return set(a, m.line(), "Missing dependency: the package "+pkg+" is not installed", "Run `npm install "+pkg+"`")
			}
			return set(a, m.line(), "The import "+m.group(1)+" in "+m.group(2)+" does not resolve", "Create "+m.group(1)+" or fix the import path in "+m.group(2))
		}},

	// Python: missing modules.
	{"py-missing-module", []string{"No module named"}, regexp.MustCompile(`(?:ModuleNotFoundError|ImportError): No module named '?([\w.]+)'?`),
		func(m *match, a *Analysis) bool {
			mod := m.group(1)
			top, _, _ := strings.Cut(mod, ".")
			pkg := top
			if p, ok := pipNames[top]; ok {
				pkg = p
			}
			return set(a, m.line(), "Missing Python dependency: no module named "+mod,
				"Run `pip install "+pkg+"` and add it to the project's requirements (or fix the import if "+top+" is part of this project)")
		}},
	{"py-import-name", []string{"cannot import name"}, regexp.MustCompile(`ImportError: cannot import name '([^']+)' from '([^']+)'`),
		func(m *match, a *Analysis) bool {
			return set(a, m.line(), "The module "+m.group(2)+" has no name "+m.group(1),
				"Define "+m.group(1)+" in "+m.group(2)+", or fix the import")
		}},

	// Rust: missing crates and unresolved paths.
	{"rust-missing-crate", []string{" crate", "unresolved import"}, regexp.MustCompile("(?:use of undeclared crate or module|use of unresolved module or unlinked crate|can't find crate for|unresolved import) `([A-Za-z_][A-Za-z0-9_]*)(?:::[^`]*)?`"),
		func(m *match, a *Analysis) bool {
			c := m.group(1)
			switch c {
			case "crate", "self", "super", "std", "core", "alloc":
				return false // a path inside the crate: E0432 below
			}
			if strings.Contains(m.line(), "unresolved import") && !strings.Contains(m.after(600), "crate `"+c+"`") &&
				!strings.Contains(m.after(600), "unlinked crate") && !strings.Contains(m.after(600), "undeclared crate") {
				return false
			}
			loc := ""
			if l := rustLocation.FindStringSubmatch(m.after(300)); l != nil {
				loc = " (" + l[1] + ":" + l[2] + ")"
			}
			return set(a, m.line(), "Missing crate or module "+c+loc,
				"Run `cargo add "+c+"` if "+c+" is an external crate, or declare the module with `mod "+c+";`")
		}},
	{"cargo-no-package", []string{"no matching package"}, regexp.MustCompile("no matching package named `([^`]+)` found"),
		func(m *match, a *Analysis) bool {
			return set(a, m.line(), "Cargo.toml names a package that does not exist: "+m.group(1),
				"Fix the dependency name "+m.group(1)+" in Cargo.toml (check its exact name)")
		}},
	{"rust-unresolved-import", []string{"E0432"}, regexp.MustCompile("error\\[E0432\\]: unresolved import `([^`]+)`"),
		func(m *match, a *Analysis) bool {
			loc := ""
			if l := rustLocation.FindStringSubmatch(m.after(300)); l != nil {
				loc = " at " + l[1] + ":" + l[2]
			}
			return set(a, m.line(), "Unresolved import "+m.group(1)+loc,
				"Fix the path in `use "+m.group(1)+"`"+loc+": the item may be private, renamed or in another module")
		}},

	// Syntax errors.
	{"py-syntax", []string{"SyntaxError", "IndentationError", "TabError"}, regexp.MustCompile(`(?m)^(?:E\s)?\s*(SyntaxError|IndentationError|TabError): (.+)$`),
		func(m *match, a *Analysis) bool {
			where := ""
			all := pyFileLine.FindAllStringSubmatch(m.before(1500), -1)
			if len(all) == 0 {
				return false // not Python's: js-syntax
			}
			l := all[len(all)-1]
			where = " in " + l[1] + " line " + l[2]
			return set(a, m.line(), "Python "+m.group(1)+where+": "+m.group(2), "Fix the syntax"+where+": "+m.group(2))
		}},
	{"go-syntax", []string{"syntax error"}, regexp.MustCompile(`(?m)^\s*(?:\./|\.\./)*(\S+?\.go):(\d+):(?:\d+:)? syntax error: (.+)$`),
		func(m *match, a *Analysis) bool {
			at := m.group(1) + ":" + m.group(2)
			return set(a, m.line(), "Go syntax error at "+at+": "+m.group(3), "Fix the syntax at "+at+": "+m.group(3))
		}},
	{"js-syntax", []string{"SyntaxError"}, regexp.MustCompile(`(?m)^\s*SyntaxError: (.+)$`),
		func(m *match, a *Analysis) bool {
			where := ""
			if all := jsLocation.FindAllStringSubmatch(m.before(1500), -1); len(all) > 0 {
				l := all[len(all)-1]
				where = " in " + l[1] + " line " + l[2]
			}
			return set(a, m.line(), "Syntax error"+where+": "+m.group(1), "Fix the syntax"+where+": "+m.group(1))
		}},

	// Type and compile errors.
	{"typescript", []string{"error TS"}, regexp.MustCompile(`(?m)(\S+\.(?:tsx?|vue|mts|cts))(?:\((\d+),\d+\)|:(\d+):\d+)\s*[:-]\s*error (TS\d+): (.+)$`),
		func(m *match, a *Analysis) bool {
			line := m.group(2)
			if line == "" {
				line = m.group(3)
			}
			at, code, msg := m.group(1)+":"+line, m.group(4), m.group(5)
			return set(a, m.line(), "TypeScript error "+code+" at "+at+": "+msg, tsFix(code, msg, at))
		}},
	{"rust-error", []string{"error[E"}, regexp.MustCompile(`(?m)^error\[(E\d{4})\]: (.+)$`),
		func(m *match, a *Analysis) bool {
			code, msg := m.group(1), m.group(2)
			loc := ""
			if l := rustLocation.FindStringSubmatch(m.after(300)); l != nil {
				loc = l[1] + ":" + l[2]
			}
			where := ""
			if loc != "" {
				where = " at " + loc
			}
			return set(a, m.line(), "Rust compile error "+code+where+": "+msg, rustFix(code, msg, where))
		}},
	{"go-compile", []string{".go:"}, regexp.MustCompile(`(?m)^\s*(?:\./|\.\./)*([^\s:]+?\.go):(\d+):(\d+): (.+)$`),
		func(m *match, a *Analysis) bool {
			at, msg := m.group(1)+":"+m.group(2), m.group(4)
			return set(a, m.line(), "Go compile error at "+at+": "+msg, goFix(msg, at))
		}},
	{"rust-compile", []string{"error: "}, regexp.MustCompile("(?m)^error: (?:could not compile `([^`]+)`|(.+))$"),
		func(m *match, a *Analysis) bool {
			msg := m.group(2)
			if m.group(1) != "" || msg == "" || strings.HasPrefix(msg, "test failed") || strings.HasPrefix(msg, "Recipe") ||
				!strings.Contains(m.after(300), "-->") {
				return false
			}
			loc := ""
			if l := rustLocation.FindStringSubmatch(m.after(300)); l != nil {
				loc = " at " + l[1] + ":" + l[2]
			}
			return set(a, m.line(), "Rust compile error"+loc+": "+msg, "Fix the compile error"+loc+": "+msg)
		}},

	// Go panics and races (a test's panic says more than its FAIL line).
	{"go-race", []string{"DATA RACE"}, regexp.MustCompile(`WARNING: DATA RACE`),
		func(m *match, a *Analysis) bool {
			loc := ""
			if l := goUserFrame.FindStringSubmatch(m.after(2000)); l != nil {
				loc = " at " + l[1] + ":" + l[2]
			}
			return set(a, m.line(), "Data race detected by the race detector"+loc,
				"Synchronise the shared variable"+loc+" (a mutex, a channel or sync/atomic); the race report names both accesses")
		}},
	{"go-test-timeout", []string{"test timed out"}, regexp.MustCompile(`panic: test timed out after (\S+)`),
		func(m *match, a *Analysis) bool {
			running := ""
			if r := goRunningTests.FindStringSubmatch(m.after(500)); r != nil {
				running = " while " + r[1] + " was running"
			}
			return set(a, m.line(), "go test's timeout ("+m.group(1)+") ended the run"+running+": a hang or a deadlock",
				"Find what blocks"+running+" (a channel nobody sends on, a lock never released, a wait on the network), or pass a larger -timeout if the test is legitimately slow")
		}},
	{"go-panic", []string{"panic: "}, regexp.MustCompile(`(?m)^panic: (.+?)(?: \[recovered\])?$`),
		func(m *match, a *Analysis) bool {
			if !strings.Contains(m.after(4000), "goroutine ") && !strings.Contains(m.before(4000), "--- FAIL") {
				return false // not a Go panic
			}
			msg := m.group(1)
			loc := ""
			for _, f := range goUserFrame.FindAllStringSubmatch(m.after(8000), -1) {
				if !strings.Contains(f[1], "/src/runtime/") && !strings.Contains(f[1], "/src/testing/") && !strings.Contains(f[1], "/src/sync/") {
					loc = " at " + f[1] + ":" + f[2]
					break
				}
			}
			return set(a, m.line(), "Panic"+loc+": "+msg, panicFix(msg, loc))
		}},
}

func goFix(msg, at string) string {
	switch {
	case strings.HasPrefix(msg, "undefined: "):
		n := strings.TrimPrefix(msg, "undefined: ")
		return "Declare " + n + " or import the package that defines it (" + at + ")"
	case strings.Contains(msg, "imported and not used"):
		return "Remove the unused import at " + at + " (or use it)"
	case strings.Contains(msg, "declared and not used"), strings.Contains(msg, "declared but not used"):
		return "Use the variable or remove it (" + at + ")"
	case strings.HasPrefix(msg, "missing return"):
		return "Add the missing return statement at " + at
	case strings.HasPrefix(msg, "cannot use "):
		return "Make the types agree at " + at + ": " + msg
	case strings.HasPrefix(msg, "too many arguments"), strings.HasPrefix(msg, "not enough arguments"):
		return "Call the function with the arguments its signature takes (" + at + ")"
	}
	return "Fix the error at " + at + ": " + msg
}

func tsFix(code, msg, at string) string {
	name := ""
	if i := strings.IndexByte(msg, '\''); i >= 0 {
		if j := strings.IndexByte(msg[i+1:], '\''); j >= 0 {
			name = msg[i+1 : i+1+j]
		}
	}
	switch code {
	case "TS2304", "TS2552":
		return "Declare or import " + name + " (" + at + ")"
	case "TS2339":
		return "Add the property " + name + " to the type, or use one that exists (" + at + ")"
	case "TS2322", "TS2345":
		return "Make the types agree at " + at + ": " + msg
	case "TS2307":
		return "Install the module or fix the import path (" + at + ")"
	case "TS7006":
		return "Give the parameter " + name + " a type (" + at + ")"
	}
	return "Fix the type error at " + at + ": " + msg
}

func rustFix(code, msg, where string) string {
	name := ""
	if i := strings.IndexByte(msg, '`'); i >= 0 {
		if j := strings.IndexByte(msg[i+1:], '`'); j >= 0 {
			name = msg[i+1 : i+1+j]
		}
	}
	switch code {
	case "E0425", "E0412", "E0422":
		return "Declare " + name + " or bring it into scope with `use`" + where
	case "E0433":
		return "Fix the path" + where + ", or `cargo add` the crate it names"
	case "E0599":
		return "Implement the method or call one that exists (a trait may need to be in scope with `use`)" + where
	case "E0308":
		return "Make the types agree" + where + ": " + msg
	case "E0382", "E0499", "E0502", "E0505", "E0597":
		return "Fix the borrow/ownership error" + where + " (clone, borrow instead of moving, or shorten the borrow)"
	}
	return "Fix the compile error" + where + ": " + msg + " (see `rustc --explain " + code + "`)"
}

func panicFix(msg, loc string) string {
	switch {
	case strings.Contains(msg, "nil pointer dereference"), strings.Contains(msg, "invalid memory address"):
		return "Check for nil before the dereference" + loc + ", or make sure the value is initialised"
	case strings.Contains(msg, "index out of range"), strings.Contains(msg, "slice bounds out of range"):
		return "Check the length before indexing" + loc
	case strings.Contains(msg, "assignment to entry in nil map"):
		return "Make the map (make(map…)) before writing to it" + loc
	case strings.Contains(msg, "close of closed channel"), strings.Contains(msg, "send on closed channel"):
		return "Make one owner close the channel, once, after the last send" + loc
	}
	return "Fix the cause of the panic" + loc + ": " + msg
}

// counts are a test run's totals.
type counts struct {
	known                  bool
	passed, failed, errors int
}

var (
	countPair      = regexp.MustCompile(`(\d+) (passed|failed|errors?|skipped|total)`)
	jestTests      = regexp.MustCompile(`(?m)^\s*Tests:\s+(.+)$`)
	vitestTests    = regexp.MustCompile(`(?m)^\s*Tests\s+(\d+ (?:failed|passed).*)$`)
	pytestLine     = regexp.MustCompile(`(?m)^=*\s*((?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected|rerun)(?:, )?)+)(?: in [\d.]+s)`)
	mochaPassing   = regexp.MustCompile(`(?m)^\s*(\d+) passing`)
	mochaFailing   = regexp.MustCompile(`(?m)^\s*(\d+) failing`)
	rustResult     = regexp.MustCompile(`test result: (?:FAILED|ok)\. (\d+) passed; (\d+) failed`)
	unittestRan    = regexp.MustCompile(`(?m)^Ran (\d+) tests? in`)
	unittestFailed = regexp.MustCompile(`(?m)^FAILED \(([^)]*)\)`)
	tapPass        = regexp.MustCompile(`(?m)^(?:#|ℹ) pass (\d+)`)
	tapFail        = regexp.MustCompile(`(?m)^(?:#|ℹ) fail (\d+)`)
	goFail         = regexp.MustCompile(`(?m)^--- FAIL: (\S+)`)
	goPass         = regexp.MustCompile(`(?m)^--- PASS: (\S+)`)
)

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return min(n, 1<<30)
}

func pairs(s string, c *counts) {
	for _, p := range countPair.FindAllStringSubmatch(s, -1) {
		n := atoi(p[1])
		switch p[2] {
		case "passed":
			c.passed, c.known = c.passed+n, true
		case "failed":
			c.failed, c.known = c.failed+n, true
		case "error", "errors":
			c.errors, c.known = c.errors+n, true
		}
	}
}

// testCounts reads the totals of the first test runner whose summary is in
// the text: go test's when no other's is.
func testCounts(text string) counts {
	for _, count := range runnerCounts {
		if c := count(text); c.known {
			return c
		}
	}
	return goCounts(text)
}

// runnerCounts read the totals of one test runner each, in the order they
// are tried: known is false when its summary is not in the text.
var runnerCounts = []func(text string) counts{
	jestCounts, vitestCounts, rustCounts, pytestCounts, mochaCounts, unittestCounts, tapCounts,
}

// jestCounts: "Tests:       1 failed, 3 passed, 4 total".
func jestCounts(text string) (c counts) {
	if strings.Contains(text, "Tests:") {
		if m := jestTests.FindStringSubmatch(text); m != nil {
			pairs(m[1], &c)
		}
	}
	return c
}

// vitestCounts: "Tests  1 failed | 3 passed (4)".
func vitestCounts(text string) (c counts) {
	if strings.Contains(text, "Tests ") {
		if m := vitestTests.FindStringSubmatch(text); m != nil {
			pairs(m[1], &c)
		}
	}
	return c
}

// rustCounts: every "test result: FAILED. 3 passed; 1 failed" line.
func rustCounts(text string) (c counts) {
	if !strings.Contains(text, "test result:") {
		return c
	}
	all := rustResult.FindAllStringSubmatch(text, -1)
	for _, m := range all {
		c.passed += atoi(m[1])
		c.failed += atoi(m[2])
	}
	c.known = all != nil
	return c
}

// pytestCounts: the last "==== 1 failed, 3 passed in 0.12s ====" line.
func pytestCounts(text string) (c counts) {
	has := func(sub string) bool { return strings.Contains(text, sub) }
	if has(" in ") && (has(" failed") || has(" passed") || has(" error")) {
		if all := pytestLine.FindAllStringSubmatch(text, -1); all != nil {
			pairs(all[len(all)-1][1], &c)
		}
	}
	return c
}

// mochaCounts: "1 failing" and "3 passing".
func mochaCounts(text string) (c counts) {
	if !strings.Contains(text, " failing") {
		return c
	}
	if m := mochaFailing.FindStringSubmatch(text); m != nil {
		c.failed, c.known = atoi(m[1]), true
		if p := mochaPassing.FindStringSubmatch(text); p != nil {
			c.passed = atoi(p[1])
		}
	}
	return c
}

// unittestCounts: "Ran 4 tests" and "FAILED (failures=1, errors=1)".
func unittestCounts(text string) (c counts) {
	if !strings.Contains(text, "Ran ") {
		return c
	}
	m := unittestRan.FindStringSubmatch(text)
	if m == nil {
		return c
	}
	ran := atoi(m[1])
	if f := unittestFailed.FindStringSubmatch(text); f != nil {
		for _, kv := range strings.Split(f[1], ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
			switch k {
			case "failures":
				c.failed += atoi(v)
			case "errors":
				c.errors += atoi(v)
			}
		}
	}
	c.passed, c.known = max(0, ran-c.failed-c.errors), true
	return c
}

// tapCounts: TAP's "# fail 1" and "# pass 3".
func tapCounts(text string) (c counts) {
	if !strings.Contains(text, " fail ") {
		return c
	}
	if f := tapFail.FindStringSubmatch(text); f != nil {
		c.failed, c.known = atoi(f[1]), true
		if p := tapPass.FindStringSubmatch(text); p != nil {
			c.passed = atoi(p[1])
		}
	}
	return c
}

// goCounts: go test's top-level results (passes are listed only with -v);
// known only when both a pass and a failure are listed.
func goCounts(text string) (c counts) {
	if !strings.Contains(text, "--- FAIL: ") {
		return c
	}
	fails := goFail.FindAllStringSubmatch(text, -1)
	passes := goPass.FindAllStringSubmatch(text, -1)
	for _, f := range fails {
		if !strings.Contains(f[1], "/") {
			c.failed++
		}
	}
	for _, p := range passes {
		if !strings.Contains(p[1], "/") {
			c.passed++
		}
	}
	c.known = len(passes) > 0 && len(fails) > 0
	return c
}

var (
	goFailName      = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)
	pytestFailed    = regexp.MustCompile(`(?m)^(?:FAILED|ERROR) (\S+::\S+|\S+\.py)`)
	pytestVerbose   = regexp.MustCompile(`(?m)^(\S+::\S+) (?:FAILED|ERROR)`)
	jestBullet      = regexp.MustCompile(`(?m)^\s*● (.+?)\s*$`)
	vitestFail      = regexp.MustCompile(`(?m)^\s*FAIL\s+(\S.* > .+?)\s*$`)
	crossMark       = regexp.MustCompile(`(?m)^\s*[×✕✗✖]\s+(.+?)(?:\s+\(?\d+(?:\.\d+)?\s?m?s\)?)?\s*$`)
	mochaNumbered   = regexp.MustCompile(`(?m)^\s+\d+\) (.+?)\n\s+(\S.*?):\s*$`)
	unittestName    = regexp.MustCompile(`(?m)^(?:FAIL|ERROR): (\w+) \(([\w.]+)\)`)
	rustFailedTest  = regexp.MustCompile(`(?m)^test (\S+) \.\.\. FAILED$`)
	tapNotOK        = regexp.MustCompile(`(?m)^\s*not ok \d+ - (.+?)(?:\s+#.*)?$`)
	firstErrorRegex = regexp.MustCompile(`(?i)\b(?:error|failed|failure|fatal|exception|cannot|denied|refused|undefined)\b`)
)

// failingTests returns the names of the failing tests the output lists,
// without duplicates; a Go subtest stands for its parent.
func failingTests(text string) []string {
	var names []string
	add := func(n string) {
		n = strings.TrimSpace(n)
		if n == "" || len(names) >= 4*MaxTests {
			return
		}
		for _, o := range names {
			if o == n {
				return
			}
		}
		names = append(names, n)
	}
	has := func(sub string) bool { return strings.Contains(text, sub) }
	if has("--- FAIL: ") {
		for _, m := range goFailName.FindAllStringSubmatch(text, -1) {
			add(m[1])
		}
	}
	if len(names) > 0 {
		return leaves(names)
	}
	for _, re := range []struct {
		re   *regexp.Regexp
		hint string
	}{{pytestFailed, "::"}, {pytestVerbose, "::"}, {rustFailedTest, "... FAILED"}, {tapNotOK, "not ok "}} {
		if !has(re.hint) && !(re.re == pytestFailed && has("FAILED ")) {
			continue
		}
		for _, m := range re.re.FindAllStringSubmatch(text, -1) {
			add(m[1])
		}
		if len(names) > 0 {
			return names
		}
	}
	if has("FAIL: ") || has("ERROR: ") {
		for _, m := range unittestName.FindAllStringSubmatch(text, -1) {
			add(m[2] + "." + m[1])
		}
	}
	if len(names) > 0 {
		return names
	}
	for _, m := range jestBullet.FindAllStringSubmatch(text, boolMax(has("●"))) {
		if !strings.HasPrefix(m[1], "Test suite failed to run") && !strings.HasPrefix(m[1], "Console") {
			add(m[1])
		}
	}
	if len(names) > 0 {
		return names
	}
	for _, m := range vitestFail.FindAllStringSubmatch(text, boolMax(has("FAIL") && has(" > "))) {
		add(m[1])
	}
	if len(names) > 0 {
		return names
	}
	for _, m := range mochaNumbered.FindAllStringSubmatch(text, boolMax(has(") ") && has("failing"))) {
		add(m[1] + " " + m[2])
	}
	if len(names) > 0 {
		return names
	}
	for _, m := range crossMark.FindAllStringSubmatch(text, boolMax(strings.ContainsAny(text, "×✕✗✖"))) {
		add(m[1])
	}
	return names
}

// leaves are the names of go tests that are no parent of another:
// TestA/sub says more than TestA.
func leaves(names []string) []string {
	var out []string
	for _, n := range names {
		leaf := true
		for _, o := range names {
			if strings.HasPrefix(o, n+"/") {
				leaf = false
				break
			}
		}
		if leaf {
			out = append(out, n)
		}
	}
	return out
}

// boolMax is the n of FindAll: all matches when ok, none otherwise.
func boolMax(ok bool) int {
	if ok {
		return -1
	}
	return 0
}

var (
	pytestE       = regexp.MustCompile(`(?m)^E\s+(.+)$`)
	jestExpected  = regexp.MustCompile(`(?m)^\s*(Expected[^\n]*)\n\s*(Received[^\n]*)`)
	rustPanicNew  = regexp.MustCompile(`thread '([^']+)' panicked at ([^\s:]+:\d+):\d+:\n(.+)`)
	rustPanicOld  = regexp.MustCompile(`thread '([^']+)' panicked at '(.+?)', ([^\s:]+:\d+)`)
	assertionLine = regexp.MustCompile(`(?m)^\s*((?:AssertionError|AssertError)\b.*|Error: expect.*|expected .+)$`)
)

// testFailure fills the cause of failing tests, with the first assertion
// message the output has.
func testFailure(text string, c counts, a *Analysis) {
	n := len(a.Tests)
	if c.known {
		n = max(n, c.failed+c.errors)
	}
	what := fmt.Sprintf("%d tests failed", n)
	if n == 1 {
		what = "1 test failed"
	}
	if len(a.Tests) > 0 {
		shown := a.Tests
		if len(shown) > 5 {
			shown = shown[:5]
		}
		what += ": " + strings.Join(shown, ", ")
		if len(a.Tests) > len(shown) {
			what += fmt.Sprintf(" and %d more", len(a.Tests)-len(shown))
		}
	}
	detail := assertion(text)
	a.RootCause = what
	if detail != "" {
		a.RootCause += " (" + detail + ")"
		a.Error = detail
	} else if len(a.Tests) > 0 {
		a.Error = "FAIL " + a.Tests[0]
	}
	target := "the failing tests"
	if len(a.Tests) > 0 {
		target = a.Tests[0]
	}
	a.SuggestedFix = "Make " + target + " pass by fixing the code under test (change the test only if it is wrong)"
	if detail != "" {
		a.SuggestedFix += ": " + detail
	}
}

// assertion returns the first assertion message of a test failure.
func assertion(text string) string {
	if i := goFailName.FindStringIndex(text); i != nil {
		// Under the FAIL line; with -v, the logs come before it.
		if m := goTestLog.FindStringSubmatch(text[i[1]:min(len(text), i[1]+4000)]); m != nil {
			return strings.TrimSpace(m[1])
		}
		before := text[max(0, i[0]-4000):i[0]]
		if r := strings.LastIndex(before, "=== RUN"); r >= 0 {
			before = before[r:]
		}
		if all := goTestLog.FindAllStringSubmatch(before, -1); len(all) > 0 {
			return strings.TrimSpace(all[len(all)-1][1])
		}
	}
	if m := pytestE.FindStringSubmatch(text); m != nil {
		return strings.TrimSpace(m[1])
	}
	if m := rustPanicNew.FindStringSubmatch(text); m != nil {
		return m[2] + ": " + strings.TrimSpace(m[3])
	}
	if m := rustPanicOld.FindStringSubmatch(text); m != nil {
		return m[3] + ": " + m[2]
	}
	if m := jestExpected.FindStringSubmatch(text); m != nil {
		return strings.TrimSpace(m[1]) + "; " + strings.TrimSpace(m[2])
	}
	if m := assertionLine.FindStringSubmatch(text); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

var (
	jsExcLine  = regexp.MustCompile(`(?m)^(?:Uncaught )?((?:Type|Reference|Range)Error): (.+)$`)
	jsAtFrame  = regexp.MustCompile(`(?m)^\s+at (?:.+? \()?([^\s()]+?):(\d+):\d+\)?$`)
	pyTraceTop = "Traceback (most recent call last):"
)

// uncaught fills the cause of an uncaught exception: a Python traceback,
// or a JavaScript TypeError, ReferenceError or RangeError with its first
// frame outside node's own code.
func uncaught(text string, a *Analysis) {
	if i := strings.LastIndex(text, pyTraceTop); i >= 0 {
		tb := text[i:min(len(text), i+16000)]
		if m := pyExcLine.FindStringSubmatch(tb); m != nil {
			where := ""
			if all := pyFileLine.FindAllStringSubmatch(tb, -1); len(all) > 0 {
				l := all[len(all)-1]
				where = " in " + l[1] + " line " + l[2]
			}
			a.Error = strings.TrimSpace(m[0])
			a.RootCause = "Uncaught " + m[1] + where + ": " + m[2]
			a.SuggestedFix = "Prevent or handle the " + m[1] + where
			return
		}
	}
	if !strings.Contains(text, "Error: ") {
		return
	}
	if loc := jsExcLine.FindStringSubmatchIndex(text); loc != nil {
		m := &match{text: text, loc: loc}
		where := ""
		for _, f := range jsAtFrame.FindAllStringSubmatch(m.after(3000), 8) {
			if !strings.HasPrefix(f[1], "node:") && !strings.Contains(f[1], "node_modules") {
				where = " at " + f[1] + ":" + f[2]
				break
			}
		}
		a.Error = m.line()
		a.RootCause = "Uncaught " + m.group(1) + where + ": " + m.group(2)
		a.SuggestedFix = "Fix the " + m.group(1) + where + ": " + m.group(2)
	}
}

// timedOut fills the cause of a step killed at its timeout, unless the
// output has a better one.
func timedOut(in Input, text string, a *Analysis) {
	d := durationText(in.Timeout)
	running := ""
	// go test -v: the last test started and not finished.
	done := map[string]bool{}
	for _, m := range goDone.FindAllStringSubmatch(text, -1) {
		done[m[1]] = true
	}
	for _, m := range goRunning.FindAllStringSubmatch(text, -1) {
		if !done[m[1]] {
			running = m[1]
		}
	}
	last := lastLine(text)
	before := a.RootCause
	a.RootCause = "The step did not finish within " + d
	if running != "" {
		a.RootCause += ": " + running + " was still running"
	}
	a.RootCause += " (an infinite loop, a deadlock, or a wait on input or the network)"
	if before != "" {
		a.RootCause += "; before that: " + before
	}
	a.SuggestedFix = "Find what does not terminate"
	if running != "" {
		a.SuggestedFix += " in " + running
	} else if last != "" {
		a.SuggestedFix += " (the last output was: " + last + ")"
	}
	a.SuggestedFix += "; if the work is legitimately slow, raise the step's timeout in verify.steps"
	a.Error = "timed out after " + d
	if last != "" {
		a.Error += "; last output: " + last
	}
}

// escalation recognises conditions that retrying cannot fix:
// a permission denied, an external service that cannot be reached. lower
// is asciiLower(text).
func escalation(text, lower string) (kind, cause, fix, line string) {
	for _, line := range hintLines(text, lower, permissionHints) {
		if permissionRe.MatchString(line) {
			return EscalatePermissionDenied, "Permission denied: " + line,
				"This needs the user: grant the permission (file ownership or mode, credentials, a sandbox rule) — changing the code will not fix it", line
		}
	}
	for _, re := range serviceRes {
		for _, line := range hintLines(text, lower, re.hints) {
			if !re.re.MatchString(line) {
				continue
			}
			host, local := hostOf(line)
			if re.needsRemote && (host == "" || local) {
				continue
			}
			what := "An external service is unavailable"
			if host != "" {
				what += " (" + host + ")"
			}
			return EscalateServiceUnavailable, what + ": " + line,
				"This needs the user: restore access to the service (network, proxy, DNS, credentials, or wait for it to come back), then retry", line
		}
	}
	return "", "", "", ""
}

// asciiLower lowers ASCII letters only, so that offsets in the result are
// offsets in s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// maxHintLines bounds the lines hintLines returns per hint.
const maxHintLines = 64

// hintLines returns, in order, the lines of text where lower (asciiLower
// of text) holds one of hints (lower case) — the first maxHintLines of
// each.
func hintLines(text, lower string, hints []string) []string {
	type span struct{ start, end int }
	var spans []span
	seen := map[int]bool{}
	for _, h := range hints {
		off, n := 0, 0
		for n < maxHintLines {
			i := strings.Index(lower[off:], h)
			if i < 0 {
				break
			}
			i += off
			start := strings.LastIndexByte(text[:i], '\n') + 1
			end := strings.IndexByte(text[i:], '\n')
			if end < 0 {
				end = len(text)
			} else {
				end += i
			}
			if !seen[start] {
				seen[start] = true
				spans = append(spans, span{start, end})
				n++
			}
			off = min(end+1, len(text))
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	lines := make([]string, len(spans))
	for i, s := range spans {
		lines[i] = strings.TrimSpace(text[s.start:s.end])
	}
	return lines
}

var (
	permissionRe    = regexp.MustCompile(`(?i)\bpermission denied\b|\bEACCES\b|\bPermissionError\b|\bEPERM\b|\boperation not permitted\b`)
	permissionHints = []string{"permission", "eacces", "eperm", "not permitted"}
)

// serviceRes find an external service that cannot be reached; hints are
// lower case.
var serviceRes = []struct {
	re          *regexp.Regexp
	hints       []string
	needsRemote bool
}{
	// The name of a host does not resolve: whatever host, not the code.
	{regexp.MustCompile(`(?i)could not resolve host|\bENOTFOUND\b|\bEAI_AGAIN\b|temporary failure in name resolution|name or service not known|nodename nor servname provided|: no such host\b`),
		[]string{"resolve", "enotfound", "eai_again", "name resolution", "not known", "servname", "no such host"}, false},
	{regexp.MustCompile(`(?i)\b503 Service (?:Unavailable|Temporarily Unavailable)\b|\bHTTP(?:/[\d.]+)? 50[234]\b|\bstatus(?: code)?:? 50[234]\b|\b502 Bad Gateway\b|\b504 Gateway Time-?out\b`),
		[]string{"502", "503", "504"}, false},
	// Refused or timed out: only a host that is not this machine.
	{regexp.MustCompile(`(?i)connection refused|\bECONNREFUSED\b`), []string{"refused"}, true},
	{regexp.MustCompile(`(?i)\bETIMEDOUT\b|\bESOCKETTIMEDOUT\b|network timeout|read timed out|connect timed out|connection timed out|\bi/o timeout\b|TLS handshake timeout|timeout was reached|operation timed out|Max retries exceeded`),
		[]string{"timedout", "timeout", "timed out", "max retries"}, true},
}

var hostRes = []*regexp.Regexp{
	regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/\s]*@)?(\[[0-9A-Fa-f:.]+\]|[^/\s:'"?#)>\]]+)`),
	regexp.MustCompile(`host=['"]([^'"]+)['"]`),
	regexp.MustCompile(`(?i)resolve host:?\s*'?([A-Za-z0-9.-]+)`),
	regexp.MustCompile(`(?:ENOTFOUND|EAI_AGAIN) ([A-Za-z0-9.-]+)`),
	regexp.MustCompile(`lookup ([A-Za-z0-9.-]+)`),
	regexp.MustCompile(`(?i)connect to ([A-Za-z0-9.-]+) port`),
	regexp.MustCompile(`(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*):\d{1,5}\b`),
}

// sourceExt are name endings that make "name:12" a file and line, not a
// host and port.
var sourceExt = map[string]bool{
	"go": true, "py": true, "js": true, "mjs": true, "cjs": true, "ts": true, "tsx": true, "jsx": true, "rs": true,
	"rb": true, "java": true, "kt": true, "c": true, "h": true, "cc": true, "cpp": true, "hpp": true, "cs": true,
	"swift": true, "php": true, "txt": true, "log": true, "md": true, "json": true, "yaml": true, "yml": true,
	"toml": true, "sh": true, "vue": true, "svelte": true, "scala": true, "ex": true, "exs": true, "html": true, "css": true,
}

// hostOf finds the hosts a line names and reports the first one that is
// not this machine (local is then false), or the first local one.
func hostOf(line string) (host string, local bool) {
	var first string
	for _, re := range hostRes {
		for _, m := range re.FindAllStringSubmatch(line, 8) {
			h := strings.TrimSuffix(strings.Trim(m[1], "[]"), ".")
			if h == "" {
				continue
			}
			if i := strings.LastIndexByte(h, '.'); i >= 0 && sourceExt[strings.ToLower(h[i+1:])] {
				continue
			}
			if _, err := strconv.Atoi(h); err == nil { // "12:3", a line and column
				continue
			}
			if !isLocal(h) {
				return h, false
			}
			if first == "" {
				first = h
			}
		}
	}
	return first, first != ""
}

func isLocal(h string) bool {
	h = strings.ToLower(h)
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "host.docker.internal" {
		return true
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.IsLoopback() || ip.IsUnspecified()
	}
	return false
}

func lineAt(text string, i int) string {
	start := strings.LastIndexByte(text[:i], '\n') + 1
	end := strings.IndexByte(text[i:], '\n')
	if end < 0 {
		return strings.TrimSpace(text[start:])
	}
	return strings.TrimSpace(text[start : i+end])
}

// firstErrorLine is the first line that looks like an error; lower is
// asciiLower(text).
func firstErrorLine(text, lower string) string {
	for _, line := range hintLines(text, lower, errorWords) {
		if firstErrorRegex.MatchString(line) {
			return line
		}
	}
	return ""
}

// errorWords are the words of firstErrorRegex, for hintLines.
var errorWords = []string{"error", "fail", "fatal", "exception", "cannot", "denied", "refused", "undefined"}

func lastLine(text string) string {
	text = strings.TrimRight(text, " \t\n")
	return strings.TrimSpace(text[strings.LastIndexByte(text, '\n')+1:])
}

var ansi = regexp.MustCompile(`\x1b(?:\[[0-9;?<=>]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])`)

// clean makes output readable text: no terminal escapes, \n line ends,
// valid UTF-8, no control characters but tabs and newlines.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = ansi.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r':
			return '\n'
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
}

// oneLine makes s a single trimmed line of at most n bytes, cut on a rune
// boundary with "…" when it was longer.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))), " ")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Tail returns the end of output, about n bytes of it: cut at a line start
// when one is near, on a rune boundary, cleaned of terminal escapes. It is
// the failure record's details.
func Tail(output string, n int) string {
	s := strings.TrimRight(clean(output), " \t\n")
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < n/4 {
		return s[i+1:]
	}
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}
