// End-to-end test of the model client's timeouts as settings: each bound
// on a model server's answer is a flag, and a call that runs out of one
// says which flag would have let it run on.

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

func TestEachModelTimeoutIsASettingItsFailureNames(t *testing.T) {
	never := make(chan struct{})
	for _, tc := range []struct {
		name  string
		reply openaitest.Reply
		flag  string
		want  string
	}{
		{"no response", openaitest.Reply{Hold: never, HoldHeaders: true},
			"--model-timeout", "sent nothing for 1s (--model-timeout sets it)"},
		{"only keep-alives", openaitest.Reply{Hold: never, KeepAliveInterval: 50 * time.Millisecond},
			"--model-first-token-timeout", "no data from the model in time (1s; --model-first-token-timeout sets it)"},
		{"data, then silence", openaitest.Reply{Text: []string{"one ", "two"}, Delay: time.Hour},
			"--model-idle-timeout", "stream idle for too long (1s; --model-idle-timeout sets it)"},
		{"a long call", openaitest.Reply{Text: strings.Split(strings.Repeat("word ", 20), " "), Delay: 200 * time.Millisecond},
			"--model-call-timeout", "call took too long (1s; --model-call-timeout sets it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeModel(t)
			srv.Handle(func(*openaitest.Request) openaitest.Reply {
				r := tc.reply
				r.Header = quickRetry
				return r
			})
			code, _, stderr := runDshd(t, nil, promptArgs(t, srv, tc.flag, "1s", "hi")...)
			if code != 1 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want 1 saying %q; stderr:\n%s", code, tc.want, stderr)
			}
		})
	}
}

// A timeout of 0 is never: the answer that takes longer than the default
// would allow still arrives.
func TestAModelTimeoutOfZeroIsNever(t *testing.T) {
	srv := fakeModel(t)
	srv.Handle(func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Text: []string{"slow ", "answer"}, Delay: 1200 * time.Millisecond}
	})
	code, stdout, stderr := runDshd(t, []string{"DSHD_MODEL_IDLE_TIMEOUT=1s"}, promptArgs(t, srv, "--model-idle-timeout", "0", "hi")...)
	if code != 0 || !strings.Contains(stdout, "slow answer") {
		t.Fatalf("exit %d, stdout %q, want the whole answer; stderr:\n%s", code, stdout, stderr)
	}
}
