package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"wilco/config"
	"wilco/core"
	"wilco/runtime"
	"wilco/store"
	"wilco/wire"
)

// Defaults of the server's own settings.
const (
	// DefaultKeepAlive is how often an idle event stream gets a comment line,
	// so that proxies and clients see the connection is alive.
	DefaultKeepAlive = 15 * time.Second
	// DefaultMaxWait bounds an inbox long-poll (?wait=).
	DefaultMaxWait = 5 * time.Minute
	// streamWriteTimeout bounds one write to an event stream: a client that
	// stops reading is cut off rather than holding a goroutine forever.
	streamWriteTimeout = 30 * time.Second
)

// Options configures a server.
type Options struct {
	Runtime *runtime.Runtime
	Store   store.Store
	// Config gives the orchestrator's name; nil means the defaults.
	Config *config.Config
	// AdminToken is the control API's bearer token. Empty: the control API
	// answers 401 to everyone.
	AdminToken string
	Logger     *slog.Logger
	// Registry is what /metrics serves; nil: a new registry.
	Registry *prometheus.Registry
	// Metrics are the delivery metrics, fed by runtime.Config.Observe (see
	// NewMetrics); nil: created here (registered in Registry) and fed by
	// nothing, so that the delivery counters stay at zero.
	Metrics *Metrics
	// AIMaestro serves AI Maestro's /api/messages. The daemon sets it only
	// when wilco listens on loopback; the handlers also refuse non-loopback
	// clients.
	AIMaestro bool
	// MailboxFile keeps the AI Maestro mailbox (read/archived marks, the
	// messages agents fetched) across restarts; "" keeps it in memory.
	MailboxFile string
	// KeepAlive is the event stream's comment interval (DefaultKeepAlive).
	KeepAlive time.Duration
	// MaxWait bounds an inbox long-poll (DefaultMaxWait).
	MaxWait time.Duration
	// StreamBuffer is how many events an event stream may fall behind
	// before it is dropped (and resumes from the log); default 1024.
	StreamBuffer int
	// AgentAdded, when set, is told of an agent created through the API
	// (with its token), so that its adapter can run it; TokenRotated of an
	// agent's new token.
	AgentAdded   func(a config.Agent, token string)
	TokenRotated func(name, token string)
	// PaneState, when set, says what a tmux agent's pane shows.
	PaneState func(name string) (wire.Pane, bool)
	// RunsDir holds verification runs and dry-run diffs (default
	// .wilco/runs); LogsDir holds retry.log and retry.jsonl (default
	// .wilco/logs).
	RunsDir string
	LogsDir string
	// EditedSince, when set, names which of files changed in the working
	// tree since a task's dry run started: apply refuses to write the
	// diff over them.
	EditedSince func(ctx context.Context, taskID string, files []string) ([]string, error)
	// Checkout, when set, says which branch the working tree has checked
	// out ("" for a detached HEAD; ok false when it cannot tell): a task
	// that lands as a commit is refused while it is not the target branch.
	Checkout func(ctx context.Context) (branch string, ok bool)
	// Root is the repository's root, absolute: a mailbox agent's message of
	// a task worked in parallel tells it where the task's worktree is
	// (Root joined with the task's worktree). "": it is told the worktree
	// relative to the repository.
	Root string
	// Page serves the page's files (package web) at / and /ui/; nil: those
	// routes answer 404.
	Page PageFiles
	// Routes are routes of other packages (tasks, plans, runs): they get the
	// same authentication, body limit, logging, metrics and documentation.
	Routes []Route
	// Forge, when set, is the forge whose webhooks POST /v1/forge/webhook
	// takes.
	Forge *ForgeHook
	// Standby, when set, answers a request whose handler met
	// runtime.ErrStandby before writing anything: a server on a standby
	// runtime (one node of several) sends it to the active node. Without
	// it such a request answers 503.
	Standby http.HandlerFunc
}

// Server is wilco's HTTP API. It is an http.Handler.
type Server struct {
	rt      *runtime.Runtime
	st      store.Store
	runsDir string
	logsDir string
	root    string
	orch    string
	admin   [32]byte
	hasAdm  bool
	// sessions are the page's logins; nil without an admin token.
	sessions *sessions
	log      *slog.Logger
	reg      *prometheus.Registry
	metrics  *Metrics
	opts     Options

	mux    *http.ServeMux
	routes []Route
	// muxPatterns are the patterns registered on mux, in order.
	muxPatterns []string

	mailbox *mailbox
	wakes   *wakes

	stopOnce sync.Once
	stopping chan struct{}
}

// New builds the server and its routes.
func New(opts Options) (*Server, error) {
	if opts.Runtime == nil || opts.Store == nil {
		return nil, errors.New("server: Runtime and Store are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Config == nil {
		opts.Config = config.Default()
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.StreamBuffer <= 0 {
		opts.StreamBuffer = defaultStreamBuffer
	}
	s := &Server{
		rt: opts.Runtime, st: opts.Store, orch: opts.Config.Orchestrator, log: opts.Logger,
		reg: opts.Registry, opts: opts, mux: http.NewServeMux(), wakes: newWakes(),
		stopping: make(chan struct{}),
	}
	if s.orch == "" {
		s.orch = core.Orchestrator
	}
	s.runsDir, s.logsDir, s.root = opts.RunsDir, opts.LogsDir, opts.Root
	if s.runsDir == "" {
		s.runsDir = filepath.Join(".wilco", "runs")
	}
	if s.logsDir == "" {
		s.logsDir = filepath.Join(".wilco", "logs")
	}
	if opts.AdminToken != "" {
		s.admin, s.hasAdm = hashToken(opts.AdminToken), true
		s.sessions = newSessions(opts.AdminToken)
	}
	var err error
	if s.metrics = opts.Metrics; s.metrics == nil {
		if s.metrics, err = NewMetrics(opts.Registry); err != nil {
			return nil, err
		}
	}
	if err := s.metrics.attach(s.rt, opts.Registry); err != nil {
		return nil, err
	}
	if opts.AIMaestro {
		if s.mailbox, err = openMailbox(opts.MailboxFile); err != nil {
			return nil, err
		}
	}
	routes := s.ownRoutes()
	routes = append(routes, opts.Routes...)
	for _, rt := range routes {
		if err := s.handle(rt); err != nil {
			return nil, err
		}
	}
	s.mux.HandleFunc("/", s.unmatched)
	s.muxPatterns = append(s.muxPatterns, "/")
	if _, err := s.document(); err != nil {
		return nil, err
	}
	return s, nil
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Routes lists every route the server answers, in the order documented.
func (s *Server) Routes() []Route { return append([]Route(nil), s.routes...) }

// Stop makes event streams and inbox long-polls end now, so that an
// http.Server's Shutdown is not held up by them. Other requests finish.
func (s *Server) Stop() { s.stopOnce.Do(func() { close(s.stopping) }) }

// Auth is who may use a route.
type Auth int

// Route audiences.
const (
	// Public routes need no token (/healthz, /openapi.json).
	Public Auth = iota
	// Admin routes need the admin token (the control API).
	Admin
	// AgentOnly routes need an agent's token (the agent's side).
	AgentOnly
	// Loopback routes answer loopback clients only, with an agent's token
	// (as AI Maestro's AMP clients send their API key: Authorization:
	// Bearer) or the admin token: AI Maestro compatibility.
	Loopback
)

func (a Auth) String() string {
	switch a {
	case Admin:
		return "admin"
	case AgentOnly:
		return "agent"
	case Loopback:
		return "loopback"
	}
	return "public"
}

// Route is one endpoint: its pattern, who may call it, what it does, and
// what the OpenAPI document says of it.
type Route struct {
	Method  string // GET, POST, PATCH, DELETE
	Path    string // net/http pattern path: /v1/agents/{name}
	Auth    Auth
	Summary string
	// Handler serves the request. An error it returns is written with the
	// error table (WriteError); it must not have written anything then.
	Handler func(w http.ResponseWriter, r *http.Request) error
	// Documentation: query parameters, the request body (a value of its
	// type, such as wire.SubmitTask{}; nil for none), and the body of each
	// success status: nil for none, a value of its type, the media types
	// of a text body ("text/plain", several joined by "|"), or a list of
	// those (JSON of one of several types, or JSON and an event stream).
	// The document's schemas are generated from the types (wire.Schemas);
	// an error status the route declares replaces the error table's.
	Query     []Param
	Request   any
	Responses map[int]any
	// OptionalBody: the request body may be left out.
	OptionalBody bool
	// Examples for the path parameters ({name}: "alpha"), used by the
	// document and by the test that every documented route answers.
	Examples map[string]string
}

// Param is one documented query parameter.
type Param struct {
	Name, Type, Description string
}

// Pattern is the route's net/http pattern.
func (rt Route) Pattern() string { return rt.Method + " " + rt.Path }

func (s *Server) handle(rt Route) error {
	if rt.Handler == nil || rt.Method == "" || !strings.HasPrefix(rt.Path, "/") {
		return errors.New("server: route " + rt.Pattern() + " needs a method, a path and a handler")
	}
	for _, have := range s.routes {
		if have.Pattern() == rt.Pattern() {
			return errors.New("server: route " + rt.Pattern() + " registered twice")
		}
	}
	s.routes = append(s.routes, rt)
	pattern := rt.Pattern()
	h := func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, pattern, rt)
	}
	var panicked any
	func() {
		defer func() { panicked = recover() }()
		s.mux.HandleFunc(pattern, h)
	}()
	if panicked != nil {
		return fmt.Errorf("server: route %s: %v", pattern, panicked)
	}
	s.muxPatterns = append(s.muxPatterns, pattern)
	return nil
}

type ctxKey int

const callerKey ctxKey = 0

// AgentName is the agent whose token authenticated the request ("" for the
// admin or no token).
func AgentName(ctx context.Context) string {
	c, _ := ctx.Value(callerKey).(caller)
	return c.agent
}

// IsAdmin reports whether the admin token authenticated the request.
func IsAdmin(ctx context.Context) bool {
	c, _ := ctx.Value(callerKey).(caller)
	return c.admin
}

// serve runs one request through the body limit, authentication, the
// handler, the error table, the log and the metrics.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, pattern string, rt Route) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	r.Body = http.MaxBytesReader(rec, r.Body, MaxBody)
	who, err := s.authenticate(r, rt.Auth)
	if err == nil {
		r = r.WithContext(context.WithValue(r.Context(), callerKey, who))
		err = rt.Handler(rec, r)
	}
	if err != nil {
		if rec.status != 0 {
			s.log.Error("handler failed after writing its response", "route", pattern, "err", err)
		} else if s.opts.Standby != nil && errors.Is(err, runtime.ErrStandby) {
			s.opts.Standby(rec, r)
		} else if rt.Auth == Loopback {
			writeMaestroError(rec, err)
		} else {
			WriteError(rec, err)
		}
	}
	s.finish(rec, r, pattern, who.agent, start, err)
}

func (s *Server) finish(rec *recorder, r *http.Request, pattern, agent string, start time.Time, err error) {
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	d := time.Since(start)
	s.metrics.request(pattern, status, d)
	attrs := []slog.Attr{
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", status),
		slog.Duration("duration", d),
	}
	if agent != "" {
		attrs = append(attrs, slog.String("agent", agent))
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
		if err != nil {
			attrs = append(attrs, slog.String("err", err.Error()))
		}
	} else if err != nil {
		attrs = append(attrs, slog.String("refused", err.Error()))
	}
	s.log.LogAttrs(r.Context(), level, "http", attrs...)
}

// unmatched answers what no route matched: 405 with Allow when the path
// exists under other methods, else 404.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := s.mux.Handler(probe); p != "/" && p != "" {
			allowed = append(allowed, m)
		}
	}
	var err error
	if len(allowed) > 0 {
		rec.Header().Set("Allow", strings.Join(allowed, ", "))
		err = Errorf(wire.CodeMethodNotAllowed, "%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allowed, ", "))
	} else {
		err = notFoundf("no route %s %s (see /openapi.json)", r.Method, r.URL.Path)
	}
	if strings.HasPrefix(r.URL.Path, "/api/") && s.mailbox != nil {
		writeMaestroError(rec, err)
	} else {
		WriteError(rec, err)
	}
	s.finish(rec, r, "unmatched", "", start, nil)
}

// recorder notes the status a handler wrote. It passes Flush and deadlines
// through (Unwrap), for event streams.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Flush() {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// isLoopback reports whether a request comes from a loopback address.
func isLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// read runs fn on the runtime's loop for a consistent view of the core. Its
// error (a closed or stopped runtime: fn did not run) is the request's.
func (s *Server) read(fn func(c *core.State)) error { return s.rt.Read(fn) }

// do runs fn on the loop and returns its result once its events are
// durable.
func do[T any](ctx context.Context, s *Server, fn func(c *core.State, now time.Time) (T, error)) (T, error) {
	v, err := s.rt.Do(ctx, func(c *core.State, now time.Time) (any, error) {
		return fn(c, now)
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}
