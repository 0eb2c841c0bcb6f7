// Package pgtemp starts a throw-away PostgreSQL server for tests and
// benchmarks: a new cluster made by initdb in a temporary directory, which
// listens on a unix socket in that directory only (no TCP port), and is
// stopped and removed by Stop.
//
// The server's programs are found on PATH, else in Debian's
// /usr/lib/postgresql/<version>/bin (the newest version), else in the
// directory named by WILCO_PGBIN. PostgreSQL refuses to run as root: when
// the process is root, initdb and the server run as the unprivileged user
// named by WILCO_PGUSER (default "nobody"), which owns the temporary
// directory; the tests, still root, reach the socket anyway.
package pgtemp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables.
const (
	// EnvBin names a directory that holds initdb and postgres.
	EnvBin = "WILCO_PGBIN"
	// EnvUser names the user the server runs as when the process is root.
	EnvUser = "WILCO_PGUSER"
)

// ErrNoServer is returned by Start when no PostgreSQL programs are found.
var ErrNoServer = errors.New("pgtemp: no PostgreSQL server programs (initdb, postgres) on PATH, in /usr/lib/postgresql/*/bin or in $" + EnvBin + "; install Debian's postgresql package")

// Server is a running throw-away cluster.
type Server struct {
	dir  string
	sock string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // of the server process, once done is closed

	stopOnce sync.Once
}

// Bin finds the directory of initdb and postgres.
func Bin() (string, error) {
	if d := os.Getenv(EnvBin); d != "" {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
			return "", fmt.Errorf("pgtemp: $%s: %w", EnvBin, err)
		}
		return d, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNoServer
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start makes a new cluster and starts its server. settings are more
// postgres -c options ("name=value").
func Start(ctx context.Context, settings ...string) (*Server, error) {
	bin, err := Bin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "wilco-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtemp: %w", err)
	}
	cred, err := credential(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{dir: dir, sock: filepath.Join(dir, "sock"), done: make(chan struct{})}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(s.sock, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtemp: %w", err)
	}
	if cred != nil {
		if err := os.Chown(s.sock, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtemp: %w", err)
		}
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "wilco",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtemp: initdb: %w\n%s", err, out)
	}
	args := []string{"-D", data, "-k", s.sock, "-c", "listen_addresses=", "-c", "max_connections=200",
		"-c", "shared_buffers=256MB", "-c", "wal_buffers=16MB", "-c", "max_wal_size=4GB", "-c", "logging_collector=off"}
	for _, set := range settings {
		args = append(args, "-c", set)
	}
	var log bytes.Buffer
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), args...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = &log, &log
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtemp: start postgres: %w", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	// Ready once the socket's lock file names a ready server; the socket
	// file itself appears a moment before it accepts logins.
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(data, "postmaster.pid"))
		if strings.Contains(string(b), "ready") {
			return s, nil
		}
		select {
		case <-s.done:
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtemp: postgres exited: %v\n%s", s.err, log.String())
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("pgtemp: postgres not ready after a minute\n%s", log.String())
		}
	}
}

// credential is the user to run the server as: nil (this process's) unless
// it is root, then WILCO_PGUSER or nobody, who is given dir.
func credential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	name := os.Getenv(EnvUser)
	if name == "" {
		name = "nobody"
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("pgtemp: PostgreSQL refuses to run as root, and user %q to run it as is unknown: %w (set $%s)", name, err, EnvUser)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("pgtemp: user %q: %w", name, err)
	}
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		return nil, fmt.Errorf("pgtemp: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// URL is the connection URL of database db on the server (user wilco, a
// superuser, no password).
func (s *Server) URL(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User("wilco"), Host: "", Path: "/" + db}
	q := url.Values{"host": {s.sock}}
	u.RawQuery = q.Encode()
	return u.String()
}

// SocketDir is the directory of the server's unix socket.
func (s *Server) SocketDir() string { return s.sock }

// Stop stops the server (fast shutdown) and removes its directory.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-s.done:
			case <-time.After(30 * time.Second):
				_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
				<-s.done
			}
		}
		os.RemoveAll(s.dir)
	})
}

// CreateDatabase creates a new, empty database on the server and returns
// its URL.
func (s *Server) CreateDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtemp: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgtemp: create database %s: %w", name, err)
	}
	return s.URL(name), nil
}

// Main is the body of a TestMain whose tests share one server: it starts
// the server, hands it to run (with ErrNoServer, and a nil server, where
// none can be installed: each test then skips saying so), stops it, and
// exits with run's code. Any other failure to start exits at once.
func Main(run func(srv *Server, err error) int) {
	srv, err := Start(context.Background())
	if err != nil && !errors.Is(err, ErrNoServer) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := run(srv, err)
	if srv != nil {
		srv.Stop()
	}
	os.Exit(code)
}
