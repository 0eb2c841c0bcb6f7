package blackbox

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tmuxadapter "wilco/adapter/tmux"
)

// NeedTmux skips a test when tmux cannot be run, saying why.
func NeedTmux(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("tmux")
	if err != nil {
		t.Skipf("tmux is not installed (apt-get install tmux): %v", err)
	}
	return path
}

// EndTmux ends the tmux server wilco started for the repository's agents
// once the test is over (wilco leaves its agents' sessions running), and
// waits for the programs in its panes, and their children, to be gone.
func EndTmux(t testing.TB, dir string) {
	t.Cleanup(func() {
		// wilco's server for the repository: its socket in .wilco, or, for
		// a path too long for a socket, a name made from it.
		srv, err := tmuxadapter.PrivateServer("", filepath.Join(dir, ".wilco"), nil)
		if err != nil {
			t.Error(err)
			return
		}
		out, _ := exec.Command("tmux", srv.Args("list-panes", "-a", "-F", "#{pane_pid}")...).Output()
		_ = exec.Command("tmux", srv.Args("kill-server")...).Run()
		for _, f := range strings.Fields(string(out)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			// The pane's program leads a process group of its own (the
			// shell around the agent's program, the program, its
			// children): wait until none of it is left.
			Eventually(15*time.Second, 50*time.Millisecond, func() bool {
				return syscall.Kill(-pid, 0) != nil && syscall.Kill(pid, 0) != nil
			})
		}
	})
}

// EndPanes ends a tmux server the test started itself and the programs in
// its panes: Gemini CLI goes on running once its terminal hung up, so what
// is left of a pane's process group a moment later is terminated.
func EndPanes(srv tmuxadapter.Server) {
	out, _ := exec.Command("tmux", srv.Args("list-panes", "-a", "-F", "#{pane_pid}")...).Output()
	_ = srv.KillServer(context.Background())
	for _, f := range strings.Fields(string(out)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		gone := func() bool { return syscall.Kill(-pid, 0) != nil }
		if !Eventually(2*time.Second, 50*time.Millisecond, gone) {
			_ = syscall.Kill(-pid, syscall.SIGTERM)
			if !Eventually(5*time.Second, 50*time.Millisecond, gone) {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	}
}

// TmuxServer is wilco's tmux server for the repository at dir.
func TmuxServer(t testing.TB, dir string) tmuxadapter.Server {
	t.Helper()
	srv, err := tmuxadapter.PrivateServer("", filepath.Join(dir, ".wilco"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}
