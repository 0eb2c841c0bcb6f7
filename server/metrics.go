package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"wilco/core"
	"wilco/runtime"
	"wilco/store"
)

// policies are the label values of the delivery metrics.
var policies = []core.Policy{core.PolicyNone, core.PolicyCycles, core.PolicyBackoff, core.PolicyReminders}

// Metrics are wilco's Prometheus metrics: deliveries by policy (fed with
// every committed event through runtime.Config.Observe), agents by status
// (read from the core at each scrape), events by type, and HTTP request
// latency by route pattern and status.
type Metrics struct {
	mu sync.Mutex
	// open maps each open delivery to its policy: later events of a
	// delivery carry only its id.
	open  map[string]core.Policy
	sends map[core.Policy]*[2]float64 // sent, retried: for the retry ratio

	sent, retried, acknowledged, failed, cancelled *prometheus.CounterVec
	retryRatio                                     *prometheus.GaugeVec
	events                                         *prometheus.CounterVec
	http                                           *prometheus.HistogramVec
	// tokens and cost are what agents' turns used, as their CLIs
	// reported it, by agent (and kind of token).
	tokens, cost *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them in reg. Pass its
// Observe as runtime.Config.Observe, and the Metrics to Options.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "wilco", Name: name, Help: help}, []string{"policy"})
	}
	m := &Metrics{
		open:         map[string]core.Policy{},
		sends:        map[core.Policy]*[2]float64{},
		sent:         counter("deliveries_sent_total", "First sends of deliveries, by delivery policy."),
		retried:      counter("deliveries_retried_total", "Sends of deliveries that ask again for an answer (retries, ACK requests, reminders, corrections), by delivery policy."),
		acknowledged: counter("deliveries_acknowledged_total", "Deliveries that ended acknowledged, by delivery policy."),
		failed:       counter("deliveries_failed_total", "Deliveries that ended failed (never acknowledged), by delivery policy."),
		cancelled:    counter("deliveries_cancelled_total", "Deliveries that ended cancelled, by delivery policy."),
		retryRatio: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "wilco", Name: "delivery_retry_ratio",
			Help: "Retries per first send since the server started, by delivery policy."}, []string{"policy"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "wilco", Name: "events_total",
			Help: "Committed events, by type."}, []string{"type"}),
		http: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "wilco", Name: "http_request_duration_seconds",
			Help:    "HTTP request latency, by route pattern and status code (long-polls and event streams included).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}},
			[]string{"route", "code"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "wilco", Name: "agent_tokens_total",
			Help: "Tokens agents' turns used, as their CLIs reported them, by agent and kind (input, output, cached)."}, []string{"agent", "kind"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "wilco", Name: "agent_cost_usd_total",
			Help: "What agents' turns cost in US dollars, as their CLIs reported it, by agent."}, []string{"agent"}),
	}
	for _, p := range policies {
		for _, v := range []*prometheus.CounterVec{m.sent, m.retried, m.acknowledged, m.failed, m.cancelled} {
			v.WithLabelValues(string(p))
		}
		m.retryRatio.WithLabelValues(string(p))
		m.sends[p] = &[2]float64{}
	}
	for _, c := range []prometheus.Collector{m.sent, m.retried, m.acknowledged, m.failed, m.cancelled, m.retryRatio, m.events, m.http, m.tokens, m.cost} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observeUsage counts the usage a turn's end reports.
func (m *Metrics) observeUsage(ev store.Event) {
	var e struct {
		Usage *core.Usage `json:"usage"`
	}
	if json.Unmarshal(ev.Data, &e) != nil || e.Usage == nil {
		return
	}
	m.tokens.WithLabelValues(ev.Agent, "input").Add(float64(e.Usage.InputTokens))
	m.tokens.WithLabelValues(ev.Agent, "output").Add(float64(e.Usage.OutputTokens))
	m.tokens.WithLabelValues(ev.Agent, "cached").Add(float64(e.Usage.CachedTokens))
	if e.Usage.CostUSD > 0 {
		m.cost.WithLabelValues(ev.Agent).Add(e.Usage.CostUSD)
	}
}

// deliveryEvent is what the metrics read of a delivery event.
type deliveryEvent struct {
	ID      string `json:"id"`
	Message *struct {
		ID     string      `json:"id"`
		Policy core.Policy `json:"policy"`
	} `json:"message"`
}

// Observe counts a committed batch of events. It runs on the runtime's
// loop (runtime.Config.Observe) and is quick: only delivery events are
// decoded, and only their ids.
func (m *Metrics) Observe(evs []store.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ev := range evs {
		m.events.WithLabelValues(ev.Type).Inc()
		var vec *prometheus.CounterVec
		end := false
		switch ev.Type {
		case core.TypeDeliveryQueued:
		case core.TypeDeliverySent:
			vec = m.sent
		case core.TypeDeliveryRetried:
			vec = m.retried
		case core.TypeDeliveryAcknowledged:
			vec, end = m.acknowledged, true
		case core.TypeDeliveryFailed:
			vec, end = m.failed, true
		case core.TypeDeliveryCancelled:
			vec, end = m.cancelled, true
		case core.TypeTaskTurnEnded:
			m.observeUsage(ev)
			continue
		default:
			continue
		}
		var d deliveryEvent
		if json.Unmarshal(ev.Data, &d) != nil {
			continue
		}
		if d.Message != nil {
			m.open[d.Message.ID] = d.Message.Policy
			if d.ID == "" {
				d.ID = d.Message.ID
			}
		}
		if vec == nil {
			continue
		}
		p, ok := m.open[d.ID]
		if !ok {
			continue // ended before the server started watching
		}
		vec.WithLabelValues(string(p)).Inc()
		if end {
			delete(m.open, d.ID)
		}
		if c := m.sends[p]; c != nil && (vec == m.sent || vec == m.retried) {
			if vec == m.sent {
				c[0]++
			} else {
				c[1]++
			}
			if c[0] > 0 {
				m.retryRatio.WithLabelValues(string(p)).Set(c[1] / c[0])
			}
		}
	}
}

// attach learns the policy of every open delivery (so that their later
// events count) and registers the agents-by-status gauge, read from the
// core at each scrape, and the gauge of the effects not yet performed.
func (m *Metrics) attach(rt *runtime.Runtime, reg prometheus.Registerer) error {
	if err := rt.Read(func(c *core.State) {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, d := range c.Deliveries(func(d *core.Delivery) bool { return !d.State.Terminal() }) {
			m.open[d.ID] = d.Policy
		}
	}); err != nil {
		return fmt.Errorf("server: metrics: %w", err)
	}
	if err := reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "wilco", Name: "effects_pending",
		Help: "What wilco has decided to do and not yet done: messages, verifications, landings, sessions' ends, operations, notifications' attempts waiting or under way."},
		func() float64 { return float64(rt.Pending()) })); err != nil {
		return err
	}
	return reg.Register(&agentCollector{rt: rt, desc: prometheus.NewDesc("wilco_agents",
		"Agents, by status.", []string{"status"}, nil)})
}

func (m *Metrics) request(route string, status int, d time.Duration) {
	m.http.WithLabelValues(route, strconv.Itoa(status)).Observe(d.Seconds())
}

type agentCollector struct {
	rt   *runtime.Runtime
	desc *prometheus.Desc
}

func (c *agentCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *agentCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[core.AgentStatus]int{}
	if err := c.rt.Read(func(s *core.State) {
		for _, a := range s.Agents() {
			counts[a.Status]++
		}
	}); err != nil {
		// Unknown, not zero: the scrape goes on without this gauge.
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for _, st := range []core.AgentStatus{core.Available, core.Busy, core.Unresponsive, core.Hibernating, core.Offline} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[st]), string(st))
	}
}

func (s *Server) metricsHandler(w http.ResponseWriter, r *http.Request) error {
	promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	return nil
}
