// Package demo is `wilco demo`: it makes a small Go repository whose test
// fails, configures a built-in scripted agent, and drives a real task
// through wilco end to end — the agent's ACK, a first attempt that does not
// fix the bug, verification that fails, a retry whose prompt carries the
// failure, and success — printing the milestones as they happen.
//
// The scripted agent is wilco itself, run as `wilco demo-agent`: it reads
// the prompt like any exec agent, acknowledges, and edits the file. It
// fixes the bug only once the prompt carries the failing test's name, so
// the demo shows that the retry context reached it.
package demo
