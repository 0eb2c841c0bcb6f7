package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"wilco/clock"
)

// transport makes the forge's requests: authentication, retries, rate
// limits, pagination and the observer.
type transport struct {
	kind    Kind
	api     *url.URL
	token   string
	http    *http.Client
	clock   Clock
	observe func(Call)

	attempts            int
	backoff, maxBackoff time.Duration

	cache etagCache
}

// maxBody bounds what is read of one answer.
const maxBody = 32 << 20

func newTransport(o Options) (*transport, error) {
	u, err := url.Parse(strings.TrimRight(o.API, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("forge: api must be an http:// or https:// URL, got %q", o.API)
	}
	if o.Repo.Owner == "" || o.Repo.Name == "" {
		return nil, fmt.Errorf("forge: no repository (owner/name)")
	}
	t := &transport{kind: o.Kind, api: u, token: o.Token, http: o.HTTP, clock: o.Clock, observe: o.Observe,
		attempts: o.Attempts, backoff: o.Backoff, maxBackoff: o.MaxBackoff}
	if t.http == nil {
		t.http = &http.Client{Timeout: 60 * time.Second}
	}
	if t.clock == nil {
		t.clock = clock.Real{}
	}
	if t.attempts <= 0 {
		t.attempts = 5
	}
	if t.backoff <= 0 {
		t.backoff = time.Second
	}
	if t.maxBackoff <= 0 {
		t.maxBackoff = 30 * time.Second
	}
	return t, nil
}

// String names the forge and its API, never the token.
func (t *transport) String() string {
	tok := "no token"
	if t.token != "" {
		tok = "a token"
	}
	return fmt.Sprintf("%s at %s (%s)", t.kind, t.api.Redacted(), tok)
}

// GoString is String: %#v shows no token either.
func (t *transport) GoString() string { return t.String() }

// answer is a request's answer, its body read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
	url    *url.URL // where it came from (after redirects)
}

// do sends method path (relative to the API's root, with its query) with
// body as JSON (nil: none) and returns the answer, retried and waited as
// the forge says. Statuses in ok are success; any other is an *APIError.
func (t *transport) do(ctx context.Context, method, path string, body any, ok ...int) (*answer, error) {
	u, err := t.api.Parse(t.api.Path + path)
	if err != nil {
		return nil, fmt.Errorf("forge: %s %s: %w", method, path, err)
	}
	return t.doURL(ctx, method, u, body, ok...)
}

func (t *transport) doURL(ctx context.Context, method string, u *url.URL, body any, ok ...int) (*answer, error) {
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("forge: %s %s: %w", method, u.Path, err)
		}
	}
	if len(ok) == 0 {
		ok = []int{http.StatusOK}
	}
	wait := t.backoff
	var last error
	for attempt := 1; attempt <= t.attempts; attempt++ {
		a, err := t.once(ctx, method, u, data, attempt)
		if err == nil {
			for _, s := range ok {
				if a.status == s {
					return a, nil
				}
			}
		}
		var d time.Duration
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Errorf("forge: %s %s: %w", method, u.Path, ctx.Err())
		case err != nil:
			// No answer: the connection failed or was cut. A POST may
			// have been done; it is tried again only when it never
			// reached the server.
			if method == http.MethodPost && !neverSent(err) {
				return nil, fmt.Errorf("forge: %s %s: %w", method, u.Path, err)
			}
			last = fmt.Errorf("%w: %s %s: %v", ErrUnavailable, method, u.Path, err)
			d, wait = wait, min(2*wait, t.maxBackoff)
		default:
			var limited bool
			d, limited = t.rateLimit(a)
			switch {
			case limited:
				last = fmt.Errorf("%w: %s %s: %d, reset in %s", ErrRateLimited, method, u.Path, a.status, d)
			case a.status >= 500 && method != http.MethodPost:
				last = fmt.Errorf("%w: %s", ErrUnavailable, t.apiError(method, u, a).Error())
				d, wait = wait, min(2*wait, t.maxBackoff)
			default:
				return nil, t.apiError(method, u, a)
			}
		}
		if attempt == t.attempts {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("forge: %s %s: %w", method, u.Path, ctx.Err())
		case <-t.clock.After(d):
		}
	}
	return nil, last
}

// requestError is a request that got no answer: its text without the
// token, and whether it never reached the server (the connection was
// refused or never made), which only the original error says.
type requestError struct {
	msg  string
	dial bool
}

func (e *requestError) Error() string { return e.msg }

// requestError is err made a *requestError; the original is dropped, so
// no unwrapping finds the token in it either.
func (t *transport) requestError(err error) error {
	var op *net.OpError
	msg := err.Error()
	if t.token != "" {
		msg = strings.ReplaceAll(msg, t.token, "[token]")
	}
	return &requestError{msg: msg, dial: errors.As(err, &op) && op.Op == "dial"}
}

// neverSent reports whether a request's error says it never reached the
// server.
func neverSent(err error) bool {
	var re *requestError
	return errors.As(err, &re) && re.dial
}

// rateLimit reads a rate-limited answer: 403 or 429 with
// X-RateLimit-Remaining 0 waits until X-RateLimit-Reset (Unix seconds);
// any answer with Retry-After (seconds or an HTTP date) waits that long.
func (t *transport) rateLimit(a *answer) (time.Duration, bool) {
	if ra := a.header.Get("Retry-After"); ra != "" && (a.status == 403 || a.status == 429 || a.status >= 500) {
		if n, err := strconv.Atoi(strings.TrimSpace(ra)); err == nil && n >= 0 {
			return time.Duration(n) * time.Second, true
		}
		if at, err := http.ParseTime(ra); err == nil {
			return max(at.Sub(t.clock.Now()), 0), true
		}
	}
	if (a.status == 403 || a.status == 429) && a.header.Get("X-RateLimit-Remaining") == "0" {
		reset, err := strconv.ParseInt(a.header.Get("X-RateLimit-Reset"), 10, 64)
		if err != nil {
			return time.Minute, true
		}
		// A second more: the reset is whole seconds, and clocks differ.
		return max(time.Unix(reset, 0).Sub(t.clock.Now()), 0) + time.Second, true
	}
	if a.status == 429 {
		return time.Minute, true
	}
	return 0, false
}

// once sends one request.
func (t *transport) once(ctx context.Context, method string, u *url.URL, data []byte, attempt int) (*answer, error) {
	var rd io.Reader
	if data != nil {
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	if data != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch t.kind {
	case GitHub:
		// The media type and version GitHub's REST documentation asks for.
		req.Header.Set("Accept", "application/vnd.github+json")
		req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	default:
		req.Header.Set("Accept", "application/json")
	}
	req.Header.Set("User-Agent", "wilco")
	var kept *answer
	if method == http.MethodGet {
		if kept = t.cache.get(u.String()); kept != nil {
			req.Header.Set("If-None-Match", kept.header.Get("ETag"))
		}
	}
	if t.token != "" {
		if t.kind == GitHub {
			req.Header.Set("Authorization", "Bearer "+t.token)
		} else {
			req.Header.Set("Authorization", "token "+t.token)
		}
	}
	start := t.clock.Now()
	resp, err := t.http.Do(req)
	call := Call{Method: method, Path: u.Path, Attempt: attempt}
	if err != nil {
		err = t.requestError(err)
		call.Err, call.Duration = err, t.clock.Now().Sub(start)
		t.report(call)
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	call.Status, call.Duration = resp.StatusCode, t.clock.Now().Sub(start)
	if err != nil {
		err = t.requestError(err)
		call.Err = err
		t.report(call)
		return nil, err
	}
	t.report(call)
	a := &answer{status: resp.StatusCode, header: resp.Header, body: body, url: resp.Request.URL}
	if method == http.MethodGet {
		if a.status == http.StatusNotModified && kept != nil {
			return kept, nil
		}
		t.cache.put(u.String(), a)
	}
	return a, nil
}

func (t *transport) report(c Call) {
	if t.observe != nil {
		t.observe(c)
	}
}

// apiError is the error of an answer that is no success.
func (t *transport) apiError(method string, u *url.URL, a *answer) error {
	e := &APIError{Method: method, Path: u.Path, Status: a.status}
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(a.body, &m) == nil {
		e.Message = m.Message
	}
	if t.token != "" {
		e.Message = strings.ReplaceAll(e.Message, t.token, "[token]")
	}
	if len(e.Message) > 500 {
		e.Message = e.Message[:500] + "…"
	}
	return e
}

// getJSON gets path and decodes its JSON into out.
func (t *transport) getJSON(ctx context.Context, path string, out any) error {
	a, err := t.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	return decode(a, http.MethodGet, path, out)
}

// sendJSON sends body and decodes the answer into out (nil: ignored).
func (t *transport) sendJSON(ctx context.Context, method, path string, body, out any, ok ...int) error {
	a, err := t.do(ctx, method, path, body, ok...)
	if err != nil || out == nil {
		return err
	}
	return decode(a, method, path, out)
}

func decode(a *answer, method, path string, out any) error {
	if err := json.Unmarshal(a.body, out); err != nil {
		return fmt.Errorf("forge: %s %s: the answer is not the JSON expected: %w", method, path, err)
	}
	return nil
}

// maxPages bounds a listing followed through its Link headers.
const maxPages = 50

// list gets every page of a listing (following Link rel="next" on the
// API's own host) and hands each page's body to add.
func (t *transport) list(ctx context.Context, path string, add func([]byte) error) error {
	u, err := t.api.Parse(t.api.Path + path)
	if err != nil {
		return fmt.Errorf("forge: GET %s: %w", path, err)
	}
	for page := 0; page < maxPages && u != nil; page++ {
		a, err := t.doURL(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		if err := add(a.body); err != nil {
			return fmt.Errorf("forge: GET %s: the answer is not the JSON expected: %w", u.Path, err)
		}
		u = nil
		if next := Links(a.header.Get("Link"))["next"]; next != "" {
			n, err := a.url.Parse(next)
			// The token goes only to the API's own host.
			if err == nil && n.Host == t.api.Host && n.Scheme == t.api.Scheme {
				u = n
			}
		}
	}
	return nil
}

// listOf decodes every page of a listing of T.
func listOf[T any](ctx context.Context, t *transport, path string) ([]T, error) {
	var all []T
	err := t.list(ctx, path, func(b []byte) error {
		var page []T
		if err := json.Unmarshal(b, &page); err != nil {
			return err
		}
		all = append(all, page...)
		return nil
	})
	return all, err
}

// esc escapes one path segment.
func esc(s string) string { return url.PathEscape(s) }
