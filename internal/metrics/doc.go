// Package metrics counts what a dshd does, for the /metrics endpoint of an
// http(s) listener: connections, sessions, turns, model requests and their
// latency, tokens, tool calls, errors and limits hit, and the Go runtime's
// and the process's series, in the Prometheus text format (version 0.0.4).
//
// It writes that format itself rather than link
// github.com/prometheus/client_golang: that library's packages (and
// client_model, protobuf, procfs) run their init in every dshd process,
// also a stdio session that never serves /metrics, and cost it about 3 MB of
// peak RSS and 4.4 MB of binary. Counting is an atomic add, and a
// labelled series is found with a lock-free map read.
//
// The code that does the work never imports this package: acp/server and
// acp/remote each declare a small observer interface that [Metrics]
// implements, and the model is wrapped ([Metrics.Model]) where the daemon
// is wired. Every method returns at once; the package owns no goroutines.
package metrics
