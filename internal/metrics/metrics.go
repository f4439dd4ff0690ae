// metrics.go: the collectors and the observer methods that feed them.

package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds dshd's collectors in a registry of its own.
type Metrics struct {
	reg *prometheus.Registry

	connsOpen   *prometheus.GaugeVec
	connsTotal  *prometheus.CounterVec
	sessions    prometheus.Counter
	turns       *prometheus.CounterVec
	turnSeconds prometheus.Histogram
	requests    *prometheus.CounterVec
	reqSeconds  prometheus.Histogram
	firstToken  prometheus.Histogram
	tokens      *prometheus.CounterVec
	toolCalls   *prometheus.CounterVec
	errors      *prometheus.CounterVec
	limits      *prometheus.CounterVec
}

// latency buckets from 1 ms to about 2 minutes.
var latency = prometheus.ExponentialBuckets(0.001, 2.5, 14)

// New returns the collectors, registered with the Go runtime's and the
// process's.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.connsOpen = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dshd_connections_open", Help: "ACP connections open on the remote transport, by transport (websocket, http)."}, []string{"transport"})
	m.connsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dshd_connections_total", Help: "ACP connections accepted on the remote transport, by transport."}, []string{"transport"})
	m.sessions = prometheus.NewCounter(prometheus.CounterOpts{Name: "dshd_sessions_opened_total", Help: "Sessions opened (session/new, session/load, session/resume)."})
	m.turns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dshd_turns_total", Help: "Prompt turns ended, by stop reason (end_turn, cancelled, max_tokens, max_turn_requests, refusal, error)."}, []string{"stop_reason"})
	m.turnSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "dshd_turn_duration_seconds", Help: "Duration of prompt turns.", Buckets: latency})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dshd_model_requests_total", Help: "Model requests, by outcome (ok, error, cancelled)."}, []string{"outcome"})
	m.reqSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "dshd_model_request_duration_seconds", Help: "Duration of model requests, to the end of their stream.", Buckets: latency})
	m.firstToken = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "dshd_model_first_token_seconds", Help: "Time from a model request to its first streamed event.", Buckets: latency})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dshd_tokens_total", Help: "Model tokens, by kind (input, output, cached_input, reasoning)."}, []string{"kind"})
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dshd_tool_calls_total", Help: "Tool calls ended, by status (completed, failed)."}, []string{"status"})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dshd_errors_total", Help: "Errors, by kind (turn: a turn that failed; model: a model request that failed)."}, []string{"kind"})
	m.limits = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dshd_limits_hit_total", Help: "Requests refused or connections ended by a limit on the http(s) listener, by limit (connections, unauthenticated, auth-penalty, handshake, message-size, write-timeout, streams, auth)."}, []string{"limit"})
	for _, c := range []prometheus.Collector{m.connsOpen, m.connsTotal, m.sessions, m.turns, m.turnSeconds, m.requests, m.reqSeconds, m.firstToken, m.tokens, m.toolCalls, m.errors, m.limits} {
		f(c)
	}
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// State is what the daemon reports of itself on each scrape.
type State interface {
	Connections() int
	LiveSessions() int
	RunningTurns() int
	Draining() bool
}

// Watch reports s's state on each scrape.
func (m *Metrics) Watch(s State) {
	gauge := func(name, help string, v func() float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, v))
	}
	gauge("dshd_acp_connections", "ACP connections the server serves now, on every transport.", func() float64 { return float64(s.Connections()) })
	gauge("dshd_sessions_open", "Sessions open on a connection now.", func() float64 { return float64(s.LiveSessions()) })
	gauge("dshd_turns_running", "Prompt turns running now.", func() float64 { return float64(s.RunningTurns()) })
	gauge("dshd_draining", "1 while the daemon drains before it stops.", func() float64 {
		if s.Draining() {
			return 1
		}
		return 0
	})
}

// ConnOpened implements remote.Observer.
func (m *Metrics) ConnOpened(transport string) {
	m.connsOpen.WithLabelValues(transport).Inc()
	m.connsTotal.WithLabelValues(transport).Inc()
}

// ConnClosed implements remote.Observer.
func (m *Metrics) ConnClosed(transport string) { m.connsOpen.WithLabelValues(transport).Dec() }

// LimitHit implements remote.Observer.
func (m *Metrics) LimitHit(limit string) { m.limits.WithLabelValues(limit).Inc() }

// SessionOpened implements server.Observer.
func (m *Metrics) SessionOpened() { m.sessions.Inc() }

// TurnEnded implements server.Observer; a turn that failed counts with
// stop reason "error" and as an error.
func (m *Metrics) TurnEnded(stop string, d time.Duration, err error) {
	if err != nil {
		stop = "error"
		m.errors.WithLabelValues("turn").Inc()
	}
	m.turns.WithLabelValues(stop).Inc()
	m.turnSeconds.Observe(d.Seconds())
}

// ToolCallEnded implements server.Observer.
func (m *Metrics) ToolCallEnded(status string) { m.toolCalls.WithLabelValues(status).Inc() }
