package core

import "time"

// A task made from a forge's issue (TaskSpec.Issue) is answered in its
// issue's thread: the shell reads the thread's new comments and acts on
// them (an answer to an escalation, to a question). Which comments were
// read is the task's (Task.IssueSeen), recorded in the same commit as
// what a comment did, so a restart neither acts on a comment twice nor
// skips one.

// Issue event types.
const (
	// TypeTaskIssueSeen: the comments of a task's issue were read.
	TypeTaskIssueSeen = "task.issue_seen"
)

// TaskIssueSeen records that the comments of a task's issue up to
// Comment (the forge's comment id) were read and acted on.
type TaskIssueSeen struct {
	Comment int64 `json:"comment"`
}

func (TaskIssueSeen) EventType() string { return TypeTaskIssueSeen }

func init() { register[TaskIssueSeen]() }

// SeeIssueComments records that the comments of task id's issue up to
// comment were read. A comment at or below the one recorded changes
// nothing.
func (s *State) SeeIssueComments(now time.Time, id string, comment int64) error {
	t, ok := s.tasks[id]
	if !ok {
		return notFoundf("task %s", id)
	}
	if t.Issue == 0 {
		return invalidf("task %s was made from no issue", id)
	}
	if comment <= t.IssueSeen {
		return nil
	}
	s.emit(now, id, "", TaskIssueSeen{Comment: comment})
	return nil
}

// applyIssue applies the events of a task's issue.
func (s *State) applyIssue(ev Event) bool {
	e, ok := ev.Data.(TaskIssueSeen)
	if !ok {
		return false
	}
	if t := s.taskAt(ev.TaskID, ev.Seq); t != nil {
		t.IssueSeen = e.Comment
	}
	return true
}
