package fakemodel

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// post sends body to path and returns the response.
func post(t *testing.T, s *Server, path, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d", path, resp.StatusCode)
	}
	return resp
}

// events reads an SSE body: the event names and the data of each event.
func events(t *testing.T, resp *http.Response) (names []string, data []json.RawMessage) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			names = append(names, name)
			data = append(data, json.RawMessage(strings.TrimPrefix(line, "data: ")))
			name = ""
		}
	}
	return names, data
}

func field(t *testing.T, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
}

func start(t *testing.T) *Server {
	t.Helper()
	s, err := Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestOpenAIResponsesStreamsTheAnswerAndCompletesWithUsage(t *testing.T) {
	s := start(t)
	names, data := events(t, post(t, s, "/v1/responses", `{"model":"m","stream":true,"input":[]}`))
	var text, done string
	completed := false
	for i, n := range names {
		var ev struct {
			Type     string `json:"type"`
			Delta    string `json:"delta"`
			Item     struct{ Content []struct{ Text string } }
			Response struct {
				ID    string
				Usage *struct {
					TotalTokens int `json:"total_tokens"`
				}
			}
		}
		field(t, data[i], &ev)
		if ev.Type != n {
			t.Errorf("event %q carries type %q", n, ev.Type)
		}
		switch n {
		case "response.output_text.delta":
			text += ev.Delta
		case "response.output_item.done":
			done = ev.Item.Content[0].Text
		case "response.completed":
			completed = ev.Response.ID != "" && ev.Response.Usage != nil && ev.Response.Usage.TotalTokens > 0
		}
	}
	if text != Answer || done != Answer || !completed {
		t.Errorf("deltas %q, done item %q, completed with id and usage: %v (events %v)", text, done, completed, names)
	}
	if names[0] != "response.created" || names[len(names)-1] != "response.completed" {
		t.Errorf("events %v", names)
	}
}

func TestOpenAIChatStreamsChunksThenDone(t *testing.T) {
	s := start(t)
	_, data := events(t, post(t, s, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[]}`))
	var text, finish string
	for _, d := range data[:len(data)-1] {
		var c struct {
			Choices []struct {
				Delta        struct{ Content string }
				FinishReason *string `json:"finish_reason"`
			}
		}
		field(t, d, &c)
		for _, ch := range c.Choices {
			text += ch.Delta.Content
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if text != Answer || finish != "stop" || string(data[len(data)-1]) != "[DONE]" {
		t.Errorf("text %q, finish %q, last %s", text, finish, data[len(data)-1])
	}
}

func TestAnthropicMessagesStreamsOneTextBlock(t *testing.T) {
	s := start(t)
	names, data := events(t, post(t, s, "/v1/messages?beta=true", `{"model":"claude-x","stream":true,"max_tokens":10,"messages":[]}`))
	want := []string{"message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v", names, want)
	}
	var text, stop string
	for i, n := range names {
		var ev struct {
			Delta struct {
				Text       string
				StopReason string `json:"stop_reason"`
			}
		}
		field(t, data[i], &ev)
		switch n {
		case "content_block_delta":
			text += ev.Delta.Text
		case "message_delta":
			stop = ev.Delta.StopReason
		}
	}
	if text != Answer || stop != "end_turn" {
		t.Errorf("text %q, stop %q", text, stop)
	}
}

func TestAnthropicWithoutStreamIsOneMessage(t *testing.T) {
	s := start(t)
	var m struct {
		Content []struct{ Text string }
		Usage   struct {
			InputTokens int `json:"input_tokens"`
		}
	}
	if err := json.NewDecoder(post(t, s, "/v1/messages", `{"model":"claude-x","max_tokens":1,"messages":[]}`).Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if len(m.Content) != 1 || m.Content[0].Text != Answer || m.Usage.InputTokens == 0 {
		t.Errorf("%+v", m)
	}
}

func TestGeminiStreamsCandidatesEndingWithStop(t *testing.T) {
	s := start(t)
	_, data := events(t, post(t, s, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`))
	var text, finish string
	for _, d := range data {
		var c struct {
			Candidates []struct {
				Content      struct{ Parts []struct{ Text string } }
				FinishReason string
			}
			ModelVersion string
		}
		field(t, d, &c)
		text += c.Candidates[0].Content.Parts[0].Text
		finish = c.Candidates[0].FinishReason
		if c.ModelVersion != "gemini-2.5-flash" {
			t.Errorf("modelVersion %q", c.ModelVersion)
		}
	}
	if text != Answer || finish != "STOP" {
		t.Errorf("text %q, finish %q", text, finish)
	}
}

func TestGeminiJSONRequestsGetJSONThatFitsTheirSchema(t *testing.T) {
	s := start(t)
	var c struct {
		Candidates []struct {
			Content struct{ Parts []struct{ Text string } }
		}
	}
	// The shape of gemini-cli's model router request.
	req := `{"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"OBJECT","properties":{"complexity_reasoning":{"type":"STRING"},"complexity_score":{"type":"INTEGER"},"choice":{"type":"string","enum":["flash","pro"]}},"required":["complexity_reasoning","complexity_score"]}}}`
	if err := json.NewDecoder(post(t, s, "/v1beta/models/m:generateContent", req).Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Reasoning *string `json:"complexity_reasoning"`
		Score     *int    `json:"complexity_score"`
		Choice    string  `json:"choice"`
	}
	if err := json.Unmarshal([]byte(c.Candidates[0].Content.Parts[0].Text), &v); err != nil {
		t.Fatalf("the answer to a JSON request is not JSON: %v", err)
	}
	if v.Reasoning == nil || v.Score == nil || v.Choice != "flash" {
		t.Errorf("the answer does not fill the schema: %s", c.Candidates[0].Content.Parts[0].Text)
	}
}

func TestUnknownPathsAre404AndCountsFollowTheAPIs(t *testing.T) {
	s := start(t)
	resp, err := http.Get(s.URL() + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
	post(t, s, "/v1/responses", `{}`)
	post(t, s, "/v1/messages/count_tokens", `{}`)
	post(t, s, "/v1beta/models/m:countTokens", `{}`)
	got := s.Counts()
	if got[OpenAIResponses] != 1 || got[AnthropicCount] != 1 || got[GeminiCount] != 1 || s.Total() != 3 {
		t.Errorf("counts %v", got)
	}
}
