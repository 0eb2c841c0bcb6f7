package exec

import (
	"strings"

	"wilco/ack"
)

// maxAckLines bounds the lines taken after an [ACK] line: its
// Understanding:, Questions: and Note: lines.
const maxAckLines = 20

// scanner reads the text of a task turn, line by line, for what the agent
// says to wilco: the first acknowledgment (an [ACK] block, or a JSON
// task-acknowledgment or task-acknowledgment-error on a line), checkpoints
// (JSON checkpoint-ack on a line) and the last task-complete.
//
// An [ACK] block is the [ACK] line and the lines after it. It is judged
// only once it is complete — its Understanding: (or Questions:, Reason:)
// has arrived — and then ends at a blank line, another [ACK] line, or the
// end of the agent's message (a JSON event, or a pause the caller
// measures). Before that, blank lines and pauses do not end it (models
// write a blank line after the [ACK] line, or pause in the stream); only
// another form, maxAckLines lines or the end of the turn do.
type scanner struct {
	wantAck bool // the turn asks for an ACK

	collecting bool
	block      []string
	found      bool // the ACK was found: it is sent, or being collected

	ready    []string // ACK texts ready to send (at most one)
	progress []string // checkpoints to send
	complete *ack.Reply
}

// line reads one line of text.
func (s *scanner) line(line string) {
	if s.collecting {
		switch {
		case strings.TrimSpace(line) == "" && !ackComplete(s.block):
			return // a blank line before the Understanding: arrived
		case strings.TrimSpace(line) == "":
			s.flush()
			return
		case mayBeForm(line):
			if r, err := ack.Parse(line); err == nil && r.Kind != ack.KindMessage {
				s.flush()
				s.form(line, r)
				return
			}
		}
		s.block = append(s.block, line)
		if len(s.block) > maxAckLines {
			s.flush()
		}
		return
	}
	if !mayBeForm(line) {
		return
	}
	r, err := ack.Parse(line)
	if err != nil {
		return // a broken form, or an echo of the protocol's lesson
	}
	s.form(line, r)
}

// form acts on a line that holds an acknowledgment form.
func (s *scanner) form(line string, r ack.Reply) {
	switch r.Kind {
	case ack.KindAck, ack.KindAckError:
		if !s.wantAck || s.found {
			return
		}
		s.found = true
		if strings.Contains(line, "task-acknowledgment") {
			// A JSON form is whole on its line.
			s.ready = append(s.ready, line)
			return
		}
		s.collecting, s.block = true, []string{line}
	case ack.KindCheckpoint:
		s.progress = append(s.progress, line)
	case ack.KindComplete:
		c := r
		s.complete = &c
	}
}

// settle makes a collected [ACK] block ready if it is complete: the
// agent's message ended, or it paused.
func (s *scanner) settle() {
	if s.collecting && ackComplete(s.block) {
		s.flush()
	}
}

// ackLabels are the labels of the lines that complete an [ACK] block.
var ackLabels = []string{"understanding", "questions", "question", "reason", "clarification"}

// ackComplete reports whether an [ACK] block holds what its status says:
// a labelled line (Understanding:, Questions:, Reason:) with text after
// the label or on a line after it. Markdown around the label (bold,
// bullets, headings) and "-" for ":" are read as models write them.
func ackComplete(block []string) bool {
	bare := false // a label line with nothing after it: the next line says it
	for i, l := range block {
		t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "*_#>-+ \t"))
		if t == "" {
			continue
		}
		if bare {
			return true
		}
		low := strings.ToLower(t)
		if i == 0 {
			// The [ACK] line itself may carry it: "… - RECEIVED. Understanding: …".
			j := -1
			for _, k := range ackLabels {
				if j = strings.Index(low, k); j >= 0 {
					break
				}
			}
			if j < 0 {
				continue
			}
			low = low[j:]
		}
		for _, k := range ackLabels {
			rest, ok := strings.CutPrefix(low, k)
			if !ok {
				continue
			}
			rest = strings.TrimLeft(rest, "*_` \t")
			if strings.IndexAny(rest, ":-–—") != 0 {
				break // a word such as "understanding" in a sentence
			}
			if strings.TrimSpace(strings.TrimLeft(rest, ":-–—*_` \t")) != "" {
				return true
			}
			bare = true
			break
		}
	}
	return false
}

// flush makes a collected [ACK] block ready.
func (s *scanner) flush() {
	if !s.collecting {
		return
	}
	s.ready = append(s.ready, strings.TrimRight(strings.Join(s.block, "\n"), "\n"))
	s.collecting, s.block = false, nil
}

// take returns the ACK text ready to send ("" for none) and the
// checkpoints, and forgets them.
func (s *scanner) take() (ackText string, progress []string) {
	if len(s.ready) > 0 {
		ackText = s.ready[0]
	}
	progress = s.progress
	s.ready, s.progress = nil, nil
	return ackText, progress
}

// mayBeForm is a cheap test before ack.Parse: every form has "ack" in it
// ([ACK], task-acknowledgment, checkpoint-ack) or is a JSON object.
func mayBeForm(line string) bool {
	if strings.IndexByte(line, '{') >= 0 {
		return true
	}
	for i := 0; i+3 <= len(line); i++ {
		if (line[i]|0x20) == 'a' && (line[i+1]|0x20) == 'c' && (line[i+2]|0x20) == 'k' {
			return true
		}
	}
	return false
}

// completion is the agent's completion report for task taskID: the last
// one in its final answer (the result its format gives, such as Claude
// Code's "result"), else the last one in the text it wrote (the tail kept
// of it), else the last JSON task-complete line seen on the way. Reports
// in any form are read — the JSON task-complete, "Status: blocked" with its
// Reason:, "BLOCKED: why", "TASK COMPLETE"… — and a report that names
// another task is never taken. nil when there is none.
func completion(res procResult, taskID string) *ack.Reply {
	for _, text := range []string{res.result, res.text.String()} {
		if c := lastCompletion(text, taskID); c != nil {
			return c
		}
	}
	if c := res.complete; c != nil && (c.TaskID == "" || c.For(taskID) == nil) {
		return c
	}
	return nil
}

// lastCompletion is the last completion report of text for task taskID.
func lastCompletion(text, taskID string) *ack.Reply {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	all, _ := ack.ParseAll(text)
	for i := len(all) - 1; i >= 0; i-- {
		if c := all[i]; c.Kind == ack.KindComplete && (c.TaskID == "" || c.For(taskID) == nil) {
			return &c
		}
	}
	return nil
}
