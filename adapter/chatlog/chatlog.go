package chatlog

import (
	"os"
	"strings"
	"time"
)

// Kind is what an Entry is.
type Kind string

// Entry kinds.
const (
	// Prompt is what the program was sent: a turn begins.
	Prompt Kind = "prompt"
	// Text is a message of the agent.
	Text Kind = "text"
	// ToolCall is a tool the agent called (Tool, Input).
	ToolCall Kind = "tool_call"
	// ToolResult is what a tool answered (Text; Error when it failed).
	ToolResult Kind = "tool_result"
	// TurnEnd says the turn is over: the program waits for its next
	// prompt (only where the record says so).
	TurnEnd Kind = "turn_end"
)

// Entry is one item of a program's record of its conversation.
type Entry struct {
	// ID identifies the entry in its record, stable across reads (the
	// program's own id where it has one, else its position).
	ID    string
	Kind  Kind
	Text  string
	Tool  string
	Input map[string]any
	// Error: a tool result that failed.
	Error bool
	// Partial: the program is still writing the entry (a message
	// streaming); it is read again, whole, later.
	Partial bool
	At      time.Time
}

// Where names one conversation of an agent program.
type Where struct {
	// Env is the program's environment beyond wilco's own (HOME,
	// CODEX_HOME, XDG_DATA_HOME…): where it is unset, wilco's is used.
	Env map[string]string
	// Dir is the folder the program runs in.
	Dir string
	// Conversation is the conversation id wilco started or resumed the
	// program with ("" when the program makes its own).
	Conversation string
	// Since is when the program was started: a record it did not write
	// since is not this one's.
	Since time.Time
}

// Getenv is the program's variable key: its Env's, else wilco's own.
func (w Where) Getenv(key string) string {
	if v, ok := w.Env[key]; ok {
		return v
	}
	return os.Getenv(key)
}

// Home is the program's home directory.
func (w Where) Home() string {
	if h := w.Getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// A Format is how one program keeps the record of its conversations.
type Format interface {
	// Name is the program's preset name.
	Name() string
	// Open finds the record of the conversation w names. ok is false
	// while the program has not written it yet: the caller asks again.
	Open(w Where) (log Log, ok bool, err error)
}

// A Log is one conversation's record, read as it grows.
type Log interface {
	// Read returns every entry the record holds now, in order. An entry
	// once returned whole keeps its place and its ID in later reads.
	Read() ([]Entry, error)
	// Path is where the record is (a file, or a database and its
	// session), for logs and the docs.
	Path() string
	// Conversation is the program's id of the conversation, when the
	// record tells it (to resume it later); "" when it does not.
	Conversation() string
}

// formats are the known Formats by preset name.
var formats = map[string]Format{}

// register adds a Format (from each format's init).
func register(f Format) { formats[f.Name()] = f }

// For is the Format of the preset named, nil when its program keeps no
// record wilco reads.
func For(preset string) Format { return formats[preset] }

// Words is s with its runs of white space made one space: prompts are
// compared so, since programs may re-indent or trim what they record.
func Words(s string) string { return strings.Join(strings.Fields(s), " ") }
