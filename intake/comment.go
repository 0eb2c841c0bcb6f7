package intake

import (
	"fmt"
	"strings"

	"wilco/core"
)

// HowToAnswer is what an escalated or blocked task's comment says of the
// answers a collaborator may give in the thread.
const HowToAnswer = "To answer, a collaborator comments on this issue:\n" +
	"- `/wilco retry`: try once more (the failure count starts again)\n" +
	"- `/wilco fix <instruction>`: try once more, with your instruction to the agent\n" +
	"- `/wilco skip`: skip the task\n" +
	"- `/wilco abort`: abort it\n"

// Comment is the comment in the thread of notification n of task
// t: what the agent understood, what it asks, what it needs of a person,
// its pull request, its end. It starts with Marker.
func Comment(n core.Notification, t core.Task) string {
	var b strings.Builder
	b.WriteString(Marker + "\n")
	who := t.Agent
	if who == "" {
		who = "the agent"
	}
	switch n.Event {
	case core.NotifyAcknowledged:
		fmt.Fprintf(&b, "**wilco** task %s was acknowledged by %s. Its understanding:\n\n%s\n", t.ID, who, quote(n.Reason))
	case core.NotifyClarification:
		fmt.Fprintf(&b, "**wilco** task %s: %s has questions before it starts:\n\n%s\n\nReply to this issue with your answers (a plain comment from a collaborator).\n",
			t.ID, who, quote(strings.TrimPrefix(n.Reason, "the agent asks: ")))
	case core.NotifyEscalated:
		fmt.Fprintf(&b, "**wilco** task %s needs you: it escalated (%s).\n\n", t.ID, n.Reason)
		if t.Escalation != nil && t.Escalation.Message != "" {
			msg := t.Escalation.Message
			if i := strings.Index(msg, "**Your options:**"); i >= 0 {
				msg = msg[:i]
			}
			b.WriteString(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(msg), "---")) + "\n\n")
		}
		b.WriteString(HowToAnswer)
	case core.NotifyBlocked:
		fmt.Fprintf(&b, "**wilco** task %s is blocked: %s\n\n%s", t.ID, n.Reason, HowToAnswer)
	case core.NotifyStuck:
		fmt.Fprintf(&b, "**wilco** task %s is stuck: %s\n", t.ID, n.Reason)
		if t.StuckReport != nil && t.StuckReport.Markdown != "" {
			b.WriteString("\n" + strings.TrimSpace(t.StuckReport.Markdown) + "\n")
		}
	case core.NotifyPullRequest:
		fmt.Fprintf(&b, "**wilco** task %s: its verified change is in %s\n", t.ID, n.Reason)
	case core.NotifySuccess:
		fmt.Fprintf(&b, "**wilco** task %s succeeded.\n", t.ID)
		if t.Summary != nil && t.Summary.Text != "" {
			b.WriteString("\n" + strings.TrimSpace(t.Summary.Text) + "\n")
		} else if n.Reason != "" {
			b.WriteString("\n" + n.Reason + "\n")
		}
	case core.NotifyFailed:
		fmt.Fprintf(&b, "**wilco** task %s failed: %s\n", t.ID, n.Reason)
	case core.NotifyEnded:
		fmt.Fprintf(&b, "**wilco** task %s ended %s: %s\n", t.ID, n.Status, n.Reason)
	default:
		fmt.Fprintf(&b, "**wilco** task %s: %s: %s\n", t.ID, n.Event, n.Reason)
	}
	return b.String()
}

// quote is s as a Markdown block quote.
func quote(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n")
}
