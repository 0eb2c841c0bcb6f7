package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// LockFile is the file in the state directory that a serving wilco holds
// an exclusive lock on, for as long as it runs: a second wilco on the same
// repository (wilco serve, or the server wilco run starts in its process)
// would share its database and corrupt it. The file says who holds it.
const LockFile = "server.json"

// lockPatience is how long lockRepo tries before it gives up.
const lockPatience = 500 * time.Millisecond

// Holder is what the lock file says of the wilco that holds it.
type Holder struct {
	PID     int       `json:"pid"`
	URL     string    `json:"url,omitempty"`
	Started time.Time `json:"started"`
}

// ErrLocked is returned (wrapped, in a *LockedError) when another wilco
// serves the repository.
var ErrLocked = errors.New("another wilco serves this repository")

// LockedError names the wilco that holds the repository's lock.
type LockedError struct {
	Dir    string
	Holder Holder
}

func (e *LockedError) Error() string {
	who := "another wilco"
	if e.Holder.PID > 0 {
		who = fmt.Sprintf("another wilco (pid %d)", e.Holder.PID)
	}
	at := ""
	if e.Holder.URL != "" {
		at = " at " + e.Holder.URL
	}
	return fmt.Sprintf("%s already serves this repository%s (its state is %s): use that one (wilco status, wilco run talk to it), or stop it first",
		who, at, e.Dir)
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// repoLock is the held lock.
type repoLock struct {
	f      *os.File
	holder Holder
}

// lockRepo takes the exclusive lock of the state directory dir without
// waiting. The lock goes with the process: a wilco killed with SIGKILL
// leaves the file, not the lock.
func lockRepo(dir string) (*repoLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("daemon: lock %s: %w", path, err)
	}
	// A lock just given up may still be held for a moment by a child
	// process forked before it was (the descriptor closes at its exec):
	// try for a short while before saying another wilco holds it.
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	for deadline := time.Now().Add(lockPatience); errors.Is(err, syscall.EWOULDBLOCK) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			var h Holder
			b, _ := os.ReadFile(path)
			_ = json.Unmarshal(b, &h)
			return nil, &LockedError{Dir: dir, Holder: h}
		}
		return nil, fmt.Errorf("daemon: lock %s: %w", path, err)
	}
	l := &repoLock{f: f, holder: Holder{PID: os.Getpid(), Started: time.Now().UTC()}}
	if err := l.write(); err != nil {
		l.release()
		return nil, err
	}
	return l, nil
}

// setURL records the address the holder serves at.
func (l *repoLock) setURL(url string) error {
	l.holder.URL = strings.TrimSpace(url)
	return l.write()
}

func (l *repoLock) write() error {
	b, _ := json.Marshal(l.holder)
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("daemon: lock file: %w", err)
	}
	if _, err := l.f.WriteAt(append(b, '\n'), 0); err != nil {
		return fmt.Errorf("daemon: lock file: %w", err)
	}
	return nil
}

// release empties the file and gives the lock up.
func (l *repoLock) release() {
	if l == nil || l.f == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = l.f.Close()
	l.f = nil
}
