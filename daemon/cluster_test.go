package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"wilco/client"
	"wilco/store/postgres"
	"wilco/store/postgres/pgtemp"
	"wilco/wire"
)

// The cluster tests share one throw-away PostgreSQL server, each test a
// database of its own.
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

// databases numbers the databases made, so that a test run again in the
// same process (-count) gets a new one.
var databases atomic.Int64

// database creates a database for the test and returns its store URL.
func database(t testing.TB, name string) string {
	t.Helper()
	if pgErr != nil {
		t.Skipf("no PostgreSQL here: %v", pgErr)
	}
	url, err := pg.CreateDatabase(t.Context(), fmt.Sprintf("%s_%d", name, databases.Add(1)))
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
	waitStandby(t, ob.Addr, errs)

	// A write sent to the standby lands on the active node.
	task, err := standby.Submit(t.Context(), wire.SubmitTask{Description: "one"})
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

// waitStandby waits until the node starting at addr answers as a
// standby; errs is its start's error.
func waitStandby(t testing.TB, addr string, errs <-chan error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		h, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			h.Body.Close()
			if h.Header.Get(HeaderStandby) != "" {
				return
			}
		}
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the node never answered as a standby")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// A standby answers reads from the store — a change the active node
// acknowledged is in the standby's next answer, and its event stream
// carries what the active node commits — while changes, the agents' side
// and what lives in the active node's files are redirected to the active
// node.
func TestAStandbyAnswersReadsAndRedirectsChanges(t *testing.T) {
	t.Parallel()
	url := database(t, "standby_reads")
	a, b := setup(t), setup(t)
	oa, ob := a.opts(), b.opts()
	oa.Store, ob.Store = url, url
	oa.Token, ob.Token = "admin-token", "admin-token"
	da := a.start(oa)
	ob.Addr = freeAddr(t)
	ds, errs := startAsync(ob)
	t.Cleanup(func() {
		select {
		case d := <-ds:
			d.Close()
		default:
		}
	})
	base := "http://" + ob.Addr
	raw := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path, token string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := raw.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	waitStandby(t, ob.Addr, errs)

	// The standby's event stream, opened before the change.
	streamed := make(chan wire.Event, 64)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	standby := client.New(ob.Addr, "admin-token")
	go func() {
		_ = standby.Follow(ctx, client.EventQuery{}, func(ev wire.Event) error {
			streamed <- ev
			return nil
		})
	}()

	active := client.New(da.URL, "admin-token")
	task, err := active.Submit(t.Context(), wire.SubmitTask{Description: "read me from the standby"})
	if err != nil {
		t.Fatal(err)
	}
	// Read after write: at once, with no waiting.
	resp := get("/v1/tasks/"+task.ID, "admin-token")
	if resp.StatusCode != http.StatusOK || resp.Header.Get(HeaderStandby) == "" || resp.Header.Get(HeaderActive) != da.URL {
		t.Fatalf("GET the task from the standby: %d, headers %v", resp.StatusCode, resp.Header)
	}
	var got wire.Task
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || got.ID != task.ID || got.Description != task.Description {
		t.Fatalf("the standby's task = %+v, %v", got, err)
	}
	// The client takes the standby's answer, and stays with the standby.
	tasks, err := standby.Tasks(t.Context(), "")
	if err != nil || len(tasks) != 1 || tasks[0].ID != task.ID {
		t.Fatalf("tasks from the standby = %+v, %v", tasks, err)
	}
	if standby.Addr() != "http://"+ob.Addr {
		t.Errorf("a read moved the client to %s", standby.Addr())
	}
	if resp := get("/v1/tasks/T-404", "admin-token"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a missing task on the standby: %d", resp.StatusCode)
	}
	if resp := get("/v1/tasks", "wrong-token"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the standby's reads need the admin token: %d", resp.StatusCode)
	}

	// The stream carries the task's events, and then, live, those of a
	// task created after it.
	waitStreamed := func(id string) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case ev := <-streamed:
				if ev.TaskID == id {
					return
				}
			case <-timeout:
				t.Fatalf("the standby's event stream never carried an event of %s", id)
			}
		}
	}
	waitStreamed(task.ID)
	later, err := active.Submit(t.Context(), wire.SubmitTask{Description: "later"})
	if err != nil {
		t.Fatal(err)
	}
	waitStreamed(later.ID)

	// What the active node alone answers is redirected to it.
	for _, path := range []string{"/v1/tasks/" + task.ID + "/diff", "/v1/logs/retry", "/v1/runs/R-1/log", "/v1/inbox"} {
		resp := get(path, "admin-token")
		if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get(HeaderActive) != da.URL ||
			resp.Header.Get("Location") != da.URL+path {
			t.Errorf("GET %s on the standby: %d, Location %q", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/v1/tasks/"+task.ID+"/cancel", nil)
	req.Header.Set("Authorization", "Bearer admin-token")
	resp, err = raw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get(HeaderActive) != da.URL {
		t.Errorf("a change sent to the standby: %d", resp.StatusCode)
	}
	// Through the client, a change lands on the active node, which the
	// client then keeps talking to.
	if _, err := standby.Submit(t.Context(), wire.SubmitTask{Description: "two"}); err != nil {
		t.Fatal(err)
	}
	if standby.Addr() != da.URL {
		t.Errorf("after a change the client talks to %s, want the active node %s", standby.Addr(), da.URL)
	}
}

// A standby stopped before it takes over (wilco serve given SIGTERM while
// it stands by) returns its context's error, and releases the repository's
// lock, its port and its reads: it can start again at once.
func TestAStandbyStoppedWhileStandingByReturnsAndReleasesEverything(t *testing.T) {
	t.Parallel()
	url := database(t, "standby_stopped")
	a, b := setup(t), setup(t)
	oa, ob := a.opts(), b.opts()
	oa.Store, ob.Store = url, url
	a.start(oa)
	ob.Addr = freeAddr(t)
	for range 2 {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		d, err := Start(ctx, ob)
		cancel()
		if d != nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a standby stopped while standing by: %v, %v", d, err)
		}
	}
}

// BenchmarkReadATask reads a task (GET /v1/tasks/{id}) from the active
// node, and from a standby, which first catches up with what the active
// node committed (one query of the store when nothing is new).
func BenchmarkReadATask(b *testing.B) {
	url := database(b, "bench_reads")
	x, y := setup(b), setup(b)
	ox, oy := x.opts(), y.opts()
	ox.Store, oy.Store = url, url
	ox.Token, oy.Token = "admin-token", "admin-token"
	oy.Addr = freeAddr(b)
	da := x.start(ox)
	ds, errs := startAsync(oy)
	b.Cleanup(func() {
		select {
		case d := <-ds:
			d.Close()
		default:
		}
	})
	active := client.New(da.URL, "admin-token")
	task, err := active.Submit(b.Context(), wire.SubmitTask{Description: "read me"})
	if err != nil {
		b.Fatal(err)
	}
	standby := client.New(oy.Addr, "admin-token")
	waitStandby(b, oy.Addr, errs)
	for _, c := range []struct {
		name string
		cl   *client.Client
	}{{"active", active}, {"standby", standby}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.cl.Task(b.Context(), task.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestAFormerLeaderAnswersAValidAgentToken503NotUnknown: the active node's
// lease runs out (its renewals stalled) and the standby takes over. Until
// the former leader stands by again, its loop stops at its next commit —
// refused by the database — and an agent that asks it with a valid token
// is told to try again (503), never that its token is unknown (401).
func TestAFormerLeaderAnswersAValidAgentToken503NotUnknown(t *testing.T) {
	t.Parallel()
	url := database(t, "former_leader")
	a, b := setup(t), setup(t)
	oa, ob := a.opts(), b.opts()
	oa.Store, ob.Store = url, url
	oa.LeaseTTL, ob.LeaseTTL = 2*time.Second, 2*time.Second
	oa.Token, ob.Token = "admin-token", "admin-token"
	da := a.start(oa)
	token, err := client.New(da.URL, "admin-token").RotateAgentToken(t.Context(), "remote-1")
	if err != nil {
		t.Fatal(err)
	}
	if status, body := call(t, da, "GET", "/v1/inbox", token, nil); status != http.StatusOK {
		t.Fatalf("the agent's inbox on the active node: %d %v", status, body)
	}
	ob.Addr = freeAddr(t)
	ds, errs := startAsync(ob)
	waitStandby(t, ob.Addr, errs)

	// The lease runs out, as when the active node's renewals stall for a
	// TTL: the standby takes it.
	conn, _, err := postgres.SplitURL(url)
	if err != nil {
		t.Fatal(err)
	}
	db, err := pgx.Connect(t.Context(), conn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if _, err := db.Exec(t.Context(), `UPDATE wilco_leases SET expires_at = clock_timestamp()`); err != nil {
		t.Fatal(err)
	}
	select {
	case taker := <-ds:
		defer taker.Close()
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the standby did not take over")
	}

	// The former leader's next commit is refused: its loop stops.
	if status, body := call(t, da, "POST", "/v1/tasks", "admin-token", map[string]any{"description": "too late"}); status != http.StatusServiceUnavailable {
		t.Fatalf("a write to the former leader: %d %v, want 503", status, body)
	}
	for _, c := range []struct{ method, path string }{{"GET", "/v1/inbox"}, {"GET", "/v1/inbox?wait=2s"}, {"POST", "/v1/inbox/replies"}} {
		var body any
		if c.method == "POST" {
			body = map[string]any{"in_reply_to": "M-1", "text": "ok"}
		}
		status, out := call(t, da, c.method, c.path, token, body)
		e, _ := out["error"].(map[string]any)
		if status != http.StatusServiceUnavailable || e["code"] != "unavailable" || !strings.Contains(fmt.Sprint(e["message"]), "lost the repository's lease") {
			t.Errorf("%s %s with the agent's valid token on the former leader: %d %v, want 503 unavailable (the lease was lost)", c.method, c.path, status, out)
		}
	}
}
