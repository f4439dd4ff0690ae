package metrics

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	promodel "github.com/prometheus/common/model"
	"go.uber.org/goleak"

	dto "github.com/prometheus/client_model/go"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/scripted"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// state is a daemon's State the test sets.
type state struct {
	conns, sessions, turns atomic.Int64
	draining               atomic.Bool
}

func (s *state) Connections() int  { return int(s.conns.Load()) }
func (s *state) LiveSessions() int { return int(s.sessions.Load()) }
func (s *state) RunningTurns() int { return int(s.turns.Load()) }
func (s *state) Draining() bool    { return s.draining.Load() }

// scrape gets /metrics from a real HTTP server and parses the answer with
// the Prometheus project's own parser.
func scrape(t testing.TB, url string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	fams, text, err := scrapeErr(url)
	if err != nil {
		t.Fatal(err)
	}
	return fams, text
}

func scrapeErr(url string) (map[string]*dto.MetricFamily, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		return nil, "", fmt.Errorf("Content-Type %q", ct)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	p := expfmt.NewTextParser(promodel.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		return nil, "", fmt.Errorf("the exposition does not parse: %w\n%s", err, b)
	}
	return fams, string(b), nil
}

// series finds the metric of fam whose label name has value; "" finds the
// unlabelled one.
func series(t testing.TB, fams map[string]*dto.MetricFamily, fam, name, value string) *dto.Metric {
	t.Helper()
	f := fams[fam]
	if f == nil {
		t.Fatalf("no family %s", fam)
	}
	for _, m := range f.Metric {
		if name == "" && len(m.Label) == 0 {
			return m
		}
		for _, l := range m.Label {
			if l.GetName() == name && l.GetValue() == value {
				return m
			}
		}
	}
	t.Fatalf("%s has no series %s=%q: %v", fam, name, value, f.Metric)
	return nil
}

func counterOf(t testing.TB, fams map[string]*dto.MetricFamily, fam, name, value string) float64 {
	t.Helper()
	return series(t, fams, fam, name, value).GetCounter().GetValue()
}

func gaugeOf(t testing.TB, fams map[string]*dto.MetricFamily, fam string) float64 {
	t.Helper()
	return series(t, fams, fam, "", "").GetGauge().GetValue()
}

func newModel(t testing.TB) llm.Model {
	t.Helper()
	sm, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{User: "^ok", Text: "fine", Usage: &scripted.Usage{Input: 7, Output: 3}},
		{User: "^fail", Error: "the backend broke", ErrorStatus: 500},
		{User: "^hang", Text: "wait", Hang: true},
	}}, &scripted.Options{Instant: true})
	if err != nil {
		t.Fatal(err)
	}
	return sm
}

// stream runs one request through the counting model to its end; a
// cancel request is cancelled once the model hangs.
func stream(ctx context.Context, m llm.Model, user string) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ev, err := range m.Stream(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: user}}}) {
		if err == nil && ev.Kind == llm.EventText && user == "hang" {
			cancel()
		}
	}
}

// The labels dshd's callers pass are its own words; these are not, to see
// that any value survives the format.
const (
	quoted    = `web"socket`
	newline   = "multi\nline"
	backslash = `C:\path\`
)

func TestExposition_EveryMetricParsesWithThePrometheusParser(t *testing.T) {
	m := New()
	st := &state{}
	m.Watch(st)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()

	m.ConnOpened("websocket")
	m.ConnOpened("websocket")
	m.ConnClosed("websocket")
	m.ConnOpened(quoted)
	m.ConnOpened(newline)
	m.LimitHit("auth")
	m.LimitHit(backslash)
	m.SessionOpened()
	m.SessionOpened()
	m.TurnEnded("end_turn", 40*time.Millisecond, nil)
	m.TurnEnded("cancelled", 2*time.Second, nil)
	m.TurnEnded("end_turn", time.Second, context.DeadlineExceeded)
	m.TurnEnded(quoted+newline+backslash, time.Millisecond, nil)
	m.ToolCallEnded("completed")
	m.ToolCallEnded("failed")
	counted := m.Model(newModel(t))
	stream(t.Context(), counted, "ok")
	stream(t.Context(), counted, "ok")
	stream(t.Context(), counted, "fail")
	stream(t.Context(), counted, "hang")
	st.conns.Store(3)
	st.sessions.Store(2)
	st.turns.Store(1)
	st.draining.Store(true)

	fams, text := scrape(t, srv.URL)

	types := map[string]dto.MetricType{
		"dshd_connections_open":               dto.MetricType_GAUGE,
		"dshd_connections_total":              dto.MetricType_COUNTER,
		"dshd_acp_connections":                dto.MetricType_GAUGE,
		"dshd_sessions_open":                  dto.MetricType_GAUGE,
		"dshd_sessions_opened_total":          dto.MetricType_COUNTER,
		"dshd_turns_total":                    dto.MetricType_COUNTER,
		"dshd_turn_duration_seconds":          dto.MetricType_HISTOGRAM,
		"dshd_turns_running":                  dto.MetricType_GAUGE,
		"dshd_model_requests_total":           dto.MetricType_COUNTER,
		"dshd_model_request_duration_seconds": dto.MetricType_HISTOGRAM,
		"dshd_model_first_token_seconds":      dto.MetricType_HISTOGRAM,
		"dshd_tokens_total":                   dto.MetricType_COUNTER,
		"dshd_tool_calls_total":               dto.MetricType_COUNTER,
		"dshd_errors_total":                   dto.MetricType_COUNTER,
		"dshd_limits_hit_total":               dto.MetricType_COUNTER,
		"dshd_draining":                       dto.MetricType_GAUGE,
		"go_gc_duration_seconds":              dto.MetricType_SUMMARY,
		"go_goroutines":                       dto.MetricType_GAUGE,
		"go_info":                             dto.MetricType_GAUGE,
		"go_memstats_alloc_bytes":             dto.MetricType_GAUGE,
		"go_memstats_heap_inuse_bytes":        dto.MetricType_GAUGE,
		"go_memstats_sys_bytes":               dto.MetricType_GAUGE,
		"go_threads":                          dto.MetricType_GAUGE,
	}
	if runtime.GOOS == "linux" {
		for name, typ := range map[string]dto.MetricType{
			"process_cpu_seconds_total":     dto.MetricType_COUNTER,
			"process_max_fds":               dto.MetricType_GAUGE,
			"process_open_fds":              dto.MetricType_GAUGE,
			"process_resident_memory_bytes": dto.MetricType_GAUGE,
			"process_start_time_seconds":    dto.MetricType_GAUGE,
			"process_virtual_memory_bytes":  dto.MetricType_GAUGE,
		} {
			types[name] = typ
		}
	}
	for name, typ := range types {
		f := fams[name]
		switch {
		case f == nil:
			t.Errorf("no family %s", name)
		case f.GetType() != typ:
			t.Errorf("%s is a %v, want %v", name, f.GetType(), typ)
		case f.GetHelp() == "":
			t.Errorf("%s has no help", name)
		}
	}
	for name := range fams {
		if _, ok := types[name]; !ok {
			t.Errorf("unexpected family %s", name)
		}
	}

	for _, c := range []struct {
		fam, label, value string
		want              float64
	}{
		{"dshd_connections_total", "transport", "websocket", 2},
		{"dshd_connections_total", "transport", quoted, 1},
		{"dshd_connections_total", "transport", newline, 1},
		{"dshd_limits_hit_total", "limit", "auth", 1},
		{"dshd_limits_hit_total", "limit", backslash, 1},
		{"dshd_sessions_opened_total", "", "", 2},
		{"dshd_turns_total", "stop_reason", "end_turn", 1},
		{"dshd_turns_total", "stop_reason", "cancelled", 1},
		{"dshd_turns_total", "stop_reason", "error", 1},
		{"dshd_turns_total", "stop_reason", quoted + newline + backslash, 1},
		{"dshd_tool_calls_total", "status", "completed", 1},
		{"dshd_tool_calls_total", "status", "failed", 1},
		{"dshd_model_requests_total", "outcome", "ok", 2},
		{"dshd_model_requests_total", "outcome", "error", 1},
		{"dshd_model_requests_total", "outcome", "cancelled", 1},
		{"dshd_errors_total", "kind", "turn", 1},
		{"dshd_errors_total", "kind", "model", 1},
		{"dshd_tokens_total", "kind", "input", 14},
		{"dshd_tokens_total", "kind", "output", 6},
		{"dshd_tokens_total", "kind", "cached_input", 0},
		{"dshd_tokens_total", "kind", "reasoning", 0},
	} {
		if got := counterOf(t, fams, c.fam, c.label, c.value); got != c.want {
			t.Errorf("%s{%s=%q} = %v, want %v", c.fam, c.label, c.value, got, c.want)
		}
	}
	if got := series(t, fams, "dshd_connections_open", "transport", "websocket").GetGauge().GetValue(); got != 1 {
		t.Errorf("dshd_connections_open{websocket} = %v, want 1", got)
	}
	for fam, want := range map[string]float64{"dshd_acp_connections": 3, "dshd_sessions_open": 2, "dshd_turns_running": 1, "dshd_draining": 1, "go_goroutines": 1} {
		if got := gaugeOf(t, fams, fam); got < want || fam != "go_goroutines" && got != want {
			t.Errorf("%s = %v, want %v", fam, got, want)
		}
	}
	for _, fam := range []string{"dshd_model_request_duration_seconds", "dshd_model_first_token_seconds"} {
		if n := series(t, fams, fam, "", "").GetHistogram().GetSampleCount(); n != 4 {
			t.Errorf("%s_count = %d, want 4", fam, n)
		}
	}
	if v := series(t, fams, "go_info", "version", runtime.Version()).GetGauge().GetValue(); v != 1 {
		t.Errorf("go_info = %v", v)
	}

	// The gauges are read at each scrape.
	st.draining.Store(false)
	st.turns.Store(0)
	fams, _ = scrape(t, srv.URL)
	if d, r := gaugeOf(t, fams, "dshd_draining"), gaugeOf(t, fams, "dshd_turns_running"); d != 0 || r != 0 {
		t.Errorf("after the state changed: draining %v, turns running %v", d, r)
	}

	// The families come in the order of their names, each once.
	var names []string
	for line := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			names = append(names, strings.Fields(rest)[0])
		}
	}
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("families not in the order of their names, once each: %v", names)
	}
}

func TestHistogram_BucketsAreCumulativeCountsOfTheObservations(t *testing.T) {
	m := New()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	upper := exponentialBuckets(0.001, 2.5, 14)
	// On a bound (le is inclusive), between bounds, below the first and
	// past the last.
	obs := []time.Duration{0, 500 * time.Microsecond, time.Millisecond, 1001 * time.Microsecond, 40 * time.Millisecond, time.Second, time.Second, 149 * time.Second, 150 * time.Second, time.Hour}
	var sum float64
	for _, d := range obs {
		m.TurnEnded("end_turn", d, nil)
		sum += d.Seconds()
	}
	fams, _ := scrape(t, srv.URL)
	h := series(t, fams, "dshd_turn_duration_seconds", "", "").GetHistogram()
	if h.GetSampleCount() != uint64(len(obs)) {
		t.Errorf("count %d, want %d", h.GetSampleCount(), len(obs))
	}
	if math.Abs(h.GetSampleSum()-sum) > 1e-9 {
		t.Errorf("sum %v, want %v", h.GetSampleSum(), sum)
	}
	bounds := append(upper, math.Inf(1))
	if len(h.Bucket) != len(bounds) {
		t.Fatalf("%d buckets, want %d", len(h.Bucket), len(bounds))
	}
	for i, b := range h.Bucket {
		var want uint64
		for _, d := range obs {
			if d.Seconds() <= bounds[i] {
				want++
			}
		}
		if b.GetUpperBound() != bounds[i] || b.GetCumulativeCount() != want {
			t.Errorf("bucket %d: le=%v count %d, want le=%v count %d", i, b.GetUpperBound(), b.GetCumulativeCount(), bounds[i], want)
		}
	}
	if got := h.Bucket[0].GetCumulativeCount(); got != 3 {
		t.Errorf("le=0.001 holds %d, want 3 (0, 0.5 ms and 1 ms itself)", got)
	}
}

// Observers run from many goroutines at once while scrapes read; nothing
// is lost and every scrape is consistent.
func TestObservers_ConcurrentCallsAndScrapesLoseNothing(t *testing.T) {
	m := New()
	m.Watch(&state{})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	counted := m.Model(newModel(t))
	const workers, each = 8, 200
	stopScraping := make(chan struct{})
	var scrapes sync.WaitGroup
	scrapes.Go(func() {
		for {
			fams, _, err := scrapeErr(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			h := fams["dshd_turn_duration_seconds"].Metric[0].GetHistogram()
			prev := uint64(0)
			for _, b := range h.Bucket {
				if b.GetCumulativeCount() < prev {
					t.Errorf("buckets not cumulative: %v", h.Bucket)
				}
				prev = b.GetCumulativeCount()
			}
			if h.GetSampleCount() != prev {
				t.Errorf("count %d, the +Inf bucket %d", h.GetSampleCount(), prev)
			}
			select {
			case <-stopScraping:
				return
			default:
			}
		}
	})
	var work sync.WaitGroup
	for w := range workers {
		transport := "t" + strconv.Itoa(w%3)
		work.Go(func() {
			for i := range each {
				m.ConnOpened(transport)
				m.SessionOpened()
				m.TurnEnded("end_turn", 250*time.Millisecond, nil)
				m.ToolCallEnded("completed")
				m.LimitHit("streams")
				if i%20 == 0 {
					stream(t.Context(), counted, "ok")
				}
				m.ConnClosed(transport)
			}
		})
	}
	work.Wait()
	close(stopScraping)
	scrapes.Wait()

	fams, _ := scrape(t, srv.URL)
	n := float64(workers * each)
	for _, c := range []struct {
		fam, label, value string
		want              float64
	}{
		{"dshd_sessions_opened_total", "", "", n},
		{"dshd_turns_total", "stop_reason", "end_turn", n},
		{"dshd_tool_calls_total", "status", "completed", n},
		{"dshd_limits_hit_total", "limit", "streams", n},
		{"dshd_model_requests_total", "outcome", "ok", workers * each / 20},
		{"dshd_tokens_total", "kind", "input", 7 * workers * each / 20},
	} {
		if got := counterOf(t, fams, c.fam, c.label, c.value); got != c.want {
			t.Errorf("%s{%s=%q} = %v, want %v", c.fam, c.label, c.value, got, c.want)
		}
	}
	var opened float64
	for w := range 3 {
		transport := "t" + strconv.Itoa(w)
		opened += counterOf(t, fams, "dshd_connections_total", "transport", transport)
		if open := series(t, fams, "dshd_connections_open", "transport", transport).GetGauge().GetValue(); open != 0 {
			t.Errorf("%s: %v connections open after all closed", transport, open)
		}
	}
	if opened != n {
		t.Errorf("connections opened %v, want %v", opened, n)
	}
	h := series(t, fams, "dshd_turn_duration_seconds", "", "").GetHistogram()
	if h.GetSampleCount() != uint64(n) || h.GetSampleSum() != n/4 {
		t.Errorf("turn histogram count %d sum %v, want %v and %v", h.GetSampleCount(), h.GetSampleSum(), n, n/4)
	}
}

// The binary must not link client_golang or any other Prometheus module:
// their package inits cost every dshd process memory (see doc.go). The
// test's own import of the Prometheus parser must not reach it either.
func TestDshdLinksNoPrometheusModule(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the binary's packages")
	}
	out, err := exec.CommandContext(t.Context(), gobin, "list", "-deps", "github.com/dshd/dshd/cmd/dshd").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for pkg := range strings.Lines(string(out)) {
		if strings.HasPrefix(pkg, "github.com/prometheus/") {
			t.Errorf("cmd/dshd links %s", strings.TrimSpace(pkg))
		}
	}
}
