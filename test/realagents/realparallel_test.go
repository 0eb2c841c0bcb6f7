package realagents

// The real Claude Code, three instances of one agent, three tasks worked
// at once: each in a worktree of its own, each verified and landed.

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"wilco/test/blackbox"

	"wilco/adapter/chatlog"
	execadapter "wilco/adapter/exec"
	"wilco/modelserver"
)

// taskHeading finds the task a prompt is about: wilco's prompt names it
// in its heading ("## Task: ID").
var taskHeading = regexp.MustCompile(`## Task: (\S+)`)

// workingDir finds the folder Claude Code says it works in, in the system
// prompt of its requests ("Working directory: …" or "Primary working
// directory: …").
var workingDir = regexp.MustCompile(`[Ww]orking directory: (\S+)`)

// personalRule is the line of the user's CLAUDE.local.md.
const personalRule = "Personal rule: end every answer with the word Done."

// barrier holds each of n conversations at one point until all n reached
// it, or until a deadline: it says whether they were there at once.
type barrier struct {
	mu      sync.Mutex
	waiting map[string]bool
	all     chan struct{}
	n       int
	at      func() // run once, when all n are there, before any goes on
}

func newBarrier(n int, at func()) *barrier {
	return &barrier{waiting: map[string]bool{}, all: make(chan struct{}), n: n, at: at}
}

// wait holds conversation id until all n are there; false when they
// were not there at once before timeout.
func (b *barrier) wait(id string, timeout time.Duration) bool {
	b.mu.Lock()
	if !b.waiting[id] {
		b.waiting[id] = true
		if len(b.waiting) == b.n {
			b.at()
			close(b.all)
		}
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return true
	case <-time.After(timeout):
		return false
	}
}

// claudeRecords are the session records under a Claude Code config
// directory (projects/<folder>/<session id>.jsonl), by file, each with the
// working directory its lines give.
func claudeRecords(t *testing.T, configDir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(configDir, "projects", "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		out[f] = ""
		for _, l := range strings.Split(blackbox.ReadFile(t, f), "\n") {
			var line struct {
				Cwd string `json:"cwd"`
			}
			if json.Unmarshal([]byte(l), &line) == nil && line.Cwd != "" {
				out[f] = line.Cwd
				break
			}
		}
	}
	return out
}

// runSessions are the session ids Claude Code's stream-json output gave in
// a run's agent.log (one per process).
func runSessions(t *testing.T, dir, runID string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", runID, "agent.log")), "\n") {
		var ev struct {
			Type      string `json:"type"`
			Subtype   string `json:"subtype"`
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Type == "system" && ev.Subtype == "init" && ev.SessionID != "" {
			out = append(out, ev.SessionID)
		}
	}
	return out
}

// Three tasks submitted at once to one Claude Code agent of three
// instances: the three conversations are at the model at once, each
// Claude Code works in its task's worktree (its working directory, its
// session record, the file it writes), each task is verified and lands on
// main as a commit with its trailers, and the worktrees are gone at the
// end. The instances share the agent's HOME, as a user's do: their session
// ids and records do not collide.
func TestClaudeCodeThreeInstancesWorkThreeTasksAtOnceEachInItsWorktreeAndAllLand(t *testing.T) {
	t.Parallel()
	claude := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	for _, handshake := range []string{"inline", "session"} {
		t.Run(handshake, func(t *testing.T) {
			t.Parallel()
			ids := []string{"T-1", "T-2", "T-3"}
			var dir string
			var mu sync.Mutex
			var wrong []string // what the model saw that it should not have
			note := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				wrong = append(wrong, fmt.Sprintf(format, args...))
			}
			cwds := map[string]string{}     // task id → the working directory its conversation named
			procCwds := map[string]string{} // task id → the working directory of its running Claude Code
			// Once the three conversations wrote their files, each file is
			// in its own task's worktree only, and each Claude Code still
			// runs there.
			together := newBarrier(len(ids), func() {
				for _, id := range ids {
					if runtime.GOOS == "linux" {
						pid := strings.TrimSpace(blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", id+"-a1", execadapter.PidFileName)))
						cwd, err := os.Readlink(filepath.Join("/proc", pid, "cwd"))
						if err != nil {
							note("%s: the working directory of its Claude Code (process %q): %v", id, pid, err)
						}
						mu.Lock()
						procCwds[id] = cwd
						mu.Unlock()
					}
					for _, other := range ids {
						got := blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "worktrees", other, "files", id+".txt"))
						if want := map[bool]string{true: id + "\n", false: ""}[id == other]; got != want {
							note("while the three worked, the worktree of %s held %q in files/%s.txt, want %q", other, got, id, want)
						}
					}
					if blackbox.Exists(filepath.Join(dir, "files", id+".txt")) {
						note("while the three worked, the checkout held files/%s.txt", id)
					}
				}
			})
			model := modelserver.NewAnthropic(t, func(turn modelserver.Turn) modelserver.Reply {
				m := taskHeading.FindStringSubmatch(turn.Prompt)
				if m == nil || !slices.Contains(ids, m[1]) {
					return modelserver.Reply{Text: "I do not know this task."}
				}
				id := m[1]
				ack := "[ACK] " + id + " - RECEIVED\nUnderstanding: Will write " + id + " into files/" + id + ".txt\n\n"
				// Where this conversation's Claude Code says it works: the
				// file goes there.
				var wd string
				if w := workingDir.FindStringSubmatch(turn.System); w != nil {
					wd = w[1]
					mu.Lock()
					if prev, ok := cwds[id]; ok && prev != wd {
						wrong = append(wrong, fmt.Sprintf("%s's conversation worked in %s, then in %s", id, prev, wd))
					}
					cwds[id] = wd
					mu.Unlock()
				}
				// The conversation's first prompt (a resumed session has
				// them already) carries the user's own instructions.
				first := turn.Step == 0 && (handshake == "inline" || strings.Contains(turn.Prompt, "for the acknowledgment only"))
				if first && !strings.Contains(turn.Prompt+turn.System, personalRule) {
					note("%s: the user's CLAUDE.local.md did not reach its Claude Code", id)
				}
				switch {
				case handshake == "session" && strings.Contains(turn.Prompt, "for the acknowledgment only"):
					return modelserver.Reply{Text: ack}
				case turn.Step == 0 && wd == "":
					return modelserver.Reply{Text: "I was not told where I work."}
				case turn.Step == 0 && handshake == "inline":
					return modelserver.Reply{Text: ack + "Writing it.", Tool: blackbox.WriteTool(filepath.Join(wd, "files", id+".txt"), id+"\n")}
				case turn.Step == 0:
					return modelserver.Reply{Text: "Writing it.", Tool: blackbox.WriteTool(filepath.Join(wd, "files", id+".txt"), id+"\n")}
				}
				// Each conversation waits here, its file written, until the
				// other two are here too.
				if !together.wait(id, 90*time.Second) {
					note("%s: the three conversations were never at the model at once", id)
				}
				return modelserver.Reply{Text: "Done: wrote files/" + id + ".txt."}
			})
			home := t.TempDir()
			agent := fmt.Sprintf("  - {name: claude, adapter: exec, preset: claude-code, handshake: %s, command: [%s], timeout: 3m, instances: 3, "+
				"env: {ANTHROPIC_BASE_URL: %s, ANTHROPIC_API_KEY: scripted-key, HOME: %s, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: \"1\", DISABLE_AUTOUPDATER: \"1\"}}\n",
				handshake, blackbox.Quoted(claude), blackbox.Quoted(model.URL()), blackbox.Quoted(home))
			dir = blackbox.ParallelRepo(t, "parallel: 3\nland: {how: merge}\nagents:\n"+agent, blackbox.OwnFilesCheck)
			if err := os.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "files", "README"), []byte("one file per task\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			blackbox.GitRun(t, dir, "add", "files/README")
			blackbox.GitRun(t, dir, "-c", "user.name=wilco test", "-c", "user.email=test@wilco.invalid", "commit", "-qm", "files")
			// The user's own instructions to Claude Code, in the checkout
			// and in no commit: each instance reads them in its worktree.
			if err := os.WriteFile(filepath.Join(dir, "CLAUDE.local.md"), []byte(personalRule+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte("CLAUDE.local.md\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			before := strings.TrimSpace(blackbox.GitRun(t, dir, "rev-parse", "main"))
			in := blackbox.ServeRepo(t, dir)
			for _, id := range ids {
				in.Submit(map[string]any{"id": id, "description": "Write " + id + " into files/" + id + ".txt (the line " + id + ")"})
			}
			tasks := map[string]blackbox.Task{}
			for _, id := range ids {
				tasks[id] = in.WaitTask(id, 5*time.Minute, "success")
			}
			mu.Lock()
			problems := slices.Clone(wrong)
			seen := maps.Clone(cwds)
			running := maps.Clone(procCwds)
			mu.Unlock()
			if len(problems) > 0 {
				t.Fatalf("%s\nserver:\n%s", strings.Join(problems, "\n"), in.Problems())
			}

			// At once: each task's turn started (its delegation sent)
			// before any of the three ended.
			evs, _ := in.Events(0)
			lastStart, firstEnd := uint64(0), uint64(1<<63)
			for _, id := range ids {
				var start, end uint64
				for _, ev := range evs {
					if ev.TaskID != id {
						continue
					}
					if ev.Type == "delivery.sent" && start == 0 {
						start = ev.Seq
					}
					if ev.Type == "task.turn_ended" && end == 0 {
						end = ev.Seq
					}
				}
				if start == 0 || end == 0 {
					t.Fatalf("%s: no turn sent (%d) or ended (%d) in the events", id, start, end)
				}
				lastStart, firstEnd = max(lastStart, start), min(firstEnd, end)
			}
			if lastStart > firstEnd {
				t.Fatalf("the three turns did not overlap: the last started at event %d, the first ended at %d", lastStart, firstEnd)
			}

			// Each in its own worktree: the working directory Claude Code
			// named to the model, its session record, the commit's file.
			for _, id := range ids {
				want := filepath.Join(dir, ".wilco", "worktrees", id)
				if seen[id] != want {
					t.Fatalf("%s's Claude Code told the model it works in %q, want its worktree %s", id, seen[id], want)
				}
				if runtime.GOOS == "linux" && running[id] != want {
					t.Fatalf("%s's Claude Code ran in %q, want its worktree %s", id, running[id], want)
				}
			}
			var sessions []string
			for _, id := range ids {
				s := runSessions(t, dir, id+"-a1")
				if want := map[string]int{"inline": 1, "session": 2}[handshake]; len(s) != want {
					t.Fatalf("%s's run gave %d session ids, want %d: %v", id, len(s), want, s)
				}
				if handshake == "session" && s[0] != s[1] {
					t.Fatalf("%s's work did not resume its acknowledgment's session: %v", id, s)
				}
				sessions = append(sessions, s[0])
			}
			if len(slices.Compact(slices.Sorted(slices.Values(sessions)))) != len(ids) {
				t.Fatalf("the three tasks' Claude Code sessions collide: %v", sessions)
			}
			if handshake == "session" {
				// No work resumed another task's conversation. (That each
				// resumed its own session is the session ids above; under a
				// heavy load Claude Code was seen to resume one without the
				// acknowledgment's exchange in it, which the work does not
				// need: its prompt carries the whole task.)
				works := map[string]bool{}
				for _, r := range model.AgentRequests() {
					m := taskHeading.FindStringSubmatch(r.Turn.Prompt)
					if m == nil || !strings.Contains(r.Turn.Prompt, "was accepted") {
						continue
					}
					works[m[1]] = true
					history := fmt.Sprint(r.Body["messages"])
					for _, other := range ids {
						if other != m[1] && strings.Contains(history, "## Task: "+other) {
							t.Fatalf("%s's work resumed a conversation that holds %s", m[1], other)
						}
					}
				}
				if len(works) != len(ids) {
					t.Fatalf("the works the model was asked for: %v", works)
				}
			}
			// Each session's record is the one file of its id, in the folder
			// Claude Code keeps for its worktree, and says it ran there.
			records := claudeRecords(t, filepath.Join(home, ".claude"))
			for i, id := range ids {
				want := filepath.Join(chatlog.ClaudeProjectDir(chatlog.Where{Env: map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": ""}, Dir: seen[id]}), sessions[i]+".jsonl")
				var found []string
				for f := range records {
					if filepath.Base(f) == sessions[i]+".jsonl" {
						found = append(found, f)
					}
				}
				if len(found) != 1 || found[0] != want || records[want] != seen[id] {
					t.Fatalf("%s's session %s: records %v, want %s, of cwd %s (all records: %v)", id, sessions[i], found, want, seen[id], records)
				}
			}
			if corrupted, _ := filepath.Glob(filepath.Join(home, ".claude", "backups", ".claude.json.corrupted.*")); len(corrupted) > 0 {
				t.Fatalf("the three Claude Codes corrupted their shared ~/.claude.json: %v", corrupted)
			}
			if cfg := blackbox.ReadFile(t, filepath.Join(home, ".claude.json")); cfg != "" && !json.Valid([]byte(cfg)) {
				t.Fatalf("the three Claude Codes left their shared ~/.claude.json invalid:\n%s", blackbox.Tail(cfg, 20))
			}

			// Each task's record is its own conversation: its prompt, its
			// ACK, its Write of its own file; its tool call was its
			// milestone, and its usage is on record.
			for _, id := range ids {
				tr := in.Cli("transcript", id)
				blackbox.MustContain(t, "wilco transcript "+id, tr, "## Task: "+id, "[ACK] "+id+" - RECEIVED", "tool Write",
					filepath.Join(seen[id], "files", id+".txt"))
				for _, other := range ids {
					if other != id && strings.Contains(tr, "files/"+other+".txt") {
						t.Fatalf("%s's transcript holds %s's file:\n%s", id, other, tr)
					}
				}
				if ms := blackbox.Milestones(t, in, id); !strings.Contains(ms, "Writing "+id+".txt") {
					t.Fatalf("%s's milestones do not say what its Claude Code did:\n%s", id, ms)
				}
				var u struct {
					Usage struct {
						InputTokens int64 `json:"input_tokens"`
					} `json:"usage"`
				}
				in.Must(200, in.Call("GET", "/v1/tasks/"+id, blackbox.AdminToken, nil), &u)
				if u.Usage.InputTokens <= 0 {
					t.Fatalf("%s's usage is not on record: %+v", id, u)
				}
			}

			// Each verified, then landed on main as a commit of its own file
			// with its trailers.
			commits := strings.Fields(blackbox.GitRun(t, dir, "log", "--no-merges", "--format=%H", before+"..main"))
			if len(commits) != len(ids) {
				t.Fatalf("%d task commits on main, want %d:\n%s", len(commits), len(ids), blackbox.GitRun(t, dir, "log", "--graph", "--oneline", "main"))
			}
			for _, c := range commits {
				id := blackbox.Trailer(t, dir, c, "Wilco-Task")
				if !slices.Contains(ids, id) || blackbox.Trailer(t, dir, c, "Wilco-Run") != id+"-a1" || blackbox.Trailer(t, dir, c, "Wilco-Agent") != "claude" {
					t.Fatalf("commit %s has the trailers %q %q %q", c, id, blackbox.Trailer(t, dir, c, "Wilco-Run"), blackbox.Trailer(t, dir, c, "Wilco-Agent"))
				}
				if files := strings.Fields(blackbox.GitRun(t, dir, "show", "--format=", "--name-only", c)); !slices.Equal(files, []string{"files/" + id + ".txt"}) {
					t.Fatalf("%s's commit %s changes %v", id, c[:7], files)
				}
				if tk := tasks[id]; tk.Branch != "wilco/"+id || tk.Worktree != ".wilco/worktrees/"+id || tk.LandedCommit == "" || tk.Attempt != 1 {
					t.Fatalf("%s: branch %q, worktree %q, landed %q, attempt %d", id, tk.Branch, tk.Worktree, tk.LandedCommit, tk.Attempt)
				}
			}
			for _, c := range blackbox.FirstParents(t, dir) {
				if err := blackbox.CheckTreeOf(t, dir, c); err != nil {
					t.Fatalf("main was at %s, which fails the check: %v", c[:7], err)
				}
			}
			for _, id := range ids {
				if got := blackbox.ReadFile(t, filepath.Join(dir, "files", id+".txt")); got != id+"\n" {
					t.Fatalf("the checkout's files/%s.txt: %q", id, got)
				}
			}
			if st := blackbox.GitRun(t, dir, "status", "--porcelain"); st != "" {
				t.Fatalf("the checkout after the landings:\n%s", st)
			}

			// The worktrees and the landed branches are gone.
			if !blackbox.Eventually(30*time.Second, 20*time.Millisecond, func() bool {
				return strings.Count(blackbox.GitRun(t, dir, "worktree", "list"), "\n") == 1 && blackbox.GitRun(t, dir, "branch", "--list", "wilco/*") == ""
			}) {
				t.Fatalf("worktrees or branches left:\n%s%s", blackbox.GitRun(t, dir, "worktree", "list"), blackbox.GitRun(t, dir, "branch", "--list"))
			}
			for _, id := range ids {
				if blackbox.Exists(filepath.Join(dir, ".wilco", "worktrees", id)) {
					t.Fatalf("the worktree of %s is still there", id)
				}
			}
		})
	}
}

// The real Claude Code, in a task worked in parallel, starts a shell in the
// background that never ends (as a dev server does) and writes its result:
// Claude Code then waits for that shell. The turn ends at the result, not
// at the agent's timeout: the background shell is stopped with it, the
// task is verified and lands, and its worktree is removed.
func TestClaudeCodeLeavingAShellInTheBackgroundEndsItsTurnAtItsResult(t *testing.T) {
	t.Parallel()
	claude := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	const loop = "sh -c 'while :; do date > server.tick; sleep 0.2; done'"
	model := modelserver.NewAnthropic(t, func(turn modelserver.Turn) modelserver.Reply {
		if !strings.Contains(turn.Prompt, "## Task: S-1") {
			return modelserver.Reply{Text: "I do not know this task."}
		}
		wd := ""
		if w := workingDir.FindStringSubmatch(turn.System); w != nil {
			wd = w[1]
		}
		switch turn.Step {
		case 0:
			return modelserver.Reply{Text: "[ACK] S-1 - RECEIVED\nUnderstanding: Will write S-1 into files/S-1.txt and start the server\n\n",
				Tool: blackbox.WriteTool(filepath.Join(wd, "files", "S-1.txt"), "S-1\n")}
		case 1:
			return modelserver.Reply{Text: "Starting the server.", Tool: &modelserver.ToolUse{Name: "Bash",
				Input: map[string]any{"command": loop, "description": "Start the server", "run_in_background": true}}}
		}
		return modelserver.Reply{Text: "Done: wrote files/S-1.txt; the server runs."}
	})
	home := t.TempDir()
	agent := fmt.Sprintf("  - {name: claude, adapter: exec, preset: claude-code, command: [%s], timeout: 5m, instances: 2, "+
		"env: {ANTHROPIC_BASE_URL: %s, ANTHROPIC_API_KEY: scripted-key, HOME: %s, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: \"1\", DISABLE_AUTOUPDATER: \"1\"}}\n",
		blackbox.Quoted(claude), blackbox.Quoted(model.URL()), blackbox.Quoted(home))
	dir := blackbox.ParallelRepo(t, "parallel: 2\nagents:\n"+agent, blackbox.OwnFilesCheck)
	// The project lets Claude Code run sh.
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(`{"permissions":{"allow":["Bash(sh:*)"]}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// What the server writes is not the task's change.
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".wilco/\nserver.tick\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	blackbox.GitRun(t, dir, "add", ".claude/settings.json", ".gitignore")
	blackbox.GitRun(t, dir, "-c", "user.name=wilco test", "-c", "user.email=test@wilco.invalid", "commit", "-qm", "claude settings")
	// The user trusted the repository in Claude Code (its folder dialog),
	// else Claude Code ignores the project's permissions.
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{dir: map[string]any{"hasTrustDialogAccepted": true}}})
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), trust, 0o600); err != nil {
		t.Fatal(err)
	}
	in := blackbox.ServeRepo(t, dir)
	start := time.Now()
	in.Submit(map[string]any{"id": "S-1", "description": "Write S-1 into files/S-1.txt, then start the server"})
	tick := filepath.Join(dir, ".wilco", "worktrees", "S-1", "server.tick")
	if !blackbox.Eventually(2*time.Minute, 20*time.Millisecond, func() bool {
		st := in.Task("S-1").State
		return blackbox.Exists(tick) || slices.Contains(blackbox.EndStates, st) || st == "escalated"
	}) || !blackbox.Exists(tick) {
		t.Fatalf("the background shell did not run:\n%s", blackbox.Tail(blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", "S-1-a1", "agent.log")), 12))
	}
	got := in.WaitTask("S-1", 2*time.Minute, "success")
	if took := time.Since(start); took > 2*time.Minute {
		t.Fatalf("the task took %s", took)
	}
	if got.LandedCommit == "" || got.Attempt != 1 {
		t.Fatalf("S-1:\n%s", got)
	}
	if log := blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", "S-1-a1", "agent.log")); !strings.Contains(log, "wrote its result but kept running") {
		t.Fatalf("agent.log does not say the agent was stopped after its result:\n%s", blackbox.Tail(log, 20))
	}
	// The shell is stopped with the turn.
	if pids := processesRunning(t, "server.tick"); len(pids) > 0 {
		t.Fatalf("the background shell still runs after the turn: processes %v", pids)
	}
	if !blackbox.Eventually(30*time.Second, 20*time.Millisecond, func() bool {
		return strings.Count(blackbox.GitRun(t, dir, "worktree", "list"), "\n") == 1
	}) {
		t.Fatalf("worktrees left:\n%s", blackbox.GitRun(t, dir, "worktree", "list"))
	}
}

// processesRunning are the processes whose command line holds marker
// (read from /proc; none where there is no /proc).
func processesRunning(t *testing.T, marker string) []int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			out = append(out, pid)
		}
	}
	return out
}
