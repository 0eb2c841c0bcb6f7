// Package verify runs the verify steps after an agent's turn, keeps their
// logs, and reports what the steps did. It decides nothing: whether a run
// passed, its failure type, the analysis of its output, an escalation and
// the task's boundaries are the core's verdict (core.Judge) on the facts
// Run reports.
//
// # Running
//
// A Runner holds the configured steps (verify.steps: name, run, timeout).
// Run(ctx, RunSpec) runs one verification, identified by its run id: the
// steps, in order, each with `sh -c` in the repository (Runner.Dir, or
// RunSpec.Dir; in a monorepo package, RunSpec.Package, or at the root
// with {package} replaced), stdin empty, the environment plus Runner.Env,
// WILCO_RUN_ID, WILCO_ATTEMPT, WILCO_STEP, WILCO_TASK_ID and
// WILCO_PACKAGE. Each step runs in a process group of its own under its
// timeout (DefaultTimeout when it has none). At the timeout the whole
// group is killed and the step is reported timed out; when a step ends,
// whatever it left running in its group is killed too. The first step
// that fails ends the run.
//
// When the change crossed its task's scope (RunSpec.OutOfScope, what
// core.Scope.Check found in the files the attempt changed), the run says
// so in its log and runs no step: the verdict fails whatever they would
// say, and running them would only make the agent wait.
//
// The Result holds the facts: each step's command, exit code (128+n for a
// process killed by signal n), whether it timed out, its duration, its log
// and the part of its output kept for the core's analysis (the first 64
// KiB and the last 448 KiB); the PATH the steps ran with. When ctx ends
// during a run, the step's group is killed and Result.Err says so: such a
// run is not a verification of the attempt. Result.Err also reports
// wilco's own trouble (a bad run id, a run directory that cannot be
// written).
//
// # Logs
//
// Each run has a directory, <runs>/<run_id>/ (Runner.RunsDir, by default
// .wilco/runs under the repository), made afresh when the run starts (the
// files of an earlier run of the same id kept in earlier-N/):
//
//   - <step>.log: one step's combined stdout and stderr, all of it (the
//     step's name made path-safe and unique);
//   - run.log: everything in order — a line when each step starts (name,
//     command, timeout), its output, a line when it ends (passed, exit
//     code, timed out) — what GET /v1/runs/{run_id}/log serves (LogFile);
//   - result.json: the steps (durations as Go duration strings) and, once
//     the core has judged the run (WriteVerdict), its verdict: passed, the
//     command, the failure record.
package verify
