package sim

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"wilco/core"
)

var agentNames = []string{"claude", "codex", "gemini", "aider", "opencode", "goose", "cline", "amp", "devin", "cursor"}

var capabilityPool = []string{"go", "python", "rust", "review"}

// setup configures the policies this run drew and registers the first
// agents.
func (w *world) setup() {
	if w.chance(0.65) {
		w.configure(w.shortPolicies())
	} else if w.cfg.Notify {
		w.configure(core.DefaultPolicies())
	}
	n := 3 + w.rng.IntN(4)
	kinds := w.rng.Perm(len(personas))
	for i := range n {
		w.addAgent(personas[kinds[i%len(kinds)]])
	}
}

// shortPolicies are policies of seconds, so that every path is reached in
// a few hundred steps.
func (w *world) shortPolicies() core.Policies {
	p := core.DefaultPolicies()
	p.Ack.Timeouts = nil
	for range 1 + w.rng.IntN(4) {
		p.Ack.Timeouts = append(p.Ack.Timeouts, w.between(2*time.Second, 30*time.Second))
	}
	p.Ack.BackoffBase = w.between(time.Second, 8*time.Second)
	p.Ack.BackoffMax = p.Ack.BackoffBase * time.Duration(1+w.rng.IntN(4))
	p.Ack.OnUnresponsive = oneOf(w, []core.OnUnresponsive{core.Reassign, core.Reassign, core.Escalate})
	p.Ack.MaxCorrections = w.rng.IntN(4)
	p.Ack.QueuedFollowup = w.between(10*time.Second, 90*time.Second)
	p.MaxRetries = w.rng.IntN(5)
	p.Operation = w.operationPolicy()
	return p
}

func (w *world) operationPolicy() core.OperationPolicy {
	p := core.OperationPolicy{
		Timeout:          w.between(20*time.Second, 120*time.Second),
		Extension:        w.between(5*time.Second, 60*time.Second),
		ProceedOnTimeout: w.chance(0.6),
		Quorum:           oneOf(w, []core.Quorum{core.QuorumAll, core.QuorumMajority, "1", "2"}),
	}
	var offsets []time.Duration
	for range w.rng.IntN(4) {
		offsets = append(offsets, w.between(time.Second, p.Timeout-time.Second))
	}
	slices.Sort(offsets)
	p.Reminders = slices.Compact(offsets)
	return p
}

func (w *world) configure(p core.Policies) {
	w.tw.overlay(&p)
	if w.cfg.Notify {
		p.Notify = w.notifyPolicy()
	}
	w.tracef("configure %+v", p)
	w.do("configure", func(c *core.State, now time.Time) (any, error) { return nil, c.Configure(now, p) })
}

// addAgent registers a new agent of the persona.
func (w *world) addAgent(p persona) {
	name := agentNames[len(w.agents)%len(agentNames)]
	if len(w.agents) >= len(agentNames) {
		name += strconv.Itoa(len(w.agents) / len(agentNames))
	}
	a := &agent{name: name, adapter: oneOf(w, []string{"exec", "sim", "tmux", "mailbox", "mailbox"}), p: p}
	a.pull = a.adapter == "mailbox"
	a.caps = w.capabilities()
	scale := w.scale(catTask)
	switch {
	case p.kind == "silent" && w.chance(0.5):
		// never takes a turn
	case a.pull:
		a.poll = w.between(scale/5, scale*3/2)
	default:
		a.poll = w.between(scale/2, 3*scale)
	}
	w.tracef("register %s (%s, %s, %v)", name, p.kind, a.adapter, a.caps)
	r := w.do("register "+name, func(c *core.State, now time.Time) (any, error) {
		return nil, c.RegisterAgent(now, core.AgentSpec{Name: name, Adapter: a.adapter, Capabilities: a.caps})
	})
	if r.answered && core.CodeOf(r.err) != "" {
		w.failf("register %s: %v", name, r.err)
	}
	// The agent exists from now on, whether wilco heard of it or not.
	w.agents = append(w.agents, a)
	w.byName[name] = a
	if a.poll > 0 {
		w.schedule(action{at: w.clock.Now().Add(w.between(0, a.poll)), kind: actCycle, agent: name})
	}
}

func (w *world) capabilities() []string {
	var caps []string
	for _, c := range capabilityPool {
		if w.chance(0.6) {
			caps = append(caps, c)
		}
	}
	return caps
}

// oneStep is one step of the simulation: time passes, or the caller does
// something, or wilco restarts.
func (w *world) oneStep() {
	if w.chance(w.cfg.FaultRate) {
		w.st.armed = oneOf(w, []fault{failCommit, crashAfterCommit})
		w.tracef("plant a crash: %s", w.st.armed)
	}
	if w.chance(w.cfg.RestartRate) {
		w.restart(oneOf(w, []string{"crash", "crash", "clean"}))
		return
	}
	if w.tw.on && w.tw.chance(0.2) {
		w.taskStep()
		return
	}
	switch w.pick(40, 9, 6, 3, 4, 3, 3, 4, 1, 1, 1, 1, 4) {
	case 0:
		w.advance()
	case 1:
		w.sendDelegation()
	case 2:
		w.sendInstruction()
	case 3:
		w.sendConversation()
	case 4:
		w.acknowledge()
	case 5:
		w.cancel()
	case 6:
		w.clarify()
	case 7:
		w.startOperation()
	case 8:
		w.cancelOperation()
	case 9:
		w.registerAgent()
	case 10:
		w.setStatus()
	case 11:
		w.reconfigure()
	case 12:
		name := "ghost"
		if !w.chance(0.05) {
			name = oneOf(w, w.agents).name
		}
		w.cycle(name, false)
	}
}

// advance lets time pass: to the next thing due, or by a random amount.
func (w *world) advance() {
	now := w.clock.Now()
	scale := w.scale(catTask)
	var end time.Time
	switch w.pick(4, 4, 2) {
	case 0:
		at, ok := w.nextDue()
		if !ok {
			at = now.Add(scale)
		}
		end = at
	case 1:
		end = now.Add(w.between(0, scale))
	default:
		end = now.Add(w.between(0, 3*scale*time.Duration(len(w.live.Policies().Ack.Timeouts))))
	}
	w.tracef("advance to +%s", end.Sub(Epoch))
	w.advanceTo(end)
}

func (w *world) pickAgentName() string {
	if w.chance(0.03) {
		return "ghost"
	}
	return oneOf(w, w.agents).name
}

func (w *world) sendDelegation() {
	var t *task
	if len(w.tasks) > 0 && w.chance(0.15) {
		t = oneOf(w, w.tasks) // the same task to another agent
	} else {
		w.nTask++
		t = &task{id: fmt.Sprintf("T-%d", w.nTask), desc: fmt.Sprintf("Implement feature %d", w.nTask)}
		for _, i := range w.rng.Perm(len(criteriaPool))[:w.rng.IntN(4)] {
			t.criteria = append(t.criteria, criteriaPool[i])
		}
		w.tasks = append(w.tasks, t)
		w.taskByID[t.id] = t
	}
	body := fmt.Sprintf("## Task: %s\n%s.\n", t.id, t.desc)
	if len(t.criteria) > 0 {
		body += "\n## Acceptance Criteria\n"
		for _, c := range t.criteria {
			body += "- [ ] " + c + "\n"
		}
	}
	req := core.SendRequest{
		To: w.pickAgentName(), Type: core.TypeDelegation, Body: body, TaskID: t.id,
		AcceptanceCriteria: t.criteria, Description: t.desc,
	}
	if w.chance(0.5) {
		req.Capabilities = []string{oneOf(w, capabilityPool)}
	}
	if w.chance(0.2) {
		req.Type = "" // classified by its body
		if w.chance(0.5) {
			req.TaskID = ""
		}
	}
	switch w.pick(95, 1, 1, 1, 1) {
	case 1:
		req.TaskID = "bad id!"
	case 2:
		req.Matcher = &core.Matcher{Contains: "x"}
	case 3:
		req.Body = "  "
	case 4:
		req.Type = core.TypePreOperation
	}
	w.tracef("delegate %s to %s", t.id, req.To)
	w.do("send delegation "+t.id, func(c *core.State, now time.Time) (any, error) { return c.Send(now, req) })
}

func (w *world) sendInstruction() {
	w.nInstr++
	n := w.nInstr
	req := core.SendRequest{
		To: w.pickAgentName(), Type: core.TypeInstruction,
		Body: fmt.Sprintf("Step %d: run the linter on package p%d. Reply DONE-%d when finished.", n, n, n),
	}
	switch w.pick(4, 2, 4) {
	case 0:
		req.Matcher = &core.Matcher{Contains: fmt.Sprintf("DONE-%d", n)}
	case 1:
		req.Matcher = &core.Matcher{Regex: fmt.Sprintf(`DONE-%d\b`, n)}
	}
	if w.chance(0.5) {
		m := w.rng.IntN(5)
		req.MaxRetries = &m
	}
	switch w.pick(96, 1, 1, 1, 1) {
	case 1:
		m := -1
		req.MaxRetries = &m
	case 2:
		req.Matcher = &core.Matcher{Regex: "("}
	case 3:
		req.Matcher = &core.Matcher{}
	case 4:
		req.Type = "telegram"
	}
	w.tracef("instruct %s: %q", req.To, req.Body)
	w.do("send instruction", func(c *core.State, now time.Time) (any, error) { return c.Send(now, req) })
}

func (w *world) sendConversation() {
	w.nConv++
	req := core.SendRequest{To: w.pickAgentName(), Body: fmt.Sprintf("Quick question %d: which of the two approaches do you prefer?", w.nConv)}
	if w.chance(0.5) {
		req.Type = core.TypeConversation
	}
	w.tracef("talk to %s", req.To)
	w.do("send conversation", func(c *core.State, now time.Time) (any, error) { return c.Send(now, req) })
}

// pickDelivery picks a delivery for the caller to act on: mostly an open
// one that keep accepts, sometimes any, sometimes one that does not exist.
func (w *world) pickDelivery(keep func(*core.Delivery) bool) string {
	switch w.pick(7, 2, 1) {
	case 0:
		if open := w.live.Deliveries(keep); len(open) > 0 {
			return oneOf(w, open).ID
		}
		fallthrough
	case 1:
		if all := w.live.Deliveries(nil); len(all) > 0 {
			return oneOf(w, all).ID
		}
	}
	return "M-999999"
}

func (w *world) acknowledge() {
	id := w.pickDelivery(func(d *core.Delivery) bool { return !d.State.Terminal() && d.Policy != core.PolicyReminders })
	w.tracef("acknowledge %s", id)
	r := w.do("acknowledge "+id, func(c *core.State, now time.Time) (any, error) { return c.Acknowledge(now, id) })
	w.checkAcks(r, []string{id})
	w.noteLate(r)
}

func (w *world) cancel() {
	id := w.pickDelivery(func(d *core.Delivery) bool { return !d.State.Terminal() && d.Policy != core.PolicyReminders })
	w.tracef("cancel %s", id)
	r := w.do("cancel "+id, func(c *core.State, now time.Time) (any, error) { return c.Cancel(now, id, "") })
	w.noteLate(r)
}

func (w *world) clarify() {
	id := w.pickDelivery(func(d *core.Delivery) bool { return d.State == core.Clarifying })
	answers := []string{"JSON output, please", "Linux and macOS"}
	switch w.pick(8, 1, 1) {
	case 1:
		answers = nil
	case 2:
		answers = []string{"ok", " "}
	}
	w.tracef("clarify %s", id)
	w.do("clarify "+id, func(c *core.State, now time.Time) (any, error) { return c.Clarify(now, id, answers) })
}

func (w *world) startOperation() {
	req := core.OperationRequest{
		Name:    oneOf(w, []string{core.OpRestart, core.OpHibernate, core.OpWake, core.OpInstallSkill, core.OpMaintenance, "skill-install", "upgrade"}),
		Message: "install the security-audit skill",
	}
	for _, i := range w.rng.Perm(len(w.agents))[:1+w.rng.IntN(min(4, len(w.agents)))] {
		req.Agents = append(req.Agents, w.agents[i].name)
	}
	switch {
	case req.Name == core.OpInstallSkill:
		req.Target = "/skills/security-audit"
	case req.Name == core.OpMaintenance || !core.AgentOperation(req.Name) && w.chance(0.6):
		req.Command = []string{"sh", "-c", "true"}
	}
	if w.chance(0.5) {
		p := w.operationPolicy()
		req.Policy = &p
	}
	switch w.pick(94, 2, 2, 2) {
	case 1:
		req.Agents = append(req.Agents, req.Agents[0])
	case 2:
		req.Agents = append(req.Agents, "ghost")
	case 3:
		req.Name = "no spaces allowed"
	}
	w.tracef("start operation %s with %v", req.Name, req.Agents)
	w.do("start operation", func(c *core.State, now time.Time) (any, error) { return c.StartOperation(now, req) })
}

func (w *world) cancelOperation() {
	id := "OP-999"
	if len(w.ops) > 0 {
		id = oneOf(w, w.ops)
		for range 3 {
			if o, _ := w.live.Operation(id); o.State == core.OpWaiting {
				break
			}
			id = oneOf(w, w.ops)
		}
	}
	w.tracef("cancel operation %s", id)
	w.do("cancel operation "+id, func(c *core.State, now time.Time) (any, error) { return c.CancelOperation(now, id, "") })
}

func (w *world) registerAgent() {
	if len(w.agents) < 12 && w.chance(0.6) {
		w.addAgent(oneOf(w, personas))
		return
	}
	a := oneOf(w, w.agents)
	caps := w.capabilities()
	adapter := a.adapter
	if w.chance(0.05) {
		adapter = "carrier-pigeon"
	}
	w.tracef("register %s again with %v", a.name, caps)
	r := w.do("register "+a.name, func(c *core.State, now time.Time) (any, error) {
		return nil, c.RegisterAgent(now, core.AgentSpec{Name: a.name, Adapter: adapter, Capabilities: caps})
	})
	if r.answered && r.err == nil {
		a.caps = caps
	}
}

func (w *world) setStatus() {
	name := w.pickAgentName()
	to := core.Available
	switch w.pick(7, 1, 1, 1, 1) {
	case 1:
		to = core.Hibernating
	case 2:
		to = core.Offline
	case 3:
		to = core.Busy
	case 4:
		to = "asleep"
	}
	w.tracef("set %s %s", name, to)
	w.do("set status of "+name, func(c *core.State, now time.Time) (any, error) {
		return nil, c.SetAgentStatus(now, name, to, "operator")
	})
}

func (w *world) reconfigure() {
	switch w.pick(6, 3, 1) {
	case 0:
		w.configure(w.shortPolicies())
	case 1:
		w.configure(core.DefaultPolicies())
	default:
		p := w.shortPolicies()
		p.Ack.Timeouts = nil // refused
		w.configure(p)
	}
}
