package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"wilco/store"
)

// tuning holds the knobs of the database. The defaults were chosen with the
// benchmarks in bench_test.go (WithTuningFromEnv there overrides them); the
// numbers are in docs/BENCHMARKS.md.
type tuning struct {
	// pageSize is the page size of a new database, fixed when the file is
	// created. 8 and 16 KiB measured no better than 4 KiB for commits
	// of 100 and 1000 events, and a small commit writes fewer bytes.
	pageSize int
	// writerCacheKiB is the page cache of the writer connection: room for
	// the inner pages of the indexes of a large log, so that inserts find
	// their leaf without reading.
	writerCacheKiB int
	// readerCacheKiB is the page cache of each reader connection. The
	// operating system caches the file anyway; a larger cache measured
	// slower for Load, which reads every record once.
	readerCacheKiB int
	// mmapSize is how much of the database file connections map into
	// memory. Mapping measured no faster for Load or Commit, and an I/O
	// error on a mapped page is a signal rather than an error, so it is off.
	mmapSize int
	// checkpointBytes is how much the writer commits (estimated from the
	// batches' sizes) between two background checkpoints. 0 leaves
	// checkpoints to SQLite, inside the commit that crosses
	// walAutocheckpoint. Each pass fsyncs what the WAL gained since the
	// last (about three times this: pages are written whole), and the
	// kernel spends that flush on one of the cores: small passes are short
	// bursts. Against 8 MB, 2 MB took the delivery benchmark's p99 from
	// 7.4 to 5.7 and from 6.2 to 4.9 ms; 1 MB measured 5.5 ms.
	checkpointBytes int
	// walRestartBytes is how large the WAL may grow under a steady stream
	// of commits before a checkpoint holds the writer off to restart it
	// (see checkpointer).
	walRestartBytes int
	// walAutocheckpoint is how large the WAL grows (in pages) before a
	// commit copies it back into the database, when checkpointBytes is 0.
	walAutocheckpoint int
	// journalSizeLimit is the size the WAL is truncated to when it
	// restarts, so that a burst does not leave a huge file behind. It is
	// above walRestartBytes: truncating the WAL of a steady stream at each
	// restart took the restarting commit 70 to 90 ms.
	journalSizeLimit int
	// multiRowMax is the most rows one INSERT or DELETE statement takes.
	// Against one statement per row it saves a quarter of the CPU of a
	// commit of 1000 events and their records. With modernc.org/sqlite
	// v1.61 64, 256 and 1024 measure the same; before it, binding is
	// quadratic in the number of parameters, and 64 (384 parameters) is
	// 20% cheaper than 256.
	multiRowMax int
	// busyTimeoutMillis is how long a connection waits for a lock held by
	// another connection (a checkpoint, another process) before failing.
	busyTimeoutMillis int
}

var defaultTuning = tuning{
	pageSize:          4096,
	writerCacheKiB:    16 << 10,
	readerCacheKiB:    2000, // SQLite's default
	mmapSize:          0,
	checkpointBytes:   2 << 20,
	walRestartBytes:   256 << 20,
	walAutocheckpoint: 1000, // SQLite's default
	journalSizeLimit:  512 << 20,
	multiRowMax:       64,
	busyTimeoutMillis: 10_000,
}

// Option configures Open.
type Option func(*config)

type config struct {
	fullSync bool
	readers  int
	tuning   tuning
}

// WithFullSync makes every Commit fsync the WAL before it returns
// (synchronous=FULL): a committed batch then survives power loss and kernel
// crashes too, not only a crash of the process. It costs one fsync per
// Commit; see the package documentation.
func WithFullSync() Option {
	return func(c *config) { c.fullSync = true }
}

// WithReaders sets the size of the reader connection pool (default: twice
// GOMAXPROCS, at least 4).
func WithReaders(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.readers = n
		}
	}
}

// Store is a store.Store kept in one SQLite database file.
type Store struct {
	path string

	// w is the writer: exactly one connection, used only under wmu.
	w   *sql.DB
	wmu sync.Mutex
	ins writeStmts // prepared on w, guarded by wmu

	// last is the seq of the newest committed event. Written under wmu
	// after a successful commit, read by anyone.
	last atomic.Uint64

	// r is the pool of reader connections (query_only).
	r *sql.DB

	// ckpt checkpoints the WAL in the background; nil when SQLite's own
	// automatic checkpoint is used instead.
	ckpt *checkpointer

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var _ store.Store = (*Store)(nil)

// Open opens the store kept at path, creating the file (and its parent
// directory) and the schema if missing, and upgrading the schema if it is
// older than this code.
func Open(path string, opts ...Option) (*Store, error) {
	cfg := config{readers: max(4, 2*runtime.GOMAXPROCS(0)), tuning: defaultTuning}
	for _, o := range opts {
		o(&cfg)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: create directory: %w", abs, err)
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("sqlite: open %s: is a directory", abs)
	}

	s := &Store{path: abs}
	if err := s.open(cfg); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	return s, nil
}

func (s *Store) open(cfg config) error {
	ctx := context.Background()
	writerPragmas := cfg.writerPragmas()
	if err := s.openWriter(ctx, cfg.tuning, writerPragmas); err != nil {
		return err
	}
	if err := s.openReaders(ctx, cfg); err != nil {
		return err
	}
	if cfg.tuning.checkpointBytes > 0 {
		return s.openCheckpointer(ctx, cfg.tuning, writerPragmas)
	}
	return nil
}

// writerPragmas are the pragmas of a connection that writes.
func (cfg config) writerPragmas() []string {
	syncMode := "NORMAL"
	if cfg.fullSync {
		syncMode = "FULL"
	}
	t := cfg.tuning
	autocheckpoint := t.walAutocheckpoint
	if t.checkpointBytes > 0 {
		autocheckpoint = 0
	}
	return []string{
		"busy_timeout(" + strconv.Itoa(t.busyTimeoutMillis) + ")",
		"synchronous(" + syncMode + ")",
		"cache_size(-" + strconv.Itoa(t.writerCacheKiB) + ")",
		"mmap_size(" + strconv.Itoa(t.mmapSize) + ")",
		"wal_autocheckpoint(" + strconv.Itoa(autocheckpoint) + ")",
		"journal_size_limit(" + strconv.Itoa(t.journalSizeLimit) + ")",
		"temp_store(MEMORY)",
	}
}

// single makes db one connection, kept open.
func single(db *sql.DB) {
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
}

// openWriter opens the one connection that writes, makes the file WAL,
// migrates it, prepares the inserts and reads the last sequence number.
func (s *Store) openWriter(ctx context.Context, t tuning, pragmas []string) error {
	var err error
	s.w, err = sql.Open("sqlite", dsn(s.path, pragmas, "_txlock=immediate"))
	if err != nil {
		return err
	}
	single(s.w)

	// page_size only takes effect before the file has content, and
	// journal_mode=WAL is kept in the file: both are set once, here, rather
	// than on every connection.
	if _, err := s.w.ExecContext(ctx, "PRAGMA page_size = "+strconv.Itoa(t.pageSize)); err != nil {
		return fmt.Errorf("set page size: %w", err)
	}
	var mode string
	if err := s.w.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return fmt.Errorf("set WAL mode: %w", err)
	}
	if mode != "wal" {
		return fmt.Errorf("set WAL mode: journal mode is still %q", mode)
	}
	if err := migrate(ctx, s.w); err != nil {
		return err
	}
	if err := s.ins.prepare(ctx, s.w, t.multiRowMax); err != nil {
		return err
	}
	var last int64
	if err := s.ins.lastSeq.QueryRowContext(ctx).Scan(&last); err != nil {
		return fmt.Errorf("read last seq: %w", err)
	}
	s.last.Store(uint64(last))
	return nil
}

// openReaders opens the pool of read-only connections.
func (s *Store) openReaders(ctx context.Context, cfg config) error {
	t := cfg.tuning
	var err error
	s.r, err = sql.Open("sqlite", dsn(s.path, []string{
		"busy_timeout(" + strconv.Itoa(t.busyTimeoutMillis) + ")",
		"cache_size(-" + strconv.Itoa(t.readerCacheKiB) + ")",
		"mmap_size(" + strconv.Itoa(t.mmapSize) + ")",
		"query_only(1)",
	}))
	if err != nil {
		return err
	}
	s.r.SetMaxOpenConns(cfg.readers)
	s.r.SetMaxIdleConns(cfg.readers)
	s.r.SetConnMaxLifetime(0)
	s.r.SetConnMaxIdleTime(0)
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("open reader: %w", err)
	}
	return nil
}

// openCheckpointer opens the connection that checkpoints the WAL in the
// background, and starts it.
func (s *Store) openCheckpointer(ctx context.Context, t tuning, pragmas []string) error {
	db, err := sql.Open("sqlite", dsn(s.path, pragmas))
	if err != nil {
		return err
	}
	single(db)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return fmt.Errorf("open checkpointer: %w", err)
	}
	restart := t.walRestartBytes / (t.pageSize + 24) // a frame: a page and its header
	s.ckpt = startCheckpointer(db, s.path, int64(t.checkpointBytes), restart, func() func() {
		s.wmu.Lock()
		return s.wmu.Unlock
	})
	return nil
}

// dsn builds a modernc.org/sqlite data source name for path: a file: URI, so
// that any character in the path is escaped rather than taken for a
// parameter.
func dsn(path string, pragmas []string, extra ...string) string {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	for _, e := range extra {
		k, v, _ := strings.Cut(e, "=")
		q.Add(k, v)
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}
	return u.String()
}

// Path is the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close releases the store: it waits for a Commit in progress, and every
// call after it (or a read it interrupts) returns store.ErrClosed. Calling it
// again returns the first call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		// The checkpointer first: its last pass takes the write lock.
		var ckptErr error
		if s.ckpt != nil {
			ckptErr = s.ckpt.close()
		}
		// Wait for a Commit in progress, and keep later ones out.
		s.wmu.Lock()
		defer s.wmu.Unlock()
		s.closeErr = errors.Join(ckptErr, s.closeDBs())
		if s.closeErr != nil {
			s.closeErr = fmt.Errorf("sqlite: close %s: %w", s.path, s.closeErr)
		}
	})
	return s.closeErr
}

func (s *Store) closeDBs() error {
	var errs []error
	s.ins.close()
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		// Closing the last connection checkpoints the WAL and removes it.
		errs = append(errs, s.w.Close())
	}
	return errors.Join(errs...)
}

// fail wraps err with what was being done, and reports ErrClosed rather than
// the driver's error when the store was closed underneath the call.
func (s *Store) fail(err error, format string, args ...any) error {
	if s.closed.Load() && !errors.Is(err, store.ErrClosed) {
		return fmt.Errorf("sqlite: "+format+": %w (%w)", append(args, store.ErrClosed, err)...)
	}
	return fmt.Errorf("sqlite: "+format+": %w", append(args, err)...)
}
