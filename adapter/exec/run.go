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
	// resultGrace, when set, is how long the process has to exit once
	// its output said the turn is over (a turnEnder's parser): then what
	// still runs is stopped, and the turn ends as the output said.
	resultGrace time.Duration
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
	// lingered: the output said the turn was over, and the process was
	// stopped when it did not exit within the result grace.
	lingered bool
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
	r := &running{spec: spec, res: procResult{text: &textTail{max: maxText}}, parser: spec.inv.parser}
	if r.parser == nil {
		r.parser = &plainParser{}
	}
	g, closeStdin := r.start()
	if g == nil {
		return r.res
	}
	defer closeStdin()
	defer g.Close()
	r.g = g
	if spec.pidFile != "" {
		_ = os.WriteFile(spec.pidFile, []byte(strconv.Itoa(g.Pgid())+"\n"), 0o644)
		defer os.Remove(spec.pidFile)
	}
	defer r.stopTimers()
	r.follow()
	r.finish()
	return r.res
}

// running is the state of one process run reads: what it reports so far
// and the timers watching it.
type running struct {
	spec   procSpec
	res    procResult
	parser outputParser
	g      *proc.Group

	turnT, idleT, settleT *time.Timer
	// resultT runs from the output's end of the turn to the stop of a
	// process still running (resultArmed: it was started).
	resultT      *time.Timer
	resultArmed  bool
	lastActivity time.Time
	steps        stepUsage
}

// start starts the process, its prompt file as its standard input when it
// reads it there; a process that could not start is a nil group, with
// why in r.res. The function returned closes the prompt file.
func (r *running) start() (*proc.Group, func()) {
	spec := r.spec
	cmd := osexec.Command(spec.inv.argv[0], spec.inv.argv[1:]...)
	cmd.Dir, cmd.Env = spec.dir, withPWD(spec.env, spec.dir)
	closeStdin := func() {}
	if spec.inv.stdin {
		f, err := os.Open(spec.stdin)
		if err != nil {
			r.res.exitCode, r.res.startErr = -1, fmt.Errorf("open the prompt for standard input: %w", err)
			return nil, nil
		}
		closeStdin = func() { f.Close() }
		cmd.Stdin = f
	}
	g, err := proc.Start(context.Background(), cmd, nil)
	switch {
	case errors.Is(err, proc.ErrPipe):
		r.res.exitCode, r.res.startErr = -1, err
	case err != nil:
		// As a shell says it: 127 for a program not found, 126 for one
		// that cannot be executed.
		r.res.exitCode, r.res.startErr = 127, err
		if errors.Is(err, fs.ErrPermission) {
			r.res.exitCode = 126
		}
	}
	if err != nil {
		closeStdin()
		return nil, nil
	}
	return g, closeStdin
}

// terminate stops the process group (once): SIGTERM, SIGKILL after the
// grace period, and after one more the pipe is closed, whoever still
// holds it.
func (r *running) terminate() { r.g.Stop(r.spec.grace) }

func (r *running) stopTimers() {
	r.turnT, r.idleT, r.settleT, r.resultT = stopped(r.turnT), stopped(r.idleT), stopped(r.settleT), stopped(r.resultT)
}

// follow reads the process's output until it has exited and its output
// has ended, and stops it at a timeout, when idle too long, or on request.
func (r *running) follow() {
	spec := r.spec
	exitCh := make(chan proc.Exit, 1)
	go func() {
		exit, _ := r.g.Wait()
		exitCh <- exit
	}()
	chunks := make(chan chunk, 64)
	go readChunks(r.g.Output(), chunks)
	if spec.timeout > 0 {
		r.turnT = time.NewTimer(spec.timeout)
	}
	if spec.idle > 0 {
		r.idleT = time.NewTimer(spec.idle)
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
					r.handle(string(cur))
					cur = nil
				}
				continue
			}
			cur = r.chunk(c, cur, exited)
		case <-timerC(r.settleT):
			if spec.scan != nil {
				spec.scan.settle()
				r.deliver()
			}
		case exit := <-exitCh:
			exited = true
			r.exited(exit)
		case <-timerC(r.turnT):
			r.turnT = nil
			r.res.timedOut = true
			r.terminate()
		case <-timerC(r.idleT):
			r.idleT = nil
			r.res.timedOut, r.res.idle = true, true
			r.terminate()
		case <-timerC(r.resultT):
			r.resultT = nil
			r.res.lingered = true
			if spec.log != nil {
				_, _ = fmt.Fprintf(spec.log, "--- wilco: the agent wrote its result but kept running %s later (a shell left in the background?): what still runs is stopped, and the turn ends as the result says\n", spec.resultGrace)
			}
			r.terminate()
		case <-stop:
			stop = nil
			r.res.stopped = true
			r.terminate()
		}
	}
}

// chunk takes a piece of output into cur, the line being read, and
// handles the line once it is whole; it returns the line being read.
func (r *running) chunk(c chunk, cur []byte, exited bool) []byte {
	if r.spec.log != nil {
		_, _ = r.spec.log.Write(c.data)
	}
	if r.idleT != nil && !exited {
		r.idleT.Reset(r.spec.idle)
	}
	if room := maxLine - len(cur); room > 0 {
		cur = append(cur, c.data[:min(len(c.data), room)]...)
	}
	if c.eol {
		r.handle(string(cur))
		cur = cur[:0]
	}
	return cur
}

// exited notes how the process ended; what it left running in its group
// goes too: the turn is over.
func (r *running) exited(exit proc.Exit) {
	r.res.exitCode = exit.Code
	if exit.Signal != nil {
		r.res.signal = exit.Signal.String()
	}
	if te, ok := r.parser.(turnEnder); ok && r.res.lingered && !r.res.stopped && !r.res.timedOut && r.res.fatal == "" {
		// Stopped for lingering after its result: it ends as the result
		// said, not as the signal did.
		_, failed := te.Ended()
		r.res.exitCode, r.res.signal = 0, ""
		if failed {
			r.res.exitCode = 1
		}
	}
	r.turnT, r.idleT, r.resultT = stopped(r.turnT), stopped(r.idleT), stopped(r.resultT)
	r.terminate()
}

// finish reads what the parser still held, sends what the scanner still
// holds, and waits for the group to be gone.
func (r *running) finish() {
	for _, t := range r.parser.Flush() {
		r.res.text.add(t)
		if r.spec.scan != nil {
			r.spec.scan.line(t)
		}
	}
	if r.spec.scan != nil {
		r.spec.scan.flush()
		r.deliver()
		r.res.complete = r.spec.scan.complete
	}
	_ = r.g.Kill()
	r.g.WaitGone(r.spec.grace)
	r.res.result, r.res.session = r.parser.Result(), r.parser.Session()
}

// deliver sends what the scanner has read: checkpoints, and the ACK once;
// an ACK not accepted stops the process.
func (r *running) deliver() {
	spec := r.spec
	if spec.scan == nil {
		return
	}
	text, progress := spec.scan.take()
	if r.res.stopped {
		return
	}
	for _, p := range progress {
		if spec.onProgress != nil {
			spec.onProgress(p)
		}
	}
	if text != "" && !r.res.ackSent {
		r.res.ackSent = true
		r.res.ackOK = spec.onAck == nil || spec.onAck(text)
		if !r.res.ackOK {
			r.res.stopped = true
			r.terminate()
		}
	}
}

// handle reads one line of output: what it spent, the conversation's
// steps, the agent's text (for the ACK, checkpoints and the completion),
// and what the agent is doing.
func (r *running) handle(line string) {
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	r.spend(line)
	if r.spec.transcript != nil {
		for _, e := range transcriptEntries(line) {
			r.spec.transcript.add(e)
		}
	}
	// After the line's text was read: an ACK in the same message as a
	// tool call is sent first.
	defer r.activity(line)
	text, end := r.parser.Line(line)
	if te, ok := r.parser.(turnEnder); ok && !r.resultArmed && r.spec.resultGrace > 0 {
		if ended, _ := te.Ended(); ended {
			r.resultArmed = true
			r.resultT = time.NewTimer(r.spec.resultGrace)
		}
	}
	for _, t := range text {
		if r.res.fatal == "" && fatalAPIRe.MatchString(t) {
			r.res.fatal = strings.TrimSpace(t)
			r.terminate()
		}
		r.res.text.add(t)
		if r.spec.scan != nil {
			r.spec.scan.line(t)
		}
	}
	if r.spec.scan == nil {
		return
	}
	if end {
		r.spec.scan.settle()
	}
	r.deliver()
	switch {
	case !r.spec.scan.collecting:
		r.settleT = stopped(r.settleT)
	case r.settleT == nil:
		r.settleT = time.NewTimer(ackSettle)
	default:
		r.settleT.Reset(ackSettle)
	}
}

// spend adds what a line says the process spent, and tells it when it
// grew.
func (r *running) spend(line string) {
	grew := false
	if u, ok := usageOf(line); ok {
		r.res.usage.Add(u)
		grew = true
	}
	if r.steps.line(line) {
		grew = true
	}
	if !grew || r.spec.onSpend == nil || r.res.stopped {
		return
	}
	spent := r.res.usage
	if r.steps.total.InputTokens+r.steps.total.OutputTokens > spent.InputTokens+spent.OutputTokens {
		spent = r.steps.total
	}
	r.spec.onSpend(spent)
}

// activity tells what the agent is doing from a line's tool calls, at
// most one every activityEvery.
func (r *running) activity(line string) {
	if r.spec.onActivity == nil || r.res.stopped {
		return
	}
	for _, a := range toolActivity(line) {
		if now := time.Now(); now.Sub(r.lastActivity) >= activityEvery {
			r.lastActivity = now
			r.spec.onActivity(a)
		}
	}
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
