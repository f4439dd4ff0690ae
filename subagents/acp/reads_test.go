//go:build unix

package acpprovider_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/acp/rpc"
	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents"
	acpprovider "github.com/dshd/dshd/subagents/acp"
)

// modeReads is a fake agent written on the raw wire, which reads its
// input only when it chooses to: on session/prompt it sends
// fakeReadsEnv (K) fs/read_text_file requests for the file
// fakeReadsPathEnv names, then reads nothing until a line arrives on the
// FIFO fakeFIFOEnv names; then it reads the K answers and says
// "answers=K bytes=N errors=E".
const (
	modeReads        = "reads"
	fakeReadsEnv     = "ACPPROVIDER_FAKE_READS"
	fakeReadsPathEnv = "ACPPROVIDER_FAKE_READS_PATH"
)

// readsAgentMain is the reads fake agent.
func readsAgentMain() int {
	k, _ := strconv.Atoi(os.Getenv(fakeReadsEnv))
	path := os.Getenv(fakeReadsPathEnv)
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(append(b, '\n'))
		out.Flush()
	}
	answer := func(id json.RawMessage, result any) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	var sid string
	var promptID json.RawMessage
	got, size, errs := 0, 0, 0
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return 0
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result *struct {
				Content string `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			fmt.Fprintln(os.Stderr, "reads: bad line:", err)
			return 1
		}
		switch {
		case m.Method == "initialize":
			answer(m.ID, map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{}, "authMethods": []any{}})
		case m.Method == "session/new":
			sid = "reads_" + strconv.Itoa(os.Getpid())
			answer(m.ID, map[string]any{"sessionId": sid})
		case m.Method == "session/prompt":
			promptID = m.ID
			for i := range k {
				send(map[string]any{"jsonrpc": "2.0", "id": 1000 + i, "method": "fs/read_text_file",
					"params": map[string]any{"sessionId": sid, "path": path}})
			}
			// Take none of the answers until the test has seen what the
			// parent holds.
			fifo, err := os.Open(os.Getenv(fakeFIFOEnv))
			if err != nil {
				fmt.Fprintln(os.Stderr, "reads:", err)
				return 1
			}
			bufio.NewReader(fifo).ReadString('\n')
			fifo.Close()
		case m.Method == "" && len(m.ID) > 0:
			got++
			if m.Result != nil {
				size += len(m.Result.Content)
			} else {
				errs++
			}
			if got == k {
				text := fmt.Sprintf("answers=%d bytes=%d errors=%d", got, size, errs)
				send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": sid,
					"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text}}}})
				answer(promptID, map[string]any{"stopReason": "end_turn"})
			}
		case len(m.ID) > 0:
			answer(m.ID, nil)
		}
	}
}

// A child that asks for a big file many times at once and reads none of
// the answers makes the parent hold at most --max-child-requests answers:
// a request keeps its slot until its answer is in the output queue, so
// beyond the bound the parent reads neither the child's next request nor
// the file again. Before, the slot was freed when the read returned:
// every one of the 24 reads was made, and 23 answers of 512 KiB (with
// their encodings) waited for room in the output queue at once (K reads
// of a 31 MB file: K × 62 MB in the parent).
func TestHostile_AChildThatReadsNoAnswerMakesTheParentHoldAtMostMaxRequestsOfThem(t *testing.T) {
	const k, slots, fileSize = 24, 3, 512 << 10
	var (
		mu    sync.Mutex
		most  acpprovider.Load
		ended bool
	)
	settled := make(chan acpprovider.Load, 1)
	o := acpprovider.Options{MaxRequests: slots, Limits: rpc.Limits{MaxQueuedOutput: 64 << 10}}
	acpprovider.ObserveLoad(&o, func(l acpprovider.Load) {
		mu.Lock()
		defer mu.Unlock()
		most.Held = max(most.Held, l.Held)
		// The parent can do no more until the child reads: every slot
		// holds an answer and the next request waits for one, or (before)
		// more answers than slots wait at once.
		if !ended && (l.Waiting == 1 && l.Serving == 0 || l.Held > slots) {
			ended = true
			settled <- l
		}
	})
	p := newProvider(t, &o)
	parent := newParent(t, parentOpts{})
	big := testkit.Write(t, parent.Scope.Cwd, "big.txt", strings.Repeat("0123456789abcde\n", fileSize/16))
	fifo := testkit.FIFO(t, t.TempDir(), "go")
	run := start(t, p, subagents.StartRequest{Prompt: "read", Parent: parent.Scope,
		Options: fakeBinding(modeReads, fakeReadsEnv+"="+strconv.Itoa(k), fakeReadsPathEnv+"="+big, fakeFIFOEnv+"="+fifo)})
	at := testkit.Await(t, settled, "the parent to hold all it may of the child's answers")
	t.Logf("when the parent could do no more: %+v", at)
	// Let the child read its answers.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("go\n")
	w.Close()
	res := wait(t, run)
	if want := fmt.Sprintf("answers=%d bytes=%d errors=0", k, k*fileSize); res.Output != want {
		t.Errorf("the child says %q, want %q", res.Output, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if most.Held > slots {
		t.Errorf("the parent held %d answers to the child at once (%d KiB each), want at most %d (MaxRequests)", most.Held, fileSize>>10, slots)
	}
}
