package taskview

import "encoding/json"

// The data of the events the view reads: the fields it uses, with the
// API's names (the server's payloads are in core's event types).
type (
	taskQueued struct {
		Task struct {
			Description string `json:"description"`
		} `json:"task"`
	}
	taskState struct {
		From      string `json:"from"`
		To        string `json:"to"`
		Phase     string `json:"phase"`
		Reason    string `json:"reason"`
		Milestone string `json:"milestone"`
	}
	// taskText is the data of task.milestone and task.warning.
	taskText struct {
		Text string `json:"text"`
	}
	taskAttempt struct {
		Attempt     int    `json:"attempt"`
		Agent       string `json:"agent"`
		Kind        string `json:"kind"`
		MaxAttempts int    `json:"max_attempts"`
	}
	taskTurnEnded struct {
		Attempt  int    `json:"attempt"`
		ExitCode int    `json:"exit_code"`
		Status   string `json:"status"`
		Summary  string `json:"summary"`
	}
	taskFailure struct {
		Record struct {
			Attempt        int    `json:"attempt"`
			FailureType    string `json:"failure_type"`
			RunID          string `json:"run_id"`
			ExecutorOutput struct {
				Error        string `json:"error"`
				Verification struct {
					OutputSummary string `json:"output_summary"`
				} `json:"verification"`
			} `json:"executor_output"`
		} `json:"record"`
	}
	taskReplan struct {
		Number   int `json:"number"`
		Failures int `json:"failures"`
	}
	taskEscalated struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}
	taskResponse struct {
		Action      string `json:"action"`
		Instruction string `json:"instruction"`
	}
	taskSuccess struct {
		Summary struct {
			Text  string `json:"text"`
			RunID string `json:"run_id"`
		} `json:"summary"`
	}
	taskUnverified struct {
		Summary struct {
			Why string `json:"why"`
		} `json:"summary"`
	}
	taskStuck struct {
		Report struct {
			Path string `json:"path"`
		} `json:"report"`
	}
	taskProposed struct {
		Proposal struct {
			RunID string `json:"run_id"`
		} `json:"proposal"`
	}
	planCreated struct {
		Plan struct {
			ID string `json:"id"`
		} `json:"plan"`
	}
	// transition is the data of plan.state, delivery.reassigned,
	// agent.status and operation.state: what moved from where to where,
	// and why.
	transition struct {
		ID     string `json:"id"`
		From   string `json:"from"`
		To     string `json:"to"`
		Reason string `json:"reason"`
	}
	// deliverySend is the data of delivery.sent, delivery.retried and
	// delivery.notice.
	deliverySend struct {
		ID      string `json:"id"`
		Attempt int    `json:"attempt"`
		Kind    string `json:"kind"`
	}
	deliveryAcknowledged struct {
		ID            string `json:"id"`
		By            string `json:"by"`
		Status        string `json:"status"`
		Understanding string `json:"understanding"`
	}
	deliveryClarifying struct {
		ID        string   `json:"id"`
		Questions []string `json:"questions"`
	}
	// deliveryEnded is the data of delivery.deferred, delivery.cancelled,
	// delivery.escalated and delivery.failed; Attempts is only
	// delivery.failed's.
	deliveryEnded struct {
		ID       string `json:"id"`
		Reason   string `json:"reason"`
		Attempts *int   `json:"attempts"`
	}
	deliveryReply struct {
		Kind string `json:"kind"`
		Text string `json:"text"`
	}
	agentCycle struct {
		Fetched int `json:"fetched"`
	}
	operationReminder struct {
		ID     string `json:"id"`
		Number int    `json:"number"`
		Tone   string `json:"tone"`
	}
	operationReply struct {
		ID     string `json:"id"`
		Answer string `json:"answer"`
	}
	operationStarted struct {
		Operation struct {
			ID        string `json:"id"`
			Operation string `json:"operation"`
		} `json:"operation"`
	}
	notificationQueued struct {
		Notification struct {
			ID    string `json:"id"`
			Hook  string `json:"hook"`
			Event string `json:"event"`
		} `json:"notification"`
	}
	// notificationAttempt is the data of notification.retried,
	// notification.attempt, notification.delivered and
	// notification.failed.
	notificationAttempt struct {
		ID       string `json:"id"`
		Attempt  int    `json:"attempt"`
		Attempts int    `json:"attempts"`
		Error    string `json:"error"`
	}
	notificationsPruned struct {
		IDs []string `json:"ids"`
	}
)

// decode reads an event's data into a T. A field of another type is left
// zero and the others are read; data that are no JSON give a zero T. The
// error says what could not be read.
func decode[T any](data json.RawMessage) (T, error) {
	var v T
	if len(data) == 0 {
		return v, nil
	}
	err := json.Unmarshal(data, &v)
	return v, err
}

// read is decode without the error: what the view shows of an event it
// cannot read whole.
func read[T any](data json.RawMessage) T {
	v, _ := decode[T](data)
	return v
}
