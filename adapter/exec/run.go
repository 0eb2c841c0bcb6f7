package exec

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"wilco/ack"
	"wilco/core"
	"wilco/proc"
)

const (
	// maxLine bounds one line of output kept for parsing; the rest of a
	// longer line still goes to agent.log.
	maxLine = 1 << 20
	// maxText bounds the text kept of a process's output (its tail): the
	// turn's Output, and a message's answer.
	maxText = 64 << 10
	// ackSettle is how long the lines of an [ACK] block are waited for
	// when the agent pauses before a blank line.
	ackSettle = time.Second
	// activityEvery bounds how often the agent's tool calls become
	// milestones: a few per second at most.
	activityEvery = 300 * time.Millisecond
)

// procSpec is one process to run: one turn (or one phase of a session
// turn), or one answer to a message.
type procSpec struct {
	inv     invocation
	dir     string
	env     []string
	stdin   string // the prompt file, given as standard input when inv.stdin
	log     io.Writer
	timeout time.Duration
	idle    time.Duration
	grace   time.Duration
	// stop, when closed, stops the process: the core moved on.
	stop <-chan struct{}
	// scan, when set, reads the text for the ACK, checkpoints and
	// task-complete; onAck sends the ACK and says whether the turn goes
	// on, onProgress sends a checkpoint.
	scan       *scanner
	onAck      func(text string) bool
	onProgress func(text string)
	// transcript, when set, gets the steps of the conversation the
	// output reports.
	transcript *transcript
	// onActivity, when set, is told what the agent is doing from the tool
	// calls its output reports ("Editing calc.go"), at most one every
	// activityEvery.
	onActivity func(text string)
	// onSpend, when set, is told what the process has spent so far each
	// time its output reports more (a model call, a step, its total).
	onSpend func(spent core.Usage)
	// pidFile, when set, holds the process group's id while it runs, so
	// that a wilco that died without stopping it stops it at its next start
	// (KillOrphans).
	pidFile string
}

// procResult is how a process ended and what it said.
type procResult struct {
	exitCode int
	signal   string // the signal that ended it, if one did
	startErr error  // it could not start
	timedOut bool   // timeout or idle_timeout
	idle     bool   // idle_timeout
	stopped  bool   // stopped on request, or because its ACK was not accepted
	// fatal is the line that showed the agent retrying what no retry
	// fixes (its model's API refusing its key): it was stopped then.
	fatal    string
	ackSent  bool
	ackOK    bool
	text     *textTail
	result   string
	session  string
	complete *ack.Reply
	// usage is what the process's turns cost, as its output reported.
	usage core.Usage
}

// chunk is a piece of output: a line, or part of a long one.
type chunk struct {
	data []byte
	eol  bool
}

// readChunks sends what r gives, line by line, until it ends.
func readChunks(r io.Reader, out chan<- chunk) {
	defer close(out)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		b, err := br.ReadSlice('\n')
		if len(b) > 0 {
			out <- chunk{data: bytes.Clone(b), eol: b[len(b)-1] == '\n'}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// timerC returns t's channel, or nil (never ready) for no timer.
func timerC(t *time.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

// run starts the process of spec in its own process group, reads its
// output, enforces timeout and idle_timeout, and returns when the process
// and every process of its group are gone. Stopping — on request, at a
// timeout, or to clear what the process left behind — sends SIGTERM to the
// group, then SIGKILL after the grace period.
func run(spec procSpec) procResult {
	res := procResult{text: &textTail{max: maxText}}
	parser := spec.inv.parser
	if parser == nil {
		parser = &plainParser{}
	}
	cmd := osexec.Command(spec.inv.argv[0], spec.inv.argv[1:]...)
	cmd.Dir, cmd.Env = spec.dir, withPWD(spec.env, spec.dir)
	if spec.inv.stdin {
		f, err := os.Open(spec.stdin)
		if err != nil {
			res.exitCode, res.startErr = -1, fmt.Errorf("open the prompt for standard input: %w", err)
			return res
		}
		defer f.Close()
		cmd.Stdin = f
	}
	g, err := proc.Start(context.Background(), cmd, nil)
	switch {
	case errors.Is(err, proc.ErrPipe):
		res.exitCode, res.startErr = -1, err
		return res
	case err != nil:
		// As a shell says it: 127 for a program not found, 126 for one
		// that cannot be executed.
		res.exitCode, res.startErr = 127, err
		if errors.Is(err, fs.ErrPermission) {
			res.exitCode = 126
		}
		return res
	}
	defer g.Close()
	if spec.pidFile != "" {
		_ = os.WriteFile(spec.pidFile, []byte(strconv.Itoa(g.Pgid())+"\n"), 0o644)
		defer os.Remove(spec.pidFile)
	}

	exitCh := make(chan proc.Exit, 1)
	go func() {
		exit, _ := g.Wait()
		exitCh <- exit
	}()
	chunks := make(chan chunk, 64)
	go readChunks(g.Output(), chunks)

	var turnT, idleT, settleT *time.Timer
	if spec.timeout > 0 {
		turnT = time.NewTimer(spec.timeout)
		defer turnT.Stop()
	}
	if spec.idle > 0 {
		idleT = time.NewTimer(spec.idle)
		defer idleT.Stop()
	}
	defer func() {
		if settleT != nil {
			settleT.Stop()
		}
	}()

	// Stopping (once): SIGTERM to the group, SIGKILL after the grace
	// period, and after one more the pipe is closed, whoever still holds it.
	terminate := func() { g.Stop(spec.grace) }

	deliver := func() {
		if spec.scan == nil {
			return
		}
		text, progress := spec.scan.take()
		if res.stopped {
			return
		}
		for _, p := range progress {
			if spec.onProgress != nil {
				spec.onProgress(p)
			}
		}
		if text != "" && !res.ackSent {
			res.ackSent = true
			res.ackOK = spec.onAck == nil || spec.onAck(text)
			if !res.ackOK {
				res.stopped = true
				terminate()
			}
		}
	}
	var lastActivity time.Time
	var steps stepUsage
	handle := func(line string) {
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		grew := false
		if u, ok := usageOf(line); ok {
			res.usage.Add(u)
			grew = true
		}
		if steps.line(line) {
			grew = true
		}
		if grew && spec.onSpend != nil && !res.stopped {
			spent := res.usage
			if steps.total.InputTokens+steps.total.OutputTokens > spent.InputTokens+spent.OutputTokens {
				spent = steps.total
			}
			spec.onSpend(spent)
		}
		if spec.transcript != nil {
			for _, e := range transcriptEntries(line) {
				spec.transcript.add(e)
			}
		}
		// After the line's text was read: an ACK in the same message as a
		// tool call is sent first.
		defer func() {
			if spec.onActivity == nil || res.stopped {
				return
			}
			for _, a := range toolActivity(line) {
				if now := time.Now(); now.Sub(lastActivity) >= activityEvery {
					lastActivity = now
					spec.onActivity(a)
				}
			}
		}()
		text, end := parser.Line(line)
		for _, t := range text {
			if res.fatal == "" && fatalAPIRe.MatchString(t) {
				res.fatal = strings.TrimSpace(t)
				terminate()
			}
			res.text.add(t)
			if spec.scan != nil {
				spec.scan.line(t)
			}
		}
		if spec.scan == nil {
			return
		}
		if end {
			spec.scan.settle()
		}
		deliver()
		if spec.scan.collecting {
			if settleT == nil {
				settleT = time.NewTimer(ackSettle)
			} else {
				settleT.Reset(ackSettle)
			}
		} else if settleT != nil {
			settleT.Stop()
		}
	}

	var cur []byte
	exited, drained := false, false
	stop := spec.stop
	for !exited || !drained {
		select {
		case c, ok := <-chunks:
			if !ok {
				drained, chunks = true, nil
				if len(cur) > 0 {
					handle(string(cur))
					cur = nil
				}
				continue
			}
			if spec.log != nil {
				_, _ = spec.log.Write(c.data)
			}
			if idleT != nil && !exited {
				idleT.Reset(spec.idle)
			}
			if room := maxLine - len(cur); room > 0 {
				cur = append(cur, c.data[:min(len(c.data), room)]...)
			}
			if c.eol {
				handle(string(cur))
				cur = cur[:0]
			}
		case <-timerC(settleT):
			if spec.scan != nil {
				spec.scan.settle()
				deliver()
			}
		case exit := <-exitCh:
			exited = true
			res.exitCode = exit.Code
			if exit.Signal != nil {
				res.signal = exit.Signal.String()
			}
			turnT, idleT = stopped(turnT), stopped(idleT)
			// The turn is over: what it left running in its group goes too.
			terminate()
		case <-timerC(turnT):
			turnT = nil
			res.timedOut = true
			terminate()
		case <-timerC(idleT):
			idleT = nil
			res.timedOut, res.idle = true, true
			terminate()
		case <-stop:
			stop = nil
			res.stopped = true
			terminate()
		}
	}
	for _, t := range parser.Flush() {
		res.text.add(t)
		if spec.scan != nil {
			spec.scan.line(t)
		}
	}
	if spec.scan != nil {
		spec.scan.flush()
		deliver()
		res.complete = spec.scan.complete
	}
	_ = g.Kill()
	g.WaitGone(spec.grace)
	res.result, res.session = parser.Result(), parser.Session()
	return res
}

// stopped stops t and returns nil.
func stopped(t *time.Timer) *time.Timer {
	if t != nil {
		t.Stop()
	}
	return nil
}

// fatalAPIRe is an API error an agent CLI retries for minutes though no
// retry fixes it: its key refused (401, 403). Claude Code reports each
// retry as an api_retry event, which its parser writes as such a line
// (never the agent's own text, which may quote an API error).
var fatalAPIRe = regexp.MustCompile(`^API Error: 40[13]\b.*\(the CLI retries: attempt`)

// withPWD sets PWD to dir in env: some agent CLIs (opencode) take their
// working directory from PWD rather than from the process's own, and
// wilco's PWD is not where the agent works (a dry run's worktree).
func withPWD(env []string, dir string) []string {
	if dir == "" {
		return env
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PWD=") {
			out = append(out, kv)
		}
	}
	return append(out, "PWD="+abs)
}

// textTail keeps the last max bytes of text, as whole lines.
type textTail struct {
	max   int
	size  int
	lines []string
}

func (t *textTail) add(line string) {
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > t.max && len(t.lines) > 1 {
		t.size -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
	}
}

// String is the text kept.
func (t *textTail) String() string { return strings.Join(t.lines, "\n") }

// last returns the last n lines that are not blank.
func (t *textTail) last(n int) string {
	var out []string
	for i := len(t.lines) - 1; i >= 0 && len(out) < n; i-- {
		if strings.TrimSpace(t.lines[i]) != "" {
			out = append(out, t.lines[i])
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return strings.Join(out, "\n")
}
