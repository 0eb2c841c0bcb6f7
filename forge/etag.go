package forge

import (
	"net/http"
	"sync"
)

// The answers to GETs are kept with their ETag, and asked again with
// If-None-Match: a forge that answers 304 Not Modified sends no body, and
// GitHub does not count such an answer against the rate limit ("Use
// conditional requests if appropriate", GitHub's REST documentation, best
// practices). Following a pull request every land.poll then costs the
// limit only what changed.

// maxCachedBody bounds the answers kept: a job's log is read once, not
// followed.
const maxCachedBody = 1 << 20

// maxCached bounds the answers kept; past it the cache starts again.
const maxCached = 512

// etagCache holds the last answer with an ETag to each GET, by address.
type etagCache struct {
	mu      sync.Mutex
	answers map[string]*answer
}

// get is the answer kept for an address, nil for none.
func (c *etagCache) get(url string) *answer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.answers[url]
}

// put keeps a's answer to url when it has an ETag and is small enough;
// an answer without one forgets what was kept.
func (c *etagCache) put(url string, a *answer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.header.Get("ETag") == "" || len(a.body) > maxCachedBody || a.status != http.StatusOK {
		delete(c.answers, url)
		return
	}
	if c.answers == nil || len(c.answers) >= maxCached {
		c.answers = map[string]*answer{}
	}
	c.answers[url] = a
}
