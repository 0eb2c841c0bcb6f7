package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	execadapter "wilco/adapter/exec"
	tmuxadapter "wilco/adapter/tmux"
	"wilco/config"
	"wilco/core"
	"wilco/dispatch"
	"wilco/forge"
	"wilco/intake"
	"wilco/natsbox"
	"wilco/notify"
	"wilco/perform"
	"wilco/prwatch"
	"wilco/retrylog"
	"wilco/runtime"
	"wilco/server"
	"wilco/store"
	"wilco/store/postgres"
	"wilco/store/sqlite"
	"wilco/verify"
	"wilco/web"
	"wilco/wire"
)

// Defaults.
const (
	// DefaultDir is the state directory.
	DefaultDir = ".wilco"
	// EnvToken names the environment variable that holds the admin token.
	EnvToken = "WILCO_TOKEN"
	// EnvStore names the environment variable that overrides the
	// configuration's store (wilco serve --store overrides both).
	EnvStore = "WILCO_STORE"
	// EnvTransport names the environment variable of the NATS server that
	// carries the mailbox (wilco serve --transport overrides it).
	EnvTransport = "WILCO_TRANSPORT"
	// shutdownGrace is how long Close lets requests in flight finish.
	shutdownGrace = 10 * time.Second
)

// Options configures a daemon.
type Options struct {
	// ConfigPath is wilco.yaml ("" : $WILCO_CONFIG, else wilco.yaml).
	ConfigPath string
	// Config, when set, is used instead of reading ConfigPath.
	Config *config.Config
	// Addr overrides the configuration's listen address.
	Addr string
	// Root is the repository: verify steps and agents run there, dry-run
	// worktrees are made of it, and a relative store: of the
	// configuration is relative to it. Default: the configuration file's
	// directory (the working directory when Config is given). wilco serve
	// and wilco run set it to the directory they run in, so that a
	// configuration file kept elsewhere does not move the repository.
	Root string
	// Dir is the state directory: wilco.db, token, addr, server.json,
	// aimaestro.json. Default: .wilco in Root.
	Dir    string
	Logger *slog.Logger
	// AllowRemote allows a listen address that is not loopback.
	AllowRemote bool
	// Token is the admin token; "": $WILCO_TOKEN, else <Dir>/token.
	Token string
	// Routes are more routes for the server (tasks, plans, runs).
	Routes []server.Route
	// Store overrides the configuration's store: a SQLite file, or a
	// postgres:// URL, with which this node is one of the nodes that may
	// serve the repository (see LeaseTTL).
	Store string
	// LeaseTTL is how long the repository's lease lasts without renewal,
	// with a PostgreSQL store (default DefaultLeaseTTL).
	LeaseTTL time.Duration
	// Advertise is the URL other nodes send clients to while this node is
	// active (default: http:// and the bound address).
	Advertise string
	// Version is wilco's version, shown with this node in the cluster's
	// view (a rolling upgrade shows which node runs which).
	Version string
	// Transport, a nats:// URL, carries the mailbox agents' messages over
	// NATS JetStream too (package natsbox), while this node is active.
	Transport string
	// Started, when set, is called by Run once the daemon serves: wilco
	// serve prints the page's login link there.
	Started func(d *Daemon)
}

// Daemon is a running server.
type Daemon struct {
	// Addr is the bound host:port, URL its http:// form.
	Addr, URL string
	// Token is the admin token.
	Token string
	// LoginURL is a one-time link that logs a browser in to the page
	// (valid for a day unused).
	LoginURL string
	Config   *config.Config
	Runtime  *runtime.Runtime
	Server   *server.Server

	log *slog.Logger
	// root is the repository's root, absolute: where the worktrees of
	// tasks worked in parallel are, as a mailbox agent is told.
	root string
	st   store.Store
	http *http.Server
	// node is this process as one of the nodes of a PostgreSQL store; nil
	// with SQLite. front is what the HTTP server answers with: the
	// standby's handler until the node is active, then the server.
	node  *node
	front atomic.Pointer[http.Handler]
	// reader answers a standby's reads; closed once the node is active.
	reader *reader
	// bridge carries the mailbox over NATS (nil without a transport).
	bridge *natsbox.Bridge
	// exec performs the runtime's effects with disp (agents, verify
	// steps, the workspace), the notifier and the operation runner.
	exec *perform.Executor
	disp *dispatch.Dispatcher
	// forgeHook is what the forge's webhooks are checked with and who
	// hears of them; prwatch follows the tasks' pull requests on the forge.
	forgeHook *server.ForgeHook
	prwatch   atomic.Pointer[prwatch.Watcher]
	// desktop: desktop notifications are on (notify-send was found).
	desktop bool
	// forge is the client of the configuration's forge (nil: none);
	// intake polls its issues (nil: not configured), until stopIntake.
	forge      forge.Forge
	intake     *intake.Intake
	stopIntake func()

	// dir is the state directory.
	dir        string
	execMu     sync.Mutex
	execAgents map[string]config.Agent
	addrFile   string
	// lock is the repository's lock, held while the daemon runs.
	lock *repoLock

	// fresh holds the connections that have not sent a request yet: at
	// shutdown they are closed, where net/http would wait 5 s for each
	// (a browser opens such connections ahead of its requests).
	fresh     sync.Map // net.Conn → struct{}
	served    chan struct{}
	serveErr  error
	closeOnce sync.Once
	closeErr  error
}

// Run serves until ctx ends, then shuts down cleanly: `wilco serve`.
func Run(ctx context.Context, opts Options) error {
	d, err := Start(ctx, opts)
	if err != nil {
		return err
	}
	if opts.Started != nil {
		opts.Started(d)
	}
	select {
	case <-ctx.Done():
	case <-d.served:
	case <-d.lost():
	}
	err = d.Close()
	if d.serveErr != nil {
		return errors.Join(d.serveErr, err)
	}
	if d.node != nil && ctx.Err() == nil && isClosed(d.lost()) {
		// Not the active node any more: stand by again, from a clean
		// start, and take over again if the lease comes free.
		d.log.Info("standing by again", "err", err)
		return Run(ctx, opts)
	}
	return err
}

// lost is closed when a node of a PostgreSQL store lost the lease (nil
// with SQLite: never).
func (d *Daemon) lost() <-chan struct{} {
	if d.node == nil {
		return nil
	}
	return d.node.lost
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Start starts a daemon and returns once it serves. ctx bounds the start
// only: stop the daemon with Close.
//
// The parts are made in an order in which each finds what it needs made:
// the store, the runtime on it, the dispatcher and the notifier reporting
// to the runtime, the one executor performing the runtime's effects with
// them, the HTTP server; then the loops start, the configuration's agents
// are registered, and what a restart interrupted is settled.
func Start(ctx context.Context, opts Options) (_ *Daemon, err error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	cfg, base, err := loadConfig(opts)
	if err != nil {
		return nil, err
	}
	// d is not the named result: a failed start returns nil, and the
	// undo steps below must still see the daemon they undo.
	d := &Daemon{Config: cfg, log: log, served: make(chan struct{}), execAgents: map[string]config.Agent{}}
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()
	if d.root, err = filepath.Abs(base); err != nil {
		return nil, fmt.Errorf("daemon: the repository's root: %w", err)
	}
	d.dir = opts.Dir
	if d.dir == "" {
		d.dir = filepath.Join(base, DefaultDir)
	}
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return nil, fmt.Errorf("daemon: state directory: %w", err)
	}
	if d.lock, err = lockRepo(d.dir); err != nil {
		return nil, err
	}
	undo = append(undo, d.lock.release)
	if d.Token, err = adminToken(opts.Token, d.dir); err != nil {
		return nil, err
	}
	ln, aimaestro, err := d.listen(opts)
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { ln.Close() })
	dbPath, err := d.openStore(ctx, &opts, base, ln, &undo)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics, err := server.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	if err = d.openRuntime(ctx, metrics); err != nil {
		return nil, err
	}
	undo = append(undo, func() { d.Runtime.Close() })
	tokens, err := d.openExecutor(base, "http://"+ln.Addr().String())
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { d.exec.Close() })
	if err = d.newServer(opts, reg, metrics, aimaestro); err != nil {
		return nil, err
	}
	if err = d.begin(ctx, tokens); err != nil {
		return nil, err
	}
	if err = d.open(opts, base, ln); err != nil {
		return nil, err
	}
	log.Info("wilco serves", "url", d.URL, "store", dbPath, "agents", len(cfg.Agents), "aimaestro", aimaestro)
	d.warnOfConfig()
	d.startIntake(d.forge, cfg.Intake)
	return d, nil
}

// loadConfig reads the configuration (unless given) and says which
// directory relative paths are relative to.
func loadConfig(opts Options) (cfg *config.Config, base string, err error) {
	cfg = opts.Config
	if cfg == nil {
		path := config.Path(opts.ConfigPath)
		if cfg, err = config.Load(path); err != nil {
			return nil, "", err
		}
		base = filepath.Dir(path)
	}
	if opts.Root != "" {
		base = opts.Root
	}
	// The flag's and WILCO_TRANSPORT's transport; wilco.yaml's is checked
	// with the file.
	if opts.Transport != "" {
		if err := config.CheckTransport(opts.Transport); err != nil {
			return nil, "", fmt.Errorf("daemon: transport: %w", err)
		}
	}
	return cfg, base, nil
}

// listen opens the listening socket, and says whether AI Maestro's API is
// served (on loopback only).
func (d *Daemon) listen(opts Options) (_ net.Listener, aimaestro bool, _ error) {
	cfg, log := d.Config, d.log
	addr := cfg.Listen
	if opts.Addr != "" {
		addr = opts.Addr
	}
	loopback := IsLoopback(addr)
	if !loopback && !opts.AllowRemote {
		return nil, false, fmt.Errorf("daemon: refusing to listen on %s: not a loopback address, so the API would answer other machines; "+
			"listen on 127.0.0.1, or allow it explicitly (wilco serve --allow-remote) and put TLS in front", addr)
	}
	aimaestro = cfg.Compat.AIMaestro
	if aimaestro && !loopback {
		log.Warn("compat.aimaestro is off: AI Maestro's API needs no token, so wilco serves it on loopback only", "listen", addr)
		aimaestro = false
	}
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) && opts.Addr == "" && loopback {
		// Another program (or another repository's wilco) has the
		// configured port: serve on a free one; the CLI finds it in the
		// state directory's addr file.
		host, _, _ := net.SplitHostPort(addr)
		if ln, err = net.Listen("tcp", net.JoinHostPort(host, "0")); err == nil {
			log.Warn("the configured port is taken: serving on a free port instead (the CLI finds it in .wilco/addr)",
				"configured", addr, "serving", ln.Addr().String())
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("daemon: listen: %w", err)
	}
	return ln, aimaestro, nil
}

// openStore opens the store: SQLite, or PostgreSQL as one node of several
// (which answers as a standby until it holds the repository's lease). It
// returns the store's name for the log.
func (d *Daemon) openStore(ctx context.Context, opts *Options, base string, ln net.Listener, undo *[]func()) (string, error) {
	dbPath := d.Config.Store
	if opts.Store != "" {
		dbPath = opts.Store
	}
	if postgres.IsURL(dbPath) {
		*undo = append(*undo, func() {
			if d.st != nil {
				d.st.Close()
			}
		})
		if err := d.startNode(ctx, *opts, dbPath, base, ln); err != nil {
			return "", err
		}
		*undo = append(*undo, func() {
			d.stopHTTP()
			d.reader.close()
		})
		opts.Routes = append(slices.Clip(opts.Routes), d.node.clusterRoute())
		return postgres.Redact(dbPath), nil
	}
	switch {
	case dbPath == "":
		dbPath = filepath.Join(d.dir, "wilco.db")
	case !filepath.IsAbs(dbPath):
		dbPath = filepath.Join(base, dbPath)
	}
	var err error
	if d.st, err = sqlite.Open(dbPath); err != nil {
		return "", err
	}
	*undo = append(*undo, func() { d.st.Close() })
	return dbPath, nil
}

// openRuntime rebuilds the core from the store; the committed events feed
// the metrics and the retry logs.
func (d *Daemon) openRuntime(ctx context.Context, metrics *server.Metrics) error {
	cfg := d.Config
	records := retrylog.New(d.dir, cfg.Logs.RetryLogRetention, cfg.Logs.RetryJSONLRetention)
	if err := records.Prune(time.Now()); err != nil {
		d.log.Warn("pruning the retry logs failed", "err", err)
	}
	rcfg := runtime.Config{
		Store: d.st, Logger: d.log.With("component", "runtime"),
		Observe: func(evs []store.Event) { metrics.Observe(evs); records.Observe(evs); d.prOpened(evs) },
	}
	if d.node != nil {
		rcfg.MaxCommitEvents, rcfg.CheckpointChunk = postgres.GroupCommitEvents, postgres.CheckpointChunk
	}
	var err error
	d.Runtime, err = runtime.Open(ctx, rcfg)
	return err
}

// openExecutor makes the performers — the dispatcher with the
// configuration's exec and tmux agents, the notifier — and the executor
// that performs the runtime's effects with them. It returns the agents'
// tokens.
func (d *Daemon) openExecutor(base, serverURL string) (map[string]string, error) {
	cfg, log := d.Config, d.log
	var err error
	if d.forge, err = d.openForge(base); err != nil {
		switch {
		case cfg.Intake != nil:
			return nil, fmt.Errorf("%w (intake needs the forge)", err)
		case cfg.Land.How == core.LandPR:
			return nil, fmt.Errorf("%w (land.how pr needs the forge)", err)
		}
		log.Warn("the forge is left out", "err", err)
	}
	lander, err := d.prLander()
	if err != nil {
		return nil, err
	}
	if d.disp, err = dispatch.New(dispatch.Options{PR: lander, Dir: base, RunsDir: filepath.Join(d.dir, "runs"), Steps: verifySteps(cfg), URL: serverURL, MCP: mcpCommand(),
		StateDir: d.dir, RateLimitWait: cfg.Policies().Ack.Wait, Logger: log.With("component", "dispatch"), Runtime: d.Runtime}); err != nil {
		return nil, err
	}
	notifier, err := newNotifier(cfg, serverURL, log.With("component", "notify"))
	if err != nil {
		d.disp.Close()
		return nil, err
	}
	d.desktop = notifier.Desktop()
	po := perform.Options{Runtime: d.Runtime, Dispatch: d.disp, Notifier: notifier, Logger: log.With("component", "perform")}
	if th := d.issueThread(d.forge); th != nil {
		po.Issues = th
	}
	d.exec = perform.New(po)
	tokens := map[string]string{}
	for _, a := range cfg.Agents {
		switch a.Adapter {
		case "exec":
			tokens[a.Name] = server.NewToken()
			err = d.addExec(a, tokens[a.Name])
		case "tmux":
			if tokens[a.Name], err = tmuxToken(d.dir, a.Name); err == nil {
				err = d.addTmux(a, tokens[a.Name])
			}
		}
		if err != nil {
			d.exec.Close()
			return nil, err
		}
	}
	return tokens, nil
}

// newServer makes the HTTP API and the page.
func (d *Daemon) newServer(opts Options, reg *prometheus.Registry, metrics *server.Metrics, aimaestro bool) error {
	page, err := web.New()
	if err != nil {
		return err
	}
	dir := d.dir
	d.Server, err = server.New(server.Options{
		Page:    page,
		Runtime: d.Runtime, Store: d.st, Config: d.Config, AdminToken: d.Token, Logger: d.log.With("component", "http"),
		Registry: reg, Metrics: metrics, AIMaestro: aimaestro, MailboxFile: filepath.Join(dir, "aimaestro.json"),
		Routes: opts.Routes, RunsDir: filepath.Join(dir, "runs"), LogsDir: filepath.Join(dir, "logs"), EditedSince: d.disp.EditedSince,
		Checkout: d.disp.Branch, Root: d.root, Forge: d.forgeHook,
		AgentAdded: func(a config.Agent, token string) {
			var err error
			switch a.Adapter {
			case "exec":
				err = d.addExec(a, token)
			case "tmux":
				if err = saveTmuxToken(dir, a.Name, token); err == nil {
					err = d.addTmux(a, token)
				}
			}
			if err != nil {
				d.log.Error("the new agent cannot run", "agent", a.Name, "err", err)
			}
		},
		PaneState: func(name string) (wire.Pane, bool) {
			st, ok := d.disp.Tmux().State(name)
			p := wire.Pane{State: wire.PaneState(st.State), Session: st.Session, Attach: st.Attach, Queued: st.Queued, Working: st.Working,
				Conversation: st.Conversation}
			for _, i := range st.Instances {
				p.Instances = append(p.Instances, wire.PaneOf{Task: i.Task, State: wire.PaneState(i.State), Session: i.Session, Attach: i.Attach, Working: i.Working})
			}
			return p, ok
		},
		TokenRotated: func(name, token string) {
			d.execMu.Lock()
			a, ok := d.execAgents[name]
			d.execMu.Unlock()
			switch {
			case ok && a.Adapter == "tmux":
				_ = saveTmuxToken(dir, name, token)
				_ = d.addTmux(a, token)
			case ok:
				_ = d.addExec(a, token)
			}
		},
	})
	return err
}

// begin starts the runtime's loop, registers the configuration's agents
// and policies, runs again the agents created through the API, starts the
// executor, and settles what a restart interrupted.
func (d *Daemon) begin(ctx context.Context, tokens map[string]string) error {
	// Before the executor starts the first turn, which the pid files of
	// the runs a previous wilco left would otherwise be taken for.
	d.disp.KillOrphans()
	d.Runtime.Start()
	if err := d.setUp(ctx, d.Config, tokens); err != nil {
		return err
	}
	if err := d.restoreAPIAgents(ctx, d.Config); err != nil {
		return err
	}
	// The effects committed so far (the sends a restart hands over again,
	// the probes) wait in the runtime's outbox until every agent is in its
	// adapter: none is dropped for an agent not yet back.
	d.exec.Start()
	d.startPRWatch()
	return d.disp.Recover(ctx)
}

// open opens the daemon to its clients: the NATS bridge, the HTTP server
// (or, on a node, its front, which answered as a standby until now), the
// lock file's and the addr file's address.
func (d *Daemon) open(opts Options, base string, ln net.Listener) error {
	if d.node == nil {
		d.Addr = ln.Addr().String()
		d.URL = "http://" + d.Addr
	}
	var err error
	if d.LoginURL, _, err = d.Server.LoginLink(d.URL); err != nil {
		return err
	}
	if opts.Transport == "" {
		opts.Transport = d.Config.Transport // the flag and WILCO_TRANSPORT come first
	}
	if opts.Transport != "" {
		if err = d.startBridge(opts.Transport, base); err != nil {
			return err
		}
	}
	d.setFront(d.Server)
	if d.node != nil {
		d.reader.close()
		d.reader = nil
		d.node.keep(d.Runtime.Err)
	} else {
		d.serve(ln)
	}
	if err := d.lock.setURL(d.URL); err != nil {
		d.log.Warn("could not record the address in the lock file", "err", err)
	}
	d.addrFile = filepath.Join(d.dir, "addr")
	if err := os.WriteFile(d.addrFile, []byte(d.URL+"\n"), 0o600); err != nil {
		d.log.Warn("could not write the address file", "path", d.addrFile, "err", err)
		d.addrFile = ""
	}
	return nil
}

// warnOfConfig logs what the configuration likely does not mean.
func (d *Daemon) warnOfConfig() {
	cfg, log := d.Config, d.log
	for _, w := range cfg.Warnings {
		log.Warn("configuration: " + w)
	}
	if len(cfg.Agents) == 0 {
		log.Warn("no agent is configured: every task is refused until one is added to wilco.yaml or with POST /v1/agents")
	}
	if len(cfg.Verify.Steps) == 0 {
		log.Warn("no verify step is configured: nothing checks the agents' work, and tasks end unverified, never success; add verify.steps to wilco.yaml")
	}
}

// serve starts answering HTTP on ln with whatever front holds.
func (d *Daemon) serve(ln net.Listener) {
	d.Addr = ln.Addr().String()
	d.URL = "http://" + d.Addr
	log := d.log
	d.http = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			(*d.front.Load()).ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		// ReadTimeout bounds reading a request (its body is at most 1 MiB);
		// net/http lifts it once the handler runs, so event streams and
		// long-polls outlive it. There is no WriteTimeout: streams write
		// for as long as the client reads.
		ReadTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute,
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnState: func(c net.Conn, state http.ConnState) {
			if state == http.StateNew {
				d.fresh.Store(c, struct{}{})
			} else {
				d.fresh.Delete(c)
			}
		},
	}
	go func() {
		defer close(d.served)
		if err := d.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.serveErr = fmt.Errorf("daemon: serve: %w", err)
			log.Error("serving stopped", "err", err)
		}
	}()
}

// setUp registers the configured agents and policies, and settles the
// operations whose command was running when wilco last stopped.
func (d *Daemon) setUp(ctx context.Context, cfg *config.Config, tokens map[string]string) error {
	to := cfg.Land.To
	if to == "" {
		// The target branch is the one checked out now.
		to, _ = d.disp.Branch(ctx)
	}
	_, err := d.Runtime.Do(ctx, func(c *core.State, now time.Time) (any, error) {
		p := cfg.Policies()
		p.Land.To = to
		if !d.desktop {
			// Asked for, but notify-send is missing (the notifier warned):
			// no desktop notification is made.
			p.Notify.Hooks = slices.DeleteFunc(p.Notify.Hooks, func(h core.NotifyHook) bool { return h.Name == core.DesktopHook })
		}
		if err := c.Configure(now, p); err != nil {
			return nil, fmt.Errorf("daemon: policies: %w", err)
		}
		for _, a := range cfg.Agents {
			if err := c.RegisterAgent(now, a.Spec()); err != nil {
				return nil, fmt.Errorf("daemon: agent %s: %w", a.Name, err)
			}
			if tok, ok := tokens[a.Name]; ok {
				// An exec agent gets a fresh token at every start, in its
				// environment (WILCO_AGENT_TOKEN).
				if err := c.SetAgentToken(now, a.Name, server.TokenHash(tok)); err != nil {
					return nil, err
				}
			}
		}
		names := make([]string, 0, len(cfg.Agents))
		for _, a := range cfg.Agents {
			names = append(names, a.Name)
		}
		if gone := c.RemoveAgentsNotIn(now, names); len(gone) > 0 {
			d.log.Info("removed the agents no longer in the configuration", "agents", gone)
		}
		c.ProbeUnprobed(now)
		for _, id := range c.RunningOperations() {
			if _, err := c.FinishOperation(now, id, -1, "wilco stopped while the command ran; its outcome is unknown"); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	return err
}

// Done is closed when the daemon stops serving (Close, or a failure).
func (d *Daemon) Done() <-chan struct{} { return d.served }

// Close shuts down: event streams and long-polls end, requests in flight
// finish (for up to 10 s), running operation commands are killed and
// recorded, the runtime writes its checkpoint, the store closes.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() {
		var errs []error
		d.Server.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		d.http.RegisterOnShutdown(func() {
			// The listeners are closed: a connection that has not sent a
			// request will not have one served.
			d.fresh.Range(func(c, _ any) bool {
				_ = c.(net.Conn).Close()
				return true
			})
		})
		if err := d.http.Shutdown(ctx); err != nil {
			d.log.Warn("requests still running at shutdown were cut", "err", err)
			_ = d.http.Close()
		}
		cancel()
		<-d.served
		if d.stopIntake != nil {
			d.stopIntake()
		}
		if d.bridge != nil {
			d.bridge.Close()
		}
		if w := d.prwatch.Load(); w != nil {
			w.Close()
		}
		errs = append(errs, d.exec.Close())
		errs = append(errs, d.Runtime.Close())
		if d.node != nil {
			d.node.close()
		}
		errs = append(errs, d.st.Close())
		if d.addrFile != "" {
			_ = os.Remove(d.addrFile)
		}
		d.lock.release()
		d.closeErr = errors.Join(errs...)
		d.log.Info("wilco stopped")
	})
	return d.closeErr
}

// mcpCommand is the command line of wilco's MCP server for agents: this
// very program, `wilco mcp` (nil when its path is unknown).
func mcpCommand() []string {
	exe, err := os.Executable()
	if err != nil || !strings.Contains(filepath.Base(exe), "wilco") {
		// A test binary or an unknown program is no wilco to run.
		return nil
	}
	return []string{exe, "mcp"}
}

// IsLoopback reports whether a listen address (host:port) is on loopback
// only: localhost, 127.0.0.0/8 or ::1. An empty host (all interfaces) is
// not.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// adminToken returns the admin token: given, else $WILCO_TOKEN, else the
// token file (created when missing).
func adminToken(given, dir string) (string, error) {
	if given != "" {
		return given, nil
	}
	if t := strings.TrimSpace(os.Getenv(EnvToken)); t != "" {
		return t, nil
	}
	path := filepath.Join(dir, "token")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		tok := server.NewToken()
		_, werr := f.WriteString(tok + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", fmt.Errorf("daemon: write %s: %w", path, werr)
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("daemon: create %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("daemon: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("daemon: %s is readable by others (mode %v): chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("daemon: %w", err)
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", fmt.Errorf("daemon: %s is empty: remove it to have a new token made", path)
	}
	return tok, nil
}

// newNotifier makes the notifier of the configuration's webhooks and
// desktop; links start with notify.base_url, else the server's URL.
func newNotifier(cfg *config.Config, serverURL string, log *slog.Logger) (*notify.Notifier, error) {
	o := notify.Options{Desktop: cfg.Notify.Desktop, BaseURL: cfg.Notify.BaseURL, Timeout: cfg.Notify.Retry.Timeout, Logger: log, UserAgent: "wilco"}
	if o.BaseURL == "" {
		o.BaseURL = serverURL
	}
	for _, w := range cfg.Notify.Webhooks {
		u, secret, err := w.Resolve()
		if err != nil {
			return nil, fmt.Errorf("daemon: notify: %w", err)
		}
		o.Webhooks = append(o.Webhooks, notify.Webhook{Name: w.Name, URL: u, Secret: secret, Format: w.Format})
	}
	return notify.New(o), nil
}

func verifySteps(cfg *config.Config) []verify.Step {
	out := make([]verify.Step, 0, len(cfg.Verify.Steps))
	for _, s := range cfg.Verify.Steps {
		out = append(out, verify.Step{Name: s.Name, Run: s.Run, Timeout: s.Timeout})
	}
	return out
}

// addExec lets the exec adapter run an agent (again, with a new token).
func (d *Daemon) addExec(a config.Agent, token string) error {
	if err := d.disp.Exec().Add(execadapter.AgentConfig{Name: a.Name, Preset: a.Preset, Command: a.Command, Prompt: a.Prompt,
		Handshake: a.Handshake, Env: a.Env, Timeout: a.Timeout, IdleTimeout: a.IdleTimeout, Token: token}); err != nil {
		return fmt.Errorf("daemon: agent %s: %w", a.Name, err)
	}
	d.execMu.Lock()
	d.execAgents[a.Name] = a
	d.execMu.Unlock()
	return nil
}

// addTmux lets the tmux adapter run an agent (again, with a new token).
func (d *Daemon) addTmux(a config.Agent, token string) error {
	c := tmuxadapter.AgentConfig{Name: a.Name, Preset: a.Preset, Command: a.Command, Env: a.Env, Timeout: a.Timeout, IdleTimeout: a.IdleTimeout, Token: token}
	if t := a.Tmux; t != nil {
		c.Session, c.Socket, c.Ready, c.Busy, c.Permission = t.Session, t.Socket, t.Ready, t.Busy, t.Permission
		c.Submit, c.Interrupt, c.Clear, c.Approve, c.Deny, c.Allow = t.Submit, t.Interrupt, t.Clear, t.Approve, t.Deny, t.Allow
		c.Width, c.Height, c.Settle, c.SubmitTries = t.Width, t.Height, t.Settle, t.SubmitTries
	}
	if err := d.disp.Tmux().Add(c); err != nil {
		return fmt.Errorf("daemon: agent %s: %w", a.Name, err)
	}
	if err := tmuxadapter.Available(""); err != nil {
		d.log.Warn("tmux is not installed: the agent's prompts wait until it is (apt-get install tmux)", "agent", a.Name, "err", err)
	}
	d.execMu.Lock()
	d.execAgents[a.Name] = a
	d.execMu.Unlock()
	return nil
}

// tmuxToken is a tmux agent's token: its session outlives wilco and keeps
// the token it started with (WILCO_AGENT_TOKEN), so the token is kept in
// the state directory (mode 0600) and used again at the next start.
func tmuxToken(dir, agent string) (string, error) {
	path := filepath.Join(dir, "tmux", agent+".token")
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), nil
	}
	tok := server.NewToken()
	return tok, saveTmuxToken(dir, agent, tok)
}

func saveTmuxToken(dir, agent, token string) error {
	path := filepath.Join(dir, "tmux", agent+".token")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(token+"\n"), 0o600)
}

// restoreAPIAgents runs again the exec and tmux agents created through the
// API (not in wilco.yaml), from the settings the store kept, each with a
// new token (a tmux agent with the one it keeps). A removed agent — by the
// user, or gone from wilco.yaml — stays out of service: it gets no adapter
// and no token.
func (d *Daemon) restoreAPIAgents(ctx context.Context, cfg *config.Config) error {
	var agents []core.Agent
	if err := d.Runtime.Read(func(c *core.State) { agents = c.Agents() }); err != nil {
		return fmt.Errorf("daemon: the agents created through the API: %w", err)
	}
	for _, ag := range agents {
		if _, inConfig := cfg.Agent(ag.Name); inConfig || ag.Removed || ag.Adapter != "exec" && ag.Adapter != "tmux" {
			continue
		}
		a, err := config.AgentFromSettings(ag.Name, ag.Adapter, ag.Capabilities, ag.Settings)
		if err != nil {
			d.log.Error("an agent created through the API cannot run", "agent", ag.Name, "err", err)
			continue
		}
		token := server.NewToken()
		if ag.Adapter == "tmux" {
			if token, err = tmuxToken(d.dir, ag.Name); err != nil {
				return err
			}
		}
		if _, err := d.Runtime.Do(ctx, func(c *core.State, now time.Time) (any, error) {
			return nil, c.SetAgentToken(now, ag.Name, server.TokenHash(token))
		}); err != nil {
			return err
		}
		add := d.addExec
		if ag.Adapter == "tmux" {
			add = d.addTmux
		}
		if err := add(a, token); err != nil {
			d.log.Error("an agent created through the API cannot run", "agent", ag.Name, "err", err)
		}
	}
	return nil
}
