package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wilco/core"
	"wilco/natsbox"
	"wilco/runtime"
	"wilco/server"
	"wilco/store/postgres"
	"wilco/web"
	"wilco/wire"
)

// DefaultLeaseTTL is how long a repository's lease lasts without renewal:
// the longest a standby waits before it takes over from a node that died.
const DefaultLeaseTTL = 10 * time.Second

// HeaderActive is the response header with which a standby node names the
// active node of the repository (with a 307 redirect to it).
const HeaderActive = "Wilco-Active"

// HeaderStandby marks the answers of a standby node.
const HeaderStandby = "Wilco-Standby"

// ErrLeaseLost is why a node stops being active: its lease expired or
// another node took it over.
var ErrLeaseLost = errors.New("daemon: this node lost the repository's lease")

// node is this process as one of the nodes that serve a repository from a
// PostgreSQL store: it waits for the lease, keeps it, and answers as a
// standby until it holds it.
type node struct {
	st   *postgres.Store
	id   string
	url  string // where clients and other nodes reach this node
	ttl  time.Duration
	tok  string // admin token
	log  *slog.Logger
	vers string

	mu     sync.Mutex
	active bool // this node holds the lease
	// activeURL is the active node's URL as last seen while standing by.
	activeURL atomic.Pointer[string]

	lost     chan struct{} // closed when the lease is lost
	lostOnce sync.Once
	stop     chan struct{}
	wg       sync.WaitGroup
}

func newNode(st *postgres.Store, url string, ttl time.Duration, token string, log *slog.Logger) *node {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &node{
		st: st, url: url, ttl: ttl, tok: token, log: log,
		id:   fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:])),
		lost: make(chan struct{}), stop: make(chan struct{}),
	}
}

// pollInterval is how often a standby tries for the lease, and a holder
// heartbeats: a tenth of the TTL, at most a second.
func (n *node) pollInterval() time.Duration { return min(n.ttl/10, time.Second) }

// acquire waits until this node holds the lease, heartbeating meanwhile.
func (n *node) acquire(ctx context.Context) error {
	waiting := false
	for {
		_ = n.st.Heartbeat(ctx, postgres.Node{ID: n.id, URL: n.url, Version: n.vers})
		l, err := n.st.Acquire(ctx, n.id, n.url, n.ttl)
		switch {
		case err == nil:
			n.log.Info("this node is active: it holds the repository's lease", "repository", n.st.Repository(), "token", l.Token, "ttl", n.ttl)
			return nil
		case errors.Is(err, postgres.ErrLeaseHeld):
			url := ""
			if l.Valid {
				url = l.URL
			}
			n.activeURL.Store(&url)
			if !waiting {
				n.log.Info("this node is a standby", "repository", n.st.Repository(), "active", l.URL, "expires", l.Expires)
				waiting = true
			}
		default:
			n.log.Warn("trying for the repository's lease", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(n.pollInterval()):
		}
	}
}

// keep renews the lease every third of the TTL until stop, and declares
// it lost (closing lost) when the database refuses the renewal, when no
// renewal succeeded for a whole TTL, or when failed reports that the
// runtime stopped (a commit refused, the store unreachable): a standby
// then takes over.
func (n *node) keep(failed func() error) {
	n.mu.Lock()
	n.active = true
	n.mu.Unlock()
	n.wg.Go(func() {
		renewed := time.Now()
		tick := time.NewTicker(min(n.ttl/3, time.Second))
		defer tick.Stop()
		beat := time.Now()
		for {
			select {
			case <-n.stop:
				return
			case <-tick.C:
			}
			if err := failed(); err != nil {
				n.lose(fmt.Errorf("the runtime stopped: %w", err))
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), n.ttl/3)
			start := time.Now()
			_, err := n.st.Renew(ctx, n.ttl)
			if time.Since(beat) >= n.pollInterval() {
				_ = n.st.Heartbeat(ctx, postgres.Node{ID: n.id, URL: n.url, Version: n.vers})
				beat = time.Now()
			}
			cancel()
			switch {
			case err == nil:
				renewed = start
			case errors.Is(err, postgres.ErrFenced):
				n.lose(err)
				return
			default:
				n.log.Warn("renewing the lease failed", "err", err)
				if time.Since(renewed) >= n.ttl {
					n.lose(err)
					return
				}
			}
		}
	})
}

func (n *node) lose(err error) {
	n.lostOnce.Do(func() {
		n.log.Error("this node stops being active: it lost the repository's lease", "err", err)
		n.mu.Lock()
		n.active = false
		n.mu.Unlock()
		close(n.lost)
	})
}

// close stops renewing; the store's Close releases the lease.
func (n *node) close() {
	select {
	case <-n.stop:
	default:
		close(n.stop)
	}
	n.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n.st.ForgetNode(ctx, n.id)
}

func (n *node) view(ctx context.Context) (wire.ClusterView, error) {
	n.mu.Lock()
	active := n.active
	n.mu.Unlock()
	v := wire.ClusterView{Node: n.id, Repository: n.st.Repository(), Active: active, Nodes: []wire.ClusterNode{}, Leases: []wire.ClusterLease{}}
	nodes, now, err := n.st.Nodes(ctx, 3*n.ttl)
	if err != nil {
		return v, err
	}
	leases, err := n.st.Leases(ctx)
	if err != nil {
		return v, err
	}
	v.Time = now.UTC()
	holders := map[string]bool{}
	for _, l := range leases {
		v.Leases = append(v.Leases, wire.ClusterLease{Repository: l.Repository, Holder: l.Holder, URL: l.URL, Token: l.Token, Valid: l.Valid,
			Acquired: l.Acquired.UTC(), Renewed: l.Renewed.UTC(), Expires: l.Expires.UTC()})
		if l.Valid {
			holders[l.Holder] = true
		}
	}
	for _, x := range nodes {
		v.Nodes = append(v.Nodes, wire.ClusterNode{ID: x.ID, Repository: x.Repository, URL: x.URL, Version: x.Version,
			Active: holders[x.ID], Started: x.Started.UTC(), Seen: x.Seen.UTC()})
	}
	return v, nil
}

// clusterRoute is GET /v1/cluster on the active node.
func (n *node) clusterRoute() server.Route {
	return server.Route{
		Method: http.MethodGet, Path: "/v1/cluster", Auth: server.Admin,
		Summary: "The nodes serving the repositories of the PostgreSQL store, and who holds each repository's lease",
		Handler: func(w http.ResponseWriter, r *http.Request) error {
			v, err := n.view(r.Context())
			if err != nil {
				return err
			}
			server.WriteJSON(w, http.StatusOK, v)
			return nil
		},
		Responses: map[int]any{http.StatusOK: wire.ClusterView{}},
	}
}

// standby is what a node answers while another holds the lease. Reads
// are answered here, by the server's own routes on a runtime that follows
// the store (catching up before each read of the API, so that a change the active
// node acknowledged before the read is in the answer); what only the
// active node has — the agents' side, the files of runs and dry runs, the
// retry log, AI Maestro's API — and every change are redirected to it
// (307, with the active node in the Wilco-Active header), or answered 503
// while no node is active. Every answer carries Wilco-Standby.
func (n *node) standby(rd *reader) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderStandby, "1")
		l, _ := n.st.Lease(r.Context())
		active := ""
		if l.Valid {
			active = l.URL
		}
		seq, _ := n.st.LastSeq(r.Context())
		server.WriteJSON(w, http.StatusOK, wire.Health{Status: "standby", Seq: seq, Node: n.id, Active: active})
	})
	for _, p := range activeOnly {
		mux.HandleFunc(p, n.redirect)
	}
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderStandby, "1")
		if a := n.activeURL.Load(); a != nil && *a != "" {
			w.Header().Set(HeaderActive, *a)
		} else if l, err := n.st.Lease(r.Context()); err == nil && l.Valid {
			// Not seen yet while standing by (a standby serves from its
			// first heartbeat): the lease says.
			w.Header().Set(HeaderActive, l.URL)
		}
		// The API's reads catch up first; the page's files and the
		// server's own documents need not.
		if !strings.HasPrefix(r.URL.Path, "/v1/") {
			rd.srv.ServeHTTP(w, r)
			return
		}
		if _, err := rd.rt.CatchUp(r.Context()); err != nil {
			w.Header().Set("Retry-After", "1")
			server.WriteJSON(w, http.StatusServiceUnavailable, errorJSON(wire.CodeUnavailable,
				"this node is a standby and cannot read the store now; try again in a moment, or ask the active node"))
			return
		}
		rd.srv.ServeHTTP(w, r)
	})
	mux.HandleFunc("/", n.redirect)
	return mux
}

// activeOnly are the reads a standby sends to the active node: the
// agents' side (an inbox read records what the agent was handed), and
// what is kept in files on the active node's machine.
var activeOnly = []string{
	"GET /v1/inbox", "GET /v1/ask/{id}",
	"GET /v1/tasks/{id}/diff", "GET /v1/tasks/{id}/transcript", "GET /v1/runs/{run_id}/log", "GET /v1/logs/retry",
	"GET /api/",
}

// reader is what a standby answers reads with: a runtime that follows the
// store, and a server on it whose commands are redirected.
type reader struct {
	rt   *runtime.Runtime
	srv  *server.Server
	stop chan struct{}
	done chan struct{}
}

// catchUpEvery is how often a standby applies what the active node
// committed, between reads: what its event streams lag by at most.
const catchUpEvery = 250 * time.Millisecond

// openReader rebuilds the repository's state from the store for a
// standby's reads, and keeps it caught up until close.
func (d *Daemon) openReader(ctx context.Context, n *node) (*reader, error) {
	rt, err := runtime.OpenStandby(ctx, runtime.Config{Store: n.st, Logger: d.log.With("component", "runtime", "standby", true)})
	if err != nil {
		return nil, err
	}
	page, err := web.New()
	if err != nil {
		rt.Close()
		return nil, err
	}
	srv, err := server.New(server.Options{
		Runtime: rt, Store: n.st, Config: d.Config, AdminToken: d.Token, Page: page,
		Logger: d.log.With("component", "http", "standby", true), Standby: n.redirect,
		Routes: []server.Route{n.clusterRoute()},
	})
	if err != nil {
		rt.Close()
		return nil, err
	}
	rd := &reader{rt: rt, srv: srv, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(rd.done)
		tick := time.NewTicker(catchUpEvery)
		defer tick.Stop()
		for {
			select {
			case <-rd.stop:
				return
			case <-tick.C:
				ctx, cancel := context.WithTimeout(context.Background(), 10*catchUpEvery)
				_, _ = rt.CatchUp(ctx)
				cancel()
			}
		}
	}()
	return rd, nil
}

// close ends the reader's streams and stops following the store.
func (rd *reader) close() {
	if rd == nil {
		return
	}
	close(rd.stop)
	<-rd.done
	rd.srv.Stop()
	rd.rt.Close()
}

func (n *node) redirect(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(HeaderStandby, "1")
	l, err := n.st.Lease(r.Context())
	if err != nil || !l.Valid || l.URL == n.url {
		w.Header().Set("Retry-After", "1")
		server.WriteJSON(w, http.StatusServiceUnavailable, errorJSON(wire.CodeUnavailable,
			"this node is a standby and no node of the repository is active yet; try again in a moment"))
		return
	}
	w.Header().Set(HeaderActive, l.URL)
	w.Header().Set("Location", strings.TrimRight(l.URL, "/")+r.URL.RequestURI())
	server.WriteJSON(w, http.StatusTemporaryRedirect, errorJSON(wire.CodeNotActive,
		"this node is a standby; the active node of the repository is "+l.URL))
}

func errorJSON(code wire.Code, msg string) wire.Error { return wire.NewError(code, msg) }

// startNode opens the PostgreSQL store of the repository, answers as a
// standby on ln, and returns once this node holds the repository's lease
// (or ctx ends). The repository's name is the store URL's repository
// parameter, else the base name of the repository's directory.
func (d *Daemon) startNode(ctx context.Context, opts Options, storeURL, root string, ln net.Listener) error {
	conn, repo, err := postgres.SplitURL(storeURL)
	if err != nil {
		return err
	}
	if repo == "" {
		abs, err := filepath.Abs(root)
		if err != nil {
			return fmt.Errorf("daemon: %w", err)
		}
		repo = filepath.Base(abs)
	}
	st, err := postgres.Open(ctx, conn, repo)
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	d.st = st
	ttl := opts.LeaseTTL
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	url := opts.Advertise
	if url == "" {
		url = "http://" + ln.Addr().String()
	}
	d.node = newNode(st, strings.TrimRight(url, "/"), ttl, d.Token, d.log.With("component", "cluster"))
	d.node.vers = opts.Version
	if d.reader, err = d.openReader(ctx, d.node); err != nil {
		return fmt.Errorf("daemon: a standby's reads: %w", err)
	}
	// Seen in the cluster's view before it answers anything.
	_ = st.Heartbeat(ctx, postgres.Node{ID: d.node.id, URL: d.node.url, Version: d.node.vers})
	d.setFront(d.node.standby(d.reader))
	d.serve(ln)
	if err := d.node.acquire(ctx); err != nil {
		d.stopHTTP()
		d.reader.close()
		return err
	}
	return nil
}

// stopHTTP stops answering, when a start fails after serve.
func (d *Daemon) stopHTTP() {
	_ = d.http.Close()
	<-d.served
}

// setFront makes the HTTP server answer with h.
func (d *Daemon) setFront(h http.Handler) { d.front.Store(&h) }

// startBridge carries the mailbox over the NATS server at url, in the
// stream of the repository (the PostgreSQL store's repository name, else
// the base name of the repository's directory).
func (d *Daemon) startBridge(url, root string) error {
	repo := ""
	if d.node != nil {
		repo = d.node.st.Repository()
	} else {
		abs, err := filepath.Abs(root)
		if err != nil {
			return fmt.Errorf("daemon: %w", err)
		}
		repo = filepath.Base(abs)
	}
	b, err := natsbox.StartBridge(natsbox.BridgeOptions{
		URL: url, Repo: repo, Handler: d.Server, Signal: d.Runtime.InboxSignal,
		Authenticate: d.Server.AgentWithToken,
		Push: func(ctx context.Context, agent string) ([]json.RawMessage, error) {
			msgs, err := d.Server.Push(ctx, agent)
			out := make([]json.RawMessage, 0, len(msgs))
			for _, m := range msgs {
				b, err := json.Marshal(m)
				if err != nil {
					return nil, err
				}
				out = append(out, b)
			}
			return out, err
		},
		Unknown: func(err error) bool { return core.CodeOf(err) == core.NotFound },
		Logger:  d.log.With("component", "natsbox"),
	})
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	d.bridge = b
	return nil
}
