package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"wilco/core"
)

// Headers of a webhook's request.
const (
	// HeaderSignature is "sha256=<hex>": the HMAC-SHA256 of the body with
	// the hook's secret (the form of GitHub's X-Hub-Signature-256).
	HeaderSignature = "X-Wilco-Signature"
	// HeaderEvent is the notify event (escalated, stuck…).
	HeaderEvent = "X-Wilco-Event"
	// HeaderID is the notification's id: an attempt made again after a
	// restart carries the same, for the receiver to drop a duplicate.
	HeaderID = "X-Wilco-Notification"
	// HeaderAttempt is the attempt's number, 1 for the first.
	HeaderAttempt = "X-Wilco-Attempt"
)

// Body is the JSON a webhook of format json receives.
type Body struct {
	// ID is the notification's id, the same on every attempt.
	ID    string `json:"id"`
	Event string `json:"event"`
	// TaskID is the task the event is about ("" for an operation, or an
	// agent with no task).
	TaskID string `json:"task_id"`
	// Task is the task's first line (the operation's name for operation).
	Task string `json:"task,omitempty"`
	// State is the task's state the event left it in (the agent's status
	// for unresponsive, the operation's state for operation).
	State  string `json:"state"`
	Reason string `json:"reason"`
	// URL is the link to the task (agent, operation) on wilco's page.
	URL         string `json:"url"`
	Agent       string `json:"agent,omitempty"`
	OperationID string `json:"operation_id,omitempty"`
	Hook        string `json:"hook"`
	Attempt     int    `json:"attempt"`
	// Time is when the event happened.
	Time time.Time `json:"time"`
	// Summary is the whole notice in one line, for people.
	Summary string `json:"summary"`
}

// Link is the address of what a notification is about on wilco's page:
// <base>/#/tasks/<id>, else #/operations/<id>, else #/agents/<name>.
func Link(base string, n core.Notification) string {
	base = strings.TrimRight(base, "/")
	switch {
	case n.TaskID != "":
		return base + "/#/tasks/" + url.PathEscape(n.TaskID)
	case n.OperationID != "":
		return base + "/#/operations/" + url.PathEscape(n.OperationID)
	case n.Agent != "":
		return base + "/#/agents/" + url.PathEscape(n.Agent)
	}
	return base + "/"
}

// Headline says what happened to what: "T-3 escalated", "agent codex is
// unresponsive".
func Headline(n core.Notification) string {
	what := n.TaskID
	switch {
	case n.Event == core.NotifyOperation:
		what = "operation " + n.OperationID
	case n.Event == core.NotifyUnresponsive:
		what = "agent " + n.Agent
	}
	return what + " " + verb(n.Event)
}

// Summary says the notification in one line: "T-3 escalated: Add a flag —
// 2 failed attempts".
func Summary(n core.Notification) string {
	var b strings.Builder
	b.WriteString(Headline(n))
	if n.Subject != "" {
		fmt.Fprintf(&b, ": %s", n.Subject)
	}
	if n.Event == core.NotifyUnresponsive && n.TaskID != "" {
		fmt.Fprintf(&b, " (task %s)", n.TaskID)
	}
	if n.Reason != "" {
		fmt.Fprintf(&b, " — %s", n.Reason)
	}
	return b.String()
}

// verb is what happened, as a sentence says it.
func verb(e core.NotifyEvent) string {
	switch e {
	case core.NotifyClarification:
		return "needs your answers"
	case core.NotifyUnresponsive:
		return "is unresponsive"
	case core.NotifyOperation:
		return "waits for \"ok\""
	case core.NotifySuccess:
		return "succeeded"
	case core.NotifyBlocked:
		return "is blocked"
	case core.NotifyStuck:
		return "is stuck"
	}
	return string(e)
}

// JSON is the body of attempt n of a notification to a json webhook.
func JSON(n core.Notification, attempt int, base string) []byte {
	b, _ := json.Marshal(Body{
		ID: n.ID, Event: string(n.Event), TaskID: n.TaskID, Task: n.Subject, State: n.Status, Reason: n.Reason,
		URL: Link(base, n), Agent: n.Agent, OperationID: n.OperationID, Hook: n.Hook, Attempt: attempt,
		Time: n.CreatedAt, Summary: Summary(n),
	})
	return b
}

// slackMessage is what Slack's incoming webhooks take, and Mattermost's
// (Mattermost, model/incoming_webhook.go: IncomingWebhookRequest's text).
type slackMessage struct {
	Text string `json:"text"`
}

// Slack is the body of a notification to a slack webhook: {"text": …}
// with the link in Slack's <url|label> form, and &, < and > escaped as
// Slack's message formatting asks.
func Slack(n core.Notification, base string) []byte {
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	label := "open in wilco"
	if n.TaskID != "" {
		label = "open " + n.TaskID + " in wilco"
	}
	text := "*wilco*: " + esc.Replace(Summary(n)) + "\n<" + Link(base, n) + "|" + esc.Replace(label) + ">"
	b, _ := json.Marshal(slackMessage{Text: text})
	return b
}

// Sign is the X-Wilco-Signature of a body: "sha256=" and the hex of its
// HMAC-SHA256 with the secret.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether header is the signature of body with secret,
// comparing in constant time: what a receiver does.
func Verify(secret string, body []byte, header string) bool {
	return hmac.Equal([]byte(header), []byte(Sign(secret, body)))
}
