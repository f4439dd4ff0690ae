//go:build unix

package acpprovider_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

// BenchmarkTurn_ACPWarmWebSocket is BenchmarkTurn_ACPWarm with the child
// dshd reached over ACP's remote transport as a WebSocket on loopback:
// minus ACPWarm, what the WebSocket hop adds beyond the stdio hop.
func BenchmarkTurn_ACPWarmWebSocket(b *testing.B) { benchWarmRemote(b, "ws") }

// BenchmarkTurn_ACPWarmStreamableHTTP is the same over Streamable HTTP
// (HTTP/1.1, a POST per message, SSE streams back).
func BenchmarkTurn_ACPWarmStreamableHTTP(b *testing.B) { benchWarmRemote(b, "http") }

func benchWarmRemote(b *testing.B, scheme string) {
	args := append(benchArgs(b, "echo.json"), "--listen", "http://127.0.0.1:0")
	d := startDaemon(b, exec.Command(dshdBin, args...), (*exec.Cmd).StderrPipe, listenedAddr)
	addr := scheme + strings.TrimPrefix(d.addr, "http")
	p := newProvider(b, nil)
	parent := st.NewParent(b, st.ParentOptions{})
	first, err := p.Start(context.Background(), subagents.StartRequest{Prompt: "hi", Parent: parent.Scope, Options: map[string]string{"address": addr}})
	if err != nil {
		b.Fatal(err)
	}
	defer first.Dispose()
	if res, _ := first.Wait(context.Background()); res.StopReason != subagents.StopCompleted {
		b.Fatalf("first run: %+v", res)
	}
	for b.Loop() {
		runOnce(b, "You said: hi", func() (subagents.Run, error) { return first.(subagents.Resumable).Resume(context.Background(), "hi") })
	}
}
