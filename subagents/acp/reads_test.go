//go:build unix

package acpprovider_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
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
// fakeReadsPathEnv names (or, when that is "seq N", runs `seq 1 N` in a
// terminal, waits for its exit and sends K terminal/output requests for
// it), then reads nothing until a line arrives on the FIFO fakeFIFOEnv
// names; then it reads the K answers and says "answers=K bytes=N
// errors=E" (N the bytes of file content or terminal output).
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
		m, err := decodeRaw(line)
		if err != nil {
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
			method, params := "fs/read_text_file", map[string]any{"sessionId": sid, "path": path}
			if n, ok := strings.CutPrefix(path, "seq "); ok {
				// call sends a request and reads up to its answer; the
				// parent sends nothing else meanwhile.
				call := func(id int, method string, params any) rawMessage {
					send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
					for {
						line, _ := in.ReadBytes('\n')
						if r, err := decodeRaw(line); err != nil || string(r.ID) == strconv.Itoa(id) {
							return r
						}
					}
				}
				created := call(900, "terminal/create", map[string]any{"sessionId": sid, "command": "seq", "args": []string{"1", n}})
				params = map[string]any{"sessionId": sid, "terminalId": created.Result.TerminalID}
				call(901, "terminal/wait_for_exit", params)
				method = "terminal/output"
			}
			for i := range k {
				send(map[string]any{"jsonrpc": "2.0", "id": 1000 + i, "method": method, "params": params})
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
				size += len(m.Result.Content) + len(m.Result.Output)
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

// rawMessage is what the reads fake agent reads of a message.
type rawMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result *struct {
		Content    string `json:"content"`
		Output     string `json:"output"`
		TerminalID string `json:"terminalId"`
	} `json:"result"`
}

func decodeRaw(line []byte) (rawMessage, error) {
	var m rawMessage
	err := json.Unmarshal(line, &m)
	return m, err
}

// holdRun runs a reads fake agent (k requests of path, see modeReads;
// a file path is written in the parent's workspace with content) under a
// provider made with o and parent, takes none of its answers until
// settled says the parent can do no more, and returns the most answers
// the parent held at once and what the child said once it took them.
func holdRun(t *testing.T, o acpprovider.Options, parent parentOpts, path, content string, k int, settled func(acpprovider.Load) bool) (most acpprovider.Load, said string) {
	t.Helper()
	var mu sync.Mutex
	ended := false
	done := make(chan acpprovider.Load, 1)
	acpprovider.ObserveLoad(&o, func(l acpprovider.Load) {
		mu.Lock()
		defer mu.Unlock()
		most.Held = max(most.Held, l.Held)
		if !ended && settled(l) {
			ended = true
			done <- l
		}
	})
	p := newProvider(t, &o)
	par := newParent(t, parent)
	if !strings.HasPrefix(path, "seq ") {
		path = testkit.Write(t, par.Scope.Cwd, path, content)
	}
	fifo := testkit.FIFO(t, t.TempDir(), "go")
	run := start(t, p, subagents.StartRequest{Prompt: "read", Parent: par.Scope,
		Options: fakeBinding(modeReads, fakeReadsEnv+"="+strconv.Itoa(k), fakeReadsPathEnv+"="+path, fakeFIFOEnv+"="+fifo)})
	at := testkit.Await(t, done, "the parent to hold all it may of the child's answers")
	t.Logf("when the parent could do no more: %+v", at)
	// Let the child take its answers.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("go\n")
	w.Close()
	res := wait(t, run)
	mu.Lock()
	defer mu.Unlock()
	return most, res.Output
}

// A child that asks for a terminal's output many times at once and takes
// none of the answers makes the parent hold at most --max-child-requests
// of them: a request keeps its slot until its answer is in the output
// queue, so beyond the bound the parent reads no more of the child's
// requests. Before, the slot was freed when the handler returned: all 16
// requests were served and 15 answers of 575 KiB (each the tail and its
// encoding) waited for room in the output queue at once. (Audit finding
// 1 measured the same with reads of a 31 MB file: K × 62 MB.)
func TestHostile_AChildThatTakesNoAnswerMakesTheParentHoldAtMostMaxRequestsOfThem(t *testing.T) {
	const k, slots, lines, outBytes = 16, 3, 100000, 588895 // seq 1 100000 | wc -c
	o := acpprovider.Options{MaxRequests: slots, Limits: rpc.Limits{MaxQueuedOutput: 64 << 10}}
	most, said := holdRun(t, o, parentOpts{gate: &recGate{}, runner: true}, "seq "+strconv.Itoa(lines), "", k, func(l acpprovider.Load) bool {
		// Every slot holds an answer and the next request waits for one,
		// or (before) more answers than slots wait at once.
		return l.Waiting == 1 && l.Serving == 0 || l.Held > slots
	})
	if want := fmt.Sprintf("answers=%d bytes=%d errors=0", k, k*outBytes); said != want {
		t.Errorf("the child says %q, want %q", said, want)
	}
	if most.Held > slots {
		t.Errorf("the parent held %d answers to the child at once (%d KiB each), want at most %d (MaxRequests)", most.Held, outBytes>>10, slots)
	}
}

// A child that reads a big file many times at once and takes none of the
// answers makes the parent hold at most the connection's read budget: a
// read reserves the read limit (MaxReadBytes, the daemon's
// --max-read-bytes) until it is done and holds what it read until its
// answer is queued, within the larger of that limit and the output
// queue's bound (--max-queued-output-bytes); the first wait is logged
// once. Before, every request that had a slot was read at once: with the
// default 256 slots, all 24 reads of 512 KiB were made and 23 answers
// waited at once (audit finding 1: 64 reads of a 31 MB file, 6.18 GB).
func TestHostile_AChildsFileReadsHoldAtMostTheConnectionsReadBudget(t *testing.T) {
	const k, fileSize, readLimit = 24, 512 << 10, 1 << 20
	o := acpprovider.Options{MaxReadBytes: readLimit, Limits: rpc.Limits{MaxQueuedOutput: 64 << 10}}
	logs := &testkit.SyncBuffer{}
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	big := strings.Repeat("0123456789abcde\n", fileSize/16)
	most, said := holdRun(t, o, parentOpts{}, "big.txt", big, k, func(l acpprovider.Load) bool {
		// Every request is in hand, an answer waits for the child, and
		// the rest wait for the budget (or, before, were all read).
		return l.Taken == k && l.Reading == 0 && l.Budget == l.Serving && l.Held > 0
	})
	if want := fmt.Sprintf("answers=%d bytes=%d errors=0", k, k*fileSize); said != want {
		t.Errorf("the child says %q, want %q", said, want)
	}
	if most.Held > readLimit/fileSize {
		t.Errorf("the parent held %d answers of %d KiB to the child at once, want at most %d (the %d KiB read budget)", most.Held, fileSize>>10, readLimit/fileSize, readLimit>>10)
	}
	checkLoggedOnce(t, logs, "the agent's file reads wait for one another")
	if l := logs.String(); !strings.Contains(l, "settings=\"--max-queued-output-bytes, --max-read-bytes\" limit_bytes=1048576") {
		t.Errorf("the wait's log line does not name the settings and the budget:\n%.2000s", l)
	}
}
