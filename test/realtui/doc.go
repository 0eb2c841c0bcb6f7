// Package realtui holds wilco's black-box tests of the real agent
// programs' terminal interfaces: Claude Code, Codex CLI, Gemini CLI and
// opencode at pinned versions installed from npm, each in tmux against a
// scripted model server (package modelserver), read from the
// conversation records those programs keep. They share the harness of
// package blackbox, and run as a test binary of their own beside packages
// test and test/realagents.
package realtui
