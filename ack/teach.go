package ack

import (
	"fmt"
	"strings"
)

// Teach returns the block appended to every task delegation: first, verbatim,
// the ACK request (five lines, from "---" to "---"), then a short lesson for
// agents that never heard of the protocol — the ACK is mandatory before any
// work, the exact reply, how to ask questions, the JSON alternative, and how
// to report the end of the work or a blocker.
//
// Nothing in the lesson is itself an acknowledgment: an agent (or a terminal)
// that echoes the whole prompt back does not acknowledge by accident, and
// Parse(Teach(id)) is a plain message.
func Teach(taskID string) string { return AfterTeaching("", taskID)[2:] }

// AfterTeaching returns body followed by a blank line and Teach(taskID), the
// body's trailing newlines dropped, built in one allocation: every first
// send of a delegation carries it.
func AfterTeaching(body, taskID string) string {
	body = strings.TrimRight(body, "\n")
	n := len(body) + 2 + len(teachParts[0])
	for _, p := range teachParts[1:] {
		n += len(taskID) + len(p)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(body)
	b.WriteString("\n\n")
	b.WriteString(teachParts[0])
	for _, p := range teachParts[1:] {
		b.WriteString(taskID)
		b.WriteString(p)
	}
	return b.String()
}

// teachParts is the teaching block split where the task id goes.
var teachParts = strings.Split(`---
ACKNOWLEDGMENT REQUIRED: Reply with [ACK] {id} - RECEIVED
Include: Understanding: {1-line summary of what you will do}
Status options: RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED
---
How to acknowledge. Before you do any work on task {id}, reply with two lines: first
"[ACK] {id} - RECEIVED" on a line of its own, then a line that starts with "Understanding:"
and says in one line what you will do, naming every acceptance criterion. This
acknowledgment is mandatory: work that was not acknowledged is not accepted. Write the task
id exactly as {id}. Choose the status that is true:
- RECEIVED: you will begin now.
- CLARIFICATION_NEEDED: you need answers first. Put a line "Questions:" after
  Understanding, then one numbered question per line. Wait for the answers, then
  acknowledge again with RECEIVED and your updated Understanding.
- REJECTED: you cannot do this task. Add a line "Note:" with the reason.
- QUEUED: you must finish other work first. Add a line "Note:" saying what.
Instead of text you may reply with one JSON object with the fields "type" (the value
"task-acknowledgment"), "task_id" ("{id}"), "status" ("received", "needs-clarification",
"rejected" or "queued"), "understanding" and "questions" (a list of strings).
When the work is done, end your last message with a line "Status: complete". If you
cannot go on, end it with a line "Status: blocked" and a line "Reason:" saying what you
need; if the task cannot be done at all, "Status: impossible" and its "Reason:".`, "{id}")

// statusOptionsLine is the request's list of statuses.
const statusOptionsLine = "Status options: RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED"

// AckRequired returns the explicit ACK request, sent when a delegation
// got no ACK in time: subject "ACK REQUIRED: {task_id}" and the body.
func AckRequired(taskID string) (subject, body string) {
	return "ACK REQUIRED: " + taskID,
		"I sent you task " + taskID + " but have not received acknowledgment.\n" +
			"Please confirm receipt with: [ACK] " + taskID + " - {status}\n\n" +
			statusOptionsLine
}

// Correction returns the message sent when an ACK's Understanding misses part
// of the task (a correction or supplement that quotes what is missing and
// asks for a new ACK): subject "ACK CORRECTION: {task_id}", a
// body that quotes the agent's understanding and each missing item, and asks
// for a new ACK before any work.
func Correction(taskID string, missing []string, understanding string) (subject, body string) {
	var b strings.Builder
	u := strings.TrimRight(flatten(understanding), ".")
	if u == "" {
		u = "(none given)"
	}
	fmt.Fprintf(&b, "Your understanding: %s.\n", u)
	var items []string
	for _, m := range missing {
		if m = flatten(m); m != "" {
			items = append(items, m)
		}
	}
	if len(items) == 0 {
		fmt.Fprintf(&b, "It does not match task %s.\n", taskID)
	} else {
		b.WriteString("Missing:\n")
		for _, m := range items {
			fmt.Fprintf(&b, "- %q\n", m)
		}
		fmt.Fprintf(&b, "Task %s includes these; your acknowledgment does not cover them.\n", taskID)
	}
	fmt.Fprintf(&b, "\nPlease acknowledge again, before any work, with \"[ACK] %s - RECEIVED\" and a line\n"+
		"\"Understanding:\" that covers the whole task, every item above included.", taskID)
	return "ACK CORRECTION: " + taskID, b.String()
}

// WrongID returns the message sent when an ACK named another task (a wrong
// task id is answered by a resend naming the id): subject "ACK REQUIRED: {expected}
// (wrong task id)" and a body that names both ids and the exact line to send.
func WrongID(expected, got string) (subject, body string) {
	named := fmt.Sprintf("task %q", got)
	if strings.TrimSpace(got) == "" {
		named = "no task id"
	}
	return "ACK REQUIRED: " + expected + " (wrong task id)",
		"Your acknowledgment named " + named + ", but this request is about task " + expected + ".\n" +
			"Please confirm receipt of task " + expected + " with: [ACK] " + expected + " - {status}\n\n" +
			statusOptionsLine
}
