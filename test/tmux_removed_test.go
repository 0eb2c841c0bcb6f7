package test

// Black-box tests of tmux agents that left wilco.yaml while wilco was
// down: the sessions wilco made for them on its own tmux server, with the
// agent's program in them, are ended at the next start; a user's session
// is never touched.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tmuxadapter "wilco/adapter/tmux"
	"wilco/test/blackbox"
)

// stopWilco stops an instance as a user would (SIGTERM) or kills it
// (kill -9), by name.
func stopWilco(in *blackbox.Instance, how string) {
	if how == "killed" {
		in.Kill()
		return
	}
	in.Stop()
}

// sessionEnds are the agent.session_ended events of an agent, with the
// error each says.
func sessionEnds(in *blackbox.Instance, agent string) []string {
	var out []string
	for _, e := range in.EventsOf("agent.session_ended") {
		if e.Agent != agent {
			continue
		}
		var d struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(e.Data, &d)
		out = append(out, d.Error)
	}
	return out
}

// writeConfig replaces the repository's wilco.yaml.
func writeConfig(t *testing.T, dir, yaml string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "wilco.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A tmux agent taken out of wilco.yaml while wilco was down (stopped, or
// killed) has the session wilco made for it ended at the next start: its
// program does not go on running unsupervised. The log says the session
// was ended, once, with no error, and the agent's token stays refused.
func TestATmuxAgentRemovedFromWilcoYAMLWhileWilcoIsDownHasItsSessionEnded(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"stopped", "killed"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			dir, in := serveTUI(t)
			in.Submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt."})
			if got := in.WaitTask("T-1", 2*time.Minute, "success", "escalated", "stuck"); got.State != "success" {
				t.Fatalf("the task:\n%s\nserver:\n%s", got, blackbox.Tail(in.Stderr.String(), 40))
			}
			b, err := os.ReadFile(filepath.Join(dir, ".wilco", "tmux", "tui.token"))
			if err != nil {
				t.Fatal(err)
			}
			token := strings.TrimSpace(string(b))
			if r := in.Call("GET", "/v1/inbox", token, nil); r.Status != 200 {
				t.Fatalf("the agent's token: %d %s", r.Status, r.Body)
			}
			stopWilco(in, how)
			if !tuiSessionRuns(t, dir) {
				t.Fatal("the agent's session did not outlive wilco")
			}
			writeConfig(t, dir, "agents: []\n"+blackbox.CheckStep)

			again := blackbox.ServeRepo(t, dir)
			if !blackbox.Eventually(time.Minute, 100*time.Millisecond, func() bool {
				return !tuiSessionRuns(t, dir) && len(sessionEnds(again, "tui")) > 0
			}) {
				t.Fatalf("the removed agent's session runs: %v, its end recorded: %q\nserver:\n%s",
					tuiSessionRuns(t, dir), sessionEnds(again, "tui"), blackbox.Tail(again.Stderr.String(), 30))
			}
			if ends := sessionEnds(again, "tui"); len(ends) != 1 || ends[0] != "" {
				t.Fatalf("the session's end recorded as %q, want once with no error", ends)
			}
			blackbox.MustContain(t, "the server's log", again.Stderr.String(), "wilco-tui")
			// Out of service, it stays so: the token its program was given
			// is refused.
			if r := again.Call("GET", "/v1/inbox", token, nil); r.Status != 401 {
				t.Fatalf("the removed agent's token: %d %s, want 401", r.Status, r.Body)
			}
		})
	}
}

// An agent that used a session of the user's own (tmux.session) and left
// wilco.yaml while wilco was down is removed without its session being
// touched, even one named as wilco names its own: the user's program
// goes on running in it.
func TestATmuxAgentInTheUsersSessionRemovedFromWilcoYAMLLeavesTheSession(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"stopped", "killed"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			blackbox.NeedTmux(t)
			// The user's own tmux server and session, running the agent.
			sockDir, err := os.MkdirTemp("", "wilco-user-tmux-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
			user := tmuxadapter.Server{Socket: filepath.Join(sockDir, "sock")}
			t.Cleanup(func() { blackbox.EndPanes(user) })
			userRuns := func() bool {
				out, err := exec.Command("tmux", user.Args("display-message", "-p", "-t", "=wilco-tui:", "#{pane_dead}")...).Output()
				return err == nil && strings.TrimSpace(string(out)) == "0"
			}

			dir := blackbox.NewRepo(t, "agents:\n"+tuiAgentYAML(t, "", ", session: wilco-tui, socket: "+blackbox.Quoted(user.Socket))+blackbox.CheckStep)
			blackbox.EndTmux(t, dir)
			// The user's program works in the repository.
			if out, err := exec.Command("tmux", user.Args("new-session", "-d", "-s", "wilco-tui", "-x", "200", "-y", "50", "-c", dir, "--", tuiAgent(t))...).CombinedOutput(); err != nil {
				t.Fatalf("the user's session: %v\n%s", err, out)
			}
			in := blackbox.ServeRepo(t, dir)
			in.Submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt."})
			if got := in.WaitTask("T-1", 2*time.Minute, "success", "escalated", "stuck"); got.State != "success" {
				t.Fatalf("the task:\n%s\nserver:\n%s", got, blackbox.Tail(in.Stderr.String(), 40))
			}
			stopWilco(in, how)
			writeConfig(t, dir, "agents: []\n"+blackbox.CheckStep)

			again := blackbox.ServeRepo(t, dir)
			if !blackbox.Eventually(time.Minute, 100*time.Millisecond, func() bool { return len(sessionEnds(again, "tui")) > 0 }) {
				t.Fatalf("the removed agent's session end is not recorded:\n%s", blackbox.Tail(again.Stderr.String(), 30))
			}
			// Whatever the start asks for is performed and recorded before
			// the user's session is looked at.
			again.WaitEffectsPerformed(time.Minute)
			if !userRuns() {
				t.Fatalf("the user's session, or the program in it, was ended:\n%s", blackbox.Tail(again.Stderr.String(), 30))
			}
		})
	}
}

// Sessions on wilco's own tmux server named as wilco names its agents'
// (wilco-<agent>) for which no agent runs are ended at the start — an
// agent gone from the configuration, whatever the log says of it — and
// the others are left: the configured agents', and any session named
// otherwise.
func TestSessionsOnWilcosTmuxServerOfNoAgentAreEndedAtTheStart(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	dir := blackbox.NewRepo(t, "agents:\n"+tuiAgentYAML(t, "", "")+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	srv := blackbox.TmuxServer(t, dir)
	for _, s := range []string{"wilco-tui", "wilco-ghost", "notes"} {
		if out, err := exec.Command("tmux", srv.Args("new-session", "-d", "-s", s, "-x", "200", "-y", "50", "-c", dir, "--", tuiAgent(t))...).CombinedOutput(); err != nil {
			t.Fatalf("session %s: %v\n%s", s, err, out)
		}
	}
	runs := func(s string) bool {
		return exec.Command("tmux", srv.Args("has-session", "-t", "="+s)...).Run() == nil
	}
	in := blackbox.ServeRepo(t, dir)
	if !blackbox.Eventually(30*time.Second, 100*time.Millisecond, func() bool { return !runs("wilco-ghost") }) {
		t.Fatalf("the session of no agent runs on:\n%s", blackbox.Tail(in.Stderr.String(), 30))
	}
	if !runs("wilco-tui") || !runs("notes") {
		t.Fatalf("a session was ended that was not a stray one: wilco-tui %v, notes %v", runs("wilco-tui"), runs("notes"))
	}
	blackbox.MustContain(t, "the server's log", in.Stderr.String(), "wilco-ghost")
	// The configured agent works in the session it found.
	in.Submit(map[string]any{"id": "T-1", "description": "Please write the fix into file.txt."})
	if got := in.WaitTask("T-1", 2*time.Minute, "success", "escalated", "stuck"); got.State != "success" {
		t.Fatalf("the task:\n%s\nserver:\n%s", got, blackbox.Tail(in.Stderr.String(), 40))
	}
}
