// Package realagents holds wilco's black-box tests against the real agent
// programs run headless: Claude Code, Codex CLI, Gemini CLI and opencode
// at pinned versions installed from npm, each pointed at a scripted model
// server (package modelserver) — alone, in several instances at once, and
// through retries. Their terminal interfaces in tmux are package
// test/realtui's. They share the harness of package blackbox, and run as a
// test binary of their own beside packages test and test/realtui.
package realagents
