// Package adaptertest is the conformance suite every agent adapter (a
// dispatch.Adapter) must pass, the way store/storetest is for stores and
// River's riverdrivertest for its drivers.
//
// An adapter's test calls Run with a Harness whose Start starts the
// adapter with one agent that runs the adapter's scripted program, for
// real: a shell script for exec, the scripted TUI on a real tmux for tmux.
//
//	func TestConformance(t *testing.T) {
//		adaptertest.Run(t, adaptertest.Harness{Start: func(t *testing.T, r adapter.Reporter) adaptertest.Started {
//			…
//		}})
//	}
//
// The scripted program takes its orders from the words of the task it is
// given, as an agent reads its task:
//
//   - it acknowledges a prompt that asks "Reply with [ACK] ID - RECEIVED"
//     with that line and an "Understanding: …" line;
//   - "write FILE.txt": then writes FILE.txt in its working directory —
//     "attempt 1", or "fixed ID" when the prompt holds a <retry_context> —
//     and ends with "Status: complete" and "Summary: …";
//   - "IDLE": then works on and on, until its turn is stopped;
//   - "CRASH": then writes "panic: scripted crash" and exits with status
//     3.
//
// Every subtest is named after the rule it checks. An adapter whose agents
// fetch their own messages (Harness.Pull: the mailbox side) runs no program:
// the rules of turns become that it reports nothing of what it is handed.
// The rules:
//
//   - a delegation reaches the agent, its ACK is reported as a reply to
//     the delegation, and its turn's end as a TurnEnded with the agent's
//     completion;
//   - a reminder of a delegation (an ack_request) reaches the same agent,
//     which acknowledges the delegation again and ends another turn;
//   - a retry (the task's next attempt, its failure in the prompt) reaches
//     the same agent, which sees the retry context;
//   - StopTurn ends a running turn (its program is interrupted or gone),
//     nothing more is reported of it, and the agent takes its next task;
//   - an operation (hibernate, wake, restart) is performed, saying what was
//     done, or refused with an error wrapping adapter.ErrNotSupported that
//     says why; an unknown operation is refused so; the agent works after;
//   - a program that dies is reported as the turn's end with its exit
//     status, an error, and its last output;
//   - nothing is reported twice: each send of a delegation is
//     acknowledged once and its turn ended once;
//   - the turns of tasks worked in parallel (a delegation naming the
//     task's worktree, core.TaskWorktree under Started.Dir) are worked at
//     once, each in its own worktree, where the agent writes its files.
package adaptertest
