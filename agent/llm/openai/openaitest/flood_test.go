package openaitest

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
)

// A flood told to finish is a whole answer: every event's data is JSON,
// the last chunk has the part's finish reason, [DONE] ends it, and Sent
// counted every byte of the body.
func TestAFloodThatFinishesIsAWholeAnswer(t *testing.T) {
	const end = 64 << 10
	for _, tc := range []struct {
		name   string
		of     FloodPart
		finish string
	}{
		{"text", FloodText, "stop"},
		{"reasoning", FloodReasoning, "stop"},
		{"arguments", FloodArguments, "tool_calls"},
		{"calls", FloodCalls, "tool_calls"},
		{"event lines", FloodEventLines, "stop"},
		{"one line", FloodLine, "stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			defer s.Close()
			sent := new(atomic.Int64)
			s.Enqueue(Reply{Text: []string{"first"}, Flood: &Flood{Of: tc.of, FinishAfter: end, Sent: sent}})
			_, body := post(t, s.URL()+"/chat/completions", `{"model":"m","stream":true}`)
			if int64(len(body)) != sent.Load() || len(body) < end {
				t.Fatalf("body of %d bytes, Sent %d, want at least %d counted", len(body), sent.Load(), end)
			}
			events := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
			if last := events[len(events)-1]; last != "data: [DONE]" {
				t.Fatalf("last event %.80q, want [DONE]", last)
			}
			var finish string
			for _, ev := range events[:len(events)-1] {
				var data []string
				for _, line := range strings.Split(ev, "\n") {
					data = append(data, strings.TrimPrefix(line, "data: "))
				}
				var chunk struct {
					Choices []struct {
						FinishReason *string `json:"finish_reason"`
					} `json:"choices"`
				}
				if err := json.Unmarshal([]byte(strings.Join(data, "\n")), &chunk); err != nil {
					t.Fatalf("an event is not JSON: %v: %.120q", err, ev)
				}
				if len(chunk.Choices) == 1 && chunk.Choices[0].FinishReason != nil {
					finish = *chunk.Choices[0].FinishReason
				}
			}
			if finish != tc.finish {
				t.Fatalf("finish reason %q, want %q", finish, tc.finish)
			}
		})
	}
	t.Run("a non-streamed body", func(t *testing.T) {
		s := New()
		defer s.Close()
		s.Enqueue(Reply{Flood: &Flood{FinishAfter: end}})
		_, body := post(t, s.URL()+"/chat/completions", `{"model":"m","stream":false}`)
		var got struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.Choices) != 1 || got.Choices[0].FinishReason != "stop" {
			t.Fatalf("%v: %.120q", err, body)
		}
		if n := len(got.Choices[0].Message.Content); n < end-200 {
			t.Fatalf("content of %d bytes, want about %d", n, end)
		}
	})
}
