package openai

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/dshd/dshd/agent/llm"
)

// TestLiveDeepSeek makes one short real call. It needs DEEPSEEK_API_KEY
// and the network, so it skips without the key.
func TestLiveDeepSeek(t *testing.T) {
	key := os.Getenv("DEEPSEEK_API_KEY")
	if key == "" {
		t.Skip("DEEPSEEK_API_KEY is not set: skipping the real call to api.deepseek.com")
	}
	o := DeepSeek()
	o.APIKey = APIKey(key)
	o.ReasoningEffort = "low"
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	req := &llm.Request{
		Model:     "deepseek-flash",
		MaxTokens: 2048,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "Answer with one word."},
			{Role: llm.RoleUser, Content: "Reply with the word pong."},
		},
	}
	msg, usage, finish, err := llm.Collect(c.Stream(ctx, req))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("finish %s, text %q, reasoning %d bytes, usage %+v", finish, msg.Content, len(deref(msg.Reasoning)), usage)
	if finish != llm.FinishStop && finish != llm.FinishLength {
		t.Errorf("finish = %q", finish)
	}
	if usage.InputTokens == 0 || usage.OutputTokens == 0 {
		t.Errorf("usage = %+v, want token counts", usage)
	}
}
