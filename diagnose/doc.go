// Package diagnose reads the output of a verify step that failed and
// guesses what went wrong: the fields of a failure record the output can
// fill. It is pure (text in, text out); package core calls it when it
// decides a verification's verdict.
//
// Analyse is table-driven: it reads a failed step's command, exit code and
// output and fills output_summary ("1 passed, 2 failed", or the key error
// line), error, root_cause_guess and suggested_fix. It knows Go (missing
// modules → go get, missing go.sum entries, compile and vet errors, syntax
// errors, panics with the first frame of the code under test, the race
// detector, go test's own timeout, --- FAIL lines), Node (Cannot find
// module → npm install, jest, vitest, mocha and node:test counts and
// names, TypeScript TSxxxx errors, syntax errors, missing npm scripts),
// Python (ModuleNotFoundError → pip install, pytest and unittest counts
// and names, SyntaxError), Rust (missing crates → cargo add, E0432 and
// other E-codes with their location, test result lines, panics), uncaught
// exceptions (a Python traceback; a JavaScript TypeError, ReferenceError
// or RangeError with its first frame in the project), a program missing
// from PATH, and timeouts (with the go test that was still running, when
// -v says so). Terminal escapes are removed; the output's start (64 KiB)
// and end (448 KiB) are read.
//
// It also recognises the conditions that escalate at once, setting
// Escalate: permission_denied (Permission denied, EACCES, EPERM,
// PermissionError) and service_unavailable (a host that does not resolve,
// 502/503/504 answers, and connections refused or timed out — only to a
// host that is not this machine: a local test server that is not running
// is the code's business). Every field of an Analysis is one line of
// bounded size, whatever the input (FuzzAnalyse).
//
// Tail is the end of an output, cut at a line, for a failure record's
// details.
package diagnose
