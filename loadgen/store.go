package loadgen

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"wilco/store"
	"wilco/store/postgres"
	"wilco/store/postgres/pgtemp"
	"wilco/store/sqlite"
)

// openStore opens the run's store (see Options.Store) and returns the
// function that closes it and whatever it started.
func openStore(ctx context.Context, kind, dir string) (store.Store, func(), error) {
	switch {
	case kind == "" || kind == "sqlite":
		st, err := sqlite.Open(filepath.Join(dir, "wilco.db"))
		if err != nil {
			return nil, nil, err
		}
		return st, func() { st.Close() }, nil
	case kind == "postgres":
		srv, err := pgtemp.Start(ctx)
		if err != nil {
			return nil, nil, err
		}
		st, err := openPostgres(ctx, srv.URL("postgres"))
		if err != nil {
			srv.Stop()
			return nil, nil, err
		}
		return st, func() { st.Close(); srv.Stop() }, nil
	case postgres.IsURL(kind):
		st, err := openPostgres(ctx, kind)
		if err != nil {
			return nil, nil, err
		}
		return st, func() { st.Close() }, nil
	}
	return nil, nil, fmt.Errorf("--store: sqlite, postgres or a postgres:// URL, got %q", kind)
}

// openPostgres opens a new repository of the database and takes its lease,
// as the active node does.
func openPostgres(ctx context.Context, url string) (*postgres.Store, error) {
	conn, _, err := postgres.SplitURL(url)
	if err != nil {
		return nil, err
	}
	repo := "bench-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	st, err := postgres.Open(ctx, conn, repo)
	if err != nil {
		return nil, err
	}
	if _, err := st.Acquire(ctx, "bench", "http://127.0.0.1:0", time.Hour); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}
