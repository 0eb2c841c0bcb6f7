package server

import (
	"errors"
	"io"
	"net/http"

	"wilco/forge"
	"wilco/wire"
)

// ForgeHook is the forge whose webhooks POST /v1/forge/webhook takes: its
// kind (which signature header it signs with), the secret it signs with,
// and who is told of each event that passed (the follower of pull
// requests; any other that wants to hear of issues and comments).
type ForgeHook struct {
	Kind   forge.Kind
	Secret string
	Events []func(forge.Event)
}

// forgeRoutes are the routes of the forge's webhooks.
func (s *Server) forgeRoutes() []Route {
	return []Route{
		{Method: "POST", Path: "/v1/forge/webhook", Auth: Public,
			Summary: "A webhook of the forge (GitHub, Gitea): authenticated by its signature (X-Hub-Signature-256 or X-Gitea-Signature, HMAC-SHA256 of the body with forge.webhook_secret), not by a token; it has wilco look at the pull requests at once. An unsigned or wrongly signed one is refused and changes nothing; 404 when no forge with a webhook secret is configured.",
			Handler: s.forgeWebhook, Request: map[string]any{}, Responses: map[int]any{204: nil}},
	}
}

// forgeWebhook verifies a webhook and tells the listeners of its event.
func (s *Server) forgeWebhook(w http.ResponseWriter, r *http.Request) error {
	h := s.opts.Forge
	if h == nil || h.Secret == "" {
		return Errorf(wire.CodeNotFound, "no forge webhook is configured (forge.webhook_secret)")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	ev, err := forge.ParseWebhook(h.Kind, r.Header, body, h.Secret)
	switch {
	case errors.Is(err, forge.ErrBadSignature):
		s.log.Warn("a forge webhook was refused: its signature is missing or wrong", "remote", r.RemoteAddr)
		return Errorf(wire.CodeUnauthenticated, "the webhook's signature is missing or wrong")
	case err != nil:
		return invalidf("the webhook's event could not be read: %v", err)
	}
	s.log.Debug("a forge webhook", "event", ev.Name, "kind", ev.Kind, "action", ev.Action, "pull", ev.PullNumber)
	for _, fn := range h.Events {
		fn(ev)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
