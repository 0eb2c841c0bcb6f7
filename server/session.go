package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"wilco/wire"
)

// The page's login. A browser logs in once — with a one-time login link
// (the code in the URL's fragment, which never reaches a server log or a
// Referer) or with the admin token — and gets a session cookie (HttpOnly,
// SameSite=Strict) that the control API accepts in place of the bearer
// token. Every state-changing request made with the cookie must carry the
// session's CSRF token in the X-CSRF-Token header. An agent's token never
// logs in, and the cookie never opens the agent's side.
//
// A session is not stored: the cookie is its id and expiry signed with a
// key derived from the admin token, so sessions outlive a restart of the
// server and end all at once when the admin token changes. A logout is
// remembered until the server stops (and the browser drops its cookie).
const (
	// SessionTTL is how long a session lasts after its login; the page
	// renews it when more than a day of it has passed.
	SessionTTL = 7 * 24 * time.Hour
	// sessionRenew is how old a session is when GET /v1/session renews it.
	sessionRenew = 24 * time.Hour
	// LoginLinkTTL is how long a one-time login link stays valid unused.
	LoginLinkTTL = 24 * time.Hour
	// maxLoginLinks bounds the unused links kept; the oldest goes first.
	maxLoginLinks = 32
	// CSRFHeader carries the session's CSRF token.
	CSRFHeader = "X-CSRF-Token"
	// LoginFragment starts the fragment of a login link: /#login=<code>.
	LoginFragment = "login="
)

// sessions signs and checks the page's session cookies and keeps the
// one-time login links.
type sessions struct {
	key  []byte
	name string
	now  func() time.Time

	mu      sync.Mutex
	links   map[[32]byte]time.Time // the code's SHA-256 → when it expires
	revoked map[string]time.Time   // a logged-out session's id → its expiry
}

func newSessions(adminToken string) *sessions {
	mac := hmac.New(sha256.New, []byte(adminToken))
	mac.Write([]byte("wilco page session v1"))
	key := mac.Sum(nil)
	// The cookie's name is the server's own: two wilco servers on the
	// same host (cookies do not tell ports apart) with different admin
	// tokens keep their sessions apart.
	id := sha256.Sum256(key)
	return &sessions{key: key, name: "wilco_session_" + hex.EncodeToString(id[:4]), now: time.Now,
		links: map[[32]byte]time.Time{}, revoked: map[string]time.Time{}}
}

func (ss *sessions) sign(parts ...string) string {
	mac := hmac.New(sha256.New, ss.key)
	mac.Write([]byte(strings.Join(parts, ".")))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// session is a valid session cookie's content.
type session struct {
	id      string
	expires time.Time
	issued  time.Time
}

func (s session) csrf(ss *sessions) string { return ss.sign("csrf", s.id) }

// issue starts a new session.
func (ss *sessions) issue() session {
	var b [16]byte
	_, _ = rand.Read(b[:])
	now := ss.now()
	return session{id: base64.RawURLEncoding.EncodeToString(b[:]), issued: now, expires: now.Add(SessionTTL)}
}

// cookie is the Set-Cookie of a session (an expired one to log out).
func (ss *sessions) cookie(r *http.Request, s session) *http.Cookie {
	c := &http.Cookie{Name: ss.name, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
	if s.id == "" {
		c.MaxAge = -1
		return c
	}
	exp := strconv.FormatInt(s.expires.Unix(), 10)
	iss := strconv.FormatInt(s.issued.Unix(), 10)
	c.Value = s.id + "." + iss + "." + exp + "." + ss.sign("session", s.id, iss, exp)
	c.Expires = s.expires
	return c
}

// read returns the request's session: ok false when there is no cookie,
// an error when there is one that is not a valid session.
func (ss *sessions) read(r *http.Request) (session, bool, error) {
	c, err := r.Cookie(ss.name)
	if err != nil || c.Value == "" {
		return session{}, false, nil
	}
	parts := strings.Split(c.Value, ".")
	bad := Errorf(wire.CodeUnauthenticated, "the page's session is not valid (the admin token changed, or the cookie is damaged): log in again")
	if len(parts) != 4 {
		return session{}, true, bad
	}
	want := ss.sign("session", parts[0], parts[1], parts[2])
	if subtle.ConstantTimeCompare([]byte(want), []byte(parts[3])) != 1 {
		return session{}, true, bad
	}
	iss, err1 := strconv.ParseInt(parts[1], 10, 64)
	exp, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return session{}, true, bad
	}
	s := session{id: parts[0], issued: time.Unix(iss, 0), expires: time.Unix(exp, 0)}
	if !ss.now().Before(s.expires) {
		return session{}, true, Errorf(wire.CodeUnauthenticated, "the page's session expired: log in again")
	}
	ss.mu.Lock()
	_, out := ss.revoked[s.id]
	ss.mu.Unlock()
	if out {
		return session{}, true, Errorf(wire.CodeUnauthenticated, "the page's session was logged out: log in again")
	}
	return s, true, nil
}

// revoke ends a session in this server.
func (ss *sessions) revoke(s session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	for id, exp := range ss.revoked {
		if !now.Before(exp) {
			delete(ss.revoked, id)
		}
	}
	ss.revoked[s.id] = s.expires
}

// link makes a one-time login code.
func (ss *sessions) link() (string, time.Time) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	code := base64.RawURLEncoding.EncodeToString(b[:])
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	var oldest [32]byte
	var oldestAt time.Time
	for h, exp := range ss.links {
		if !now.Before(exp) {
			delete(ss.links, h)
		} else if oldestAt.IsZero() || exp.Before(oldestAt) {
			oldest, oldestAt = h, exp
		}
	}
	if len(ss.links) >= maxLoginLinks {
		delete(ss.links, oldest)
	}
	exp := now.Add(LoginLinkTTL)
	ss.links[sha256.Sum256([]byte(code))] = exp
	return code, exp
}

// redeem uses up a login code: true once for a code link made, unexpired.
func (ss *sessions) redeem(code string) bool {
	h := sha256.Sum256([]byte(code))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	exp, ok := ss.links[h]
	if !ok {
		return false
	}
	delete(ss.links, h)
	return ss.now().Before(exp)
}

// sessionCaller authenticates a request that has no Authorization header
// by its session cookie, for an admin route: ok false when it has no
// cookie. A state-changing method needs the session's CSRF token.
func (s *Server) sessionCaller(r *http.Request) (caller, bool, error) {
	if s.sessions == nil {
		return caller{}, false, nil
	}
	sess, ok, err := s.sessions.read(r)
	if !ok || err != nil {
		return caller{}, ok, err
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		got := r.Header.Get(CSRFHeader)
		if got == "" {
			return caller{}, true, Errorf(wire.CodePermissionDenied, "missing %s header: a request made with the page's session cookie that changes something must carry the session's CSRF token (reload the page)", CSRFHeader)
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf(s.sessions))) != 1 {
			return caller{}, true, Errorf(wire.CodePermissionDenied, "wrong %s: it is not this session's CSRF token (reload the page)", CSRFHeader)
		}
	}
	return caller{admin: true, session: sess.id}, true, nil
}

// sessionCookieName is the name of the page's session cookie.
func (s *Server) sessionCookieName() string {
	if s.sessions == nil {
		return "wilco_session"
	}
	return s.sessions.name
}

// LoginLink returns a new one-time login link to the page served at base
// (http://host:port), and when it expires unused.
func (s *Server) LoginLink(base string) (string, time.Time, error) {
	if s.sessions == nil {
		return "", time.Time{}, Errorf(wire.CodeUnauthenticated, "the server has no admin token: nobody can log in to the page")
	}
	code, exp := s.sessions.link()
	return strings.TrimSuffix(base, "/") + "/#" + LoginFragment + code, exp, nil
}

func (s *Server) sessionRoutes() []Route {
	return []Route{
		{Method: "POST", Path: "/v1/session", Auth: Public, Summary: "Log in to the page: a one-time login link's code, or the admin token, gives a session cookie (HttpOnly, SameSite=Strict) and its CSRF token. An agent's token never logs in.",
			Request: wire.Login{}, Handler: s.login, Responses: map[int]any{201: wire.Session{}}},
		{Method: "GET", Path: "/v1/session", Auth: Admin, Summary: "The caller's session: its CSRF token and expiry (renewed once a day old); via bearer for a bearer token.",
			Handler: s.getSession, Responses: map[int]any{200: wire.Session{}}},
		{Method: "DELETE", Path: "/v1/session", Auth: Admin, Summary: "Log out: the session cookie stops working.",
			Handler: s.logout, Responses: map[int]any{204: nil}},
		{Method: "POST", Path: "/v1/session/links", Auth: Admin, Summary: "A new one-time login link to the page (valid for 24 hours unused).",
			Handler: s.newLoginLink, Responses: map[int]any{201: wire.LoginLink{}}},
	}
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	var req wire.Login
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	if s.sessions == nil {
		return Errorf(wire.CodeUnauthenticated, "the server has no admin token: nobody can log in to the page")
	}
	switch {
	case req.Code != "" && req.Token != "":
		return invalidf("give a login link's code or the admin token, not both")
	case req.Code != "":
		if !s.sessions.redeem(req.Code) {
			return Errorf(wire.CodeUnauthenticated, "this login link was used already, expired, or belongs to another server: `wilco web` prints a new one")
		}
	case req.Token != "":
		c, err := s.identify(strings.TrimSpace(req.Token))
		switch {
		case err != nil:
			return err
		case c.agent != "":
			return Errorf(wire.CodePermissionDenied, "an agent's token cannot log in to the page: use the admin token (.wilco/token) or a login link")
		case !c.admin:
			return Errorf(wire.CodeUnauthenticated, "unknown token: the admin token is in .wilco/token")
		}
	default:
		return invalidf("code or token: required (a login link's code, or the admin token)")
	}
	sess := s.sessions.issue()
	http.SetCookie(w, s.sessions.cookie(r, sess))
	WriteJSON(w, http.StatusCreated, wire.Session{Via: wire.ViaCookie, CSRFToken: sess.csrf(s.sessions), ExpiresAt: &sess.expires})
	return nil
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	c, _ := r.Context().Value(callerKey).(caller)
	if c.session == "" {
		WriteJSON(w, http.StatusOK, wire.Session{Via: wire.ViaBearer})
		return nil
	}
	sess, _, err := s.sessions.read(r)
	if err != nil {
		return err
	}
	if s.sessions.now().Sub(sess.issued) > sessionRenew {
		renewed := s.sessions.issue()
		renewed.id = sess.id // the same session (and CSRF token), for longer
		sess = renewed
		http.SetCookie(w, s.sessions.cookie(r, sess))
	}
	WriteJSON(w, http.StatusOK, wire.Session{Via: wire.ViaCookie, CSRFToken: sess.csrf(s.sessions), ExpiresAt: &sess.expires})
	return nil
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	c, _ := r.Context().Value(callerKey).(caller)
	if c.session != "" {
		if sess, _, err := s.sessions.read(r); err == nil {
			s.sessions.revoke(sess)
		}
	}
	if s.sessions != nil {
		http.SetCookie(w, s.sessions.cookie(r, session{}))
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) newLoginLink(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	if err := optionalBody(r, &struct{}{}); err != nil {
		return err
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	url, exp, err := s.LoginLink(scheme + "://" + r.Host)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusCreated, wire.LoginLink{URL: url, ExpiresAt: exp})
	return nil
}
