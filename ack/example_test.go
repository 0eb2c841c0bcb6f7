package ack_test

import (
	"fmt"

	"wilco/ack"
)

func ExampleParse() {
	reply, err := ack.Parse(`Thanks, I'll take it.

**[ACK]** GH-4-xls-implementation – clarification needed
**Understanding:** Implement xls CLI directory browser
Questions:
1. Should --format support both JSON and table output?
2. Should --verbose show file permissions on all platforms?`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(reply.Kind, reply.TaskID, reply.Status)
	fmt.Println(reply.Understanding)
	fmt.Println(len(reply.Questions), "questions")
	fmt.Println(reply.For("GH-4-xls-implementation"))
	fmt.Println(reply.For("GH-4"))

	_, err = ack.Parse("[ACK] - RECEIVED")
	fmt.Println(err)
	// Output:
	// ack GH-4-xls-implementation clarification_needed
	// Implement xls CLI directory browser
	// 2 questions
	// <nil>
	// ack: wrong task id: the reply is for task "GH-4-xls-implementation", want "GH-4"
	// ack: line 1: [ACK] line: no task id before "- RECEIVED" (want "[ACK] {task_id} - STATUS") (in "[ACK] - RECEIVED")
}

func ExampleParseJSON() {
	reply, err := ack.ParseJSON("", []byte(`{
  "type": "task-acknowledgment-error",
  "task_id": "GH-42",
  "error_code": "RESOURCE_UNAVAILABLE",
  "error_message": "Cannot accept task: current load at 95%",
  "retry_after_minutes": 15,
  "alternative_agents": ["agent-backend-02", "agent-backend-03"]
}`))
	fmt.Println(reply.Kind, reply.TaskID, reply.ErrorCode, reply.RetryAfter, reply.AlternativeAgents, err)

	_, err = ack.ParseJSON("task-acknowledgment", []byte(`{"status": "received"}`))
	fmt.Println(err)
	// Output:
	// ack_error GH-42 RESOURCE_UNAVAILABLE 15m0s [agent-backend-02 agent-backend-03] <nil>
	// ack: task-acknowledgment: field "task_id": missing
}

func ExampleParseOperationReply() {
	for _, text := range []string{"OK, ready to go!", "not ready", "give me a minute", "Abort", "not ok", "token"} {
		fmt.Printf("%q → %s\n", text, ack.ParseOperationReply(text))
	}
	// Output:
	// "OK, ready to go!" → ok
	// "not ready" → wait
	// "give me a minute" → wait
	// "Abort" → cancel
	// "not ok" → info
	// "token" → info
}

func ExampleClassify() {
	delegation := ack.Classify(`## Task: GH-42-feature
Add login rate limiting.

## Acceptance Criteria
- [ ] 5 failed logins lock the account for 15 minutes`)
	fmt.Println(delegation.Type, delegation.TaskID, delegation.Reasons)

	conversation := ack.Classify("Should the lock last 15 or 30 minutes?")
	fmt.Println(conversation.Type, conversation.Reasons)
	// Output:
	// task_delegation GH-42-feature [task id acceptance criteria section - [ ] checklist]
	// conversation []
}

func ExampleTeach() {
	fmt.Println(ack.Teach("GH-42"))
	// Output:
	// ---
	// ACKNOWLEDGMENT REQUIRED: Reply with [ACK] GH-42 - RECEIVED
	// Include: Understanding: {1-line summary of what you will do}
	// Status options: RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED
	// ---
	// How to acknowledge. Before you do any work on task GH-42, reply with two lines: first
	// "[ACK] GH-42 - RECEIVED" on a line of its own, then a line that starts with "Understanding:"
	// and says in one line what you will do, naming every acceptance criterion. This
	// acknowledgment is mandatory: work that was not acknowledged is not accepted. Write the task
	// id exactly as GH-42. Choose the status that is true:
	// - RECEIVED: you will begin now.
	// - CLARIFICATION_NEEDED: you need answers first. Put a line "Questions:" after
	//   Understanding, then one numbered question per line. Wait for the answers, then
	//   acknowledge again with RECEIVED and your updated Understanding.
	// - REJECTED: you cannot do this task. Add a line "Note:" with the reason.
	// - QUEUED: you must finish other work first. Add a line "Note:" saying what.
	// Instead of text you may reply with one JSON object with the fields "type" (the value
	// "task-acknowledgment"), "task_id" ("GH-42"), "status" ("received", "needs-clarification",
	// "rejected" or "queued"), "understanding" and "questions" (a list of strings).
	// When the work is done, end your last message with a line "Status: complete". If you
	// cannot go on, end it with a line "Status: blocked" and a line "Reason:" saying what you
	// need; if the task cannot be done at all, "Status: impossible" and its "Reason:".
}

func ExampleAckRequired() {
	subject, body := ack.AckRequired("GH-42")
	fmt.Println("Subject:", subject)
	fmt.Println()
	fmt.Println(body)
	// Output:
	// Subject: ACK REQUIRED: GH-42
	//
	// I sent you task GH-42 but have not received acknowledgment.
	// Please confirm receipt with: [ACK] GH-42 - {status}
	//
	// Status options: RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED
}

func ExampleTermCoverage_Check() {
	task := ack.Task{
		ID:          "GH-42",
		Description: "JWT authentication",
		AcceptanceCriteria: []string{
			"login and logout endpoints",
			"tokens expire after 24 hours",
			"refresh tokens",
		},
	}
	reply, _ := ack.Parse("[ACK] GH-42 - RECEIVED\nUnderstanding: JWT auth with login/logout endpoints and refresh tokens")

	var checker ack.Checker = ack.TermCoverage{} // the default threshold: half of each item's key terms
	v := checker.Check(task, reply)
	fmt.Printf("ok=%v wrong_id=%v coverage=%.2f\n", v.OK, v.WrongID, v.Coverage)
	fmt.Printf("missing: %q\n", v.Missing)

	_, body := ack.Correction(task.ID, v.Missing, reply.Understanding)
	fmt.Println(body)
	// Output:
	// ok=false wrong_id=false coverage=0.71
	// missing: ["tokens expire after 24 hours"]
	// Your understanding: JWT auth with login/logout endpoints and refresh tokens.
	// Missing:
	// - "tokens expire after 24 hours"
	// Task GH-42 includes these; your acknowledgment does not cover them.
	//
	// Please acknowledge again, before any work, with "[ACK] GH-42 - RECEIVED" and a line
	// "Understanding:" that covers the whole task, every item above included.
}

func ExampleFormatAck() {
	fmt.Println(ack.FormatAck(ack.Reply{
		TaskID:        "GH-4-xls-implementation",
		Status:        ack.Queued,
		Understanding: "Directory browser with full CLI flags",
		Note:          "Currently completing GH-3",
	}))
	// Output:
	// [ACK] GH-4-xls-implementation - QUEUED
	// Understanding: Directory browser with full CLI flags
	// Note: Currently completing GH-3
}
