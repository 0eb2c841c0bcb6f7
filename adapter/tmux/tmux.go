package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// lookPath finds a program on the PATH.
var lookPath = exec.LookPath

// historyWindow is how many lines of scrollback a capture reads.
const historyWindow = 3000

// Server is one tmux server, reached by its socket: a path (-S), a name
// (-L), or the user's default server when both are empty.
type Server struct {
	// Program is the tmux binary (default: tmux on the PATH).
	Program string
	// Socket is the server's socket path; Name its socket name.
	Socket, Name string
	// Conf is the configuration file the server starts with (-f); only
	// used by the command that starts it.
	Conf string
	// Env is the environment tmux commands run with: a server started by
	// wilco passes it on to every session.
	Env []string
}

// Args returns the command line that reaches this server.
func (s Server) Args(args ...string) []string {
	var out []string
	switch {
	case s.Socket != "":
		out = append(out, "-S", s.Socket)
	case s.Name != "":
		out = append(out, "-L", s.Name)
	}
	if s.Conf != "" {
		out = append(out, "-f", s.Conf)
	}
	return append(out, args...)
}

func (s Server) program() string {
	if s.Program != "" {
		return s.Program
	}
	return "tmux"
}

// run runs one tmux command line (several commands joined by ";").
func (s Server) run(ctx context.Context, stdin []byte, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.program(), s.Args(args...)...)
	if s.Env != nil {
		cmd.Env = s.Env
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			return out.String(), fmt.Errorf("tmux %s: %w", args[0], err)
		}
		return out.String(), fmt.Errorf("tmux %s: %s", args[0], msg)
	}
	return out.String(), nil
}

// ErrNoSession is returned for a session that does not exist.
var ErrNoSession = errors.New("no such tmux session")

// target names a session's current pane exactly.
func target(session string) string { return "=" + session + ":" }

// HasSession reports whether the session exists.
func (s Server) HasSession(ctx context.Context, session string) bool {
	_, err := s.run(ctx, nil, "has-session", "-t", "="+session)
	return err == nil
}

// NewSession starts a detached session running argv in dir, its pane kept
// after the program exits (remain-on-exit) so that its last lines and exit
// status can be read.
func (s Server) NewSession(ctx context.Context, session, dir string, env []string, argv []string, width, height int) error {
	args := []string{"new-session", "-d", "-s", session, "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), "-c", dir}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	args = append(args, "--")
	args = append(args, argv...)
	args = append(args, ";", "set-option", "-w", "-t", target(session), "remain-on-exit", "on")
	var err error
	for try := 0; try < 5; try++ {
		// A server whose last session just ended exits: the command may
		// reach it as it goes, and starts a new one when tried again.
		if _, err = s.run(ctx, nil, args...); err == nil || !serverGone(err) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// serverGone reports whether err says the tmux server went away under the
// command.
func serverGone(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "server exited unexpectedly") || strings.Contains(msg, "lost server") || strings.Contains(msg, "no server running")
}

// Respawn runs argv again in a session's pane whose program exited (or,
// with kill, in place of the one running).
func (s Server) Respawn(ctx context.Context, session, dir string, env []string, argv []string, kill bool) error {
	args := []string{"respawn-pane", "-t", target(session), "-c", dir}
	if kill {
		args = append(args, "-k")
	}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	args = append(args, "--")
	args = append(args, argv...)
	args = append(args, ";", "set-option", "-w", "-t", target(session), "remain-on-exit", "on", ";", "clear-history", "-t", target(session))
	_, err := s.run(ctx, nil, args...)
	return err
}

// PaneProgram says whether a session's pane is dead, the program in its
// foreground, and the command the pane was started with.
func (s Server) PaneProgram(ctx context.Context, session string) (dead bool, command, start string, err error) {
	out, err := s.run(ctx, nil, "display-message", "-p", "-t", target(session), "#{pane_dead}|#{pane_current_command}|#{pane_start_command}")
	if err != nil {
		return false, "", "", err
	}
	f := strings.SplitN(strings.TrimSpace(out), "|", 3)
	for len(f) < 3 {
		f = append(f, "")
	}
	return f[0] == "1", f[1], f[2], nil
}

// KillSession ends a session and everything that runs in it.
func (s Server) KillSession(ctx context.Context, session string) error {
	_, err := s.run(ctx, nil, "kill-session", "-t", "="+session)
	return err
}

// ListSessions names the server's sessions (none when no server runs).
func (s Server) ListSessions(ctx context.Context) ([]string, error) {
	out, err := s.run(ctx, nil, "list-sessions", "-F", "#{session_name}")
	if err != nil {
		if noServer(err) {
			return nil, nil
		}
		return nil, err
	}
	return strings.Fields(out), nil
}

// noServer reports whether err says no tmux server runs on the socket, or
// one that has no session left (it is about to exit: "no current
// target").
func noServer(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "no server running") || strings.Contains(msg, "error connecting") || strings.Contains(msg, "no current target")
}

// EndSession ends a session and everything that runs in it, and says
// whether there was one to end: a session already gone (or gone under the
// command) is no error.
func (s Server) EndSession(ctx context.Context, session string) (ended bool, err error) {
	if runs, err := s.sessionRuns(ctx, session); !runs {
		return false, err
	}
	if err := s.KillSession(ctx, session); err != nil {
		if runs, rerr := s.sessionRuns(ctx, session); !runs && rerr == nil {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// sessionRuns says whether a session exists, telling its absence (no such
// session, no server, no tmux) from a failure to find out.
func (s Server) sessionRuns(ctx context.Context, session string) (bool, error) {
	_, err := s.run(ctx, nil, "has-session", "-t", "="+session)
	switch {
	case err == nil:
		return true, nil
	case strings.Contains(err.Error(), "can't find session"), noServer(err), serverGone(err), errors.Is(err, exec.ErrNotFound):
		return false, nil
	}
	return false, err
}

// KillServer ends the server (its sessions with it).
func (s Server) KillServer(ctx context.Context) error {
	_, err := s.run(ctx, nil, "kill-server")
	return err
}

// Paste puts text into the pane as one bracketed paste (the program sees
// it as pasted, not typed: its newlines do not submit it), through a
// buffer of its own that the paste deletes.
func (s Server) Paste(ctx context.Context, session, buffer, text string) error {
	if _, err := s.run(ctx, []byte(text), "load-buffer", "-b", buffer, "-"); err != nil {
		return err
	}
	_, err := s.run(ctx, nil, "paste-buffer", "-p", "-d", "-b", buffer, "-t", target(session))
	return err
}

// SendKeys sends keys by their tmux names (Enter, C-m, Escape, C-c, Up…;
// anything else is typed as it is).
func (s Server) SendKeys(ctx context.Context, session string, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	_, err := s.run(ctx, nil, append([]string{"send-keys", "-t", target(session)}, keys...)...)
	return err
}

// Pane is one capture of a session's pane.
type Pane struct {
	Screen Screen
	Dead   bool
	// ExitStatus of the program, when it is dead (-1 when tmux cannot
	// tell yet, or it was killed by a signal: Signal then).
	ExitStatus int
	Signal     int
	PID        int
}

const paneFormat = "#{pane_dead}|#{pane_dead_status}|#{pane_width}|#{pane_height}|#{history_size}|#{pane_pid}|#{pane_dead_signal}"

// separator between the parts of one capture.
const captureMark = "@@wilco-capture@@"

// Capture reads a session's pane: its state, its scrollback (the last
// historyWindow lines) and its screen, in one tmux command.
func (s Server) Capture(ctx context.Context, session string) (Pane, error) {
	t := target(session)
	out, err := s.run(ctx, nil, "display-message", "-p", "-t", t, paneFormat,
		";", "capture-pane", "-p", "-e", "-J", "-t", t, "-S", "-"+strconv.Itoa(historyWindow), "-E", "-1",
		";", "display-message", "-p", captureMark,
		";", "capture-pane", "-p", "-e", "-J", "-t", t)
	if err != nil {
		if strings.Contains(err.Error(), "can't find") || strings.Contains(err.Error(), "no server running") || strings.Contains(err.Error(), "error connecting") {
			return Pane{}, fmt.Errorf("%w: %s (%v)", ErrNoSession, session, err)
		}
		return Pane{}, err
	}
	head, rest, _ := strings.Cut(out, "\n")
	f := strings.Split(strings.TrimSpace(head), "|")
	if len(f) != 7 {
		return Pane{}, fmt.Errorf("tmux: unexpected pane state %q", head)
	}
	var p Pane
	p.Dead = f[0] == "1"
	p.ExitStatus = -1
	if f[1] != "" {
		p.ExitStatus, _ = strconv.Atoi(f[1])
	}
	width, _ := strconv.Atoi(f[2])
	histSize, _ := strconv.Atoi(f[4])
	p.PID, _ = strconv.Atoi(f[5])
	if f[6] != "" {
		p.Signal, _ = strconv.Atoi(f[6])
	}
	history, screen, ok := strings.Cut(rest, captureMark+"\n")
	if !ok {
		return Pane{}, fmt.Errorf("tmux: unexpected capture")
	}
	if histSize == 0 {
		history = "" // with no scrollback tmux gives the screen's first line
	}
	p.Screen = ParseScreen(history, screen, width)
	return p, nil
}

// PrivateServer is the tmux server wilco runs for the sessions it makes
// for one state directory: its socket is tmux.sock there (or, when that
// path is too long for a socket, a socket name made from it), and it
// starts with wilco's own configuration file (none of the user's).
func PrivateServer(program, stateDir string, env []string) (Server, error) {
	dir, err := filepath.Abs(stateDir)
	if err != nil {
		return Server{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Server{}, err
	}
	conf := filepath.Join(dir, "tmux.conf")
	const confText = "# wilco's tmux server for its agents' sessions (written by wilco).\n" +
		"set -g history-limit 50000\nset -g remain-on-exit on\nset -g status off\nset -s escape-time 10\n"
	if b, err := os.ReadFile(conf); err != nil || string(b) != confText {
		if err := os.WriteFile(conf, []byte(confText), 0o600); err != nil {
			return Server{}, err
		}
	}
	s := Server{Program: program, Conf: conf, Env: env}
	sock := filepath.Join(dir, "tmux.sock")
	if len(sock) < 100 {
		s.Socket = sock
	} else {
		s.Name = fmt.Sprintf("wilco-%x", fnv32(dir))
	}
	return s, nil
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}
