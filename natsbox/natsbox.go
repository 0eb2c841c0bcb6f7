package natsbox

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Request kinds.
const (
	KindCycle = "cycle"
	KindReply = "reply"
)

// HeaderAnswerTo names the subject a request's answer is published on.
const HeaderAnswerTo = "Wilco-Answer-To"

// Request is what an agent publishes on its reply subject.
type Request struct {
	Kind  string `json:"kind"`
	Token string `json:"token"`
	// Reply is the body of POST /v1/inbox/replies (kind "reply").
	Reply json.RawMessage `json:"reply,omitempty"`
}

// Answer is what wilco's HTTP handler answered a request: its status and
// body (for a reply, {"interpreted": …}; for an error, {"error": …}).
type Answer struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// Escape makes name one subject token (and a valid part of a stream or
// consumer name): letters, digits, '-' and '_' stay, every other byte
// becomes _XX (hex), '_' itself __.
func Escape(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
			b.WriteByte(c)
		case c == '_':
			b.WriteString("__")
		default:
			fmt.Fprintf(&b, "_%02X", c)
		}
	}
	return b.String()
}

// Unescape is the name Escape made token of, or an error when token is
// not one Escape makes.
func Unescape(token string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(token); i++ {
		c := token[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
			b.WriteByte(c)
		case c == '_' && i+1 < len(token) && token[i+1] == '_':
			b.WriteByte('_')
			i++
		case c == '_' && i+2 < len(token) && upperHex(token[i+1]) && upperHex(token[i+2]):
			v, _ := strconv.ParseUint(token[i+1:i+3], 16, 8)
			if escapeKeeps(byte(v)) {
				return "", fmt.Errorf("natsbox: %q is not an escaped name: _%s stands for a byte kept as it is", token, token[i+1:i+3])
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			return "", fmt.Errorf("natsbox: %q is not an escaped name (at byte %d)", token, i)
		}
	}
	return b.String(), nil
}

func upperHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }

// escapeKeeps reports whether Escape writes c as it is.
func escapeKeeps(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// Stream is the name of the repository's stream.
func Stream(repo string) string { return "WILCO_" + Escape(repo) }

// InboxSubject is where wilco publishes agent's messages.
func InboxSubject(repo, agent string) string {
	return "wilco." + Escape(repo) + ".inbox." + Escape(agent)
}

// ReplySubject is where agent publishes its requests.
func ReplySubject(repo, agent string) string {
	return "wilco." + Escape(repo) + ".reply." + Escape(agent)
}

// InboxPrefix is the prefix of the NATS inboxes of agent's connection
// (Dial sets it): the answers to its requests, and the messages its
// consumer hands over, come on subjects under it, which no other agent's
// user may subscribe to (see Permissions).
func InboxPrefix(agent string) string { return "_INBOX_" + Escape(agent) }

// Permissions are the subjects agent's NATS user needs on repository
// repo's mailbox, and no more: publishing its requests, looking up the
// stream, creating and reading its own consumer, acknowledging its
// messages; subscribing to its own inboxes. Given to each agent's user in
// the NATS server's configuration, they make NATS itself refuse an agent
// that publishes as another or reads another's messages, before wilco
// checks its token. Wilco's own user needs the whole stream.
func Permissions(repo, agent string) (publish, subscribe []string) {
	st, cons := Stream(repo), agentConsumer(agent)
	publish = []string{
		ReplySubject(repo, agent),
		"$JS.API.STREAM.INFO." + st,
		"$JS.API.CONSUMER.CREATE." + st + "." + cons + ".>",
		"$JS.API.CONSUMER.INFO." + st + "." + cons,
		"$JS.API.CONSUMER.MSG.NEXT." + st + "." + cons,
		"$JS.ACK." + st + "." + cons + ".>",
	}
	return publish, []string{InboxPrefix(agent) + ".>"}
}

// agentConsumer is the durable consumer of an agent's inbox.
func agentConsumer(agent string) string { return agentConsumerPrefix + Escape(agent) }

const agentConsumerPrefix = "agent-"

// bridgeConsumer is wilco's durable consumer of the replies.
const bridgeConsumer = "wilco"
