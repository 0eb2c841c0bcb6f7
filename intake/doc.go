// Package intake makes tasks of a forge's issues and holds each task's
// conversation in its issue's thread.
//
// Every poll (intake.poll, and at once when nudged) it lists the open
// issues with the label; an issue without a task becomes one, submitted
// through the same reading of a task as the API's (server.Spec): the
// title is the description's first line, the body the rest, its
// task-list items ("- [ ] …") the acceptance criteria. Then it reads the
// new comments of each task's issue: from a collaborator, "/wilco retry",
// "/wilco skip", "/wilco abort" or "/wilco fix <instruction>" answer an
// escalated or blocked task as the page does, and a plain reply answers
// the agent's questions; anyone else's comment is ignored, and the log
// says so; wilco's own comments are ignored. The comments read are the
// task's (core's task.issue_seen), recorded in the same commit as what
// they did. An issue closed cancels its task.
//
// Thread performs the notifications of the issue hook: it writes what
// the task's agent understood, asks, needs, its pull request and its end
// as comments in the thread.
package intake
