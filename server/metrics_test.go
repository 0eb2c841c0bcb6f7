package server

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"wilco/wire"
)

func TestMetricsCountDeliveriesByPolicyAndPassPromtool(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tok := b.agent("alpha")
	b.agent("beta")
	var ins wire.Instruction
	b.must(201, b.call("POST", "/v1/instructions", adminToken, map[string]any{"agent": "alpha", "content": "Report the OS", "max_retries": 1}), &ins)
	b.inbox(tok) // sent
	b.inbox(tok) // retried
	b.inbox(tok) // failed
	b.must(201, b.call("POST", "/v1/messages", adminToken, map[string]any{"to": "alpha", "body": "Thoughts on the plan?"}))
	b.must(202, b.call("POST", "/v1/inbox/replies", tok, map[string]any{"text": "Looks fine."}))
	b.call("GET", "/v1/agents/ghost", adminToken, nil)

	r := b.must(200, b.call("GET", "/metrics", adminToken, nil))
	text := string(r.body)
	for _, want := range []string{
		`wilco_deliveries_sent_total{policy="cycles"} 1`,
		`wilco_deliveries_retried_total{policy="cycles"} 1`,
		`wilco_deliveries_failed_total{policy="cycles"} 1`,
		`wilco_deliveries_sent_total{policy="none"} 1`,
		`wilco_deliveries_acknowledged_total{policy="none"} 1`,
		`wilco_delivery_retry_ratio{policy="cycles"} 1`,
		`wilco_agents{status="available"} 2`,
		`wilco_agents{status="unresponsive"} 0`,
		`wilco_http_request_duration_seconds_count{code="404",route="GET /v1/agents/{name}"} 1`,
		`wilco_http_request_duration_seconds_bucket{code="201",route="POST /v1/agents",le="+Inf"} 2`,
		`wilco_events_total{type="delivery.failed"} 1`,
		"wilco_effects_pending 0", // mailbox agents: nothing for an executor to do
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", text)
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (apt-get install prometheus): the exposition was checked by the assertions above only")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(r.body)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}
