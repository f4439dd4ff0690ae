// Package metrics counts what a dshd does, in the Prometheus format
// (github.com/prometheus/client_golang), for the /metrics endpoint of an
// http(s) listener: connections, sessions, turns, model requests and their
// latency, tokens, tool calls, errors and limits hit.
//
// The code that does the work never imports this package: acp/server and
// acp/remote each declare a small observer interface that [Metrics]
// implements, and the model is wrapped ([Metrics.Model]) where the daemon
// is wired. Every method returns at once; the package owns no goroutines.
package metrics
