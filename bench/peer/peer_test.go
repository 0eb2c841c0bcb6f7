package main

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"testing"
	"time"
)

func TestBackOffMatchesWilcoSchedule(t *testing.T) {
	cfg := defaultConfig()
	got := consumerBackOff(cfg)
	want := []time.Duration{200 * time.Millisecond, 300 * time.Millisecond, 500 * time.Millisecond, 100 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Fatalf("BackOff = %v, want %v", got, want)
	}
	cc := consumerConfig(cfg, 7)
	if cc.MaxDeliver != cfg.MaxRetries+1 || len(cc.BackOff) > cc.MaxDeliver {
		t.Fatalf("MaxDeliver %d with %d BackOff entries", cc.MaxDeliver, len(cc.BackOff))
	}
	if cc.FilterSubject != "deliveries.agent-7" || cc.Durable != "agent-7" {
		t.Fatalf("consumer %q filters %q", cc.Durable, cc.FilterSubject)
	}

	cfg.MaxRetries = 0
	if got := consumerBackOff(cfg); !slices.Equal(got, []time.Duration{100 * time.Millisecond}) {
		t.Fatalf("BackOff with no retries = %v", got)
	}
	cfg.MaxRetries = 70 // no overflow; capped at backoff-max
	if got := consumerBackOff(cfg); got[69] != 500*time.Millisecond {
		t.Fatalf("BackOff[69] = %v", got[69])
	}
}

func TestPercentile(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	if p := percentile(s, 0.5); p != 50*time.Millisecond {
		t.Errorf("p50 = %v", p)
	}
	if p := percentile(s, 0.99); p != 99*time.Millisecond {
		t.Errorf("p99 = %v", p)
	}
	if p := percentile(nil, 0.99); p != 0 {
		t.Errorf("p99 of nothing = %v", p)
	}
}

// TestPeerSmallRun runs the whole peer on a tiny workload and checks the
// JSON it prints.
func TestPeerSmallRun(t *testing.T) {
	const deliveries, agents, retries = 2000, 10, 3
	var out bytes.Buffer
	code := cli([]string{"--deliveries", "2000", "--agents", "10", "--json"}, &out, io.Discard)
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	var fields map[string]any
	if err := json.Unmarshal(out.Bytes(), &fields); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out.String())
	}
	for _, k := range []string{"system", "deliveries", "agents", "ack_prob", "acked", "failed", "sends",
		"elapsed_ms", "acked_per_sec", "p50_ms", "p99_ms", "peak_rss_mb"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, out.String())
		}
	}
	var r result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.System != "jetstream" || r.Deliveries != deliveries || r.Agents != agents {
		t.Errorf("unexpected header: %+v", r)
	}
	if r.Acked+r.Failed != deliveries {
		t.Errorf("acked %d + failed %d != %d", r.Acked, r.Failed, deliveries)
	}
	if r.Sends < deliveries || r.Sends > deliveries*(retries+1) {
		t.Errorf("sends %d outside [%d, %d]", r.Sends, deliveries, deliveries*(retries+1))
	}
	// Every failed delivery was sent retries+1 times: its schedule alone
	// takes 200+300+500+100 ms.
	if r.Failed > 0 && r.ElapsedMS < 1100 {
		t.Errorf("elapsed %.1f ms is shorter than one full retry schedule", r.ElapsedMS)
	}
	if r.Acked > 0 && (r.AckedPerSec <= 0 || r.P50MS <= 0 || r.P99MS < r.P50MS) {
		t.Errorf("bad rates or percentiles: %+v", r)
	}
	if r.PeakRSSMB <= 0 {
		t.Errorf("peak_rss_mb = %v", r.PeakRSSMB)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--deliveries", "0"},
		{"--ack-prob", "1.5"},
		{"--max-ack-pending", "0"},
		{"extra"},
	} {
		if code := cli(args, io.Discard, io.Discard); code != 2 {
			t.Errorf("%v: exit code %d, want 2", args, code)
		}
	}
}
