package openaitest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func post(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	c := &http.Client{}
	defer c.CloseIdleConnections()
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestServer(t *testing.T) {
	t.Run("a stream ends with [DONE] and sends usage only when asked", func(t *testing.T) {
		s := New()
		defer s.Close()
		s.Enqueue(Text("a"), Text("b"))
		_, with := post(t, s.URL()+"/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`)
		_, without := post(t, s.URL()+"/v1/chat/completions", `{"model":"m","stream":true}`)
		if !strings.Contains(with, `"choices":[],`) || !strings.HasSuffix(with, "data: [DONE]\n\n") {
			t.Errorf("stream with include_usage:\n%s", with)
		}
		if strings.Contains(without, "prompt_tokens") {
			t.Errorf("usage sent without include_usage:\n%s", without)
		}
	})
	t.Run("stream false gets one JSON body", func(t *testing.T) {
		s := New()
		defer s.Close()
		s.Enqueue(Reply{Reasoning: []string{"r"}, Text: []string{"x", "y"}, ToolCalls: []ToolCall{{ID: "c", Name: "f", Arguments: "{}"}}})
		resp, body := post(t, s.URL()+"/chat/completions", `{"model":"m","stream":false}`)
		var got struct {
			Choices []struct {
				Message struct {
					Content          string `json:"content"`
					ReasoningContent string `json:"reasoning_content"`
					ToolCalls        []any  `json:"tool_calls"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(body), &got); err != nil || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%v: %s", err, body)
		}
		m := got.Choices[0]
		if m.Message.Content != "xy" || m.Message.ReasoningContent != "r" || len(m.Message.ToolCalls) != 1 || m.FinishReason != "tool_calls" {
			t.Errorf("body = %s", body)
		}
	})
	t.Run("HTTP errors carry DeepSeek's body and Retry-After", func(t *testing.T) {
		s := New()
		defer s.Close()
		s.Enqueue(Reply{Status: 429, RetryAfter: "3"})
		resp, body := post(t, s.URL()+"/chat/completions", `{"model":"m","stream":true}`)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || !strings.Contains(body, `"rate_limit_reached"`) {
			t.Errorf("%d %v %s", resp.StatusCode, resp.Header, body)
		}
	})
	t.Run("validation refuses without consuming a reply", func(t *testing.T) {
		s := New()
		defer s.Close()
		s.ValidateDeepSeek(true)
		s.Enqueue(Text("kept"))
		cases := []string{
			`{"model":"deepseek-reasoner","stream":true}`,
			`{"model":"deepseek-flash","stream":true,"tool_choice":"required"}`,
			`{"model":"deepseek-flash","stream":true,"tool_choice":{"type":"function","function":{"name":"f"}}}`,
			`{"model":"deepseek-flash","stream":true,"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`,
		}
		for _, c := range cases {
			if resp, body := post(t, s.URL()+"/chat/completions", c); resp.StatusCode != 400 {
				t.Errorf("%s: %d %s", c, resp.StatusCode, body)
			}
		}
		ok := `{"model":"deepseek-flash","stream":true,"thinking":{"type":"disabled"},"tool_choice":"required","messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`
		if resp, body := post(t, s.URL()+"/chat/completions", ok); resp.StatusCode != 200 || !strings.Contains(body, "kept") {
			t.Errorf("non-thinking request refused: %d %s", resp.StatusCode, body)
		}
	})
	t.Run("requests are recorded with their messages' fields", func(t *testing.T) {
		s := New()
		defer s.Close()
		s.Handle(func(r *Request) Reply { return Text("echo: " + r.Chat.LastUserText()) })
		_, body := post(t, s.URL()+"/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"assistant","content":"","reasoning_content":""},{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
		if !strings.Contains(body, "echo: hi") {
			t.Errorf("body = %s", body)
		}
		c := s.ChatRequests()[0]
		if m := c.Messages[0]; m.ReasoningContent == nil || *m.ReasoningContent != "" || string(m.Fields["reasoning_content"]) != `""` {
			t.Errorf("message 0 = %+v", m)
		}
	})
	t.Run("models, auth and unknown paths", func(t *testing.T) {
		s := New()
		defer s.Close()
		s.SetModels("a", "b")
		resp, err := http.Get(s.URL() + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(b, []byte(`"id":"a"`)) || !bytes.Contains(b, []byte(`"id":"b"`)) {
			t.Errorf("models = %s", b)
		}
		s.RequireAPIKey("k")
		if resp, _ := post(t, s.URL()+"/chat/completions", `{}`); resp.StatusCode != 401 {
			t.Errorf("status without key = %d", resp.StatusCode)
		}
		if resp, _ := post(t, s.URL()+"/nope", `{}`); resp.StatusCode != 401 {
			t.Errorf("status = %d", resp.StatusCode)
		}
		http.DefaultClient.CloseIdleConnections()
	})
	t.Run("Close ends a stream that pings forever", func(t *testing.T) {
		s := New()
		s.Enqueue(Reply{Text: []string{"a"}, KeepAliveForever: true})
		c := &http.Client{}
		defer c.CloseIdleConnections()
		resp, err := c.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(`{"stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1)
		if _, err := resp.Body.Read(buf); err != nil {
			t.Fatal(err)
		}
		s.Close()
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	})
	t.Run("Start serves on a given address", func(t *testing.T) {
		s, err := Start("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
			t.Errorf("URL = %s", s.URL())
		}
		if _, err := Start(strings.TrimPrefix(s.URL(), "http://")); err == nil {
			t.Error("a second server on the same address started")
		}
	})
}
