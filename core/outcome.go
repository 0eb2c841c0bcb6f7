package core

import (
	"sort"
	"time"
)

// Outcome is how an effect the core asked for ended, or what an agent's
// adapter saw while one ran: every such report comes back into the core
// through Report. The set is closed: only this package's types are
// outcomes.
type Outcome interface{ isOutcome() }

// OperationEnded is the end of a RunOperation: what it did to each agent
// and the exit status and output of its command.
type OperationEnded struct {
	ID       string
	Results  []OperationResult
	ExitCode int
	Output   string
}

// ActivityNoted is what an agent is doing (a tool call of its output): the
// task's milestone.
type ActivityNoted struct {
	TaskID  string
	Attempt int
	Text    string
}

// SpendNoted is what a task's running turn has spent so far, checked
// against the budget.
type SpendNoted struct {
	TaskID  string
	Attempt int
	Spent   Usage
}

// PermissionAsked is a permission question an agent asked (a tool it
// wants) and how its allow list answered it (allowed, denied, or "").
type PermissionAsked struct {
	Agent, TaskID string
	Attempt       int
	Tool, Text    string
	Answer        string
}

// MessageUnanswered is an agent that could not answer a message.
type MessageUnanswered struct {
	Agent, MessageID, Reason string
}

// BaselineRecorded is the end of a RecordBaseline (Error says why the
// working tree's changes could not be noted: the task's summary then lists
// every change).
type BaselineRecorded struct {
	TaskID string
	Error  string
}

// SessionEnded is the end of a StopSession: the removed agent's session
// no longer runs (Error says why it could not be ended; it is not asked
// again).
type SessionEnded struct {
	Agent string
	Error string
}

func (ReplyInput) isOutcome()         {}
func (TurnResult) isOutcome()         {}
func (VerifyResult) isOutcome()       {}
func (ProposalResult) isOutcome()     {}
func (ApplyResult) isOutcome()        {}
func (NotificationResult) isOutcome() {}
func (OperationEnded) isOutcome()     {}
func (ActivityNoted) isOutcome()      {}
func (SpendNoted) isOutcome()         {}
func (PermissionAsked) isOutcome()    {}
func (MessageUnanswered) isOutcome()  {}
func (SessionEnded) isOutcome()       {}
func (BaselineRecorded) isOutcome()   {}

// Urgent reports whether an outcome must not wait behind a backlog of
// other commands: what an agent's adapter or a task's effect reports (an
// agent's answer is what its sender waits for; a task's next step waits
// for the others). An operation's end and a notification's attempt wait
// their turn.
func Urgent(o Outcome) bool {
	switch o.(type) {
	case OperationEnded, NotificationResult, ForgeCalled:
		return false
	}
	return true
}

// Report records an outcome: the one door through which what the shell
// did, and what it saw, comes back into the core. Its result is the
// command's: an Interpretation for a reply, the Task for a turn's,
// a verification's, a proposal's or an apply's end, the Notification, the
// Operation, whether a spend stopped the turn (bool), else nil.
func (s *State) Report(now time.Time, o Outcome) (any, error) {
	switch o := o.(type) {
	case ReplyInput:
		return s.Reply(now, o)
	case TurnResult:
		return s.EndTurn(now, o)
	case VerifyResult:
		return s.EndVerify(now, o)
	case ProposalResult:
		return s.EndProposal(now, o)
	case ApplyResult:
		return s.EndApply(now, o)
	case NotificationResult:
		return s.EndNotification(now, o)
	case OperationEnded:
		return s.FinishAgentOperation(now, o.ID, o.Results, o.ExitCode, o.Output)
	case ActivityNoted:
		return nil, s.NoteActivity(now, o.TaskID, o.Attempt, o.Text)
	case SpendNoted:
		return s.NoteSpend(now, o.TaskID, o.Attempt, o.Spent)
	case PermissionAsked:
		return nil, s.NotePermission(now, o.Agent, o.TaskID, o.Attempt, o.Tool, o.Text, o.Answer)
	case MessageUnanswered:
		return nil, s.MessageFailed(now, o.Agent, o.MessageID, o.Reason)
	case SessionEnded:
		return nil, s.endSession(now, o)
	case BaselineRecorded:
		return nil, s.baselineRecorded(now, o)
	case Landed:
		return nil, s.landed(now, o)
	case WorktreePrepared:
		return nil, s.worktreePrepared(now, o)
	case LandWaiting:
		return nil, s.landWaiting(now, o)
	case PRObserved:
		return nil, s.ObservePR(now, o)
	case ForgeCalled:
		return nil, s.forgeCalled(now, o)
	}
	return nil, invalidf("unknown outcome %T", o)
}

// StopSession asks the runtime to end the session a removed agent's
// adapter keeps for it between turns (a tmux agent's), and to report with
// SessionEnded. It is asked with the removal, and again after a restart
// until its end is recorded.
type StopSession struct{ Agent string }

func (StopSession) isEffect() {}

// keepsSession reports whether an agent's adapter keeps a session of its
// own between turns, which outlives wilco.
func keepsSession(a *Agent) bool { return a.Adapter == "tmux" }

func (s *State) endSession(now time.Time, o SessionEnded) error {
	now = norm(now)
	a, ok := s.agents[o.Agent]
	if !ok {
		return notFoundf("no agent %q", o.Agent)
	}
	if !a.EndSession {
		return conflictf("agent %q: no session end is awaited", o.Agent)
	}
	s.emit(now, "", o.Agent, AgentSessionEnded{Error: o.Error})
	return nil
}

// RecoverSessions asks again, after a restart, for the end of the
// sessions of removed agents whose end is not recorded (StopSession may or
// may not have been performed before wilco stopped: at least once, the end
// recorded once). Call it once the configuration's agents are registered:
// an agent back in service keeps its session. It emits no event.
func (s *State) RecoverSessions(time.Time) {
	names := make([]string, 0)
	for n, a := range s.agents {
		if a.EndSession {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		s.effect(StopSession{Agent: n})
	}
}

// RecordBaseline asks the runtime to note the working tree's changes
// before a task's first send (path → content hash), so that its summary
// lists what the task changed, not what was already dirty; and to report
// with BaselineRecorded. It comes right before that send's Deliver, which
// must not overtake it; after a restart it comes again before the send
// handed over again while its end is not recorded (a baseline already
// noted is kept: the agent may have begun).
type RecordBaseline struct{ TaskID string }

func (RecordBaseline) isEffect() {}

// deliver asks for a message to be handed to a push agent, after its
// task's baseline when it is the task's first send.
func (s *State) deliver(agent string, m InboxMessage) {
	if s.needsBaseline(m) {
		s.effect(RecordBaseline{TaskID: m.TaskID})
	}
	s.effect(Deliver{Agent: agent, Message: m})
}

// needsBaseline reports whether a message is the first send of a task's
// first attempt (not a review, a scout's question or a probe of it, nor a
// dry run's or a task's worked in parallel, which work in worktrees of
// their own) whose baseline is not recorded.
func (s *State) needsBaseline(m InboxMessage) bool {
	if m.TaskID == "" || m.TaskAttempt != 1 || m.Attempt != 1 || m.DryRun ||
		m.Type != string(TypeDelegation) && m.Type != string(TypeTaskTurn) {
		return false
	}
	t := s.tasks[m.TaskID]
	return t != nil && !t.Baseline && t.Worktree == ""
}

func (s *State) baselineRecorded(now time.Time, o BaselineRecorded) error {
	now = norm(now)
	t, ok := s.tasks[o.TaskID]
	if !ok {
		return notFoundf("no task %q", o.TaskID)
	}
	if t.Baseline {
		return conflictf("task %s: its baseline is recorded already", o.TaskID)
	}
	s.emit(now, o.TaskID, "", TaskBaselineRecorded{Error: o.Error})
	return nil
}
