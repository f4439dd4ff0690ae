// expose.go: the Prometheus text exposition format, version 0.0.4, and
// the handler that serves it.

package metrics

import (
	"math"
	"net/http"
	"strconv"
)

// contentType is the text format's media type, as scrapers ask for it.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

// writer builds one exposition.
type writer struct{ b []byte }

// head writes a family's HELP and TYPE lines.
func (w *writer) head(m *meta) {
	w.b = append(w.b, "# HELP "...)
	w.b = append(w.b, m.name...)
	w.b = append(w.b, ' ')
	w.b = appendEscaped(w.b, m.help, false)
	w.b = append(w.b, "\n# TYPE "...)
	w.b = append(w.b, m.name...)
	w.b = append(w.b, ' ')
	w.b = append(w.b, m.typ...)
	w.b = append(w.b, '\n')
}

// series writes a sample's name and labels (name, value pairs) and the
// space before its value.
func (w *writer) series(name string, labels []string) {
	w.b = append(w.b, name...)
	if len(labels) > 0 {
		w.b = append(w.b, '{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, labels[i]...)
			w.b = append(w.b, `="`...)
			w.b = appendEscaped(w.b, labels[i+1], true)
			w.b = append(w.b, '"')
		}
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, ' ')
}

func (w *writer) uint(name string, v uint64, labels ...string) {
	w.series(name, labels)
	w.b = strconv.AppendUint(w.b, v, 10)
	w.b = append(w.b, '\n')
}

func (w *writer) int(name string, v int64, labels ...string) {
	w.series(name, labels)
	w.b = strconv.AppendInt(w.b, v, 10)
	w.b = append(w.b, '\n')
}

func (w *writer) float(name string, v float64, labels ...string) {
	w.series(name, labels)
	w.b = append(w.b, formatFloat(v)...)
	w.b = append(w.b, '\n')
}

// formatFloat writes v as the format spells numbers: Go's shortest
// form, and +Inf, -Inf, NaN.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// appendEscaped appends s escaped as the format asks: a backslash and a
// newline in HELP text, and a double quote too in a label value.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		b := m.expose()
		h := rw.Header()
		h.Set("Content-Type", contentType)
		h.Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = rw.Write(b)
	})
}

// expose writes every family: dshd's in the order of their names, then
// the Go runtime's and the process's, which sort after them.
func (m *Metrics) expose() []byte {
	w := &writer{b: make([]byte, 0, 8<<10)}
	m.mu.Lock()
	fams := m.fams
	m.mu.Unlock()
	for _, f := range fams {
		f.write(w)
	}
	writeRuntime(w)
	writeProcess(w)
	return w.b
}
