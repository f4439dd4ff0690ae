// metrics.go: dshd's metric families and the observer methods that feed
// them.

package metrics

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// Metrics holds dshd's metric families.
type Metrics struct {
	connsOpen   *vec[gauge]
	connsTotal  *vec[counter]
	sessions    *scalar
	turns       *vec[counter]
	turnSeconds *histogram
	requests    *vec[counter]
	reqSeconds  *histogram
	firstToken  *histogram
	tokens      *vec[counter]
	toolCalls   *vec[counter]
	errors      *vec[counter]
	limits      *vec[counter]

	mu   sync.Mutex
	fams []family // in the order of their names; replaced, never changed, when Watch adds some
}

// New returns dshd's families, with nothing counted yet.
func New() *Metrics {
	// Latency buckets from 1 ms to about 2 minutes.
	latency := exponentialBuckets(0.001, 2.5, 14)
	m := &Metrics{
		connsOpen:   newVec[gauge]("dshd_connections_open", "ACP connections open on the remote transport, by transport (websocket, http).", "gauge", "transport"),
		connsTotal:  newVec[counter]("dshd_connections_total", "ACP connections accepted on the remote transport, by transport.", "counter", "transport"),
		sessions:    &scalar{meta: meta{"dshd_sessions_opened_total", "Sessions opened (session/new, session/load, session/resume).", "counter"}},
		turns:       newVec[counter]("dshd_turns_total", "Prompt turns ended, by stop reason (end_turn, cancelled, max_tokens, max_turn_requests, refusal, error).", "counter", "stop_reason"),
		turnSeconds: newHistogram("dshd_turn_duration_seconds", "Duration of prompt turns.", latency),
		requests:    newVec[counter]("dshd_model_requests_total", "Model requests, by outcome (ok, error, cancelled).", "counter", "outcome"),
		reqSeconds:  newHistogram("dshd_model_request_duration_seconds", "Duration of model requests, to the end of their stream.", latency),
		firstToken:  newHistogram("dshd_model_first_token_seconds", "Time from a model request to its first streamed event.", latency),
		tokens:      newVec[counter]("dshd_tokens_total", "Model tokens, by kind (input, output, cached_input, reasoning).", "counter", "kind"),
		toolCalls:   newVec[counter]("dshd_tool_calls_total", "Tool calls ended, by status (completed, failed).", "counter", "status"),
		errors:      newVec[counter]("dshd_errors_total", "Errors, by kind (turn: a turn that failed; model: a model request that failed).", "counter", "kind"),
		limits:      newVec[counter]("dshd_limits_hit_total", "Requests refused or connections ended by a limit on the http(s) listener, by limit (connections, unauthenticated, auth-penalty, handshake, header-timeout, header-bytes, http2-streams, message-size, write-timeout, streams, auth).", "counter", "limit"),
	}
	m.add(m.connsOpen, m.connsTotal, m.sessions, m.turns, m.turnSeconds, m.requests, m.reqSeconds, m.firstToken, m.tokens, m.toolCalls, m.errors, m.limits)
	return m
}

// add puts fs among the families, keeping them in the order of their
// names, in a new slice so that a scrape holding the old one is not
// disturbed.
func (m *Metrics) add(fs ...family) {
	m.mu.Lock()
	defer m.mu.Unlock()
	all := append(slices.Clone(m.fams), fs...)
	slices.SortFunc(all, func(a, b family) int { return strings.Compare(a.familyName(), b.familyName()) })
	m.fams = all
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
	read := func(name, help string, v func() float64) family {
		return &gaugeFunc{meta: meta{name, help, "gauge"}, value: v}
	}
	m.add(
		read("dshd_acp_connections", "ACP connections the server serves now, on every transport.", func() float64 { return float64(s.Connections()) }),
		read("dshd_sessions_open", "Sessions open on a connection now.", func() float64 { return float64(s.LiveSessions()) }),
		read("dshd_turns_running", "Prompt turns running now.", func() float64 { return float64(s.RunningTurns()) }),
		read("dshd_draining", "1 while the daemon drains before it stops.", func() float64 {
			if s.Draining() {
				return 1
			}
			return 0
		}),
	)
}

// ConnOpened implements remote.Observer.
func (m *Metrics) ConnOpened(transport string) {
	m.connsOpen.with(transport).inc()
	m.connsTotal.with(transport).inc()
}

// ConnClosed implements remote.Observer.
func (m *Metrics) ConnClosed(transport string) { m.connsOpen.with(transport).dec() }

// LimitHit implements remote.Observer.
func (m *Metrics) LimitHit(limit string) { m.limits.with(limit).inc() }

// SessionOpened implements server.Observer.
func (m *Metrics) SessionOpened() { m.sessions.inc() }

// TurnEnded implements server.Observer; a turn that failed counts with
// stop reason "error" and as an error.
func (m *Metrics) TurnEnded(stop string, d time.Duration, err error) {
	if err != nil {
		stop = "error"
		m.errors.with("turn").inc()
	}
	m.turns.with(stop).inc()
	m.turnSeconds.observe(d.Seconds())
}

// ToolCallEnded implements server.Observer.
func (m *Metrics) ToolCallEnded(status string) { m.toolCalls.with(status).inc() }
