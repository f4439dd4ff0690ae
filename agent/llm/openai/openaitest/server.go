// Server: lifecycle, request recording, reply selection and DeepSeek's
// validation rules.

package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Server is a fake OpenAI-compatible server on loopback. It answers
// POST .../chat/completions from a queue of [Reply] values (then from a
// handler func) and GET .../models from a list of ids, and records every
// request. All methods are safe for concurrent use.
type Server struct {
	ts      *httptest.Server
	closing chan struct{}
	once    sync.Once

	mu          sync.Mutex
	queue       []Reply
	handler     func(*Request) Reply
	requests    []*Request
	models      []string
	apiKey      string
	validate    bool
	rejectEmpty bool
	seq         int
}

// New starts a server on 127.0.0.1 with a random port. It panics if it
// cannot listen, as httptest.NewServer does.
func New() *Server {
	s, err := Start("127.0.0.1:0")
	if err != nil {
		panic("openaitest: " + err.Error())
	}
	return s
}

// Start starts a server listening on addr ("127.0.0.1:0" for any port);
// a program (the demo) uses it to serve on a known address.
func Start(addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("openaitest: listen: %w", err)
	}
	s := &Server{
		closing: make(chan struct{}),
		models:  []string{"deepseek-flash", "deepseek-v4-pro"},
	}
	s.ts = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	s.ts.Listener.Close()
	s.ts.Listener = l
	// Hijacked and abandoned connections make net/http log; keep stderr quiet.
	s.ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.ts.Start()
	return s, nil
}

// URL is the base URL to give a client ("http://127.0.0.1:PORT"); both
// /chat/completions and /v1/chat/completions are served.
func (s *Server) URL() string { return s.ts.URL }

// Close stops the server: streams still running (holds, endless
// keep-alives) end, and Close returns once every handler has.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closing)
		s.ts.CloseClientConnections()
		s.ts.Close() // waits for every handler

	})
}

// Enqueue appends replies; each chat request takes the first one left.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Handle sets the function that picks a reply once the queue is empty.
// With neither, a chat request gets HTTP 400 "no reply scripted". fn sees
// only chat requests whose body decoded: its request's Chat is never nil.
func (s *Server) Handle(fn func(*Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = fn
}

// SetModels sets the ids GET /models lists.
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string(nil), ids...)
}

// RequireAPIKey makes every request without "Authorization: Bearer key"
// fail with DeepSeek's 401; "" accepts anything.
func (s *Server) RequireAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

// ValidateDeepSeek turns on DeepSeek's request checks (llm-backends.md
// §4.13): in thinking mode (the default unless thinking.type is
// "disabled") an assistant message with tool calls must carry
// reasoning_content and tool_choice may not be "required" or a named
// function; the retired ids deepseek-chat and deepseek-reasoner fail
// always. A failing request gets DeepSeek's 400 and consumes no reply.
func (s *Server) ValidateDeepSeek(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.validate = on
}

// RejectEmptyReasoning makes validation also refuse reasoning_content ""
// on a tool-call message (what V4 Pro was seen doing).
func (s *Server) RejectEmptyReasoning(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejectEmpty = on
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// ChatRequests returns the recorded chat requests only.
func (s *Server) ChatRequests() []*ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*ChatRequest
	for _, r := range s.requests {
		if r.Chat != nil {
			out = append(out, r.Chat)
		}
	}
	return out
}

// Request is one recorded request.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Chat is the decoded body of a chat request; nil otherwise or when
	// the body is not JSON.
	Chat *ChatRequest
}

// ChatRequest is a decoded chat request body.
type ChatRequest struct {
	Model               string           `json:"model"`
	Messages            []Message        `json:"messages"`
	Tools               []Tool           `json:"tools"`
	Stream              bool             `json:"stream"`
	StreamOptions       *StreamOptions   `json:"stream_options"`
	ToolChoice          json.RawMessage  `json:"tool_choice"`
	Thinking            *Thinking        `json:"thinking"`
	ReasoningEffort     string           `json:"reasoning_effort"`
	MaxTokens           *int             `json:"max_tokens"`
	MaxCompletionTokens *int             `json:"max_completion_tokens"`
	ParallelToolCalls   *bool            `json:"parallel_tool_calls"`
	ResponseFormat      *json.RawMessage `json:"response_format"`
	// Fields holds every top-level field as sent.
	Fields map[string]json.RawMessage `json:"-"`
}

// StreamOptions is the stream_options object.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Thinking is DeepSeek's thinking object.
type Thinking struct {
	Type string `json:"type"`
}

// Tool is one offered tool.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// Message is one request message. Fields holds every field as sent, so a
// test can tell a missing reasoning_content from an empty one.
type Message struct {
	Role             string                     `json:"role"`
	Content          json.RawMessage            `json:"content"`
	ReasoningContent *string                    `json:"reasoning_content"`
	Reasoning        *string                    `json:"reasoning"`
	ToolCalls        []WireToolCall             `json:"tool_calls"`
	ToolCallID       string                     `json:"tool_call_id"`
	Fields           map[string]json.RawMessage `json:"-"`
}

// WireToolCall is an assistant message's tool call as sent.
type WireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Text returns the message content as text: the string, or the text
// parts joined.
func (m *Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// ImageURLs returns the image_url parts' URLs of the message content.
func (m *Message) ImageURLs() []string {
	var parts []struct {
		Type     string `json:"type"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return nil
	}
	var out []string
	for _, p := range parts {
		if p.Type == "image_url" {
			out = append(out, p.ImageURL.URL)
		}
	}
	return out
}

// IncludeUsage reports whether the request asked for the usage chunk.
func (c *ChatRequest) IncludeUsage() bool {
	return c.StreamOptions != nil && c.StreamOptions.IncludeUsage
}

// ThinkingOn reports DeepSeek's view: thinking is on unless disabled.
func (c *ChatRequest) ThinkingOn() bool {
	return c.Thinking == nil || c.Thinking.Type != "disabled"
}

// LastUserText returns the text of the last user message.
func (c *ChatRequest) LastUserText() string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == "user" {
			return c.Messages[i].Text()
		}
	}
	return ""
}

func decodeChat(body []byte) *ChatRequest {
	var c ChatRequest
	if json.Unmarshal(body, &c) != nil {
		return nil
	}
	_ = json.Unmarshal(body, &c.Fields)
	var raw struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(body, &raw)
	for i := range c.Messages {
		if i < len(raw.Messages) {
			c.Messages[i].Fields = raw.Messages[i]
		}
	}
	return &c
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 256<<20))
	req := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	chat := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions")
	if chat {
		req.Chat = decodeChat(body)
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.seq++
	seq := s.seq
	key := s.apiKey
	s.mu.Unlock()

	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		writeError(w, Reply{Status: http.StatusUnauthorized})
		return
	}
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.serveModels(w)
	case chat:
		s.serveChat(w, r, req, seq)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) serveModels(w http.ResponseWriter) {
	s.mu.Lock()
	ids := append([]string(nil), s.models...)
	s.mu.Unlock()
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range ids {
		list.Data = append(list.Data, model{ID: id, Object: "model", OwnedBy: "openaitest"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request, req *Request, seq int) {
	if req.Chat == nil {
		writeError(w, Reply{Status: 400, Error: &Error{
			Message: "Failed to deserialize the JSON body into the target type",
			Type:    "invalid_request_error", Code: "invalid_request_error",
		}})
		return
	}
	s.mu.Lock()
	validate, rejectEmpty := s.validate, s.rejectEmpty
	s.mu.Unlock()
	if validate {
		if e := validateDeepSeek(req.Chat, rejectEmpty); e != nil {
			writeError(w, Reply{Status: 400, Error: e})
			return
		}
	}
	rep, ok := s.next(req)
	if !ok {
		writeError(w, Reply{Status: 400, Error: &Error{
			Message: "openaitest: no reply scripted for this request",
			Type:    "invalid_request_error", Code: "no_reply",
		}})
		return
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		writeError(w, rep)
		return
	}
	st := &streamer{s: s, w: w, r: r, req: req.Chat, rep: &rep, seq: seq, body: len(req.Body)}
	if rep.JSON || !req.Chat.Stream {
		st.writeJSON()
		return
	}
	st.writeStream()
}

func (s *Server) next(req *Request) (Reply, bool) {
	s.mu.Lock()
	if len(s.queue) > 0 {
		rep := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return rep, true
	}
	h := s.handler
	s.mu.Unlock()
	if h == nil {
		return Reply{}, false
	}
	return h(req), true
}

func writeError(w http.ResponseWriter, rep Reply) {
	for k, v := range rep.Header {
		w.Header()[k] = v
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	body := []byte(rep.Body)
	if rep.Body == "" {
		e := rep.Error
		if e == nil {
			e = defaultError(rep.Status)
		}
		body, _ = json.Marshal(map[string]*Error{"error": e})
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(rep.Status)
	_, _ = w.Write(body)
}

// Retired model ids: DeepSeek rejects them since 2026-07-24.
var retired = map[string]bool{"deepseek-chat": true, "deepseek-reasoner": true}

// validateDeepSeek applies DeepSeek's rules; it returns the 400 error of
// the first one broken, or nil.
func validateDeepSeek(c *ChatRequest, rejectEmpty bool) *Error {
	bad := func(msg string) *Error {
		return &Error{Message: msg, Type: "invalid_request_error", Code: "invalid_request_error"}
	}
	if retired[c.Model] {
		return bad("Model Not Exist")
	}
	if !c.ThinkingOn() {
		return nil
	}
	if tc := bytes.TrimSpace(c.ToolChoice); len(tc) > 0 && string(tc) != "null" &&
		string(tc) != `"auto"` && string(tc) != `"none"` {
		return bad("Thinking mode does not support this tool_choice")
	}
	for _, m := range c.Messages {
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		if m.ReasoningContent == nil || (rejectEmpty && *m.ReasoningContent == "") {
			return bad("The `reasoning_content` in the thinking mode must be passed back to the API.")
		}
	}
	return nil
}
