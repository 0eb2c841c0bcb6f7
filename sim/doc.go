// Package sim is wilco's seeded simulation: the real core, the real runtime
// and the real SQLite store (in a temporary directory), driven by hand with
// a fake clock, against agents that misbehave, with crashes and restarts at
// random points. Everything is decided by one math/rand/v2 PCG started from
// the run's number (-seed): a run with the same number is exactly reproducible.
//
// # What is simulated
//
// Agents of every adapter: push agents (exec, tmux, sim), whose messages
// arrive as core.Deliver effects handed out by the runtime (TakeEffects), and pull
// agents (mailbox), which fetch theirs in dispatch cycles (core.Cycle). Each
// has a persona — prompt, silent, slow, duplicate, out-of-order, wrong task
// id, late, or a mix — that decides, per message, whether it answers, when
// (often past the timeout), how many times, to which message (an older one,
// a retry's earlier send, one already settled or cancelled), and in which
// form: the text [ACK] in its markdown variants, the JSON
// task-acknowledgment (received, needs-clarification, confirmed, rejected,
// queued), task-acknowledgment-error with every error code and
// retry_after_minutes, checkpoint-ack, task-complete, operation replies (ok,
// wait, cancel, anything else, JSON acknowledgment), AgentAck, broken forms.
//
// For some seeds (a fifth, drawn from a random stream of their own;
// -sim.parallel=1 for every seed), tasks are worked in parallel: parallel
// 2 to 4, land.how merge, rebase or squash, land.order verified or
// submission, and exec agents with one to three instances that
// acknowledge a task in their turn's output (or never), change its files
// in its worktree and end their turn (or fail). The runtime's effects of
// these tasks are performed on a simulated repository (gitModel, which
// mirrors what package workspace does with git): worktrees and branches
// made from the target (PrepareWorktree, sometimes failing) and removed
// (RemoveWorktree), verifications whose verdict is the same for the same
// files, landings (LandTask) that fast-forward the target, make a
// combination to be verified first (git merge-tree's rules), report a
// conflict when two tasks changed the same file, find the target moved
// underneath (the user commits on it), wait for the user's uncommitted
// changes (LandWaiting), fail, or have their commit refused by a hook. An
// agent retrying after a merge conflict merges the target in its
// worktree first. The user submits tasks (some for one agent, some with a
// way of landing of their own), cancels them at any point, answers
// escalations (retry, skip, abort). A restart kills the exec agents'
// turns and every effect under way — a landing too, after it moved the
// target and before its end was reported — and asks the core to recover
// (RecoverTasks), which asks again for the effects whose ends are not
// recorded.
//
// The caller sends instructions (cycles policy, with matchers and
// max_retries), task delegations (backoff policy, with acceptance criteria
// and capabilities, the same task to two agents), conversations; it
// acknowledges, cancels, answers clarifications, starts operations with
// several agents, quorums and policies of their own (reminders policy),
// cancels them, registers agents, sets their status and changes the
// policies — short ones of seconds, so that every path is reached, and the
// default policies. Operation commands end after a while, fail, or hang.
//
// Time passes only when the driver says so: it moves the fake clock exactly
// to the runtime's next timer (runtime.NextTimer) or to the next thing an
// agent does, and drains the runtime (runtime.Drain). There are no
// goroutines in the driver and no sleeps.
//
// wilco restarts at random steps: a crash (the runtime dropped without
// Close, the store closed and opened again, runtime.Open), a clean Close
// first, a crash inside a commit before the batch is durable (the callers
// hear an error), and a crash right after it (no effect is performed, no
// caller is answered).
//
// # Invariants
//
// After every step, and on every event as it is committed (runtime's
// Observe hook):
//
//  1. A delivery ends once, in acknowledged, failed or cancelled, and never
//     changes state again; the log holds at most one terminal event per
//     delivery.
//
//  2. No acknowledgment is lost or counted twice: every Reply, AgentAck or
//     Acknowledge the core accepted as an acknowledgment produced exactly one
//     delivery.acknowledged event per delivery it names, nothing else
//     produced one, and a refused command produced no event at all (the
//     durable seq does not move). After every restart every acknowledgment
//     answered "ok" is still acknowledged, and its event is in the log.
//     Nothing is answered or performed before its events are durable.
//
//  3. Sends never exceed the policy: cycles, at most max_retries+1 sends, and
//     the failure comes in the dispatch cycle right after the last send;
//     backoff, round within the timeouts, each timer the table
//     (timeout, plus the wait before the next attempt), corrections within
//     max_corrections, unresponsive only after the last round; reminders, at
//     most one reminder per offset, each at its offset, one extension,
//     the timeout at the deadline, the quorum respected.
//
//  4. Timers fire at their exact virtual time: every event carries the time
//     of the clock, a timer's events the time it was armed for; after each
//     step no armed timer is due (none skipped), and the runtime's timer heap
//     is the core's timers, across restarts too.
//
//  5. Replaying the whole log from seq 1 into a fresh core gives the live
//     state (core.StateDiff), and so does the restart (snapshot + tail): the
//     log is replayed as it is committed and compared every few steps, read
//     back from the store and replayed every hundred steps and at every
//     restart.
//
//  6. With Config.Notify (hooks that hear of unresponsive agents and
//     operations, a webhook that answers 2xx, 5xx or an error, late): no
//     notification is lost. After every step, and every restart, each
//     pending notification has its attempt under way at the webhook (made
//     again after a crash) or its retry timer armed (4 sees it fire); an
//     attempt is made only once the notification is durable.
//
//  7. With tasks worked in parallel, after every step: no more than
//     parallel tasks hold slots (checkSlots); an agent instance works one
//     task at a time — the tasks that hold a slot with an agent are no
//     more than its instances, and so are the turns it runs
//     (checkInstances, checkAgentTurns); the queue hands out tasks oldest
//     first — a task starts only when every task queued before it waits
//     for what it depends on or for its own agent's instance, and no slot
//     stays free while a queued task may start (checkQueueOrder,
//     checkSlotsUsed); the target only holds verified commits — every
//     commit wilco moved it to has files a verification passed, and every
//     move is a fast-forward (checkTargetVerified); every verified task
//     lands once or ends otherwise — no task moves the target twice or
//     records two landings, a task that moved it succeeded with that
//     commit (or was cancelled while it landed), and none is lost: a
//     task whose worktree is being made, whose change is being verified
//     or whose landing is under way has its effect under way, across
//     restarts too, and a verified task waits to land only behind a
//     landing under way or (land.order submission) a task submitted
//     before it (checkLandsOnce, checkNoVerifiedTaskLost). A delegation
//     of such a task is reassigned only to an agent with an instance
//     free.
//
// Every path reached is counted (Report.Paths); a run of 5000 steps or
// more fails if one of RequiredPaths was never reached. Beside these
// rules, the checks hold the simulation to the rest of the design: a
// reassignment goes to an available agent with the capabilities, never one
// that had the delegation; "no other capable agent" is true when it is
// said; a QUEUED follow-up and a NETWORK_ERROR retry come when the policy
// says; a task is held by one delivery at most; nothing acknowledges but an
// answer (a reply, AgentAck, Acknowledge).
//
// # Running it
//
// go test ./sim runs the short run: 30 seeds of 250 steps, a few seconds
// (16 seeds of 80 steps under -race, which slows SQLite down ten times),
// and tests named after the rules, each a few seeds run with the rule
// stressed. The long run:
//
//	go test ./sim -run 'TestSimulation$' -timeout 0 -sim.seeds=2000 -sim.steps=5000 -v
//
// -sim.parallel=1 works tasks in parallel in every seed (-1 in none; 0,
// the default, as each seed decides), and TestParallelTasksLandOnceAndOnlyVerified
// runs a few seeds of it with every path of landing reached (TaskPaths):
//
//	go test ./sim -run 'TestSimulation$' -timeout 0 -sim.parallel=1 -sim.seeds=500 -sim.steps=400
//
// -sim.first=N starts at another seed, -sim.for=5m stops starting new seeds
// after a while, -sim.workers=N sets how many seeds run side by side (each
// run is one goroutine of its own; the driver has none). With -v the
// counts of every path are printed. TMPDIR=/dev/shm keeps the databases in
// memory, which helps when the disk is busy.
//
// # Reproducing a failure
//
// A failure names its seed and step, with the last steps of the driver and
// the last events of the log:
//
//	seed=1234 step=876: …
//
// Run that seed alone, up to that step:
//
//	go test ./sim -run 'TestSimulation$' -sim.seed=1234 -sim.steps=876 -v
//
// The run of a seed does not depend on how many steps it is given, so the
// shorter run is the beginning of the longer one.
//
// # Bugs found
//
// bugs_test.go holds the minimal reproducers of the bugs the simulation
// found in core and runtime, kept as regression tests now that they are
// fixed. Those it found in tasks worked in parallel are tests of the
// packages where they were fixed, named for the rule: in core (a
// delegation reassigned to an agent without an instance free, instances
// freed with no queued task started, the landing queue stalled after a
// failed landing, a failed combination landed on retry, land.order
// submission by ids) and in workspace (a landing asked again after a
// restart landing an unverified combination, or landing twice).
package sim
