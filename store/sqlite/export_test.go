package sqlite

import (
	"context"
	"os"
	"strconv"
)

// WithTuningFromEnv overrides the tuning defaults from WILCO_SQLITE_*
// environment variables, so that benchmarks can compare settings without
// editing the code:
//
//	WILCO_SQLITE_PAGE_SIZE=8192 go test -run X -bench Commit ./store/sqlite
func WithTuningFromEnv() Option {
	return func(c *config) {
		for name, field := range map[string]*int{
			"WILCO_SQLITE_PAGE_SIZE":          &c.tuning.pageSize,
			"WILCO_SQLITE_WRITER_CACHE_KIB":   &c.tuning.writerCacheKiB,
			"WILCO_SQLITE_READER_CACHE_KIB":   &c.tuning.readerCacheKiB,
			"WILCO_SQLITE_MMAP_SIZE":          &c.tuning.mmapSize,
			"WILCO_SQLITE_CHECKPOINT_BYTES":   &c.tuning.checkpointBytes,
			"WILCO_SQLITE_WAL_RESTART_BYTES":  &c.tuning.walRestartBytes,
			"WILCO_SQLITE_WAL_AUTOCHECKPOINT": &c.tuning.walAutocheckpoint,
			"WILCO_SQLITE_JOURNAL_SIZE_LIMIT": &c.tuning.journalSizeLimit,
			"WILCO_SQLITE_MULTI_ROW_MAX":      &c.tuning.multiRowMax,
		} {
			if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
				*field = v
			}
		}
	}
}

// WithCheckpointBytes sets how much is committed between two background
// checkpoints.
func WithCheckpointBytes(n int) Option {
	return func(c *config) { c.tuning.checkpointBytes = n }
}

// WithWALRestartBytes sets how large the WAL grows before a checkpoint
// holds the writer off to restart it.
func WithWALRestartBytes(n int) Option {
	return func(c *config) { c.tuning.walRestartBytes = n }
}

// OnCheckpoint registers f to be called after each background checkpoint.
// Call it before the first Commit.
func (s *Store) OnCheckpoint(f func(logFrames, checkpointed int, err error)) {
	s.ckpt.onCheckpoint = f
}

// WALRestarts reads how many times the WAL of the database at path started
// over, from the WAL's header.
func WALRestarts(path string) (uint32, bool) { return walRestarts(path) }

// OnCheckpointStep registers f to be called with each step of a background
// checkpoint ("pass", "sync", "hold", "release"). Call it before the first
// Commit.
func (s *Store) OnCheckpointStep(f func(step string)) {
	s.ckpt.onStep = f
}

// WriterPragma reads a pragma on the writer connection.
func (s *Store) WriterPragma(name string) (string, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var v string
	err := s.w.QueryRowContext(context.Background(), "PRAGMA "+name).Scan(&v)
	return v, err
}

// ReaderPragma reads a pragma on a reader connection.
func (s *Store) ReaderPragma(name string) (string, error) {
	var v string
	err := s.r.QueryRowContext(context.Background(), "PRAGMA "+name).Scan(&v)
	return v, err
}
