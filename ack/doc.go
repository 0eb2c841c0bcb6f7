// Package ack is wilco's acknowledgment language (the ACK protocol, and the
// replies to pre-operation requests): it parses what agents write back, formats what they
// should write, tells a task delegation from a conversation, teaches the
// protocol to agents that never heard of it, and checks that an ACK's
// Understanding covers the task.
//
// The package is pure: no I/O, no goroutines, no clock. Every function is
// deterministic and safe for concurrent use, and none panics on any input.
//
// # Replies
//
// Parse reads any text an agent wrote and returns one Reply, whose Kind says
// what it was taken to mean. It knows two families of forms.
//
// The text ACK:
//
//	[ACK] GH-4-xls-implementation - CLARIFICATION_NEEDED
//	Understanding: Implement xls CLI directory browser
//	Questions:
//	1. Should --format support both JSON and table output?
//	2. Should --verbose show file permissions on all platforms?
//	Note: …
//
// STATUS is RECEIVED, CLARIFICATION_NEEDED, REJECTED or QUEUED (and
// CONFIRMED, JSON's answer after a clarification). Parse is lenient on form:
//
//   - the [ACK] line may be anywhere, with prose before and after it, in
//     markdown — "**[ACK]** T-3 - RECEIVED", "- [Ack] T-3 – received",
//     "> `[ACK] T-3 — RECEIVED`", a heading — with any dash, a colon or
//     nothing between the id and STATUS, and with a word "Task" or "Task ID:"
//     before the id;
//   - STATUS in any case, with '_', '-' or a space ("Clarification needed",
//     "needs-clarification");
//   - a bare "ACK T-3 - RECEIVED" or "ACK: T-3 - RECEIVED" counts when it is
//     otherwise well formed (a broken one is prose: sentences start with
//     "Ack" too);
//   - labels in any case, with markdown ("**Understanding:** …",
//     "**Understanding**: …", "- Note: …"); an Understanding: with nothing
//     after it takes the lines below it up to a blank line; Questions: is
//     followed by numbered or bulleted lines (or plain lines, up to a blank
//     line); Reason: is a Note (for REJECTED); text after STATUS on the [ACK]
//     line ("REJECTED - no Rust toolchain") is a Note when no Note: or
//     Reason: line gives one; the first Understanding and the first Note win;
//   - the lines of an ACK are read up to the next [ACK] line. When a text has
//     several [ACK] lines Parse takes the first (ParseAll returns them all).
//
// Parse is strict on the task id. The id is the token right after [ACK]: the
// characters A-Z a-z 0-9 . _ : -, at most 64, starting with a
// letter or a digit, with surrounding markdown ("`T-3`", "**T-3**", "_T-3_")
// removed and trailing '.' and ':' stripped ("T-3:" is T-3). Anything else —
// a missing id, an id running into another character ("T-3/4",
// "{task_id}"), a missing or unknown STATUS — makes the line a broken ACK and
// Parse an error that says exactly what was wrong. An id is never guessed or
// shortened: "T-3-RECEIVED" is the id "T-3-RECEIVED" without a STATUS.
// Reply.For compares the id with the expected one, case-sensitively;
// ValidateTaskID says which ids can be acknowledged at all.
//
// The JSON forms of the ACK protocol — task-acknowledgment,
// task-acknowledgment-error, checkpoint-ack, task-complete and acknowledgment
// — are read by ParseJSON, strictly (see there). Parse finds them in text
// too: bare, in ``` fences, or nested in another object such as an AI
// Maestro message's "content". A JSON object with another or no "type" is
// prose; one that holds a known "type" but does not parse is a broken form.
//
// Completion reports are the third family: the JSON task-complete (whose
// status may be absent — a claim of completion that verification decides —
// and whose task_id may be left to the reply's context), and the plain-text
// reports agents write at the end of their work: a "Status: complete"
// (done, success, finished; blocked, impossible, failed) line with its
// Reason:, Error: and Summary: lines, "TASK COMPLETE", "[COMPLETE] T-3",
// "[BLOCKED] T-3 - why", "BLOCKED: why", "IMPOSSIBLE: why" — in any case,
// with markdown, amid prose, as YAML's "status: success" of an executor
// output. A list of options ("success | failure | blocked"), a checkpoint's
// paragraph and wilco's own <retry_context> are not reports. A report is
// for the task it names (the form's id, a Task ID: line of its paragraph,
// the last id named before it), and Reply.For refuses it for any other;
// one that names none is for the task its reply answers. FormatComplete
// writes one.
//
// When a text holds several forms, Parse takes the first in the text,
// whatever its family. A text without any is a KindMessage: a conversation's
// reply is its own acknowledgment.
//
// Operation replies are plain words — "ok", "wait", "cancel" — that
// only mean something in answer to a pre-operation request, so Parse leaves
// them as messages and the caller that knows the context calls
// ParseOperationReply.
//
// FormatAck and FormatJSON write replies in the forms Parse and ParseJSON
// read; Reply's MarshalJSON is wilco's own view of an interpreted reply.
//
// # Delegations
//
// Classify tells a task delegation (it needs an ACK) from a conversation (it
// does not) by the markers of a delegation. Teach is the block appended to every
// delegation: the ACK request, then a short lesson. AckRequired,
// Correction and WrongID are the follow-up messages of the backoff policy
// and of the understanding check.
//
// # Understanding
//
// A Checker compares an ACK's Understanding with its Task. TermCoverage, the
// default, counts key terms: an acceptance item is covered when half of its
// key terms (DefaultMinItemCoverage) appear in the Understanding; Missing
// lists the others verbatim, ready for Correction. The understanding is
// judged over the conversation: SaidSoFar joins what the agent said it
// understood with its questions, in an ACK that got a correction, and now
// — after a clarification, a confirmation speaks only of the clarified
// points.
package ack
