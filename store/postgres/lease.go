package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"wilco/store"
)

// Lease is the lease of one repository as the database holds it.
type Lease struct {
	Repository string
	// Holder is the node id of the holder, URL where it serves.
	Holder, URL string
	// Token is the fencing token: it goes up by one at each acquisition.
	Token int64
	// Acquired, Renewed and Expires are the database's clock.
	Acquired, Renewed, Expires time.Time
	// Valid reports whether the lease had not expired when it was read.
	Valid bool
}

const leaseColumns = `repo, holder, url, token, acquired_at, renewed_at, expires_at, expires_at > clock_timestamp()`

func scanLease(row pgx.Row) (Lease, error) {
	var l Lease
	err := row.Scan(&l.Repository, &l.Holder, &l.URL, &l.Token, &l.Acquired, &l.Renewed, &l.Expires, &l.Valid)
	return l, err
}

// Acquire takes the repository's lease for node holder (serving at url)
// for ttl, if it is free, expired, or released: the token goes up by one,
// and from now on Commit writes under it. It reads the log's end after
// taking the lease, so that the next Commit continues the log wherever the
// previous holder left it. When another node holds a valid lease, Acquire
// returns that lease and ErrLeaseHeld.
func (s *Store) Acquire(ctx context.Context, holder, url string, ttl time.Duration) (Lease, error) {
	if s.closed.Load() {
		return Lease{}, fmt.Errorf("postgres: acquire: %w", store.ErrClosed)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	row := s.pool.QueryRow(ctx, `INSERT INTO wilco_leases AS l (repo, holder, url, token, acquired_at, renewed_at, expires_at)
VALUES ($1, $2, $3, 1, clock_timestamp(), clock_timestamp(), clock_timestamp() + $4 * interval '1 microsecond')
ON CONFLICT (repo) DO UPDATE SET holder = excluded.holder, url = excluded.url, token = l.token + 1,
	acquired_at = excluded.acquired_at, renewed_at = excluded.renewed_at, expires_at = excluded.expires_at
WHERE l.expires_at <= clock_timestamp()
RETURNING `+leaseColumns, s.repo, holder, url, ttl.Microseconds())
	l, err := scanLease(row)
	if errors.Is(err, pgx.ErrNoRows) {
		cur, err := s.Lease(ctx)
		if err != nil {
			return Lease{}, err
		}
		return cur, fmt.Errorf("postgres: repository %s: %w: %s at %s until %s", s.repo, ErrLeaseHeld, cur.Holder, cur.URL, cur.Expires.Format(time.RFC3339))
	}
	if err != nil {
		return Lease{}, s.fail(err, "acquire the lease of %s", s.repo)
	}
	last, err := s.dbLastSeq(ctx)
	if err != nil {
		s.release(ctx, l.Token)
		return Lease{}, err
	}
	s.last.Store(last)
	s.fenced.Store(false)
	s.token.Store(l.Token)
	return l, nil
}

// Renew extends the lease this store holds by ttl from now. It fails with
// ErrFenced, and the store stops writing, when the lease expired or was
// taken over: the caller must step down.
func (s *Store) Renew(ctx context.Context, ttl time.Duration) (Lease, error) {
	if s.closed.Load() {
		return Lease{}, fmt.Errorf("postgres: renew: %w", store.ErrClosed)
	}
	token := s.token.Load()
	if token == 0 {
		return Lease{}, s.noLease("renew the lease")
	}
	row := s.pool.QueryRow(ctx, `UPDATE wilco_leases SET renewed_at = clock_timestamp(), expires_at = clock_timestamp() + $3 * interval '1 microsecond'
WHERE repo = $1 AND token = $2 AND expires_at > clock_timestamp()
RETURNING `+leaseColumns, s.repo, token, ttl.Microseconds())
	l, err := scanLease(row)
	if errors.Is(err, pgx.ErrNoRows) {
		s.lose(token)
		return Lease{}, fmt.Errorf("postgres: renew the lease of %s (token %d): %w", s.repo, token, ErrFenced)
	}
	if err != nil {
		return Lease{}, s.fail(err, "renew the lease of %s", s.repo)
	}
	return l, nil
}

// Token is the fencing token this store writes under, 0 when it holds no
// lease.
func (s *Store) Token() int64 { return s.token.Load() }

// Release gives the lease up (it expires now), so that a standby takes
// over at once rather than after the TTL. The store writes no more.
func (s *Store) Release(ctx context.Context) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if t := s.token.Swap(0); t != 0 {
		s.release(ctx, t)
	}
}

func (s *Store) release(ctx context.Context, token int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = s.pool.Exec(ctx, `UPDATE wilco_leases SET expires_at = clock_timestamp() WHERE repo = $1 AND token = $2 AND expires_at > clock_timestamp()`, s.repo, token)
}

// Lease reads the repository's lease (the zero Lease when none was ever
// taken).
func (s *Store) Lease(ctx context.Context) (Lease, error) {
	l, err := scanLease(s.pool.QueryRow(ctx, `SELECT `+leaseColumns+` FROM wilco_leases WHERE repo = $1`, s.repo))
	if errors.Is(err, pgx.ErrNoRows) {
		return Lease{Repository: s.repo}, nil
	}
	if err != nil {
		return Lease{}, s.fail(err, "read the lease of %s", s.repo)
	}
	return l, nil
}

// Leases reads the leases of every repository of the database.
func (s *Store) Leases(ctx context.Context) ([]Lease, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+leaseColumns+` FROM wilco_leases ORDER BY repo`)
	if err != nil {
		return nil, s.fail(err, "read the leases")
	}
	defer rows.Close()
	var out []Lease
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, s.fail(err, "read the leases")
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// Node is a wilco serve process as it last reported itself.
type Node struct {
	ID, Repository, URL, Version string
	Started, Seen                time.Time
}

// Heartbeat records that node n is alive now (the database's clock).
func (s *Store) Heartbeat(ctx context.Context, n Node) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO wilco_nodes (node, repo, url, version, started_at, seen_at)
VALUES ($1, $2, $3, $4, clock_timestamp(), clock_timestamp())
ON CONFLICT (node) DO UPDATE SET url = excluded.url, version = excluded.version, seen_at = excluded.seen_at`,
		n.ID, s.repo, n.URL, n.Version)
	if err != nil {
		return s.fail(err, "heartbeat of node %s", n.ID)
	}
	return nil
}

// Nodes lists the nodes seen within the last `within`, every repository's,
// with the database's current time.
func (s *Store) Nodes(ctx context.Context, within time.Duration) ([]Node, time.Time, error) {
	var now time.Time
	if err := s.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return nil, now, s.fail(err, "read the nodes")
	}
	rows, err := s.pool.Query(ctx, `SELECT node, repo, url, version, started_at, seen_at FROM wilco_nodes
WHERE seen_at > clock_timestamp() - $1 * interval '1 microsecond' ORDER BY repo, url, node`, within.Microseconds())
	if err != nil {
		return nil, now, s.fail(err, "read the nodes")
	}
	defer rows.Close()
	var out []Node
	for rows.Next() {
		var n Node
		if err := rows.Scan(&n.ID, &n.Repository, &n.URL, &n.Version, &n.Started, &n.Seen); err != nil {
			return nil, now, s.fail(err, "read the nodes")
		}
		out = append(out, n)
	}
	return out, now, rows.Err()
}

// ForgetNode removes a node's row (at a clean stop).
func (s *Store) ForgetNode(ctx context.Context, id string) {
	_, _ = s.pool.Exec(ctx, `DELETE FROM wilco_nodes WHERE node = $1`, id)
}
