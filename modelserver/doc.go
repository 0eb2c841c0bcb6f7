// Package modelserver is a scripted model API on 127.0.0.1 that real agent
// CLIs (Claude Code, and in time the others) can be pointed at, so that
// wilco's tests drive the real programs end to end without the network.
//
// A script decides every answer from the conversation, not from the order
// of requests: the text of the last user message that is not a tool
// result (the prompt) and how many assistant turns followed it (the step).
// So the side requests CLIs make (titles, quota checks, retries) neither
// shift the script nor get the agent's answers: a request that offers no
// tools is answered with a short text.
//
// Every request is recorded: tests assert on what the model received (the
// retry context in the prompt, the failing test's output), not only on
// wilco's state.
package modelserver
