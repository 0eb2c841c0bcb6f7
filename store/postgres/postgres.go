package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"wilco/store"
)

// ParamRepository is the query parameter of a store URL that names the
// repository inside the database; wilco takes it out before connecting.
const ParamRepository = "repository"

// Errors.
var (
	// ErrFenced is returned by Commit when the store's lease was taken
	// over or expired: another node may be writing the repository now.
	ErrFenced = fmt.Errorf("postgres: the lease was lost (fencing token refused): %w", store.ErrLeaseLost)
	// ErrNoLease is returned by Commit on a store that never acquired the
	// repository's lease.
	ErrNoLease = errors.New("postgres: commit without the repository's lease")
	// ErrLeaseHeld is returned by Acquire when another node holds the
	// lease.
	ErrLeaseHeld = errors.New("postgres: the lease is held by another node")
)

// errcodes raised by wilco_fence (see migrations).
const (
	codeFenced = "WL001"
	codeSeq    = "WL002"
)

// IsURL reports whether a store setting names a PostgreSQL database
// rather than a SQLite file.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// SplitURL takes the repository parameter out of a store URL: it returns
// the URL to connect with and the repository's name ("" when absent).
func SplitURL(raw string) (conn, repo string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("postgres: store URL: %w", err)
	}
	q := u.Query()
	repo = q.Get(ParamRepository)
	q.Del(ParamRepository)
	u.RawQuery = q.Encode()
	return u.String(), repo, nil
}

// Redact is the URL with its password hidden, for logs.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://…"
	}
	return u.Redacted()
}

// Group commit sizes for the runtime on this store. A commit costs a round
// trip and a flush of the server's WAL whatever its size, where SQLite's
// costs neither: the runtime gathers more turns into one commit here, and
// writes checkpoint copies in larger transactions (see docs/BENCHMARKS.md).
var (
	GroupCommitEvents = envInt("WILCO_PG_COMMIT_EVENTS", 2048)
	CheckpointChunk   = envInt("WILCO_PG_CHECKPOINT_CHUNK", 1024)
)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// Option configures Open.
type Option func(*config)

type config struct {
	maxConns int32
}

// WithMaxConns sets the size of the connection pool (default 8).
func WithMaxConns(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxConns = int32(n)
		}
	}
}

// Store is a store.Store for one repository in a PostgreSQL database.
type Store struct {
	repo string
	pool *pgxpool.Pool

	// wmu serialises Commit and Close.
	wmu sync.Mutex
	// token is the fencing token of the lease this store holds; 0: none.
	token atomic.Int64
	// fenced is set when the lease was found lost: Commit and Renew then
	// answer ErrFenced until the next Acquire.
	fenced atomic.Bool
	// last is the seq of the newest event, kept by the writer (valid while
	// token is not 0).
	last atomic.Uint64

	closed    atomic.Bool
	closeOnce sync.Once
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.RecordCounter = (*Store)(nil)
)

// Open connects to the database at connURL (a postgres:// URL or a
// keyword/value connection string), applies the schema migrations this
// wilco has and the database lacks, and returns the store of repository
// repo. It writes nothing to the repository until Acquire succeeds.
func Open(ctx context.Context, connURL, repo string, opts ...Option) (*Store, error) {
	if repo == "" {
		return nil, errors.New("postgres: open: no repository name")
	}
	cfg := config{maxConns: 8}
	for _, o := range opts {
		o(&cfg)
	}
	pc, err := pgxpool.ParseConfig(connURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	pc.MaxConns = cfg.maxConns
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: open %s: %w", Redact(connURL), err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open %s: %w", Redact(connURL), err)
	}
	return &Store{repo: repo, pool: pool}, nil
}

// Repository is the name of the store's repository.
func (s *Store) Repository() string { return s.repo }

// Close releases the lease (if held) and the connections. It waits for a
// Commit in progress; every call after it returns store.ErrClosed.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.wmu.Lock()
		defer s.wmu.Unlock()
		if t := s.token.Swap(0); t != 0 {
			s.release(context.Background(), t)
		}
		s.pool.Close()
	})
	return nil
}

// noLease is the error of a write without a token.
func (s *Store) noLease(what string) error {
	if s.fenced.Load() {
		return fmt.Errorf("postgres: %s of %s: %w", what, s.repo, ErrFenced)
	}
	return fmt.Errorf("postgres: %s of %s: %w", what, s.repo, ErrNoLease)
}

// lose drops token after the database refused it.
func (s *Store) lose(token int64) {
	if s.token.CompareAndSwap(token, 0) {
		s.fenced.Store(true)
	}
}

// fail wraps err, and reports ErrClosed when the store was closed under
// the call.
func (s *Store) fail(err error, format string, args ...any) error {
	if s.closed.Load() && !errors.Is(err, store.ErrClosed) {
		return fmt.Errorf("postgres: "+format+": %w (%w)", append(args, store.ErrClosed, err)...)
	}
	return fmt.Errorf("postgres: "+format+": %w", append(args, err)...)
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one step of the schema, a file migrations/NNNN_name.sql.
// Steps are never edited once released: a change to the schema is a new
// file with the next number.
type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []migration
	for i, n := range names {
		base := strings.TrimSuffix(path.Base(n), ".sql")
		num, name, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil || v != i+1 {
			return nil, fmt.Errorf("migration file %s is not number %d", n, i+1)
		}
		b, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: strings.ReplaceAll(name, "_", " "), sql: string(b)})
	}
	return out, nil
}

// migrationLock is the advisory lock key under which nodes migrate, one at
// a time ("wilco" in ASCII).
const migrationLock = 0x77696c636f

// migrate brings the database to the latest schema version, each step in
// its own transaction, under an advisory lock so that nodes starting
// together migrate once. It refuses a database newer than this code.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	steps, err := migrations()
	if err != nil {
		return err
	}
	latest := steps[len(steps)-1].version
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("lock for migrations: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrationLock)) //nolint:errcheck // the session ends anyway
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS wilco_schema_version (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return fmt.Errorf("create wilco_schema_version: %w", err)
	}
	var current int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM wilco_schema_version`).Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if current > latest {
		return fmt.Errorf("schema version %d is newer than this wilco knows (%d): upgrade wilco", current, latest)
	}
	for _, m := range steps[current:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO wilco_schema_version (version, name) VALUES ($1, $2)`, m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
		}
	}
	return nil
}

// SchemaVersion is the schema version of the database.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM wilco_schema_version`).Scan(&v)
	return v, err
}
