// Package blackbox is the harness of wilco's black-box tests (packages
// test, test/realagents and test/realtui): Main builds the real binary once per test
// binary; ServeRepo starts `wilco serve` in a git repository of a test's
// own (NewRepo) and an Instance drives it over HTTP, every answer checked
// against the OpenAPI document, and through the CLI (WilcoCLI); Stream
// follows the event stream; TmuxServer gives a test a tmux server of its
// own; NpmBin installs a real agent program at its pinned version. Every
// wait is on a signal or a poll with a deadline.
package blackbox
