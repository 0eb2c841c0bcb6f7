// Package forgetest is a scripted forge for tests: the subset of GitHub's
// REST API (under /api/v3, as GitHub Enterprise serves it) and of Gitea's
// (under /api/v1) that package forge uses, over one real bare git
// repository served by git's smart HTTP (git http-backend behind
// net/http/cgi) at /{owner}/{name}.git, which takes the token as basic
// auth's password or as an Authorization: token/Bearer header and refuses
// anyone without it.
//
// A test scripts what the forge's people and CI do (check runs with their
// logs, statuses, reviews and line comments, issues with labels, comments
// from collaborators or not) and what goes wrong (rate limits, 5xx, a
// connection cut mid-answer); pull requests are opened through the API of
// branches pushed for real, and merged for real in the bare repository.
// When a webhook address is set, every change is sent to it signed, in the
// flavour of the forge's kind; without one, only polling sees it. Every
// request is recorded for assertions.
package forgetest

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/forge"
)

// Options are what a Server is made with; every field has a default.
type Options struct {
	// Owner and Name are the repository's (default acme/widget).
	Owner, Name string
	// Token is the one credential the forge takes (default: random).
	Token string
	// Login is the token's user (default wilco-bot).
	Login string
	// Kind is the flavour of the webhooks sent (default github).
	Kind forge.Kind
	// WebhookURL, if set, is where events are POSTed, signed with
	// WebhookSecret.
	WebhookURL, WebhookSecret string
	// Branch is the bare repository's first branch (default main),
	// holding one commit with a README.
	Branch string
}

// Request is one request the server answered.
type Request struct {
	Method string
	Path   string
	Query  string
	// Auth is how it authenticated: bearer, token, basic, or "" for not
	// (or with a wrong token).
	Auth   string
	Status int
}

// Delivery is one webhook sent.
type Delivery struct {
	Event  string // X-GitHub-Event, or X-Gitea-Event-Type
	Body   []byte
	Status int // 0 when it was not answered
	Err    error
}

// Fault is an answer the server gives instead of the real one, to the
// next Times requests whose method (empty: any) and path (containing
// Path; empty: any) match.
type Fault struct {
	Method string
	Path   string
	Times  int
	// Status and Header and Body are the answer; with Die the connection
	// is cut in the middle of an answer instead.
	Status int
	Header http.Header
	Body   string
	Die    bool
}

// Server is the scripted forge.
type Server struct {
	// URL is the server's root; Token its credential; Repo the repository.
	URL   string
	Token string
	Repo  forge.Repo
	// Bare is the bare repository's directory.
	Bare string

	t     testing.TB
	kind  forge.Kind
	login string
	root  string // GIT_PROJECT_ROOT
	http  *httptest.Server
	mux   *http.ServeMux

	mu            sync.Mutex
	now           func() time.Time
	next          int   // the next issue or pull request number
	nextID        int64 // the next id of anything else
	pulls         map[int]*pull
	issues        map[int]*issue
	comments      []*comment
	checkRuns     []*checkRun
	statuses      []*status
	reviews       []*review
	reviewComms   []*reviewComment
	collaborators map[string]bool
	faults        []*Fault
	requests      []Request
	hookURL       string
	hookSecret    string
	deliveries    []Delivery
}

// New starts a scripted forge; it is closed when the test ends.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Owner == "" {
		o.Owner = "acme"
	}
	if o.Name == "" {
		o.Name = "widget"
	}
	if o.Token == "" {
		b := make([]byte, 16)
		rand.Read(b)
		o.Token = "tok_" + hex.EncodeToString(b)
	}
	if o.Login == "" {
		o.Login = "wilco-bot"
	}
	if o.Kind == "" {
		o.Kind = forge.GitHub
	}
	if o.Branch == "" {
		o.Branch = "main"
	}
	s := &Server{
		t: t, kind: o.Kind, login: o.Login, Token: o.Token,
		Repo: forge.Repo{Owner: o.Owner, Name: o.Name},
		root: t.TempDir(),
		now:  func() time.Time { return time.Now().UTC().Truncate(time.Second) },
		next: 1, nextID: 1000,
		pulls: map[int]*pull{}, issues: map[int]*issue{},
		collaborators: map[string]bool{o.Login: true, o.Owner: true},
		hookURL:       o.WebhookURL, hookSecret: o.WebhookSecret,
	}
	s.Bare = filepath.Join(s.root, o.Owner, o.Name+".git")
	s.initRepo(o.Branch)
	s.mux = http.NewServeMux()
	s.routes()
	s.http = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.http.URL
	t.Cleanup(s.http.Close)
	return s
}

// API is the API's root of a kind: URL/api/v3 (GitHub, as Enterprise
// serves it) or URL/api/v1 (Gitea).
func (s *Server) API(kind forge.Kind) string {
	if kind == forge.Gitea {
		return s.URL + "/api/v1"
	}
	return s.URL + "/api/v3"
}

// GitURL is the repository's address for git, without credentials.
func (s *Server) GitURL() string { return s.URL + "/" + s.Repo.Owner + "/" + s.Repo.Name + ".git" }

// AuthGitURL is the repository's address with the token as basic auth's
// password.
func (s *Server) AuthGitURL() string {
	return strings.Replace(s.GitURL(), "://", "://x-access-token:"+s.Token+"@", 1)
}

// SetWebhook sends events to url signed with secret from now on ("" for
// none: then only polling sees them).
func (s *Server) SetWebhook(url, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hookURL, s.hookSecret = url, secret
}

// Fail queues a fault.
func (s *Server) Fail(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
}

// RateLimit answers the next times API requests 403 with
// X-RateLimit-Remaining 0 and X-RateLimit-Reset at reset, as GitHub does
// when the token's hourly limit is spent.
func (s *Server) RateLimit(times int, reset time.Time) {
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", fmt.Sprint(reset.Unix()))
	s.Fail(Fault{Path: "/api/", Times: times, Status: http.StatusForbidden, Header: h,
		Body: `{"message":"API rate limit exceeded for user ID 1.","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}`})
}

// Requests are the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Deliveries are the webhooks sent so far.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.deliveries...)
}

// AddCollaborator makes user a collaborator (one who may push).
func (s *Server) AddCollaborator(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.collaborators[user] = true
}

// recorder keeps the status an answer had.
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

// Flush lets git http-backend's answers stream.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// auth says how a request authenticated ("" for not).
func (s *Server) auth(r *http.Request) string {
	if _, pass, ok := r.BasicAuth(); ok {
		if pass == s.Token {
			return "basic"
		}
		return ""
	}
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if cred != s.Token {
		return ""
	}
	switch strings.ToLower(scheme) {
	case "bearer":
		return "bearer"
	case "token":
		return "token"
	}
	return ""
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w}
	auth := s.auth(r)
	record := func() {
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Auth: auth, Status: rec.status})
		s.mu.Unlock()
	}
	f := s.fault(r)
	if f != nil && f.Die {
		// Recorded first: the client sees the cut before this handler
		// returns.
		record()
		die(rec)
		return
	}
	defer record()
	if f != nil {
		for k, v := range f.Header {
			rec.Header()[k] = v
		}
		rec.Header().Set("Content-Type", "application/json")
		rec.WriteHeader(f.Status)
		rec.Write([]byte(f.Body))
		return
	}
	switch {
	case strings.HasPrefix(r.URL.Path, "/_logs/"):
		// The signed address a job's log redirects to: no token needed.
		s.serveLog(rec, r)
	case strings.HasPrefix(r.URL.Path, "/api/"):
		if auth == "" {
			writeJSON(rec, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
			return
		}
		if r.Method == http.MethodGet {
			s.serveConditional(rec, r)
			return
		}
		s.mux.ServeHTTP(rec, r)
	case strings.HasPrefix(r.URL.Path, "/"+s.Repo.Owner+"/"+s.Repo.Name+".git/"):
		if auth == "" {
			rec.Header().Set("WWW-Authenticate", `Basic realm="forgetest"`)
			http.Error(rec, "authentication required", http.StatusUnauthorized)
			return
		}
		s.serveGit(rec, r)
	default:
		http.NotFound(rec, r)
	}
}

// serveConditional answers an API GET with an ETag of its body, as both
// forges do (GitHub a weak one), and 304 Not Modified with no body when
// the request's If-None-Match names it.
func (s *Server) serveConditional(w http.ResponseWriter, r *http.Request) {
	rr := httptest.NewRecorder()
	s.mux.ServeHTTP(rr, r)
	res := rr.Result()
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	if res.StatusCode != http.StatusOK {
		w.WriteHeader(res.StatusCode)
		w.Write(rr.Body.Bytes())
		return
	}
	sum := sha256.Sum256(rr.Body.Bytes())
	etag := `W/"` + hex.EncodeToString(sum[:16]) + `"`
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.Header().Del("Content-Type")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(http.StatusOK)
	w.Write(rr.Body.Bytes())
}

// fault takes the next fault matching r, if any.
func (s *Server) fault(r *http.Request) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == r.Method) && strings.Contains(r.URL.Path, f.Path) {
			f.Times--
			if f.Times <= 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			return f
		}
	}
	return nil
}

// die cuts the connection in the middle of an answer: the status line
// and headers promise a body that never comes whole.
func die(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		if rec, ok := w.(*recorder); ok {
			hj, _ = rec.ResponseWriter.(http.Hijacker)
		}
	}
	if hj == nil {
		panic(http.ErrAbortHandler)
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"numb")
	buf.Flush()
	conn.Close()
}

// serveGit runs git http-backend for the repository.
func (s *Server) serveGit(w http.ResponseWriter, r *http.Request) {
	user, _, _ := r.BasicAuth()
	if user == "" {
		user = s.login
	}
	h := &cgi.Handler{
		Path: gitPath(s.t),
		Args: []string{"http-backend"},
		Root: "/",
		Env: []string{
			"GIT_PROJECT_ROOT=" + s.root,
			"GIT_HTTP_EXPORT_ALL=1",
			// http-backend takes pushes from an authenticated user only.
			"REMOTE_USER=" + user,
		},
	}
	h.ServeHTTP(w, r)
}

var (
	gitOnce sync.Once
	gitBin  string
)

func gitPath(t testing.TB) string {
	gitOnce.Do(func() {
		p, err := exec.LookPath("git")
		if err == nil {
			gitBin = p
		}
	})
	if gitBin == "" {
		t.Fatal("forgetest: git is not on PATH")
	}
	return gitBin
}

// git runs git in dir with a fixed identity and returns its output.
func (s *Server) git(dir string, args ...string) (string, error) {
	cmd := exec.Command(gitPath(s.t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=Forge", "GIT_AUTHOR_EMAIL=forge@example.invalid",
		"GIT_COMMITTER_NAME=Forge", "GIT_COMMITTER_EMAIL=forge@example.invalid",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+s.root, "GIT_TERMINAL_PROMPT=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// initRepo makes the bare repository with one commit on branch.
func (s *Server) initRepo(branch string) {
	s.t.Helper()
	work := filepath.Join(s.root, "init")
	for _, step := range []struct {
		dir  string
		args []string
	}{
		{s.root, []string{"init", "--bare", "-q", "-b", branch, s.Bare}},
		{s.Bare, []string{"config", "http.receivepack", "true"}},
		{s.root, []string{"init", "-q", "-b", branch, work}},
	} {
		if _, err := s.git(step.dir, step.args...); err != nil {
			s.t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "README.md"), []byte("# "+s.Repo.Name+"\n"), 0o644); err != nil {
		s.t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "first"}, {"push", "-q", s.Bare, branch}} {
		if _, err := s.git(work, args...); err != nil {
			s.t.Fatal(err)
		}
	}
	os.RemoveAll(work)
}

// Head is the commit a branch of the bare repository points at ("" for
// no such branch).
func (s *Server) Head(branch string) string {
	out, err := s.git(s.Bare, "rev-parse", "--verify", "-q", "refs/heads/"+branch)
	if err != nil {
		return ""
	}
	return out
}

// resolve is the commit a ref names (a sha or a branch).
func (s *Server) resolve(ref string) string {
	out, err := s.git(s.Bare, "rev-parse", "--verify", "-q", ref+"^{commit}")
	if err != nil {
		return ref
	}
	return out
}
