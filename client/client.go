package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"wilco/wire"
)

// DefaultAddr is where the server listens unless told otherwise.
const DefaultAddr = "http://127.0.0.1:7777"

// Environment variables read by FromEnv and AgentFromEnv.
const (
	EnvAddr       = "WILCO_ADDR"
	EnvToken      = "WILCO_TOKEN"
	EnvAgentToken = "WILCO_AGENT_TOKEN"
	// EnvURL is the server's address as an exec agent is told it.
	EnvURL = "WILCO_URL"
)

// TokenFile is the admin token's path relative to the repository root.
const TokenFile = ".wilco/token"

// AddrFile is where a running server writes its address, relative to the
// repository root.
const AddrFile = ".wilco/addr"

// Client talks to one wilco server with one token. It is safe for
// concurrent use.
type Client struct {
	base  *target
	token string
	http  *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client send its requests with h. The client
// relies on contexts for deadlines: h should have no Timeout, or long
// polls and event streams are cut short.
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) { c.http = h }
}

// New returns a client of the server at addr ("http://host:port"; a bare
// "host:port" means http) authenticating with token (admin or agent).
func New(addr, token string, opts ...Option) *Client {
	c := &Client{base: &target{base: normalizeAddr(addr)}, token: token, http: http.DefaultClient}
	for _, o := range opts {
		o(c)
	}
	c.http = noFollow(c.http)
	return c
}

// Addr is the server's base address.
// After a standby's redirect it is the active node's.
func (c *Client) Addr() string { return c.base.get() }

// WithToken returns a copy of the client that authenticates with token.
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.token = token
	return &cp
}

func normalizeAddr(addr string) string {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		addr = DefaultAddr
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return strings.TrimRight(addr, "/")
}

// FromEnv returns an admin client: the server at WILCO_ADDR, else the
// address a running server wrote to .wilco/addr, else DefaultAddr; the
// token WILCO_TOKEN, else the content of .wilco/token. The .wilco files are
// looked for in the working directory and then its parents.
func FromEnv(opts ...Option) (*Client, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return FromEnviron(os.Getenv, wd, opts...)
}

// FromEnviron is FromEnv with the environment read through getenv and the
// token file looked for from dir upwards.
func FromEnviron(getenv func(string) string, dir string, opts ...Option) (*Client, error) {
	addr := ResolveAddr(getenv, dir)
	token := strings.TrimSpace(getenv(EnvToken))
	if token == "" {
		t, _, err := FindToken(dir)
		if err != nil {
			return nil, err
		}
		token = t
	}
	return New(addr, token, opts...), nil
}

// ResolveAddr is the server address FromEnviron uses: WILCO_ADDR, else
// the content of .wilco/addr (from dir upwards), else DefaultAddr.
func ResolveAddr(getenv func(string) string, dir string) string {
	if addr := strings.TrimSpace(getenv(EnvAddr)); addr != "" {
		return normalizeAddr(addr)
	}
	if b, _, err := findUp(dir, AddrFile); err == nil {
		return normalizeAddr(string(b))
	}
	return DefaultAddr
}

// AgentFromEnv returns an agent's client: the server at WILCO_URL (set for
// exec agents) or WILCO_ADDR (default DefaultAddr), the token
// WILCO_AGENT_TOKEN.
func AgentFromEnv(opts ...Option) (*Client, error) {
	return AgentFromEnviron(os.Getenv, opts...)
}

// AgentFromEnviron is AgentFromEnv with the environment read through getenv.
func AgentFromEnviron(getenv func(string) string, opts ...Option) (*Client, error) {
	token := strings.TrimSpace(getenv(EnvAgentToken))
	if token == "" {
		return nil, ErrNoAgentToken
	}
	addr := getenv(EnvURL)
	if addr == "" {
		addr = getenv(EnvAddr)
	}
	return New(addr, token, opts...), nil
}

// FindToken reads .wilco/token in dir or the nearest parent that has one,
// and returns the token and the file's path. It returns ErrNoToken when
// there is none.
func FindToken(dir string) (token, path string, err error) {
	b, p, err := findUp(dir, TokenFile)
	if errors.Is(err, os.ErrNotExist) {
		return "", "", ErrNoToken
	}
	if err != nil {
		return "", p, fmt.Errorf("client: read token: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", p, fmt.Errorf("client: %s is empty", p)
	}
	return t, p, nil
}

// findUp reads rel in dir or the nearest parent that has it.
func findUp(dir, rel string) ([]byte, string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", err
	}
	for {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		b, err := os.ReadFile(p)
		if !errors.Is(err, os.ErrNotExist) {
			return b, p, err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, "", os.ErrNotExist
		}
		dir = parent
	}
}

// request is one call to the API.
type request struct {
	method string
	path   string
	query  url.Values
	body   any // JSON-encoded unless nil
	accept string
	header http.Header
}

// send performs the request and returns the response of a 2xx answer; any
// other answer becomes an *APIError.
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	var body []byte
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, fmt.Errorf("client: encode %s %s: %w", r.method, r.path, err)
		}
		body = b
	}
	redirects := 0
	deadline := time.Now().Add(failoverPatience)
	for {
		base := c.base.get()
		resp, err := c.sendTo(ctx, base, r, body)
		if err != nil || resp.Header.Get(headerStandby) == "" {
			return resp, err
		}
		// A standby answered: itself (a read), with a redirect to the
		// active node, or with 503 while no node is active.
		switch active := resp.Header.Get(headerActive); {
		case resp.StatusCode == http.StatusTemporaryRedirect && active != "" && redirects < maxRedirects:
			resp.Body.Close()
			redirects++
			c.base.set(normalizeAddr(active))
			continue
		case resp.StatusCode == http.StatusServiceUnavailable && time.Now().Before(deadline):
			resp.Body.Close()
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(standbyWait(resp)):
			}
			continue
		}
		if resp.StatusCode/100 != 2 {
			defer resp.Body.Close()
			b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
			return nil, decodeError(r.method, r.path, resp.StatusCode, b)
		}
		return resp, nil
	}
}

// sendTo sends r once to the server at base. Wilco's redirects (a
// standby's) come back as they are, for send.
func (c *Client) sendTo(ctx context.Context, base string, r request, body []byte) (*http.Response, error) {
	u := base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	accept := r.accept
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	for k, vs := range r.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &TransportError{Addr: base, Err: unwrapURLError(err)}
	}
	if resp.Header.Get(headerStandby) != "" {
		return resp, nil
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, decodeError(r.method, r.path, resp.StatusCode, b)
	}
	return resp, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// one performs a request whose answer is one T.
func one[T any](ctx context.Context, c *Client, r request) (*T, error) {
	var out T
	if _, err := c.call(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// call performs the request and decodes a JSON answer into out (nil: the
// body is discarded). It returns the status code.
func (c *Client) call(ctx context.Context, r request, out any) (int, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		if errors.Is(err, io.EOF) {
			return resp.StatusCode, nil
		}
		return resp.StatusCode, fmt.Errorf("client: decode %s %s: %w", r.method, r.path, err)
	}
	return resp.StatusCode, nil
}

// text performs the request and returns the answer's body as text.
func (c *Client) text(ctx context.Context, r request) (string, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("client: read %s %s: %w", r.method, r.path, err)
	}
	return string(b), nil
}

// Do performs an arbitrary API call: method and path (with "/v1/…"), an
// optional JSON body, and decodes a JSON answer into out (nil to discard;
// a *json.RawMessage keeps it as is). It is the escape hatch for routes
// this package has no method for yet.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	_, err := c.call(ctx, request{method: method, path: path, query: query, body: body}, out)
	return err
}

// Health calls GET /healthz, which needs no token.
func (c *Client) Health(ctx context.Context) (*wire.Health, error) {
	return one[wire.Health](ctx, c, request{method: http.MethodGet, path: "/healthz"})
}

// seg escapes one path segment.
func seg(s string) string { return url.PathEscape(s) }

// durationString formats a duration the API's way ("" for zero).
func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}
