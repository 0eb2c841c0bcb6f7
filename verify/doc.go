// Package verify runs the verify steps after an agent's turn, keeps their
// logs, and turns a failure into the failure record.
//
// # Running
//
// A Runner holds the configured steps (verify.steps: name, run, timeout).
// Run(ctx, RunSpec) runs one verification, identified by its run id:
//
//  1. The boundaries. If a changed file (RunSpec.Changed) falls inside one
//     of the task's boundaries — its "files or modules out of scope",
//     matched by workspace.OutsideBoundaries — the run fails at once,
//     before any step: such an attempt fails whatever the tests say, and
//     running them would only make the agent wait. The failure is of type
//     verification_failed, its error "files changed outside the task's
//     boundaries: a, b", its command "boundary check".
//  2. The steps, in order, each with `sh -c` in the repository (Runner.Dir,
//     or RunSpec.Dir), stdin empty, the environment plus Runner.Env,
//     WILCO_RUN_ID, WILCO_ATTEMPT, WILCO_STEP and WILCO_TASK_ID. Each step
//     runs in a process group of its own under its timeout (DefaultTimeout
//     when it has none). At the timeout the whole group is killed and the
//     step fails with type timeout; when a step ends, whatever it left
//     running in its group is killed too. The first step that fails ends
//     the run (type verification_failed).
//
// A run with no steps passes once its boundaries hold. When ctx ends
// during a run, the step's group is killed and Result.Err says so: such a
// run is not a verdict on the attempt. Result.Err also reports wilco's own
// trouble (a bad run id, a run directory that cannot be written).
//
// # Logs
//
// Each run has a directory, <runs>/<run_id>/ (Runner.RunsDir, by default
// .wilco/runs under the repository), made afresh when the run starts:
//
//   - <step>.log: one step's combined stdout and stderr, all of it (the
//     step's name made path-safe and unique);
//   - run.log: everything in order — a line when each step starts (name,
//     command, timeout), its output, a line when it ends (passed, exit
//     code, timed out) — what GET /v1/runs/{run_id}/log serves (LogFile);
//   - result.json: the Result (steps, durations as Go duration strings,
//     the failure record).
//
// # The failure record
//
// A failed step gives a core.FailureRecord: failure_type, executor_output
// {status "failure", files_modified, verification {command, exit_code
// (128+n for a process killed by signal n), output_summary}, error},
// root_cause_guess, suggested_fix, files_state (RunSpec.FilesState),
// details (about the last DetailsBytes of the output) and escalate.
//
// # The analyser
//
// Analyse (analyse.go) is pure and table-driven: it reads a failed step's
// command, exit code and output and fills output_summary ("1 passed, 2
// failed", or the key error line), error, root_cause_guess and
// suggested_fix. It knows Go (missing modules → go get, missing go.sum
// entries, compile and vet errors, syntax errors, panics with the first
// frame of the code under test, the race detector, go test's own timeout,
// --- FAIL lines), Node (Cannot find module → npm install, jest, vitest,
// mocha and node:test counts and names, TypeScript TSxxxx errors, syntax
// errors, missing npm scripts), Python (ModuleNotFoundError → pip install,
// pytest and unittest counts and names, SyntaxError), Rust (missing crates
// → cargo add, E0432 and other E-codes with their location, test result
// lines, panics), uncaught exceptions (a Python traceback; a JavaScript
// TypeError, ReferenceError or RangeError with its first frame in the
// project), a program missing from PATH, and timeouts (with the go test
// that was still running, when -v says so). Terminal
// escapes are removed; the output's start (64 KiB) and end (448 KiB) are
// read.
//
// It also recognises the conditions that escalate at once, setting
// Escalate: permission_denied (Permission denied, EACCES, EPERM,
// PermissionError) and service_unavailable (a host that does not resolve,
// 502/503/504 answers, and connections refused or timed out — only to a
// host that is not this machine: a local test server that is not running
// is the code's business). Every field of an Analysis is one line of
// bounded size, whatever the input (FuzzAnalyse).
package verify
