package postgres_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"wilco/store"
	"wilco/store/postgres"
	"wilco/store/postgres/pgtemp"
	"wilco/store/storetest"
)

// The tests share one throw-away server, started here and stopped after
// them; each store is a repository of its own in its one database.
var (
	pg    *pgtemp.Server
	pgErr error
)

func TestMain(m *testing.M) {
	pgtemp.Main(func(srv *pgtemp.Server, err error) int {
		pg, pgErr = srv, err
		return m.Run()
	})
}

func server(t testing.TB) *pgtemp.Server {
	t.Helper()
	if pgErr != nil {
		t.Skipf("no PostgreSQL here: %v", pgErr)
	}
	return pg
}

var repos atomic.Int64

// newRepo is a repository name no other test uses.
func newRepo(t testing.TB) string {
	return fmt.Sprintf("r%d-%s", repos.Add(1), t.Name())
}

// open opens the store of repo, holding its lease for a minute.
func open(t testing.TB, repo string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), server(t).URL("postgres"), repo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Acquire(t.Context(), "node-"+repo, "http://127.0.0.1:1", time.Minute); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	server(t)
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, newRepo(t)) })
}

func TestConformanceReopen(t *testing.T) {
	t.Parallel()
	server(t)
	storetest.RunReopen(t, func(t *testing.T, dir string) store.Store {
		sum := sha256.Sum256([]byte(dir))
		return open(t, "reopen-"+hex.EncodeToString(sum[:8]))
	})
}

func TestAStaleFencingTokenIsRefused(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	old := open(t, repo)
	ctx := t.Context()
	if err := old.Commit(ctx, store.Batch{Events: events(1, 3)}); err != nil {
		t.Fatal(err)
	}

	// The old holder is paused past its lease; a new node takes over.
	s2, err := postgres.Open(ctx, server(t).URL("postgres"), repo)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.Acquire(ctx, "standby", "http://127.0.0.1:2", time.Minute); !errors.Is(err, postgres.ErrLeaseHeld) {
		t.Fatalf("Acquire of a held lease = %v, want ErrLeaseHeld", err)
	}
	expire(t, repo)
	l, err := s2.Acquire(ctx, "standby", "http://127.0.0.1:2", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if l.Token != old.Token()+1 {
		t.Errorf("new token = %d, want %d", l.Token, old.Token()+1)
	}
	if err := s2.Commit(ctx, store.Batch{Events: events(4, 5)}); err != nil {
		t.Fatalf("the new holder's commit: %v", err)
	}

	// The old holder wakes up and writes what would have been seq 4.
	err = old.Commit(ctx, store.Batch{Events: events(4, 4), Records: []store.Record{{Kind: "task", ID: "T-1", State: "success"}}, Watermark: 4})
	if !errors.Is(err, postgres.ErrFenced) {
		t.Fatalf("the old holder's commit = %v, want ErrFenced", err)
	}
	if _, err := old.Renew(ctx, time.Minute); !errors.Is(err, postgres.ErrFenced) {
		t.Errorf("the old holder's renew = %v, want ErrFenced", err)
	}
	if err := old.Commit(ctx, store.Batch{Events: events(4, 4)}); !errors.Is(err, postgres.ErrFenced) {
		t.Errorf("a later commit of the old holder = %v, want ErrNoLease", err)
	}
	got, err := s2.Events(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[3].Type != "by-4" {
		t.Errorf("log = %d events (%v), want 5 with the new holder's", len(got), got)
	}
	recs, _ := s2.Records(ctx, "task", "")
	if len(recs) != 0 {
		t.Errorf("records = %v, want none of the old holder's", recs)
	}
}

func TestAnExpiredLeaseRefusesWritesBeforeAnyTakeover(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	s := open(t, repo)
	expire(t, repo)
	if err := s.Commit(t.Context(), store.Batch{Events: events(1, 1)}); !errors.Is(err, postgres.ErrFenced) {
		t.Fatalf("commit under an expired lease = %v, want ErrFenced", err)
	}
}

func TestACommitWithoutTheLeaseIsRefused(t *testing.T) {
	t.Parallel()
	s, err := postgres.Open(t.Context(), server(t).URL("postgres"), newRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Commit(t.Context(), store.Batch{Events: events(1, 1)}); !errors.Is(err, postgres.ErrNoLease) {
		t.Fatalf("commit = %v, want ErrNoLease", err)
	}
}

func TestAReleasedLeaseIsTakenAtOnce(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	s := open(t, repo)
	s.Release(t.Context())
	s2 := open(t, repo) // would fail with ErrLeaseHeld for a minute
	if s2.Token() != 2 {
		t.Errorf("token after release = %d, want 2", s2.Token())
	}
}

func TestRenewExtendsTheLease(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	s := open(t, repo)
	before, err := s.Lease(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Renew(t.Context(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Expires.After(before.Expires) || l.Token != before.Token {
		t.Errorf("renewed lease %+v, before %+v", l, before)
	}
}

func TestANewerSchemaIsRefused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url, err := server(t).CreateDatabase(ctx, "newer_schema")
	if err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(ctx, url, "r")
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil || v < 1 {
		t.Fatalf("schema version = %d, %v", v, err)
	}
	if err := s.Exec(ctx, `INSERT INTO wilco_schema_version (version, name) VALUES ($1, 'from the future')`, v+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := postgres.Open(ctx, url, "r"); err == nil {
		t.Fatal("Open of a database with a newer schema succeeded")
	}
}

func TestMigrationsRunOnceWhenNodesStartTogether(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url, err := server(t).CreateDatabase(ctx, "together")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for i := range 4 {
		go func() {
			s, err := postgres.Open(ctx, url, fmt.Sprint("r", i))
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestSplitURLTakesTheRepositoryOut(t *testing.T) {
	t.Parallel()
	conn, repo, err := postgres.SplitURL("postgres://u:p@db.example/wilco?sslmode=disable&repository=web")
	if err != nil {
		t.Fatal(err)
	}
	if repo != "web" || conn != "postgres://u:p@db.example/wilco?sslmode=disable" {
		t.Errorf("SplitURL = %q, %q", conn, repo)
	}
}

// expire ends repo's lease now, as if its holder had stopped renewing it
// a TTL ago.
func expire(t *testing.T, repo string) {
	t.Helper()
	s, err := postgres.Open(t.Context(), server(t).URL("postgres"), repo)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Exec(t.Context(), `UPDATE wilco_leases SET expires_at = clock_timestamp() WHERE repo = $1`, repo); err != nil {
		t.Fatal(err)
	}
}

func events(lo, hi uint64) []store.Event {
	var evs []store.Event
	for s := lo; s <= hi; s++ {
		evs = append(evs, store.Event{Seq: s, Time: time.Unix(0, int64(s)).UTC(), Type: fmt.Sprint("by-", s), Data: []byte(`{}`)})
	}
	return evs
}
