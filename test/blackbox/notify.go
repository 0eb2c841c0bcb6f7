package blackbox

// NotificationRecord is a notification as GET /v1/notifications lists it.
type NotificationRecord struct {
	ID          string  `json:"id"`
	Hook        string  `json:"hook"`
	Event       string  `json:"event"`
	TaskID      string  `json:"task_id"`
	OperationID string  `json:"operation_id"`
	State       string  `json:"state"`
	Attempts    int     `json:"attempts"`
	LastError   string  `json:"last_error"`
	LastStatus  *int    `json:"last_status"`
	CreatedAt   string  `json:"created_at"`
	DeliveredAt *string `json:"delivered_at"`
}

func (in *Instance) Notifications(query string) []NotificationRecord {
	in.T.Helper()
	var list struct {
		Notifications []NotificationRecord `json:"notifications"`
	}
	in.Must(200, in.Call("GET", "/v1/notifications"+query, AdminToken, nil), &list)
	return list.Notifications
}
