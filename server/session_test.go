package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"wilco/core"
	"wilco/wire"
)

// loginCookie logs in with body and returns the session cookie and the
// CSRF token.
func (b *testBundle) loginCookie(body map[string]any) (*http.Cookie, string) {
	b.t.Helper()
	r := b.must(201, b.call("POST", "/v1/session", "", body))
	var cookie *http.Cookie
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if strings.HasPrefix(c.Name, "wilco_session_") {
			cookie = c
		}
	}
	if cookie == nil {
		b.t.Fatalf("no session cookie in %v", r.header)
	}
	csrf, _ := r.json(b.t)["csrf_token"].(string)
	if csrf == "" {
		b.t.Fatalf("no CSRF token: %s", r.body)
	}
	return cookie, csrf
}

func cookieHeader(c *http.Cookie) []string { return []string{"Cookie", c.Name + "=" + c.Value} }

// A one-time login link logs a browser in once: it gets a session cookie
// that is HttpOnly and SameSite=Strict, which reads the control API; the
// same link a second time is refused.
func TestLoginLinkWorksOnceAndSetsAStrictHttpOnlyCookie(t *testing.T) {
	t.Parallel()
	b := setup(t)
	link, exp, err := b.srv.LoginLink(b.hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	base, code, ok := strings.Cut(link, "/#"+LoginFragment)
	if !ok || base != b.hs.URL || len(code) < 40 {
		t.Fatalf("link %q", link)
	}
	if d := time.Until(exp); d < 23*time.Hour || d > 25*time.Hour {
		t.Fatalf("the link expires in %s", d)
	}
	r := b.must(201, b.call("POST", "/v1/session", "", map[string]any{"code": code}))
	setCookie := r.header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(setCookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", setCookie, want)
		}
	}
	cookie := (&http.Response{Header: r.header}).Cookies()[0]
	b.must(200, b.call("GET", "/v1/agents", "", nil, cookieHeader(cookie)...))
	var s wire.Session
	b.must(200, b.call("GET", "/v1/session", "", nil, cookieHeader(cookie)...), &s)
	if s.Via != "cookie" || s.CSRFToken == "" || s.ExpiresAt == nil {
		t.Fatalf("session %+v", s)
	}

	again := b.call("POST", "/v1/session", "", map[string]any{"code": code})
	if again.status != 401 || !strings.Contains(again.text(), "used already") {
		t.Fatalf("the link a second time: %d %s", again.status, again.body)
	}
	if r := b.call("POST", "/v1/session", "", map[string]any{"code": "made-up"}); r.status != 401 {
		t.Fatalf("a made-up code: %d %s", r.status, r.body)
	}
	// Nothing is readable without the cookie.
	if r := b.call("GET", "/v1/tasks", "", nil); r.status != 401 {
		t.Fatalf("no cookie, no token: %d", r.status)
	}
	// POST /v1/session/links makes another, with the admin token.
	var out struct{ URL string }
	b.must(201, b.call("POST", "/v1/session/links", adminToken, nil), &out)
	if !strings.Contains(out.URL, "/#"+LoginFragment) || strings.Contains(out.URL, code) {
		t.Fatalf("a new link %q", out.URL)
	}
}

// The admin token logs in too; an agent's token never does, and a wrong
// one is unknown.
func TestAgentTokenCannotLogIn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	agentTok := b.agent("alpha")
	r := b.call("POST", "/v1/session", "", map[string]any{"token": agentTok})
	if r.status != 403 || r.code(t) != "permission_denied" || !strings.Contains(r.text(), "agent's token cannot log in") {
		t.Fatalf("an agent's token: %d %s", r.status, r.body)
	}
	if r.header.Get("Set-Cookie") != "" {
		t.Fatalf("an agent's token got a cookie: %s", r.header.Get("Set-Cookie"))
	}
	if r := b.call("POST", "/v1/session", "", map[string]any{"token": "not-a-token"}); r.status != 401 {
		t.Fatalf("a wrong token: %d %s", r.status, r.body)
	}
	if r := b.call("POST", "/v1/session", "", map[string]any{}); r.status != 400 {
		t.Fatalf("nothing: %d %s", r.status, r.body)
	}
	cookie, _ := b.loginCookie(map[string]any{"token": adminToken})
	b.must(200, b.call("GET", "/v1/tasks", "", nil, cookieHeader(cookie)...))
}

// With the session cookie, every state-changing request needs the
// session's CSRF token in X-CSRF-Token: without it, or with another, it is
// refused and changes nothing. Reads need none; bearer clients need none.
func TestSessionCookieNeedsTheCSRFTokenOnEveryStateChange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alpha")
	cookie, csrf := b.loginCookie(map[string]any{"token": adminToken})
	_, otherCSRF := b.loginCookie(map[string]any{"token": adminToken})
	submit := map[string]any{"description": "Add a flag"}
	for _, c := range []struct {
		name   string
		header []string
	}{
		{"no CSRF token", cookieHeader(cookie)},
		{"a wrong CSRF token", append(cookieHeader(cookie), CSRFHeader, "forged")},
		{"another session's CSRF token", append(cookieHeader(cookie), CSRFHeader, otherCSRF)},
	} {
		r := b.call("POST", "/v1/tasks", "", submit, c.header...)
		if r.status != 403 || r.code(t) != "permission_denied" || !strings.Contains(r.text(), CSRFHeader) {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}
	var n int
	if err := b.rt.Read(func(c *core.State) { n = len(c.Tasks(nil)) }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("a refused request made %d task(s)", n)
	}
	b.must(201, b.call("POST", "/v1/tasks", "", submit, append(cookieHeader(cookie), CSRFHeader, csrf)...))
	b.must(200, b.call("GET", "/v1/tasks/T-1", "", nil, cookieHeader(cookie)...))
	b.must(200, b.call("POST", "/v1/tasks/T-1/cancel", adminToken, nil)) // a bearer client: no CSRF token
}

// The session cookie opens the control API only: never the agent's side.
func TestSessionCookieIsRefusedOnTheAgentsSide(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alpha")
	cookie, csrf := b.loginCookie(map[string]any{"token": adminToken})
	if r := b.call("GET", "/v1/inbox", "", nil, cookieHeader(cookie)...); r.status != 401 {
		t.Fatalf("inbox with the cookie: %d %s", r.status, r.body)
	}
	if r := b.call("POST", "/v1/inbox/replies", "", map[string]any{"text": "ok"}, append(cookieHeader(cookie), CSRFHeader, csrf)...); r.status != 401 {
		t.Fatalf("a reply with the cookie: %d %s", r.status, r.body)
	}
}

// A logout ends the session at once; a session of another admin token, or
// an expired or tampered one, is refused.
func TestLogoutAndExpiryEndTheSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cookie, csrf := b.loginCookie(map[string]any{"token": adminToken})
	if r := b.call("DELETE", "/v1/session", "", nil, cookieHeader(cookie)...); r.status != 403 {
		t.Fatalf("a logout without the CSRF token: %d", r.status)
	}
	r := b.must(204, b.call("DELETE", "/v1/session", "", nil, append(cookieHeader(cookie), CSRFHeader, csrf)...))
	if !strings.Contains(r.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("the logout does not drop the cookie: %q", r.header.Get("Set-Cookie"))
	}
	if r := b.call("GET", "/v1/tasks", "", nil, cookieHeader(cookie)...); r.status != 401 || !strings.Contains(r.text(), "logged out") {
		t.Fatalf("after the logout: %d %s", r.status, r.body)
	}

	cookie, _ = b.loginCookie(map[string]any{"token": adminToken})
	tampered := *cookie
	tampered.Value = strings.Replace(cookie.Value, ".", "x.", 1)
	if r := b.call("GET", "/v1/tasks", "", nil, cookieHeader(&tampered)...); r.status != 401 {
		t.Fatalf("a tampered cookie: %d", r.status)
	}
	// Another server, another admin token: the cookie means nothing there.
	other := newSessions("another-admin-token")
	if other.name == cookie.Name {
		t.Fatalf("two admin tokens, one cookie name %s", other.name)
	}
	req, _ := http.NewRequestWithContext(context.Background(), "GET", "/v1/tasks", nil)
	req.AddCookie(&http.Cookie{Name: other.name, Value: cookie.Value})
	if _, _, err := other.read(req); err == nil {
		t.Fatal("a session of another admin token is valid")
	}
	// Time passes beyond the session's life.
	b.srv.sessions.now = func() time.Time { return time.Now().Add(SessionTTL + time.Minute) }
	if r := b.call("GET", "/v1/tasks", "", nil, cookieHeader(cookie)...); r.status != 401 || !strings.Contains(r.text(), "expired") {
		t.Fatalf("an expired session: %d %s", r.status, r.body)
	}
}

// A session a day old is renewed by GET /v1/session, with the same CSRF
// token; an unused login link expires after a day.
func TestSessionIsRenewedAndLoginLinksExpire(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cookie, csrf := b.loginCookie(map[string]any{"token": adminToken})
	code := func() string {
		link, _, err := b.srv.LoginLink("http://x")
		if err != nil {
			t.Fatal(err)
		}
		_, c, _ := strings.Cut(link, LoginFragment)
		return c
	}
	stale := code()
	later := time.Now().Add(sessionRenew + time.Hour)
	b.srv.sessions.now = func() time.Time { return later }
	var s wire.Session
	r := b.must(200, b.call("GET", "/v1/session", "", nil, cookieHeader(cookie)...), &s)
	renewed := (&http.Response{Header: r.header}).Cookies()
	if len(renewed) != 1 || renewed[0].Value == cookie.Value || s.CSRFToken != csrf || !s.ExpiresAt.After(later.Add(SessionTTL-time.Minute)) {
		t.Fatalf("renewal: cookies %v, session %+v", renewed, s)
	}
	b.srv.sessions.now = func() time.Time { return later.Add(LoginLinkTTL) }
	if r := b.call("POST", "/v1/session", "", map[string]any{"code": stale}); r.status != 401 {
		t.Fatalf("an expired link: %d", r.status)
	}
	b.must(201, b.call("POST", "/v1/session", "", map[string]any{"code": code()}))
}
