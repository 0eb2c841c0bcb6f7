package core

import (
	"fmt"
	"time"
)

// Defaults of the delivery policies.
const (
	// DefaultMaxRetries is the cycles policy's retry limit: four sends in all.
	DefaultMaxRetries = 3
	// DefaultBackoffBase and DefaultBackoffMax bound the wait before an ACK
	// retry: min(base·2^(n-1), max).
	DefaultBackoffBase = 30 * time.Second
	DefaultBackoffMax  = 2 * time.Minute
	// DefaultMaxCorrections is how many understanding corrections are sent
	// before escalating.
	DefaultMaxCorrections = 2
	// DefaultQueuedFollowup is when an agent that answered QUEUED is asked
	// again whether work has started.
	DefaultQueuedFollowup = 15 * time.Minute
	// DefaultOperationTimeout is the overall wait for "ok".
	DefaultOperationTimeout = 120 * time.Second
	// DefaultOperationExtension is the one extension granted on "wait".
	DefaultOperationExtension = 60 * time.Second
)

// DefaultAckTimeouts are the per-attempt ACK timeouts: 5 min, 2 min, 1 min.
func DefaultAckTimeouts() []time.Duration {
	return []time.Duration{5 * time.Minute, 2 * time.Minute, time.Minute}
}

// DefaultReminders are the reminder offsets of an operation: 30s, 60s, 90s.
func DefaultReminders() []time.Duration {
	return []time.Duration{30 * time.Second, 60 * time.Second, 90 * time.Second}
}

// OnUnresponsive says what happens to a task delegation whose agent never
// acknowledged.
type OnUnresponsive string

// What to do with an unresponsive agent's delegation.
const (
	Reassign OnUnresponsive = "reassign" // to another capable agent, else escalate
	Escalate OnUnresponsive = "escalate" // straight to the user
)

// AckPolicy is the backoff policy of task delegations.
type AckPolicy struct {
	Timeouts       []time.Duration `json:"timeouts"`
	BackoffBase    time.Duration   `json:"backoff_base"`
	BackoffMax     time.Duration   `json:"backoff_max"`
	OnUnresponsive OnUnresponsive  `json:"on_unresponsive"`
	MaxCorrections int             `json:"max_corrections"`
	QueuedFollowup time.Duration   `json:"queued_followup"`
}

// DefaultAckPolicy is the default backoff policy of task delegations.
func DefaultAckPolicy() AckPolicy {
	return AckPolicy{
		Timeouts:       DefaultAckTimeouts(),
		BackoffBase:    DefaultBackoffBase,
		BackoffMax:     DefaultBackoffMax,
		OnUnresponsive: Reassign,
		MaxCorrections: DefaultMaxCorrections,
		QueuedFollowup: DefaultQueuedFollowup,
	}
}

// Wait is how long the backoff policy waits after attempt n (1-based) timed
// out before sending attempt n+1: min(base·2^(n-1), max).
func (p AckPolicy) Wait(n int) time.Duration {
	w := p.BackoffBase
	for i := 1; i < n && w < p.BackoffMax; i++ {
		w *= 2
	}
	return min(w, p.BackoffMax)
}

// Validate reports the first bad value, naming its key.
func (p AckPolicy) Validate() error {
	if len(p.Timeouts) == 0 {
		return policyError("policy.ack.timeouts", "must list at least one timeout")
	}
	for i, d := range p.Timeouts {
		if d <= 0 {
			return policyError(fmt.Sprintf("policy.ack.timeouts[%d]", i), "must be positive, got %s", d)
		}
	}
	if p.BackoffBase <= 0 {
		return policyError("policy.ack.backoff.base", "must be positive, got %s", p.BackoffBase)
	}
	if p.BackoffMax <= 0 {
		return policyError("policy.ack.backoff.max", "must be positive, got %s", p.BackoffMax)
	}
	if p.BackoffMax < p.BackoffBase {
		return policyError("policy.ack.backoff.max", "must not be below base (%s < %s)", p.BackoffMax, p.BackoffBase)
	}
	switch p.OnUnresponsive {
	case Reassign, Escalate:
	default:
		return policyError("policy.ack.on_unresponsive", "must be %q or %q, got %q", Reassign, Escalate, p.OnUnresponsive)
	}
	if p.MaxCorrections < 0 {
		return policyError("policy.ack.max_corrections", "must not be negative, got %d", p.MaxCorrections)
	}
	if p.QueuedFollowup <= 0 {
		return policyError("policy.ack.queued_followup", "must be positive, got %s", p.QueuedFollowup)
	}
	return nil
}

// Quorum is how many agents of an operation must answer "ok" for it to
// proceed when the timeout comes: all of them, a majority, or a number.
type Quorum string

// Quorum forms.
const (
	QuorumAll      Quorum = "all"
	QuorumMajority Quorum = "majority"
)

// Need returns how many "ok" answers of n agents the quorum asks for.
func (q Quorum) Need(n int) (int, error) {
	switch q {
	case "", QuorumAll:
		return n, nil
	case QuorumMajority:
		return n/2 + 1, nil
	}
	var k int
	if _, err := fmt.Sscanf(string(q), "%d", &k); err != nil || fmt.Sprint(k) != string(q) {
		return 0, fmt.Errorf("quorum must be \"all\", \"majority\" or a number, got %q", string(q))
	}
	if k <= 0 || k > n {
		return 0, fmt.Errorf("quorum %d is outside 1..%d (the number of agents)", k, n)
	}
	return k, nil
}

// OperationPolicy is the reminders policy of pre-operation requests.
type OperationPolicy struct {
	Timeout          time.Duration   `json:"timeout"`
	Reminders        []time.Duration `json:"reminders"`
	Extension        time.Duration   `json:"extension"`
	ProceedOnTimeout bool            `json:"proceed_on_timeout"`
	Quorum           Quorum          `json:"quorum"`
}

// DefaultOperationPolicy is the default reminders policy.
func DefaultOperationPolicy() OperationPolicy {
	return OperationPolicy{
		Timeout:          DefaultOperationTimeout,
		Reminders:        DefaultReminders(),
		Extension:        DefaultOperationExtension,
		ProceedOnTimeout: true,
		Quorum:           QuorumAll,
	}
}

// Validate reports the first bad value, naming its key.
func (p OperationPolicy) Validate() error {
	if p.Timeout <= 0 {
		return policyError("policy.operation.timeout", "must be positive, got %s", p.Timeout)
	}
	prev := time.Duration(0)
	for i, r := range p.Reminders {
		key := fmt.Sprintf("policy.operation.reminders[%d]", i)
		if r <= 0 {
			return policyError(key, "must be positive, got %s", r)
		}
		if r <= prev {
			return policyError(key, "must come after the reminder before it (%s <= %s)", r, prev)
		}
		if r >= p.Timeout {
			return policyError(key, "must come before the timeout (%s >= %s)", r, p.Timeout)
		}
		prev = r
	}
	if p.Extension <= 0 {
		return policyError("policy.operation.extension", "must be positive, got %s", p.Extension)
	}
	if _, err := p.Quorum.Need(1 << 30); err != nil && p.Quorum != "" {
		return policyError("policy.operation.quorum", "%v", err)
	}
	return nil
}

// Defaults of the debug loop: REPLAN at 3 consecutive failures, hard stop
// at 12 verify loops, up to 3 REPLANs; escalation on count is off unless
// asked for.
const (
	DefaultReplanAfter   = 3
	DefaultHardStop      = 12
	DefaultMaxReplans    = 3
	DefaultEscalateAfter = 0
)

// LoopPolicy is the verify/debug loop's policy.
type LoopPolicy struct {
	ReplanAfter   int `json:"replan_after"`
	HardStop      int `json:"hard_stop"`
	MaxReplans    int `json:"max_replans"`
	EscalateAfter int `json:"escalate_after"` // 0: never escalate on count
}

// DefaultLoopPolicy is the loop policy.
func DefaultLoopPolicy() LoopPolicy {
	return LoopPolicy{ReplanAfter: DefaultReplanAfter, HardStop: DefaultHardStop, MaxReplans: DefaultMaxReplans, EscalateAfter: DefaultEscalateAfter}
}

// Validate reports the first bad value, naming its key.
func (p LoopPolicy) Validate() error {
	switch {
	case p.ReplanAfter <= 0:
		return policyError("policy.loop.replan_after", "must be positive, got %d", p.ReplanAfter)
	case p.HardStop <= 0:
		return policyError("policy.loop.hard_stop", "must be positive, got %d", p.HardStop)
	case p.MaxReplans < 0:
		return policyError("policy.loop.max_replans", "must not be negative, got %d", p.MaxReplans)
	case p.EscalateAfter < 0:
		return policyError("policy.loop.escalate_after", "must not be negative, got %d (0 means never)", p.EscalateAfter)
	}
	return nil
}

// Policies is the configuration the core decides with. It is set by a
// Configure command (and so recorded in the event log).
type Policies struct {
	Ack        AckPolicy       `json:"ack"`
	MaxRetries int             `json:"max_retries"` // instructions (cycles)
	Operation  OperationPolicy `json:"operation"`
	Loop       LoopPolicy      `json:"loop"`
	Budget     BudgetPolicy    `json:"budget,omitempty"`
	// Notify is who is notified of what (hooks by name: where they are is
	// the shell's), and the notifications' retry policy.
	Notify NotifyPolicy `json:"notify"`
	// Done is the definition of done's checks; Review names the reviewer.
	Done   DonePolicy   `json:"done,omitzero"`
	Review ReviewPolicy `json:"review,omitzero"`
	// Package is the folder of a monorepo every task is scoped to, unless
	// it names its own ("" for the whole repository).
	Package string `json:"package,omitempty"`
	// Probe says when agents are asked for their context.
	Probe ProbePolicy `json:"probe,omitzero"`
	// Prices give the cost of the turns whose CLI reports none, by model
	// name or by agent name.
	Prices map[string]Price `json:"prices,omitempty"`
	// Land is where and how verified changes land.
	Land LandPolicy `json:"land,omitzero"`
}

// Price is what a model's tokens cost, in US dollars per million tokens,
// counted as the agent's CLI reports them.
type Price struct {
	InputPerMTok  float64 `json:"input_per_mtok"`
	OutputPerMTok float64 `json:"output_per_mtok"`
	CachedPerMTok float64 `json:"cached_per_mtok,omitempty"`
}

// cost is what u costs at p.
func (p Price) cost(u Usage) float64 {
	return (float64(u.InputTokens)*p.InputPerMTok + float64(u.OutputTokens)*p.OutputPerMTok + float64(u.CachedTokens)*p.CachedPerMTok) / 1e6
}

// Budget is a limit on what agents' turns may cost: US dollars and tokens
// (in and out); 0 is no limit.
type Budget struct {
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
	MaxTokens  int64   `json:"max_tokens,omitempty"`
}

// BudgetPolicy limits what one task, and all tasks of one (UTC) day, may
// cost. A turn that crosses a limit is stopped as soon as its output
// reports it, and its task escalates with what was
// spent; no attempt starts while the day's limit is crossed.
type BudgetPolicy struct {
	Task Budget `json:"task,omitempty"`
	Day  Budget `json:"day,omitempty"`
}

// dollars writes an amount in dollars: cents for a dollar or more, else
// to a hundredth of a cent.
func dollars(x float64) string {
	if x >= 1 {
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.4f", x)
}

// over says how u crosses b ("" when it does not).
func (b Budget) over(u Usage, what string) string {
	switch {
	case b.MaxCostUSD > 0 && u.CostUSD > b.MaxCostUSD:
		return fmt.Sprintf("%s spent $%.4f, over its max_cost_usd of $%s (%d tokens in, %d out)", what, u.CostUSD, dollars(b.MaxCostUSD), u.InputTokens, u.OutputTokens)
	case b.MaxTokens > 0 && u.InputTokens+u.OutputTokens > b.MaxTokens:
		return fmt.Sprintf("%s used %d tokens (%d in, %d out; $%.4f), over its max_tokens of %d", what, u.InputTokens+u.OutputTokens, u.InputTokens, u.OutputTokens, u.CostUSD, b.MaxTokens)
	}
	return ""
}

// DefaultPolicies are the default policies.
func DefaultPolicies() Policies {
	return Policies{Ack: DefaultAckPolicy(), MaxRetries: DefaultMaxRetries, Operation: DefaultOperationPolicy(), Loop: DefaultLoopPolicy(),
		Notify: DefaultNotifyPolicy(), Done: DonePolicy{Size: CheckWarn, Tests: CheckWarn}, Land: LandPolicy{How: LandNone, Order: DefaultLandOrder}}
}

// Validate reports the first bad value, naming its key.
func (p Policies) Validate() error {
	if err := p.Ack.Validate(); err != nil {
		return err
	}
	if p.MaxRetries < 0 {
		return policyError("policy.instruction.max_retries", "must not be negative, got %d", p.MaxRetries)
	}
	if err := p.Operation.Validate(); err != nil {
		return err
	}
	for name, pr := range p.Prices {
		if pr.InputPerMTok < 0 || pr.OutputPerMTok < 0 || pr.CachedPerMTok < 0 {
			return policyError("prices."+name, "prices must not be negative")
		}
	}
	for key, b := range map[string]Budget{"policy.budget.task": p.Budget.Task, "policy.budget.day": p.Budget.Day} {
		if b.MaxCostUSD < 0 || b.MaxTokens < 0 {
			return policyError(key, "limits must not be negative")
		}
	}
	if err := p.Notify.Validate(); err != nil {
		return err
	}
	if err := p.Done.Validate(); err != nil {
		return err
	}
	if err := p.Review.Validate(); err != nil {
		return err
	}
	if err := CheckPackage(p.Package); err != nil {
		return policyError("package", "%v", err)
	}
	if err := p.Land.Validate(); err != nil {
		return err
	}
	return p.Loop.Validate()
}

func policyError(key, format string, args ...any) error {
	return &Error{Code: Invalid, Msg: key + ": " + fmt.Sprintf(format, args...)}
}
