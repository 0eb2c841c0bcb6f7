package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"

	"wilco/core"
	"wilco/wire"
)

// NewToken returns a new random token: 32 bytes from crypto/rand, base64url
// without padding (43 characters).
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// TokenHash is what wilco keeps of an agent's token: the hex SHA-256 of it.
// The token itself is never stored or logged.
func TokenHash(token string) string {
	h := hashToken(token)
	return hex.EncodeToString(h[:])
}

func hashToken(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// bearer returns the request's bearer token, "" when there is none.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimSpace(tok), true
}

// caller is who a token belongs to.
type caller struct {
	admin bool
	agent string
	// session is the page's session id when its cookie, not a bearer
	// token, authenticated the request.
	session string
}

// identify resolves a bearer token: the admin, an agent, or nobody. Its
// error says that the agents' tokens cannot be read now (the runtime is
// closed or stopped): whose token it is is unknown, which is not "nobody".
func (s *Server) identify(tok string) (caller, error) {
	if tok == "" {
		return caller{}, nil
	}
	h := hashToken(tok)
	if s.hasAdm && subtle.ConstantTimeCompare(h[:], s.admin[:]) == 1 {
		return caller{admin: true}, nil
	}
	name, _, err := s.agentWithHash(hex.EncodeToString(h[:]))
	return caller{agent: name}, err
}

// AgentWithToken names the agent whose token this is (ok false: no agent
// has it). The error is the runtime's when it cannot tell (closed or
// stopped): the token may well be valid, and must not be refused as
// unknown.
func (s *Server) AgentWithToken(token string) (name string, ok bool, err error) {
	if token == "" {
		return "", false, nil
	}
	return s.agentWithHash(TokenHash(token))
}

// agentWithHash looks up the agent whose token hashes to hash. What is
// compared is the token's SHA-256, not the token: how long a comparison
// takes tells nothing of a token that would match.
func (s *Server) agentWithHash(hash string) (name string, ok bool, err error) {
	err = s.read(func(c *core.State) { name, ok = c.AgentWithToken(hash) })
	return name, ok, err
}

// authenticate checks the request's token against the route's audience: 401
// for a missing or unknown token, 403 for a valid token on a route it may
// not use. It returns who the token belongs to.
func (s *Server) authenticate(r *http.Request, need Auth) (caller, error) {
	switch need {
	case Public:
		return caller{}, nil
	case Loopback:
		if !isLoopback(r) {
			return caller{}, Errorf(wire.CodePermissionDenied, "this route answers loopback clients only")
		}
		// A token is needed as on every other route: without one, anyone
		// could acknowledge or complete another agent's task.
	}
	tok, present := bearer(r)
	if !present {
		// The page's session cookie stands for the admin token on the
		// control API only (never the agent's side).
		if need == Admin {
			if c, ok, err := s.sessionCaller(r); ok {
				return c, err
			}
		}
		return caller{}, Errorf(wire.CodeUnauthenticated, "missing token: send Authorization: Bearer <token> (or log in to the page)")
	}
	if tok == "" {
		return caller{}, Errorf(wire.CodeUnauthenticated, "malformed Authorization header: want Bearer <token>")
	}
	c, err := s.identify(tok)
	if err != nil {
		return caller{}, err
	}
	switch {
	case !c.admin && c.agent == "":
		return caller{}, Errorf(wire.CodeUnauthenticated, "unknown token")
	case need == Admin && !c.admin:
		return c, Errorf(wire.CodePermissionDenied, "an agent's token may not use the control API")
	case need == AgentOnly && c.agent == "":
		return c, Errorf(wire.CodePermissionDenied, "this route is the agent's side: use the agent's token, not the admin token")
	}
	return c, nil
}
