package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"wilco/client"
	"wilco/store/postgres/pgtemp"
)

// The cluster tests share one throw-away PostgreSQL server, each test a
// database of its own.
var (
	pg    *pgtemp.Server
	pgErr error
)

func TestMain(m *testing.M) {
	pg, pgErr = pgtemp.Start(context.Background())
	if pgErr != nil && !errors.Is(pgErr, pgtemp.ErrNoServer) {
		fmt.Fprintln(os.Stderr, pgErr)
		os.Exit(1)
	}
	code := m.Run()
	if pg != nil {
		pg.Stop()
	}
	os.Exit(code)
}

// database creates a database for the test and returns its store URL.
func database(t *testing.T, name string) string {
	t.Helper()
	if pgErr != nil {
		t.Skipf("no PostgreSQL here: %v", pgErr)
	}
	url, err := pg.CreateDatabase(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return url + "&repository=repo"
}

func startAsync(o Options) (chan *Daemon, chan error) {
	ds, errs := make(chan *Daemon, 1), make(chan error, 1)
	go func() {
		d, err := Start(context.Background(), o)
		if err != nil {
			errs <- err
			return
		}
		ds <- d
	}()
	return ds, errs
}

func TestAStandbyRedirectsToTheActiveNodeAndTakesOverWhenItStops(t *testing.T) {
	t.Parallel()
	url := database(t, "standby_takes_over")
	a, b := setup(t), setup(t)
	oa, ob := a.opts(), b.opts()
	oa.Store, ob.Store = url, url
	oa.LeaseTTL, ob.LeaseTTL = 2*time.Second, 2*time.Second
	oa.Token, ob.Token = "admin-token", "admin-token"

	da := a.start(oa)
	// b waits for the lease; meanwhile it answers as a standby.
	ob.Addr = freeAddr(t)
	ds, errs := startAsync(ob)
	standby := client.New(ob.Addr, "admin-token")
	deadline := time.Now().Add(30 * time.Second)
	for {
		h, err := http.Get("http://" + ob.Addr + "/healthz")
		if err == nil {
			h.Body.Close()
			if h.Header.Get(HeaderStandby) != "" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the second node never answered as a standby")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A write sent to the standby lands on the active node.
	task, err := standby.Submit(t.Context(), client.TaskRequest{Description: "one"})
	if err != nil {
		t.Fatal(err)
	}
	if standby.Addr() != da.URL {
		t.Errorf("the client now talks to %s, want the active node %s", standby.Addr(), da.URL)
	}
	cl, err := standby.Cluster(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.Nodes) != 2 || len(cl.Leases) != 1 || cl.Leases[0].URL != da.URL || !cl.Leases[0].Valid {
		t.Errorf("cluster = %+v", cl)
	}

	// The active node stops: the standby takes over, with the task.
	if err := da.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	var db *Daemon
	select {
	case db = <-ds:
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the standby did not take over")
	}
	defer db.Close()
	got, err := client.New(db.URL, "admin-token").Task(t.Context(), task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != task.ID {
		t.Errorf("task = %+v", got)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
