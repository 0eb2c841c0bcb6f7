package wire

import "time"

// Notification is a notification to a webhook or the desktop, and how its
// delivery went.
type Notification struct {
	ID            string            `json:"id"`
	Hook          string            `json:"hook"`
	Event         NotifyEvent       `json:"event"`
	TaskID        string            `json:"task_id" doc:"The task the event is about (\"\" for an operation, or an agent without a task)."`
	Agent         string            `json:"agent,omitempty"`
	OperationID   string            `json:"operation_id,omitempty"`
	Subject       string            `json:"subject,omitempty" doc:"The task's first line (the operation's name)."`
	TaskState     string            `json:"task_state" doc:"The state the event left the task in (the agent's status, the operation's state)."`
	Reason        string            `json:"reason"`
	State         NotificationState `json:"state"`
	Attempts      int               `json:"attempts" doc:"Attempts that ended."`
	MaxAttempts   int               `json:"max_attempts"`
	LastError     string            `json:"last_error" doc:"Why the last attempt failed (\"\" when none did)."`
	LastStatus    *int              `json:"last_status" doc:"The last attempt's HTTP status (null when there was no answer)."`
	CreatedAt     time.Time         `json:"created_at"`
	LastAttemptAt *time.Time        `json:"last_attempt_at"`
	NextAttemptAt *time.Time        `json:"next_attempt_at"`
	DeliveredAt   *time.Time        `json:"delivered_at"`
	FailedAt      *time.Time        `json:"failed_at"`
}

// NotificationList is GET /v1/notifications.
type NotificationList struct {
	Notifications []Notification `json:"notifications"`
}
