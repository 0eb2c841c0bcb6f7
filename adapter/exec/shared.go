package exec

import (
	"strings"

	"wilco/ack"
)

// What other adapters (tmux) read the same way as this one: an agent's
// text line by line for its ACK, checkpoints and completion report, its
// tool calls as milestones, and the transcript of its turn.

// Scanner reads the text of an agent's task turn line by line: the first
// acknowledgment, the checkpoints and the completion report, exactly as
// an exec turn's output is read.
type Scanner struct{ s scanner }

// NewScanner returns a scanner; wantAck: the turn asks for an ACK.
func NewScanner(wantAck bool) *Scanner { return &Scanner{s: scanner{wantAck: wantAck}} }

// Line reads one line of the agent's text.
func (s *Scanner) Line(line string) { s.s.line(line) }

// Settle ends an [ACK] block that is complete: the agent paused or its
// message ended.
func (s *Scanner) Settle() { s.s.settle() }

// Take returns the ACK text ready to send ("" for none) and the
// checkpoints read, and forgets them.
func (s *Scanner) Take() (ackText string, progress []string) { return s.s.take() }

// Found reports whether an ACK was found (sent, or being collected).
func (s *Scanner) Found() bool { return s.s.found }

// LastCompletion is the last completion report in text for task taskID
// (a report naming another task is never taken); nil when there is none.
func LastCompletion(text, taskID string) *ack.Reply { return lastCompletion(text, taskID) }

// DescribeTool says a tool call as a milestone ("Writing calc.go",
// "Running go test ./..."), from its name and its one argument as a screen
// shows it ("Write(/repo/calc.go)", "Bash(go test ./...)").
func DescribeTool(name, arg string) string {
	arg = strings.TrimSpace(arg)
	return describeTool(name, map[string]any{"file_path": arg, "command": arg, "pattern": arg})
}

// Transcript is a run's transcript file (TranscriptFileName): one JSON
// Entry per line, bounded.
type Transcript struct{ t *transcript }

// OpenTranscript opens (appends to) a transcript file; a file that cannot
// be opened gives a transcript that records nothing.
func OpenTranscript(path string) *Transcript { return &Transcript{t: openTranscript(path)} }

// Add records one entry.
func (t *Transcript) Add(e Entry) {
	if t != nil {
		t.t.add(e)
	}
}

// Close closes the file.
func (t *Transcript) Close() {
	if t != nil {
		t.t.close()
	}
}

// DescribeToolCall says a tool call as a milestone from its name and
// input, as an agent's record gives them.
func DescribeToolCall(name string, input map[string]any) string { return describeTool(name, input) }
