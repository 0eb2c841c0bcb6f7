package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// checkpointer copies the WAL back into the database file on its own
// connection and goroutine, so that Commit never pays for it.
//
// SQLite's automatic checkpoint runs inside the COMMIT that makes the WAL
// cross its threshold: that commit then writes and fsyncs thousands of pages
// while every caller waiting for it waits too. Here the writer only counts
// what it wrote and, past the threshold, kicks the checkpointer; PASSIVE
// checkpoints run alongside later commits without blocking them, and the
// writer restarts the WAL from its beginning at the first commit after a
// complete checkpoint.
//
// A checkpoint is only complete when it copied the whole WAL, and a PASSIVE
// one copies what the WAL held when it began: under a steady stream of
// commits it never catches up, the WAL is never restarted and grows without
// end (a gigabyte in seconds of the delivery benchmark), and every write
// lands on new blocks of the file. So once the WAL is larger than
// restartFrames, a checkpoint adds a second pass with the writer held off:
// short, since it copies only what was committed during the first, and
// complete, so that the next commit starts the WAL over. Holding the writer
// costs the commits of that moment the pass's two fsyncs, so it is not done
// at every checkpoint: an idle moment restarts the WAL for free, and only a
// steady stream of commits needs the second pass. Nor is it done when the
// WAL restarted on its own since the checkpoint began (a pass caught up
// and a commit began after it): the WAL's header counts restarts.
//
// Those fsyncs are kept short. SQLite syncs the database file only at the
// end of a complete pass, and under a steady stream of commits no pass but
// the held one is complete: the pages every earlier pass wrote since the
// last restart (hundreds of megabytes in the delivery benchmark) would wait
// for the held pass to flush them, 40 to 90 ms with every commit waiting.
// So before it holds the writer, the checkpointer syncs the database file
// itself and runs one more pass, both alongside the commits; the held pass
// then copies and syncs only the last few milliseconds' pages.
type checkpointer struct {
	db        *sql.DB
	path      string // of the database file, for syncing it
	threshold int64  // estimated bytes written between checkpoints
	// hold keeps commits out until the returned function is called.
	hold func() (release func())
	// restartFrames is the WAL size, in frames, past which a checkpoint
	// makes sure the WAL restarts.
	restartFrames int

	pending atomic.Int64 // estimated bytes committed since the last kick
	kick    chan struct{}
	stop    chan struct{}
	wg      sync.WaitGroup

	mu      sync.Mutex
	lastErr error // of the last checkpoint; nil once one succeeds

	// onCheckpoint, when set (by tests, before the first commit), is
	// called after each checkpoint with the WAL's size in frames, how many
	// of them are now in the database, and the error.
	onCheckpoint func(logFrames, checkpointed int, err error)
	// onStep, when set (by tests, before the first commit), is called with
	// each step of a checkpoint: "pass", "sync", "hold" (the writer is
	// held, for the next pass) and "release".
	onStep func(step string)
}

func startCheckpointer(db *sql.DB, path string, threshold int64, restartFrames int, hold func() func()) *checkpointer {
	c := &checkpointer{
		db:            db,
		path:          path,
		threshold:     threshold,
		hold:          hold,
		restartFrames: restartFrames,
		kick:          make(chan struct{}, 1),
		stop:          make(chan struct{}),
	}
	c.wg.Go(c.run)
	return c
}

// wrote records that a commit wrote about n bytes, and kicks the
// checkpointer when enough has accumulated. It never blocks.
func (c *checkpointer) wrote(n int64) {
	if c.pending.Add(n) < c.threshold {
		return
	}
	c.pending.Store(0)
	select {
	case c.kick <- struct{}{}:
	default: // a checkpoint is already due
	}
}

func (c *checkpointer) run() {
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		logFrames, checkpointed, err := c.checkpoint()
		c.mu.Lock()
		c.lastErr = err
		c.mu.Unlock()
		if c.onCheckpoint != nil {
			c.onCheckpoint(logFrames, checkpointed, err)
		}
	}
}

// checkpoint copies the WAL into the database (see checkpointer).
func (c *checkpointer) checkpoint() (logFrames, checkpointed int, err error) {
	// Read before the first pass: a restart from here on means the WAL
	// started over without a hold.
	restarts, known := walRestarts(c.path)
	logFrames, checkpointed, err = c.pass()
	if err != nil || logFrames <= c.restartFrames {
		return logFrames, checkpointed, err
	}
	restarted := func() bool {
		n, ok := walRestarts(c.path)
		return known && ok && n != restarts
	}
	// Even a pass that copied everything it saw does not do: a commit that
	// began during it wrote past it, and the WAL restarts only at a commit
	// that begins with all of it copied. Flush what the passes wrote and
	// catch up first, so that the held pass is short.
	if err := c.syncDB(); err != nil {
		return logFrames, checkpointed, err
	}
	if logFrames, checkpointed, err = c.pass(); err != nil || restarted() {
		return logFrames, checkpointed, err
	}
	release := c.hold()
	// A pass that caught up, and a commit that began after it, restart
	// the WAL without a hold; no commit runs now, so the WAL's header
	// tells.
	if restarted() {
		release()
		return logFrames, checkpointed, nil
	}
	c.step("hold")
	defer func() {
		release()
		c.step("release")
		// What was counted until now is copied: the next checkpoint is
		// due a threshold after the WAL restarts, not at once.
		c.pending.Store(0)
		select {
		case <-c.kick:
		default:
		}
	}()
	return c.pass()
}

// walRestarts reads how many times the WAL of the database at path started
// over: the checkpoint sequence number in its header, which SQLite counts
// up at each restart and writes with the first frame after it. ok is false
// when the WAL cannot be read (a checkpoint then takes it as not
// restarted).
func walRestarts(path string) (n uint32, ok bool) {
	f, err := os.Open(path + "-wal")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var hdr [16]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return 0, false
	}
	return binary.BigEndian.Uint32(hdr[12:16]), true
}

// syncDB flushes the database file's written pages to the disk.
func (c *checkpointer) syncDB() error {
	c.step("sync")
	f, err := os.OpenFile(c.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("checkpoint: sync the database: %w", err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("checkpoint: sync the database: %w", err)
	}
	return nil
}

func (c *checkpointer) step(name string) {
	if c.onStep != nil {
		c.onStep(name)
	}
}

// pass runs one PASSIVE checkpoint: it copies as much of the WAL as no
// reader still needs, and waits for no lock.
func (c *checkpointer) pass() (logFrames, checkpointed int, err error) {
	c.step("pass")
	var busy int
	err = c.db.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logFrames, &checkpointed)
	if err != nil {
		return 0, 0, fmt.Errorf("checkpoint: %w", err)
	}
	return logFrames, checkpointed, nil
}

// close stops the checkpointer and reports the error of its last
// checkpoint, if that one failed.
func (c *checkpointer) close() error {
	close(c.stop)
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return errors.Join(c.lastErr, c.db.Close())
}
