package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// checkpointer copies the WAL back into the database file on its own
// connection and goroutine, so that Commit never pays for it.
//
// SQLite's automatic checkpoint runs inside the COMMIT that makes the WAL
// cross its threshold: that commit then writes and fsyncs thousands of pages
// while every caller waiting for it waits too. Here the writer only counts
// what it wrote and, past the threshold, kicks the checkpointer; a PASSIVE
// checkpoint runs alongside later commits without blocking them, and the
// writer restarts the WAL from its beginning at the first commit after a
// complete checkpoint.
type checkpointer struct {
	db        *sql.DB
	threshold int64 // estimated bytes written between checkpoints

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
}

func startCheckpointer(db *sql.DB, threshold int64) *checkpointer {
	c := &checkpointer{
		db:        db,
		threshold: threshold,
		kick:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
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

// checkpoint runs one PASSIVE checkpoint: it copies as much of the WAL as no
// reader still needs, and waits for no lock.
func (c *checkpointer) checkpoint() (logFrames, checkpointed int, err error) {
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
