package client

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"wilco/wire"
)

// Cluster reads the nodes and the leases (a server on a PostgreSQL store;
// others answer 404).
func (c *Client) Cluster(ctx context.Context) (*wire.ClusterView, error) {
	return one[wire.ClusterView](ctx, c, request{method: http.MethodGet, path: "/v1/cluster"})
}

// Several nodes may serve a repository from a PostgreSQL store; one is
// active, the others are standbys. A standby answers reads itself (with
// the Wilco-Standby header). It answers a change, or a read only the
// active node can answer, with a 307 redirect that names the active node
// in the Wilco-Active header, or with 503 and the Wilco-Standby header
// while no node is active (during a takeover). The client follows the
// redirect, and remembers the active node for its next requests, and
// waits out the 503, for up to failoverPatience.
const (
	headerActive     = "Wilco-Active"
	headerStandby    = "Wilco-Standby"
	failoverPatience = 30 * time.Second
	maxRedirects     = 5
)

// target is the server address a client and its copies send to; a
// standby's redirect moves it to the active node.
type target struct {
	mu   sync.Mutex
	base string
}

func (t *target) get() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.base
}

func (t *target) set(base string) {
	t.mu.Lock()
	t.base = base
	t.mu.Unlock()
}

// noFollow is h that leaves wilco's own redirects to the client, which
// re-sends the request (body and token) to the active node itself.
func noFollow(h *http.Client) *http.Client {
	cp := *h
	next := h.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.Response != nil && req.Response.Header.Get(headerStandby) != "" {
			return http.ErrUseLastResponse
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return http.ErrUseLastResponse
		}
		return nil
	}
	return &cp
}

// standbyWait is how long to wait before trying again after a standby's
// 503 (its Retry-After, at most 5 s).
func standbyWait(resp *http.Response) time.Duration {
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n > 0 {
		return min(time.Duration(n)*time.Second, 5*time.Second)
	}
	return time.Second
}
