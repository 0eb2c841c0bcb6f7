package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"wilco/ack"
	"wilco/adapter"
	"wilco/atomicfile"
	"wilco/core"
)

const (
	// maxSummary bounds a turn's Summary.
	maxSummary = 4000
	// summaryLines is how many last lines of text make a Summary when the
	// agent's format gives no final answer.
	summaryLines = 20
)

// separator goes between a later send's text and the full prompt.
const separator = "\n\n---\n\n"

// ackOnly is added to the prompt of a session handshake's first process.
func ackOnly(taskID string) string {
	return "\n\n---\nThis turn is for the acknowledgment only. Reply with the acknowledgment of task " + taskID +
		" described above, then stop. Do not change any file yet: once wilco accepts the acknowledgment, " +
		"this session is resumed for the work.\n"
}

// workNow goes before the full prompt of a session handshake's second
// process.
func workNow(taskID string) string {
	return "Your acknowledgment of task " + taskID + " was accepted. Do not acknowledge again: do the work now, " +
		"as the task below describes, then stop." + separator
}

// runTurn runs a task's turn and reports its end.
func (a *Adapter) runTurn(t *turn) {
	defer a.wg.Done()
	defer close(t.done)
	defer t.forget()
	if t.prev != nil {
		<-t.prev.done
	}
	if t.isQuiet() {
		return
	}
	result := core.TurnResult{TaskID: t.msg.TaskID, Attempt: t.msg.TaskAttempt, Delivery: t.msg.ID}
	runDir := a.RunDir(t.msg.TaskID, t.msg.TaskAttempt)
	full, prompt, err := t.prompts(runDir)
	var dir string
	if err == nil {
		dir, err = t.workDir()
	}
	var logf *os.File
	if err == nil {
		logf, err = os.OpenFile(filepath.Join(runDir, LogFileName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			err = fmt.Errorf("agent log: %w", err)
		}
	}
	if err != nil {
		result.ExitCode, result.Error = -1, err.Error()
		t.log.Error("the turn could not start", "err", result.Error)
		t.report(result)
		return
	}
	defer logf.Close()
	t.transcript = openTranscript(filepath.Join(runDir, TranscriptFileName))
	defer t.transcript.close()

	began := time.Now()
	handshake := t.handshake()
	res := t.work(runDir, dir, logf, handshake, prompt, full)
	if res.stopped || res.ackSent && !res.ackOK {
		// The core moved on: it stopped the turn, or the ACK was not
		// accepted and it sends what comes next (a correction, the
		// user's answers, another agent…).
		return
	}
	res = t.afterRateLimits(res, runDir, dir, logf, full, handshake)
	if res.stopped {
		return
	}
	result.Duration = time.Since(began)
	t.report(t.result(result, res))
}

// prompts makes the run directory and returns the delegation's full
// prompt — a first send's, kept in the run directory for the later
// sends, or the one kept — and the prompt of this turn: a later send's
// text before the full prompt.
func (t *turn) prompts(runDir string) (full, prompt string, err error) {
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return "", "", fmt.Errorf("run directory: %w", err)
	}
	full = t.prompt
	if full != "" {
		if err := os.WriteFile(filepath.Join(runDir, DelegationFileName), []byte(full), 0o644); err != nil {
			return "", "", fmt.Errorf("write the delegation: %w", err)
		}
	} else {
		full = t.full
		if full == "" {
			// wilco started again since the delegation: its prompt is on disk.
			if b, err := os.ReadFile(filepath.Join(runDir, DelegationFileName)); err == nil {
				full = string(b)
			} else {
				t.log.Warn("the delegation's prompt is unknown: the agent gets this message alone", "err", err)
			}
		}
	}
	prompt = full
	if t.preface != "" {
		prompt = t.preface
		if full != "" && !strings.Contains(t.preface, full) {
			prompt = t.preface + separator + full
		}
	}
	return full, prompt, nil
}

// workDir is where the turn runs: the repository, a dry run's worktree,
// or the worktree of a task worked in parallel.
func (t *turn) workDir() (string, error) {
	if t.msg.Worktree != "" && !t.msg.DryRun {
		dir := filepath.Join(t.a.opts.Dir, filepath.FromSlash(t.msg.Worktree))
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("the task's worktree %s is missing", t.msg.Worktree)
		}
		return dir, nil
	}
	if !t.msg.DryRun {
		return t.a.opts.Dir, nil
	}
	if t.a.opts.Worktree == nil {
		return "", errors.New("dry run: no worktree is available to the exec adapter")
	}
	wt, err := t.a.opts.Worktree(t.a.ctx, t.msg.TaskID)
	if err != nil {
		return "", fmt.Errorf("dry run worktree: %w", err)
	}
	return wt, nil
}

// handshake is how the turn asks for the ACK: a task turn asks none; an
// agent configured for none is asked inline all the same (the core wants
// one), and a session handshake needs a CLI that resumes its session.
func (t *turn) handshake() string {
	switch h := t.agent.Handshake; {
	case t.msg.Type == string(core.TypeTaskTurn):
		return HandshakeNone
	case h == HandshakeNone:
		return HandshakeInline
	case h == HandshakeSession && !canResume(t.agent):
		return HandshakeInline
	default:
		return h
	}
}

// work runs the turn's process, or, for a session handshake, the ACK's
// and then, once it was accepted, the work's in the same session.
func (t *turn) work(runDir, dir string, logf io.Writer, handshake, prompt, full string) procResult {
	switch handshake {
	case HandshakeNone:
		return t.process(runDir, dir, logf, PhaseWork, prompt, "")
	case HandshakeInline:
		return t.process(runDir, dir, logf, PhaseAckWork, prompt, "")
	}
	res := t.process(runDir, dir, logf, PhaseAck, prompt+ackOnly(t.msg.TaskID), "")
	if !res.ackOK || res.stopped || res.startErr != nil || res.exitCode != 0 || res.timedOut || t.isQuiet() {
		return res
	}
	if res.session == "" {
		t.log.Warn("no session id in the acknowledgment's output: the work starts a new session")
	}
	ackUsage := res.usage
	res = t.process(runDir, dir, logf, PhaseWork, workNow(t.msg.TaskID)+full, res.session)
	ackUsage.Add(res.usage)
	res.usage = ackUsage
	return res
}

// lastBytes is the end of s, at most n bytes.
func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// failed tells the core, when the reporter takes it, that the agent could
// not answer the message.
func (t *turn) failed(reason string) {
	if err := t.a.opts.Report.Report(t.a.ctx, adapter.MessageFailed{Agent: t.agent.Name, MessageID: t.msg.ID, Reason: reason}); err != nil {
		t.log.Debug("the failed answer was not recorded", "err", err)
	}
}

// goOn goes before the full prompt of a process that takes up work a
// rate-limited model API cut short.
func goOn(taskID string) string {
	return "Your work on task " + taskID + " was cut short: the model's API was rate limited or overloaded. " +
		"Do not acknowledge again: go on with the work where you left it, as the task below describes, then stop." + separator
}

// afterRateLimits takes up the work of a turn that acknowledged (or needed
// no ACK) and then ended because the model's API was rate limited or
// overloaded: after a backoff it runs the agent again for the work (its
// session resumed where it can), up to core.MaxRateLimitedSends times. No
// attempt is spent and no verify loop counted: waiting, not a change of the
// work, is what fixes it. A turn that ended before its ACK is the core's
// to send again.
func (t *turn) afterRateLimits(res procResult, runDir, dir string, logf io.Writer, full, handshake string) procResult {
	for n := 1; n <= core.MaxRateLimitedSends; n++ {
		acked := handshake == HandshakeNone || res.ackOK
		// A turn that exited 0 finished, whatever its text quotes; the
		// error is in the last of what a failing one wrote.
		if !acked || res.stopped || res.timedOut || res.startErr != nil || res.fatal != "" || res.exitCode == 0 {
			return res
		}
		line, ok := core.RateLimited(lastBytes(res.text.String(), 2000))
		if !ok {
			return res
		}
		wait := t.a.opts.RateLimitWait(n)
		t.log.Warn("the model's API is rate limited: the work goes on after a backoff", "wait", wait, "line", line)
		_, _ = fmt.Fprintf(logf, "--- wilco: the model's API is rate limited or overloaded (%s): the work goes on in %s\n", line, wait)
		t.sendActivity(fmt.Sprintf("The model's API is rate limited or overloaded: going on in %s", wait))
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-t.stop:
			timer.Stop()
			res.stopped = true
			return res
		case <-t.a.ctx.Done():
			timer.Stop()
			res.stopped = true
			return res
		}
		session := res.session
		if !canResume(t.agent) {
			session = ""
		}
		usage := res.usage
		next := t.process(runDir, dir, logf, PhaseWork, goOn(t.msg.TaskID)+full, session)
		usage.Add(next.usage)
		next.usage = usage
		next.ackOK = true
		if next.session == "" {
			next.session = res.session
		}
		res = next
	}
	return res
}

// process runs one process of the turn: writes its prompt, builds its
// command line and environment, and runs it.
func (t *turn) process(runDir, dir string, logf io.Writer, phase, prompt, session string) procResult {
	promptFile := filepath.Join(runDir, PromptFileName)
	fail := func(err error) procResult {
		_, _ = fmt.Fprintf(logf, "--- wilco: the %s turn could not start: %v\n", phase, err)
		return procResult{exitCode: -1, startErr: err, text: &textTail{max: maxText}}
	}
	if err := atomicfile.WriteFile(promptFile, []byte(prompt), 0o644); err != nil {
		return fail(fmt.Errorf("write the prompt: %w", err))
	}
	t.transcript.add(Entry{Kind: "prompt", Text: prompt})
	inv, err := buildCommand(t.agent, prompt, promptFile, session)
	if err != nil {
		return fail(err)
	}
	_, _ = fmt.Fprintf(logf, "--- wilco: %s turn of %s, send %d (%s), phase %s, started %s\n",
		t.msg.TaskID, t.agent.Name, t.msg.Attempt, t.msg.Type, phase, time.Now().UTC().Format(time.RFC3339))
	spec := procSpec{
		inv: inv, dir: dir, env: t.env(phase, promptFile, runDir), stdin: promptFile, log: logf,
		timeout: t.agent.Timeout, idle: t.agent.IdleTimeout, grace: t.a.opts.KillGrace, resultGrace: t.a.opts.ResultGrace, stop: t.stop,
		scan:       &scanner{wantAck: phase == PhaseAck || phase == PhaseAckWork},
		onAck:      t.sendAck,
		onProgress: t.sendProgress,
		onActivity: t.sendActivity,
		onSpend:    t.sendSpend,
		transcript: t.transcript,
		pidFile:    filepath.Join(runDir, PidFileName),
	}
	res := run(spec)
	t.spentBefore.Add(res.usage)
	if res.startErr != nil {
		_, _ = fmt.Fprintf(logf, "--- wilco: could not start %q: %v\n", inv.argv[0], res.startErr)
	}
	t.log.Info("agent process ended", "phase", phase, "exit_code", res.exitCode, "timed_out", res.timedOut,
		"stopped", res.stopped, "ack", res.ackSent)
	return res
}

// sendAck hands the core the turn's ACK and says whether the turn goes on:
// only if the core acknowledged the delivery with it.
func (t *turn) sendAck(text string) bool {
	if t.isQuiet() {
		return false
	}
	in, err := t.a.opts.Report.Reply(t.a.ctx, core.ReplyInput{Agent: t.agent.Name, InReplyTo: t.msg.ID, Text: text})
	if err != nil {
		t.log.Warn("the agent's acknowledgment was refused: the turn stops", "err", err)
		return false
	}
	if !slices.Contains(in.Acknowledged, t.msg.ID) {
		t.log.Info("the acknowledgment does not let work begin: the turn stops", "status", in.Status, "action", in.Action)
		return false
	}
	return true
}

// sendSpend tells the core what the turn has spent so far: what its
// earlier processes spent and what the running one has.
func (t *turn) sendSpend(running core.Usage) {
	if t.msg.TaskID == "" || t.isQuiet() {
		return
	}
	spent := t.spentBefore
	spent.Add(running)
	if err := t.a.opts.Report.Report(t.a.ctx, adapter.Spent{TaskID: t.msg.TaskID, Attempt: t.msg.TaskAttempt, Usage: spent}); err != nil {
		t.log.Debug("the spend was not checked", "err", err)
	}
}

// sendActivity tells the core what the agent is doing.
func (t *turn) sendActivity(text string) {
	if t.msg.TaskID == "" {
		return
	}
	if err := t.a.opts.Report.Report(t.a.ctx, adapter.Activity{TaskID: t.msg.TaskID, Attempt: t.msg.TaskAttempt, Text: text}); err != nil {
		t.log.Debug("the activity was not recorded", "err", err)
	}
}

// sendProgress hands the core a checkpoint.
func (t *turn) sendProgress(text string) {
	if t.isQuiet() {
		return
	}
	if _, err := t.a.opts.Report.Reply(t.a.ctx, core.ReplyInput{Agent: t.agent.Name, InReplyTo: t.msg.ID, Text: text}); err != nil {
		t.log.Warn("a checkpoint was refused", "err", err)
	}
}

// result fills a TurnResult from how the process ended.
func (t *turn) result(r core.TurnResult, res procResult) core.TurnResult {
	r.ExitCode, r.TimedOut = res.exitCode, res.timedOut
	r.Output = res.text.String()
	r.Usage = res.usage
	r.Summary = summary(res)
	switch {
	case res.startErr != nil:
		r.Error = "could not start the agent: " + res.startErr.Error()
		if errors.Is(res.startErr, osexec.ErrNotFound) || errors.Is(res.startErr, fs.ErrNotExist) {
			// The program was looked up on wilco's own PATH.
			r.Error += " (PATH searched: " + os.Getenv("PATH") + ")"
		}
	case res.fatal != "":
		r.Error = "the agent was stopped: it kept retrying what no retry fixes: " + res.fatal
	case res.idle:
		r.Error = fmt.Sprintf("no output for %s (idle_timeout): the agent was stopped", t.agent.IdleTimeout)
	case res.timedOut:
		r.Error = fmt.Sprintf("the turn took more than %s (timeout): the agent was stopped", t.agent.Timeout)
	case res.signal != "":
		r.Error = "the agent was killed by a signal: " + res.signal
	case res.exitCode != 0:
		r.Error = fmt.Sprintf("the agent exited with status %d", res.exitCode)
	}
	if c := completion(res, t.msg.TaskID); c != nil {
		// The agent's completion report says how the work went; an exit
		// status that says it failed is not overruled by a "success".
		if !(c.Complete == ack.CompleteSuccess && (r.ExitCode != 0 || r.TimedOut)) {
			r.Status = c.Complete
		}
		if c.Summary != "" {
			r.Summary = c.Summary
		}
		r.Reason = c.Reason
		if c.Error != "" && r.Error == "" {
			r.Error = c.Error
		}
		r.Files = slices.Clone(c.FilesModified)
	}
	return r
}

// summary is the agent's final answer when its format has one, else the
// last lines it wrote.
func summary(res procResult) string {
	s := strings.TrimSpace(res.result)
	if s == "" {
		s = res.text.last(summaryLines)
	}
	if len(s) > maxSummary {
		s = "…" + s[len(s)-maxSummary:]
	}
	return s
}

// report sends the end of the turn, once, unless the turn was stopped.
func (t *turn) report(r core.TurnResult) {
	if !t.claim() {
		return
	}
	if err := t.a.opts.Report.Report(t.a.ctx, adapter.TurnEnded{Result: r}); err != nil {
		t.log.Warn("the end of the turn was refused", "err", err)
	}
}

// answer runs the agent once on a message and replies with its output.
func (a *Adapter) answer(t *turn) {
	defer a.wg.Done()
	defer close(t.done)
	defer t.forget()
	if t.isQuiet() {
		return
	}
	runDir := a.messageDir(t.msg)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.log.Error("message not answered: run directory", "err", err)
		return
	}
	logf, err := os.OpenFile(filepath.Join(runDir, LogFileName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.log.Error("message not answered: agent log", "err", err)
		return
	}
	defer logf.Close()
	promptFile := filepath.Join(runDir, PromptFileName)
	if err := atomicfile.WriteFile(promptFile, []byte(t.prompt), 0o644); err != nil {
		t.log.Error("message not answered: prompt", "err", err)
		return
	}
	inv, err := buildCommand(t.agent, t.prompt, promptFile, "")
	if err != nil {
		t.log.Error("message not answered", "err", err)
		t.failed(err.Error())
		return
	}
	dir, readOnly, ok := t.answerDir()
	if !ok {
		return
	}
	res := run(procSpec{
		inv: inv, dir: dir, env: t.env(PhaseMessage, promptFile, runDir), stdin: promptFile, log: logf,
		timeout: t.agent.Timeout, idle: t.agent.IdleTimeout, grace: a.opts.KillGrace, resultGrace: a.opts.ResultGrace, stop: t.stop,
		pidFile: filepath.Join(runDir, PidFileName),
	})
	text := strings.TrimSpace(res.result)
	if text == "" {
		text = strings.TrimSpace(res.text.String())
	}
	if !t.answered(res, text, readOnly) {
		return
	}
	if _, err := a.opts.Report.Reply(a.ctx, core.ReplyInput{Agent: t.agent.Name, InReplyTo: t.msg.ID, Text: text}); err != nil {
		t.log.Warn("the agent's answer was refused", "err", err)
	}
}

// answerDir is where the agent answers a message: the repository (the
// worktree of the task worked in parallel it is about, for a reviewer),
// or for a scout a copy of that working tree, with the function that
// lists what the scout changed there and removes it. ok is false when the
// copy could not be made (the message failed).
func (t *turn) answerDir() (dir string, readOnly func(context.Context) ([]string, error), ok bool) {
	if t.msg.Type != string(core.TypeScoutQuery) || t.a.opts.ReadOnly == nil {
		if t.msg.Worktree != "" {
			return filepath.Join(t.a.opts.Dir, filepath.FromSlash(t.msg.Worktree)), nil, true
		}
		return t.a.opts.Dir, nil, true
	}
	// A scout works in a copy of the working tree; what it changes there
	// refuses its answer.
	d, done, err := t.a.opts.ReadOnly(t.a.ctx, t.msg.ID, t.msg.Worktree)
	if err != nil {
		t.log.Error("the scout's read-only worktree could not be made", "err", err)
		t.failed("wilco could not make the scout's read-only worktree: " + err.Error())
		return "", nil, false
	}
	return d, done, true
}

// answered says whether the process's text is the agent's answer; when it
// is not, the message failed (and why was reported), or the core stopped
// it.
func (t *turn) answered(res procResult, text string, readOnly func(context.Context) ([]string, error)) bool {
	if res.stopped || t.isQuiet() {
		if readOnly != nil {
			_, _ = readOnly(context.WithoutCancel(t.a.ctx))
		}
		return false
	}
	if readOnly != nil {
		changed, err := readOnly(t.a.ctx)
		switch {
		case err != nil:
			t.log.Warn("the scout's worktree could not be checked: its answer is refused", "err", err)
			t.failed("wilco could not check what the scout changed: " + err.Error())
			return false
		case len(changed) > 0:
			t.log.Warn("the scout changed files: its answer is refused", "files", changed)
			t.failed("the scout changed files (" + strings.Join(changed, ", ") + "): a scout is read-only, so its answer is refused")
			return false
		}
	}
	switch {
	case res.startErr != nil:
		t.log.Error("message not answered: the agent could not start", "err", res.startErr)
		t.failed("the agent could not start: " + res.startErr.Error())
	case res.exitCode != 0 || res.timedOut:
		t.log.Warn("message not answered: the agent failed", "exit_code", res.exitCode, "timed_out", res.timedOut)
		t.failed(fmt.Sprintf("the agent's turn failed (exit status %d, timed out %v): %s", res.exitCode, res.timedOut, lastBytes(strings.TrimSpace(res.text.String()), 500)))
	case text == "":
		t.log.Warn("message not answered: the agent wrote nothing")
		t.failed("the agent wrote nothing")
	default:
		return true
	}
	return false
}
