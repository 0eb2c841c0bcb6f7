package core

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Effect is something the runtime must do once the events that caused it
// are durable.
type Effect interface{ isEffect() }

// Deliver hands a message to a push agent (exec, tmux, a simulated agent).
type Deliver struct {
	Agent   string
	Message InboxMessage
}

// Wake tells whoever long-polls a pull agent's inbox that messages wait.
type Wake struct{ Agent string }

// ArmTimer asks for Fire(Key, At) at At. Arming a key again replaces its
// timer; a zero At disarms it.
type ArmTimer struct {
	Key string
	At  time.Time
}

// RunOperation asks the runtime to perform an operation now — on its
// agents for the operations on agents (hibernate, wake, restart,
// install-skill, install-plugin, maintenance), else its command — and to
// report its end with FinishOperation.
type RunOperation struct {
	ID      string
	Name    string
	Agents  []string
	Target  string
	Command []string
	// Conversations are the conversation ids kept for the agents when
	// they were hibernated (a wake resumes them).
	Conversations map[string]string
}

func (Deliver) isEffect()      {}
func (Wake) isEffect()         {}
func (ArmTimer) isEffect()     {}
func (RunOperation) isEffect() {}

// RunVerify asks the runtime to run the verify steps for a task's attempt
// and to report with EndVerify.
type RunVerify struct {
	TaskID     string
	Attempt    int
	RunID      string
	Boundaries []string
	// Package is the monorepo package the task is scoped to ("" none).
	Package string
	// Inspect asks, once the steps passed, for the change's Inspection
	// (the definition of done's checks); Diff, for its diff too (a
	// reviewer reads it).
	Inspect, Diff bool
	// Worktree is where a task worked in parallel works, relative to the
	// checkout's root ("" for the checkout itself): the steps run there.
	Worktree string
}

// StopTurn asks the runtime to stop the agent working on a task (the
// whole process group).
type StopTurn struct {
	TaskID string
	Reason string
}

// MakeProposal asks the workspace for a dry run's diff (report with
// EndProposal).
type MakeProposal struct {
	TaskID  string
	Attempt int
	RunID   string
}

// ApplyProposal asks the workspace to write a dry run's diff into the
// working tree (report with EndApply).
type ApplyProposal struct {
	TaskID string
	RunID  string
}

// DiscardProposal asks the workspace to remove a dry run's worktree.
type DiscardProposal struct{ TaskID string }

func (RunVerify) isEffect()       {}
func (StopTurn) isEffect()        {}
func (MakeProposal) isEffect()    {}
func (ApplyProposal) isEffect()   {}
func (DiscardProposal) isEffect() {}

// Ready is what the core asks of the runtime after one or more steps: the
// events to persist, then the effects to perform.
type Ready struct {
	Events  []Event
	Effects []Effect
}

// EntityKind names a kind of entity kept in the store's current state.
type EntityKind string

// Entity kinds.
const (
	KindMeta      EntityKind = "meta"
	KindAgent     EntityKind = "agent"
	KindDelivery  EntityKind = "delivery"
	KindOperation EntityKind = "operation"
	KindTask      EntityKind = "task"
	KindPlan      EntityKind = "plan"
	// KindNotification is a notification to a hook (see notify.go).
	KindNotification EntityKind = "notification"
)

// EntityRef names one entity.
type EntityRef struct {
	Kind EntityKind
	ID   string
}

// Timer is one armed timer.
type Timer struct {
	Key string
	At  time.Time
}

// State is the whole state of the core. It is not safe for concurrent use:
// one goroutine (the runtime's loop) owns it.
type State struct {
	seq uint64
	// version is the seq of the last event that changed the policies.
	version  uint64
	policies Policies
	counters map[string]int
	agents   map[string]*Agent
	// deliveries are the live ones: open, or with a timer, or changed by
	// the event being applied. ended keeps the rest (see endedSet).
	deliveries map[string]*Delivery
	ended      endedSet
	operations map[string]*Operation
	tasks      map[string]*Task
	plans      map[string]*Plan
	// notifications are every notification, pending or ended.
	notifications map[string]*Notification
	// byTask lists the deliveries of each task, oldest first, and the one
	// whose agent holds the task (the first to acknowledge it). Derived
	// from the deliveries and their Holds.
	byTask taskIndex
	// open indexes the deliveries not yet ended by agent. Derived; apply
	// keeps it from the deliveries each event changed.
	open    map[string]map[string]*Delivery
	changed []*Delivery
	// claims is, during a restore, the version of the newest copy that
	// claimed each task (see claim).
	claims map[string]uint64

	live    bool
	ready   Ready
	dirty   map[EntityRef]struct{}
	regexps map[string]*regexp.Regexp
	checker Checker
}

// New returns an empty core with the default policies.
func New() *State {
	return &State{
		policies:      DefaultPolicies(),
		counters:      map[string]int{},
		agents:        map[string]*Agent{},
		deliveries:    map[string]*Delivery{},
		ended:         newEndedSet(),
		operations:    map[string]*Operation{},
		tasks:         map[string]*Task{},
		plans:         map[string]*Plan{},
		notifications: map[string]*Notification{},
		byTask:        newTaskIndex(),
		open:          map[string]map[string]*Delivery{},
		dirty:         map[EntityRef]struct{}{},
		regexps:       map[string]*regexp.Regexp{},
		live:          true,
		checker:       defaultChecker(),
	}
}

// Seq is the seq of the last event.
func (s *State) Seq() uint64 { return s.seq }

// Policies returns the policies in force.
func (s *State) Policies() Policies { return s.policies }

// TakeReady returns and clears the events and effects accumulated since the
// last call.
func (s *State) TakeReady() Ready {
	r := s.ready
	s.ready = Ready{}
	return r
}

// PeekEffects returns the effects accumulated so far, without taking them.
func (s *State) PeekEffects() []Effect { return s.ready.Effects }

// HasReady reports whether events or effects wait.
func (s *State) HasReady() bool { return len(s.ready.Events) > 0 || len(s.ready.Effects) > 0 }

// TakeDirty returns and clears the entities changed since the last call.
func (s *State) TakeDirty() []EntityRef {
	out := make([]EntityRef, 0, len(s.dirty))
	for r := range s.dirty {
		out = append(out, r)
	}
	clear(s.dirty)
	return out
}

func (s *State) touch(k EntityKind, id string) { s.dirty[EntityRef{k, id}] = struct{}{} }

// emit records one event and applies it.
func (s *State) emit(now time.Time, taskID, agent string, data EventData) {
	s.seq++
	ev := Event{Seq: s.seq, Time: now, Type: data.EventType(), TaskID: taskID, Agent: agent, Data: data}
	s.apply(ev)
	s.ready.Events = append(s.ready.Events, ev)
	s.notifyOn(ev)
}

func (s *State) effect(e Effect) {
	if s.live {
		s.ready.Effects = append(s.ready.Effects, e)
	}
}

// Replay applies events read back from the log, in order, to rebuild the
// state. It produces no effects; call Timers afterwards to arm them.
func (s *State) Replay(ev Event) error {
	if ev.Seq != s.seq+1 {
		return fmt.Errorf("core: replay event %d after %d: the log has a gap", ev.Seq, s.seq)
	}
	if ev.Data == nil {
		return fmt.Errorf("core: replay event %d (%s): no data", ev.Seq, ev.Type)
	}
	s.live = false
	defer func() { s.live = true }()
	s.seq = ev.Seq
	s.apply(ev)
	return nil
}

// EachTimer calls fn for every armed timer, in no order: what a restart
// needs to fill its heap without sorting a million timers first.
func (s *State) EachTimer(fn func(key string, at time.Time)) {
	for _, d := range s.deliveries {
		if !d.TimerAt.IsZero() {
			fn(d.ID, d.TimerAt)
		}
	}
	for _, n := range s.notifications {
		if !n.TimerAt.IsZero() {
			fn(n.ID, n.TimerAt)
		}
	}
	s.prTimers(fn)
}

// Timers lists every armed timer, in order.
func (s *State) Timers() []Timer {
	var out []Timer
	for _, d := range s.deliveries {
		if !d.TimerAt.IsZero() {
			out = append(out, Timer{Key: d.ID, At: d.TimerAt})
		}
	}
	for _, n := range s.notifications {
		if !n.TimerAt.IsZero() {
			out = append(out, Timer{Key: n.ID, At: n.TimerAt})
		}
	}
	s.prTimers(func(key string, at time.Time) { out = append(out, Timer{Key: key, At: at}) })
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.Before(out[j].At)
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// Resends are the messages to hand over again after a restart (each
// task's first send after its RecordBaseline when its baseline is not
// recorded): the open
// deliveries to push agents among ids (those whose last send the restart
// replayed from the log's tail, so it may or may not have left before
// wilco stopped: at least once). Pull
// agents' inboxes are part of the state and lose nothing. Resends changes
// nothing.
func (s *State) Resends(ids []string) []Effect {
	var out []Effect
	for _, id := range ids {
		d := s.deliveries[id] // an ended one is not resent
		if d == nil || d.State != Sent || d.Policy == PolicyCycles {
			continue
		}
		a := s.agents[d.To]
		if a == nil || a.Pull {
			continue
		}
		msg := s.inboxMessage(d, Send{ID: d.ID, Attempt: d.Sends, Kind: SendFirst}, d.LastSentAt)
		if s.needsBaseline(msg) {
			out = append(out, RecordBaseline{TaskID: msg.TaskID})
		}
		out = append(out, Deliver{Agent: a.Name, Message: msg})
	}
	return out
}

// now normalises a time given by the caller: UTC, no monotonic reading, so
// that a replayed state equals the live one.
func norm(t time.Time) time.Time { return t.Round(0).UTC() }

func (s *State) nextID(prefix string) string {
	return prefix + "-" + strconv.Itoa(s.counters[prefix]+1)
}

// noteID keeps the id counters ahead of every id seen.
func (s *State) noteID(id string) {
	prefix, num, ok := strings.Cut(id, "-")
	if !ok {
		return
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return
	}
	if n > s.counters[prefix] {
		s.counters[prefix] = n
		s.touch(KindMeta, "core")
	}
}

// --- reading ---------------------------------------------------------------

// Agent returns a copy of the named agent.
func (s *State) Agent(name string) (Agent, bool) {
	a, ok := s.agents[name]
	if !ok {
		return Agent{}, false
	}
	return *a, true
}

// AgentWithToken returns the name of the agent whose token hash is hash.
// It copies nothing: the server looks an agent's token up on every request
// the agent makes.
func (s *State) AgentWithToken(hash string) (string, bool) {
	if hash == "" {
		return "", false
	}
	for name, a := range s.agents {
		if a.TokenHash == hash {
			return name, true
		}
	}
	return "", false
}

// Agents returns copies of every agent, by name.
func (s *State) Agents() []Agent {
	out := make([]Agent, 0, len(s.agents))
	for _, a := range s.agents {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Delivery returns a copy of the delivery.
func (s *State) Delivery(id string) (Delivery, bool) {
	d, ok := s.findOK(id)
	if !ok {
		return Delivery{}, false
	}
	return d.copy(), true
}

// Deliveries returns copies of the deliveries that keep returns true for,
// oldest first. keep must not hold on to the delivery it is given.
func (s *State) Deliveries(keep func(*Delivery) bool) []Delivery {
	var out []Delivery
	s.eachDelivery(func(d *Delivery) {
		if keep == nil || keep(d) {
			out = append(out, d.copy())
		}
	})
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return idLess(out[i].ID, out[j].ID)
	})
	return out
}

// DeliveryCount returns how many deliveries the core holds.
func (s *State) DeliveryCount() int { return len(s.deliveries) + s.ended.len() }

// Operation returns a copy of the operation.
func (s *State) Operation(id string) (Operation, bool) {
	o, ok := s.operations[id]
	if !ok {
		return Operation{}, false
	}
	return o.copy(), true
}

// copy is a deep copy of the operation.
func (o *Operation) copy() Operation {
	c := *o
	c.Agents, c.Deliveries, c.Command = slices.Clone(o.Agents), slices.Clone(o.Deliveries), slices.Clone(o.Command)
	c.Policy.Reminders = slices.Clone(o.Policy.Reminders)
	c.Results = slices.Clone(o.Results)
	return c
}

// Operations returns copies of the operations keep accepts (nil: all),
// oldest first.
func (s *State) Operations(keep func(*Operation) bool) []Operation {
	var out []Operation
	for _, o := range s.operations {
		if keep == nil || keep(o) {
			c, _ := s.Operation(o.ID)
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return idLess(out[i].ID, out[j].ID) })
	return out
}

// HoldsTask returns the delivery whose agent holds the task, if any.
func (s *State) HoldsTask(taskID string) (string, bool) {
	return s.byTask.holder(taskID)
}

func idLess(a, b string) bool {
	pa, na, _ := strings.Cut(a, "-")
	pb, nb, _ := strings.Cut(b, "-")
	if pa != pb {
		return pa < pb
	}
	ia, ea := strconv.Atoi(na)
	ib, eb := strconv.Atoi(nb)
	if ea == nil && eb == nil {
		return ia < ib
	}
	return a < b
}

// --- snapshot ----------------------------------------------------------------

// Entity is the current state of one entity, ready to be stored.
type Entity struct {
	Kind   EntityKind
	ID     string
	State  string
	Agent  string
	TaskID string
	Value  any
	// encoded is the stored form when the core has it at hand (an ended
	// delivery): EncodeEntity returns it as it is.
	encoded []byte
}

type meta struct {
	Seq      uint64         `json:"seq"`
	Version  uint64         `json:"version"`
	Policies Policies       `json:"policies"`
	Counters map[string]int `json:"counters"`
}

// Entity returns a copy of the current state of one entity, safe to
// encode on another goroutine; ok is false when it no longer exists.
func (s *State) Entity(r EntityRef) (Entity, bool) {
	switch r.Kind {
	case KindMeta:
		return Entity{Kind: KindMeta, ID: "core", Value: meta{Seq: s.seq, Version: s.version, Policies: s.policies, Counters: maps.Clone(s.counters)}}, true
	case KindAgent:
		if a, ok := s.agents[r.ID]; ok {
			c := *a
			c.Capabilities, c.Inbox = slices.Clone(a.Capabilities), slices.Clone(a.Inbox)
			c.Pending, c.Unacked = slices.Clone(a.Pending), slices.Clone(a.Unacked)
			return Entity{Kind: r.Kind, ID: a.Name, State: string(a.Status), Agent: a.Name, Value: &c}, true
		}
	case KindDelivery:
		if d, ok := s.deliveries[r.ID]; ok {
			c := d.copy()
			return Entity{Kind: r.Kind, ID: d.ID, State: string(d.State), Agent: d.To, TaskID: d.TaskID, Value: &c}, true
		}
		if b, ok := s.ended.get(r.ID); ok {
			// Its stored form is at hand: no copy, no encoding.
			d := s.decodeEnded(b)
			return Entity{Kind: r.Kind, ID: d.ID, State: string(d.State), Agent: d.To, TaskID: d.TaskID, Value: d, encoded: b}, true
		}
	case KindOperation:
		if o, ok := s.operations[r.ID]; ok {
			c := o.copy()
			return Entity{Kind: r.Kind, ID: o.ID, State: string(o.State), Value: &c}, true
		}
	case KindTask:
		if t, ok := s.tasks[r.ID]; ok {
			c := t.copy()
			return Entity{Kind: r.Kind, ID: t.ID, State: string(t.State), Agent: t.Agent, TaskID: t.ID, Value: &c}, true
		}
	case KindPlan:
		if p, ok := s.plans[r.ID]; ok {
			c, _ := s.Plan(p.ID)
			return Entity{Kind: r.Kind, ID: p.ID, State: string(p.State), Value: &c}, true
		}
	case KindNotification:
		if n, ok := s.notifications[r.ID]; ok {
			c := *n
			return Entity{Kind: r.Kind, ID: n.ID, State: string(n.State), Agent: n.Agent, TaskID: n.TaskID, Value: &c}, true
		}
	}
	return Entity{}, false
}

// copy is a deep copy of the delivery.
func (d *Delivery) copy() Delivery {
	c := *d
	c.Brief = d.Brief.clone()
	if d.Matcher != nil {
		m := *d.Matcher
		c.Matcher = &m
	}
	if d.Reply != nil {
		r := *d.Reply
		r.Questions = slices.Clone(d.Reply.Questions)
		r.Earlier = slices.Clone(d.Reply.Earlier)
		c.Reply = &r
	}
	if d.Wait != nil {
		w := *d.Wait
		c.Wait = &w
	}
	return c
}

// Entities lists every entity, for a full snapshot or a comparison.
func (s *State) Entities() []EntityRef {
	refs := []EntityRef{{KindMeta, "core"}}
	for id := range s.agents {
		refs = append(refs, EntityRef{KindAgent, id})
	}
	for id := range s.deliveries {
		refs = append(refs, EntityRef{KindDelivery, id})
	}
	s.ended.each(func(id string, _ []byte) { refs = append(refs, EntityRef{KindDelivery, id}) })
	for id := range s.operations {
		refs = append(refs, EntityRef{KindOperation, id})
	}
	for id := range s.tasks {
		refs = append(refs, EntityRef{KindTask, id})
	}
	for id := range s.plans {
		refs = append(refs, EntityRef{KindPlan, id})
	}
	for id := range s.notifications {
		refs = append(refs, EntityRef{KindNotification, id})
	}
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].Kind != refs[j].Kind {
			return refs[i].Kind < refs[j].Kind
		}
		return refs[i].ID < refs[j].ID
	})
	return refs
}

// Restore loads one stored entity into an empty or restoring core. Call
// Restored when every entity is in.
func (s *State) Restore(kind EntityKind, data []byte) error {
	ds, err := NewDecoder().DecodeRecord(kind, data, nil)
	if err != nil {
		return err
	}
	for _, d := range ds {
		s.Insert(d)
	}
	return nil
}

// Decoded is a stored entity decoded by DecodeEntity, for Insert.
type Decoded struct {
	kind  EntityKind
	value any
}

// DecodeEntity decodes one stored entity. It touches no state, so a
// restart may decode on several goroutines and Insert on one.
func DecodeEntity(kind EntityKind, data []byte) (Decoded, error) {
	return NewDecoder().Decode(kind, data)
}

// Decoder decodes stored entities, sharing the strings many of them have
// in common. One goroutine uses one Decoder.
type Decoder struct{ common map[string]string }

// NewDecoder returns a decoder.
func NewDecoder() *Decoder { return &Decoder{common: map[string]string{}} }

// DecodeRecord decodes one stored record, appending what it holds to out:
// one entity, or the deliveries of a pack.
func (dc *Decoder) DecodeRecord(kind EntityKind, data []byte, out []Decoded) ([]Decoded, error) {
	if kind == KindDeliveryPack {
		return dc.decodePack(data, out)
	}
	d, err := dc.Decode(kind, data)
	if err != nil {
		return out, err
	}
	if v, ok := d.value.(*Delivery); ok {
		v.rowed = true // it is the delivery's own record
	}
	return append(out, d), nil
}

// Decode decodes one stored entity.
func (dc *Decoder) Decode(kind EntityKind, data []byte) (Decoded, error) {
	if kind == KindDelivery && len(data) > 0 && data[0] == deliveryCodec {
		d, err := decodeDelivery(data, dc.common)
		if err != nil {
			return Decoded{}, err
		}
		return Decoded{kind: kind, value: d}, nil
	}
	var v any
	switch kind {
	case KindMeta:
		v = new(meta)
	case KindAgent:
		v = new(Agent)
	case KindDelivery:
		v = new(Delivery)
	case KindOperation:
		v = new(Operation)
	case KindTask:
		v = new(Task)
	case KindPlan:
		v = new(Plan)
	case KindNotification:
		v = new(Notification)
	default:
		return Decoded{}, fmt.Errorf("core: restore: unknown entity kind %q", kind)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return Decoded{}, fmt.Errorf("core: restore %s: %w", kind, err)
	}
	return Decoded{kind: kind, value: v}, nil
}

// Insert puts a decoded entity into a restoring core.
func (s *State) Insert(d Decoded) {
	switch v := d.value.(type) {
	case *meta:
		s.seq, s.version, s.policies = v.Seq, v.Version, v.Policies
		if v.Counters != nil {
			s.counters = v.Counters
		}
	case *Agent:
		s.agents[v.Name] = v
	case *Delivery:
		s.insertDelivery(v)
	case *Operation:
		s.operations[v.ID] = v
	case *Task:
		s.tasks[v.ID] = v
	case *Plan:
		s.plans[v.ID] = v
	case *Notification:
		s.notifications[v.ID] = v
	}
}

// insertDelivery puts a restored delivery in, unless a copy of it as new
// or newer is in already: the store may hold several (see
// KindDeliveryPack).
func (s *State) insertDelivery(v *Delivery) {
	if old, ok := s.deliveries[v.ID]; ok {
		if old.Version >= v.Version {
			old.rowed = old.rowed || v.rowed
			return
		}
		v.rowed = v.rowed || old.rowed
		s.unhold(old)
		if m := s.open[old.To]; m != nil {
			delete(m, old.ID)
		}
		delete(s.deliveries, v.ID)
	} else if sp, ok := s.ended.lookup(v.ID); ok {
		old := s.decodeEnded(s.ended.bytes(sp))
		if old.Version >= v.Version {
			if v.rowed {
				s.ended.setRowed(v.ID, true)
			}
			return
		}
		v.rowed = v.rowed || sp.rowed
		s.unhold(old)
		s.ended.remove(v.ID)
	}
	s.deliveries[v.ID] = v
	if !v.State.Terminal() {
		m := s.open[v.To]
		if m == nil {
			m = map[string]*Delivery{}
			s.open[v.To] = m
		}
		m[v.ID] = v
	}
	if v.TaskID != "" {
		// Restored sorts and compacts byTask: a second copy adds no harm.
		s.byTask.add(v.TaskID, v.ID)
		if v.Holds {
			s.claim(v)
		}
	}
	s.settle(v)
}

// claim gives v's task to v, a restored copy that says it holds it, unless
// a newer copy of another delivery claimed the task already. A stale copy
// (kept in an old pack) of a delivery that held the task and released it
// later is older than the claim of whoever took the task after: the task
// passes on only once released, after every copy that still shows the
// earlier holder. So among the copies that claim a task, the newest wins,
// whatever order the store lists them in.
func (s *State) claim(v *Delivery) {
	if s.claims == nil {
		s.claims = map[string]uint64{}
	}
	if newest, ok := s.claims[v.TaskID]; ok && newest > v.Version {
		return
	}
	s.claims[v.TaskID] = v.Version
	s.byTask.hold(v.TaskID, v.ID)
}

// unhold forgets that old, a copy being replaced, holds its task.
func (s *State) unhold(old *Delivery) {
	if old.Holds && old.TaskID != "" {
		s.byTask.release(old.TaskID, old.ID)
	}
}

// Reserve makes room for about n restored entities before they are
// inserted, so that a restart sizes the maps it fills once instead of
// growing them step by step (rehashing them on the way). It only acts on an
// empty core.
func (s *State) Reserve(n int) {
	if n <= 0 || len(s.deliveries) > 0 || len(s.byTask.heads) > 0 {
		return
	}
	s.deliveries = make(map[string]*Delivery, n)
	s.byTask.reserve(n)
}

// Restored rebuilds what is derived from the restored entities. The seq is
// the watermark the entities reflect.
func (s *State) Restored(seq uint64) {
	s.seq = seq
	// Insert filled the index of open deliveries, and byTask and its
	// holders from the deliveries, ended ones too, while they were decoded:
	// on the goroutine that inserts while the store still reads.
	s.byTask.tidy()
	s.claims = nil
	clear(s.dirty)
}
