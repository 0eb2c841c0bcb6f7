// Package realagents holds wilco's black-box tests against the real agent
// programs: Claude Code, Codex CLI, Gemini CLI and opencode at pinned
// versions installed from npm, headless and in tmux, each pointed at a
// scripted model server (package modelserver), and the conversation
// records those programs keep. They share the harness of package
// blackbox with the other black-box tests in package test, and run as a
// test binary of their own beside them.
package realagents
