package tmux

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"wilco/adapter"
	"wilco/adapter/chatlog"
	execadapter "wilco/adapter/exec"
)

// What an agent said is read from the record its program keeps of its
// conversation (package chatlog) where the preset's program keeps one:
// exact text, its tool calls and their results, the prompt that began the
// turn and, where the record says so, the turn's end. The pane is read for
// what only it shows (ready, busy, a permission question, a dialog, a
// dead program) — and, where the record cannot be found, for the text
// too.

// recordWait is how long after a prompt was taken the record may not show
// it before the turn is read from the pane instead — while the record has
// never shown one of wilco's prompts; once it has, a turn waits for its
// prompt until it is over (a program that writes late is not one that
// writes elsewhere).
const recordWait = 30 * time.Second

// source is where a turn's text is read from.
type source int

const (
	sourceUndecided source = iota // the record has not shown the prompt yet: the pane's lines are held
	sourceRecord
	sourceScreen
)

// record follows the agent program's record of its conversation.
type record struct {
	format chatlog.Format
	log    chatlog.Log
	// conv and since are the conversation and start the log was opened
	// for: another start opens another.
	conv  string
	since time.Time
	// cursor: the entries before it belong to turns already read; a
	// turn's prompt is looked for after it.
	cursor int
	// endsTurns: the record was seen to say when a turn ended, so a turn
	// it does not say ended is not over yet for a settled pane alone.
	endsTurns bool
	triedAt   time.Time
	errLogged bool
	// found: the record has shown a prompt of wilco's.
	found bool
}

// recordEntries are the entries of the agent's record now (nil when its
// program keeps none, or it is not found yet).
func (ag *agent) recordEntries(now time.Time) []chatlog.Entry {
	r := ag.rec
	if r == nil {
		return nil
	}
	ag.mu.Lock()
	conv := ag.conv
	ag.mu.Unlock()
	if r.log != nil && (!r.since.Equal(ag.startedAt) || conv != "" && conv != r.conv) {
		// The program started again, or on another conversation: its
		// record is found again.
		r.log, r.cursor = nil, 0
	}
	if r.log == nil {
		if now.Sub(r.triedAt) < 250*time.Millisecond {
			return nil
		}
		r.triedAt = now
		env := ag.progEnv
		if env == nil {
			// A program wilco did not start (a session that ran already):
			// its environment as wilco would have given it.
			env = map[string]string{}
			if ag.preset != nil {
				maps.Copy(env, ag.preset.Env)
			}
			maps.Copy(env, ag.cfg.Env)
		}
		// The folder the program runs in: an instance's is its task's
		// worktree, where the program keeps its record (Claude Code's
		// projects/<folder>, Gemini CLI's by the folder's hash, the
		// conversations Codex and opencode started there, Aider's file).
		w := chatlog.Where{Env: env, Dir: ag.dir, Conversation: conv, Since: ag.startedAt.Add(-2 * time.Second)}
		l, ok, err := r.format.Open(w)
		if err != nil && !r.errLogged {
			r.errLogged = true
			ag.logger().Warn("the agent's record of its conversation cannot be read", "err", err)
		}
		if !ok {
			return nil
		}
		r.log, r.conv, r.since, r.cursor = l, conv, ag.startedAt, 0
		ag.logger().Info("reading the agent's record of its conversation", "path", l.Path())
		if c := l.Conversation(); c != "" && c != conv {
			// The program named its conversation itself: wilco resumes it
			// by that id.
			ag.mu.Lock()
			ag.conv = c
			ag.mu.Unlock()
			r.conv = c
			ag.saveConversation(c)
		}
	}
	es, err := r.log.Read()
	if err != nil && !r.errLogged {
		r.errLogged = true
		ag.logger().Warn("reading the agent's record of its conversation failed", "path", r.log.Path(), "err", err)
	}
	if r.cursor > len(es) {
		r.cursor = len(es) // read again from a shorter start
	}
	return es
}

// samePrompt reports whether a prompt a record holds is the one wilco
// sent: the same words, or one holding the other (a program may add to
// what it records, or record a paste without its first line).
func samePrompt(recorded, sent string) bool {
	a, b := chatlog.Words(recorded), chatlog.Words(sent)
	if a == "" || b == "" {
		return false
	}
	return a == b || strings.Contains(a, b) || len(a) >= 40 && strings.Contains(b, a)
}

// recordHolds says whether the agent's record holds the job's prompt, its
// text, recorded since it was pasted: the program took it.
func (ag *agent) recordHolds(j *job, es []chatlog.Entry) bool {
	return ag.rec != nil && !j.pastedAt.IsZero() && ag.promptAt(j, es) >= 0
}

// promptAt is the index of the last entry after the cursor that is the
// job's prompt, its text, recorded since it was pasted (-1: none).
func (ag *agent) promptAt(j *job, es []chatlog.Entry) int {
	since := j.pastedAt.Add(-2 * time.Second)
	recent := func(e chatlog.Entry) bool { return j.pastedAt.IsZero() || e.At.IsZero() || !e.At.Before(since) }
	for i := len(es) - 1; i >= ag.rec.cursor; i-- {
		if e := es[i]; e.Kind == chatlog.Prompt && recent(e) && samePrompt(e.Text, j.prompt) {
			return i
		}
	}
	return -1
}

// findPrompt is the index of the job's prompt in the record's entries
// after the cursor (-1: not there yet): the last one that is the job's
// text, recorded since it was pasted; after a while, the first prompt
// recorded since it was pasted whatever its text.
func (ag *agent) findPrompt(j *job, es []chatlog.Entry, now time.Time) int {
	if i := ag.promptAt(j, es); i >= 0 {
		return i
	}
	since := j.pastedAt.Add(-2 * time.Second)
	if j.pastedAt.IsZero() || now.Sub(j.confirmed) < 3*time.Second {
		return -1
	}
	for i := ag.rec.cursor; i < len(es); i++ {
		if e := es[i]; e.Kind == chatlog.Prompt && !e.At.IsZero() && !e.At.Before(since) {
			j.log.Warn("the prompt the agent's record holds is not the text typed: taken as this turn's by its time", "recorded", firstLine(e.Text))
			return i
		}
	}
	return -1
}

// readRecord reads the turn's new entries from the record: the agent's
// text (the ACK, checkpoints, the completion), its tool calls (the task's
// milestones) and their results, and the turn's end. An entry the program
// is still writing waits, unless the turn is over (final): then it is
// taken as it stands (a record that never marks its last entry whole).
func (ag *agent) readRecord(ctx context.Context, j *job, now time.Time, final bool) {
	if ag.rec == nil || j.source == sourceScreen || j.recEnded {
		return
	}
	es := ag.recordEntries(now)
	if j.source == sourceUndecided {
		i := -1
		if es != nil {
			i = ag.findPrompt(j, es, now)
		}
		if i < 0 {
			if !ag.rec.found && !j.confirmed.IsZero() && now.Sub(j.confirmed) > recordWait {
				ag.fromScreen(ctx, j, "the agent's record does not show the prompt")
			}
			return
		}
		j.source, j.recNext, j.held = sourceRecord, i+1, nil
		ag.rec.cursor, ag.rec.found = i+1, true
		ag.appendLog(j, "--- wilco: the agent's words are read from its record "+ag.rec.log.Path())
	}
	for j.recNext < len(es) && !j.recEnded {
		e := es[j.recNext]
		if e.Partial && !final {
			return
		}
		j.recNext++
		ag.rec.cursor = max(ag.rec.cursor, j.recNext)
		j.lastChange = now
		switch e.Kind {
		case chatlog.Prompt:
			// Another turn began (a prompt typed by someone else): this
			// one is over.
			j.recNext--
			ag.rec.cursor = j.recNext
			j.recEnded = true
		case chatlog.TurnEnd:
			ag.rec.endsTurns = true
			j.recEnded = true
			if e.Text != "" {
				// Not a plain end: interrupted (a permission answered no), or
				// failed.
				ag.appendLog(j, "--- wilco: the agent's record ends the turn: "+e.Text)
			}
		default:
			ag.takeEntry(ctx, j, e)
		}
		if j.quiet.Load() {
			return
		}
	}
}

// takeEntry reads one entry of the agent's record for the turn.
func (ag *agent) takeEntry(ctx context.Context, j *job, e chatlog.Entry) {
	switch e.Kind {
	case chatlog.Text:
		lines := strings.Split(strings.TrimRight(e.Text, "\n"), "\n")
		j.text = append(j.text, lines...)
		for _, l := range lines {
			ag.appendLog(j, l)
			j.scanner.Line(l)
		}
		// A message of the record is whole: an [ACK] block it holds ends
		// with it.
		j.scanner.Settle()
		j.transcript.Add(execadapter.Entry{Kind: "text", Text: e.Text})
		ag.sendAck(ctx, j)
	case chatlog.ToolCall:
		in, _ := json.Marshal(e.Input)
		ag.appendLog(j, fmt.Sprintf("[tool] %s %s", e.Tool, shorten(string(in), 500)))
		j.transcript.Add(execadapter.Entry{Kind: "tool_call", Tool: e.Tool, Input: e.Input})
		if j.task && !j.quiet.Load() {
			ag.activity(ctx, j, execadapter.DescribeToolCall(e.Tool, e.Input))
		}
	case chatlog.ToolResult:
		kind := "[result]"
		if e.Error {
			kind = "[error]"
		}
		ag.appendLog(j, kind+" "+headLines(e.Text, 8, 600))
		j.transcript.Add(execadapter.Entry{Kind: "tool_result", Tool: e.Tool, Text: e.Text})
	}
}

// activity reports what the agent does as its task's milestone.
func (ag *agent) activity(ctx context.Context, j *job, text string) {
	if text == "" || text == j.activity {
		return
	}
	j.activity = text
	_ = ag.a.opts.Report.Report(context.WithoutCancel(ctx), adapter.Activity{TaskID: j.msg.TaskID, Attempt: j.msg.TaskAttempt, Text: text})
}

// fromScreen reads the turn from the pane: its record does not hold it.
func (ag *agent) fromScreen(ctx context.Context, j *job, why string) {
	if j.source != sourceUndecided {
		return
	}
	j.source = sourceScreen
	path := ""
	if ag.rec != nil && ag.rec.log != nil {
		path = ag.rec.log.Path()
	}
	j.log.Warn(why+": the turn is read from the pane", "record", path)
	ag.appendLog(j, "--- wilco: "+why+" ("+firstOf(path, "not found")+"): the turn is read from the pane")
	held := j.held
	j.held = nil
	ag.take(ctx, j, held)
}

// headLines is the first lines of s (at most n, and limit bytes), indented
// under the first, with a note of what is left out.
func headLines(s string, n, limit int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	more := 0
	if len(lines) > n {
		lines, more = lines[:n], len(lines)-n
	}
	out := shorten(strings.Join(lines, "\n    "), limit)
	if more > 0 {
		out += fmt.Sprintf("\n    … (%d more lines)", more)
	}
	return out
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (s source) String() string {
	if s == sourceRecord {
		return "the agent's record"
	}
	return "the pane"
}
