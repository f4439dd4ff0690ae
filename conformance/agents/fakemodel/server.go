// This file holds the server: routing by path, the request counts, and
// the helpers every API's writer shares (SSE events, JSON bodies).

package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Answer is the text every request is answered with.
const Answer = "Hello from the fake model. This is a fixed answer."

// pieces is Answer cut where a stream sends its deltas.
var pieces = []string{"Hello from the fake model.", " This is a", " fixed answer."}

// API names a model API, for the counts.
type API string

// The APIs the server speaks.
const (
	OpenAIResponses API = "openai-responses"
	OpenAIChat      API = "openai-chat"
	OpenAIModels    API = "openai-models"
	Anthropic       API = "anthropic-messages"
	AnthropicCount  API = "anthropic-count-tokens"
	Gemini          API = "gemini"
	GeminiCount     API = "gemini-count-tokens"
	GeminiModels    API = "gemini-models"
)

// Server is the fake model server on a loopback port.
type Server struct {
	srv *http.Server
	ln  net.Listener
	log *slog.Logger

	mu      sync.Mutex
	counts  map[API]int
	unknown map[string]bool
}

// Start listens on 127.0.0.1 on a free port and serves until Close. A nil
// logger discards.
func Start(log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, log: log, counts: map[API]int{}, unknown: map[string]bool{}}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.route), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the server's base URL, without a trailing slash.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server and ends open streams.
func (s *Server) Close() error { return s.srv.Close() }

// Counts returns how many requests each API served.
func (s *Server) Counts() map[API]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[API]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// Total is the number of model requests served, over every API.
func (s *Server) Total() int {
	n := 0
	for _, v := range s.Counts() {
		n += v
	}
	return n
}

func (s *Server) count(api API) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[api]++
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/responses"):
		s.count(OpenAIResponses)
		openAIResponses(w, body)
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/chat/completions"):
		s.count(OpenAIChat)
		openAIChat(w, body)
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/v1/models"):
		s.count(OpenAIModels)
		writeJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{"id": "fake-model", "object": "model", "owned_by": "fake"}}, "models": []any{}})
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages/count_tokens"):
		s.count(AnthropicCount)
		writeJSON(w, map[string]any{"input_tokens": inputTokens})
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages"):
		s.count(Anthropic)
		anthropicMessages(w, body)
	case strings.Contains(p, "/models/") && strings.HasSuffix(p, ":countTokens"):
		s.count(GeminiCount)
		writeJSON(w, map[string]any{"totalTokens": inputTokens})
	case strings.Contains(p, "/models/") && (strings.HasSuffix(p, ":streamGenerateContent") || strings.HasSuffix(p, ":generateContent")):
		s.count(Gemini)
		gemini(w, r, body)
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		s.count(GeminiModels)
		writeJSON(w, map[string]any{"models": []any{}})
	default:
		s.mu.Lock()
		first := !s.unknown[r.Method+" "+p]
		s.unknown[r.Method+" "+p] = true
		s.mu.Unlock()
		if first {
			s.log.Warn("fake model: unknown endpoint", "method", r.Method, "path", p, "body", clip(body, 300))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"type":"not_found_error","message":"the fake model server does not serve %s %s"}}`, r.Method, p)
	}
}

const inputTokens, outputTokens = 12, 11

// sse writes server-sent events and flushes each one.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event; an empty name writes a data-only event.
func (s *sse) event(name string, data any) {
	b, _ := json.Marshal(data)
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if s.f != nil {
		s.f.Flush()
	}
}

// raw writes one data line as given ("[DONE]").
func (s *sse) raw(data string) {
	fmt.Fprintf(s.w, "data: %s\n\n", data)
	if s.f != nil {
		s.f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// wantsStream reads the "stream" flag of a JSON request body.
func wantsStream(body []byte) bool {
	var req struct {
		Stream bool `json:"stream"`
	}
	_ = json.Unmarshal(body, &req)
	return req.Stream
}

// modelOf reads the "model" of a JSON request body.
func modelOf(body []byte, fallback string) string {
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	if req.Model == "" {
		return fallback
	}
	return req.Model
}

func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
