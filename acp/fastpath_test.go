package acp

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestTheTextChunkFastPathMatchesTheGenericEncoding(t *testing.T) {
	texts := []string{"", "plain", "quote \" backslash \\ slash /", "ctl \x00\x01\x1f\x7f \b\f\n\r\t",
		"html <b>&amp;</b>", "größe 😀", "sep \u2028 \u2029", "bad \xff\xfe utf8 \xe2\x82", strings.Repeat("long ", 2000)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		for _, u := range []SessionUpdate{
			&AgentMessageChunk{Content: TextBlock(text)},
			&AgentThoughtChunk{Content: TextBlock(text), MessageID: MessageID(text)},
			&UserMessageChunk{Content: TextBlock("x"), MessageID: "m1"},
		} {
			n := &SessionNotification{SessionID: SessionID(text), Update: u}
			fast, ok := appendTextChunkNotification(nil, n)
			if !ok {
				t.Fatalf("fast path declined %T", u)
			}
			if want := testkit.EncodeJSON(t, n); !bytes.Equal(fast, want) {
				t.Fatalf("text %q:\nfast    %s\ngeneric %s", text, fast, want)
			}
		}
	}
}

func TestTheFastPathDeclinesWhatItCannotEncode(t *testing.T) {
	for _, n := range []*SessionNotification{
		{SessionID: "s", Update: &AgentMessageChunk{Content: TextBlock("x")}, Meta: Meta{"a": 1}},
		{SessionID: "s", Update: &AgentMessageChunk{Content: &TextContent{Text: "x", Meta: Meta{"a": 1}}}},
		{SessionID: "s", Update: &AgentMessageChunk{Content: &TextContent{Text: "x", Annotations: &Annotations{}}}},
		{SessionID: "s", Update: &AgentMessageChunk{Content: TextBlock("x"), Meta: Meta{"a": 1}}},
		{SessionID: "s", Update: &AgentMessageChunk{Content: ImageBlock("image/png", "AA")}},
		{SessionID: "s", Update: &Plan{}},
	} {
		if _, ok := appendTextChunkNotification(nil, n); ok {
			t.Errorf("fast path took %+v", n)
		}
	}
}

func TestMarshalSessionNotificationIsTheGenericEncoding(t *testing.T) {
	for _, n := range []*SessionNotification{
		{SessionID: "s<1>", Update: &ToolCall{ToolCallID: "t&", Title: "a\nb <c>", RawInput: json.RawMessage(`{"x": "<y>"}`)}},
		{SessionID: "s", Update: &AgentMessageChunk{Content: TextBlock("fast <path>\u2028")}},
	} {
		got, err := MarshalSessionNotification(n)
		if err != nil {
			t.Fatal(err)
		}
		if want := testkit.EncodeJSON(t, n); !bytes.Equal(got, want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}
