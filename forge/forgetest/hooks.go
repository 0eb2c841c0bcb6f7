package forgetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"wilco/forge"
)

// send sends an event by the token's user.
func (s *Server) send(event, giteaEvent string, body map[string]any) {
	if giteaEvent == "" {
		giteaEvent = event
	}
	if s.kind == forge.Gitea {
		event = giteaEvent
	}
	s.sendAs(event, body, s.login)
}

// hookClient posts webhooks.
var hookClient = &http.Client{Timeout: 10 * time.Second}

// sendAs posts an event, sent by sender, to the webhook address if one is
// set, signed as the forge's kind signs, and records the delivery.
func (s *Server) sendAs(event string, body map[string]any, sender string) {
	s.mu.Lock()
	url, secret := s.hookURL, s.hookSecret
	body["repository"] = map[string]any{"full_name": s.Repo.String(), "name": s.Repo.Name,
		"owner": map[string]any{"login": s.Repo.Owner}}
	body["sender"] = s.user(sender)
	data, err := json.Marshal(body)
	s.mu.Unlock()
	if url == "" {
		return
	}
	d := Delivery{Event: event, Body: data, Err: err}
	if err == nil {
		d.Status, d.Err = s.post(url, secret, event, data)
	}
	s.mu.Lock()
	s.deliveries = append(s.deliveries, d)
	s.mu.Unlock()
}

func (s *Server) post(url, secret, event string, data []byte) (int, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	s.mu.Lock()
	delivery := fmt.Sprintf("delivery-%d", s.id())
	s.mu.Unlock()
	if s.kind == forge.Gitea {
		// What go-gitea/gitea services/webhook/deliver.go sets: the
		// precise X-Gitea-Event-Type and the coarse X-Gitea-Event
		// (modules/webhook/type.go, HookEventType.Event).
		coarse := map[string]string{"pull_request_review_approved": "pull_request_approved",
			"pull_request_review_rejected": "pull_request_rejected", "pull_request_review_comment": "pull_request_comment",
			"pull_request_comment": "issue_comment", "issue_label": "issues"}[event]
		if coarse == "" {
			coarse = event
		}
		req.Header.Set(forge.HeaderGiteaEvent, coarse)
		req.Header.Set(forge.HeaderGiteaEventType, event)
		req.Header.Set("X-Gitea-Delivery", delivery)
		if secret != "" {
			req.Header.Set(forge.HeaderGiteaSignature, forge.Sign(forge.Gitea, secret, data))
		}
	} else {
		req.Header.Set(forge.HeaderGitHubEvent, event)
		req.Header.Set("X-GitHub-Delivery", delivery)
		if secret != "" {
			req.Header.Set(forge.HeaderGitHubSignature, forge.Sign(forge.GitHub, secret, data))
		}
	}
	resp, err := hookClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
