// End-to-end tests of usage and budgets across dshd processes (issue 12,
// items 7 and 8): a three-level tree — the root in `dshd prompt`, its acp
// child a dshd process of its own, and that child's in-process subagent —
// stops at the budget the root's binding set, and the root's usage is the
// sum of every level's.

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

// The tasks of the tree's levels, which tell the fake model which level a
// request comes from.
const (
	treeRoot       = "delegate down the tree"
	treeChild      = "level one task"
	treeGrandchild = "level two task"
)

// treeLevel is the level of a request: the first user message of each
// level's conversation names its task.
func treeLevel(c *openaitest.ChatRequest) int {
	for _, m := range c.Messages {
		if m.Role != "user" {
			continue
		}
		switch text := m.Text(); {
		case strings.Contains(text, treeGrandchild):
			return 2
		case strings.Contains(text, treeChild):
			return 1
		}
		return 0
	}
	return 0
}

func sawToolResult(c *openaitest.ChatRequest) bool {
	for _, m := range c.Messages {
		if m.Role == "tool" {
			return true
		}
	}
	return false
}

// treeModel answers each level: the root delegates to its acp child and
// then answers; the child delegates to its in-process subagent; the
// grandchild lists the directory forever, so only a budget ends it. Each
// level's calls cost their own number of tokens.
func treeModel(t *testing.T) (*openaitest.Server, [3]int64) {
	srv := fakeModel(t)
	perCall := [3]int64{50, 20, 10}
	use := func(level int) *openaitest.Usage {
		return &openaitest.Usage{PromptTokens: perCall[level] * 4 / 5, CompletionTokens: perCall[level] / 5}
	}
	call := func(id, name, args string) []openaitest.ToolCall {
		return []openaitest.ToolCall{{ID: id, Name: name, Arguments: args}}
	}
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		c := r.Chat
		switch level := treeLevel(c); {
		case level == 0 && sawToolResult(c):
			return openaitest.Reply{Text: []string{"root carries on"}, Usage: use(0)}
		case level == 0:
			return openaitest.Reply{ToolCalls: call("call_root", "subagent_acp", `{"description":"d","prompt":"`+treeChild+`"}`), Usage: use(0)}
		case level == 1 && sawToolResult(c):
			return openaitest.Reply{Text: []string{"child done"}, Usage: use(1)}
		case level == 1:
			return openaitest.Reply{Text: []string{"child delegating"}, ToolCalls: call("call_child", "subagent", `{"description":"g","prompt":"`+treeGrandchild+`"}`), Usage: use(1)}
		}
		return openaitest.Reply{Text: []string{"grandchild working"}, ToolCalls: call("call_ls", "list_dir", `{"path":"."}`), Usage: use(2)}
	})
	return srv, perCall
}

// lastJSONLine decodes the final line of a --json run.
func lastJSONLine(t *testing.T, stdout string) map[string]json.RawMessage {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var last map[string]json.RawMessage
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	return last
}

type usageLine struct {
	TotalTokens  int64 `json:"totalTokens"`
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

func TestBudget_AThreeLevelTreeAcrossTwoDshdProcessesStopsAtItsTokenBudgetAndTheRootsUsageIsTheSumOfTheLevels(t *testing.T) {
	srv, perCall := treeModel(t)
	code, stdout, stderr := runDshd(t, nil, promptArgs(t, srv, "--json", "--mode", "yolo", "--subagent", "subagent_acp=acp,max-tokens=100", treeRoot)...)
	if code != 0 {
		t.Fatalf("exit %d, stdout %s; stderr:\n%s", code, stdout, stderr)
	}

	// What each level asked the model, and the root's view of its child.
	var calls [3]int64
	var rootSaw string
	for _, r := range srv.Requests() {
		if r.Chat == nil {
			continue
		}
		level := treeLevel(r.Chat)
		calls[level]++
		if level != 0 {
			continue
		}
		for _, m := range r.Chat.Messages {
			if m.Role == "tool" {
				rootSaw = m.Text()
			}
		}
	}
	// The child's budget is 100 tokens: its own call (20) and eight of
	// the grandchild's (10 each) spend it, in the child dshd process; the
	// grandchild's ninth call and the child's second are never made.
	if calls != [3]int64{2, 1, 8} {
		t.Fatalf("model calls per level %v, want [2 1 8]; stderr:\n%s", calls, stderr)
	}
	for _, want := range []string{"The subagent stopped: its budget ran out.", "The budget of 100 tokens ran out (100 used).", "Its output before the run ended:\n\nchild delegating"} {
		if !strings.Contains(rootSaw, want) {
			t.Fatalf("the root's tool result %q lacks %q", rootSaw, want)
		}
	}

	// The root's turn is the sum of every level's calls, and its one child
	// is all of levels one and two.
	sum := calls[0]*perCall[0] + calls[1]*perCall[1] + calls[2]*perCall[2]
	last := lastJSONLine(t, stdout)
	var total usageLine
	if err := json.Unmarshal(last["usage"], &total); err != nil || total.TotalTokens != sum || total.InputTokens+total.OutputTokens != sum {
		t.Fatalf("the turn's usage %s (%v), want the sum of the levels, %d tokens; last line %v", last["usage"], err, sum, last)
	}
	var children []struct {
		ToolCallID string    `json:"toolCallId"`
		Subagent   string    `json:"subagent"`
		StopReason string    `json:"stopReason"`
		Usage      usageLine `json:"usage"`
	}
	if err := json.Unmarshal(last["children"], &children); err != nil || len(children) != 1 {
		t.Fatalf("children %s (%v)", last["children"], err)
	}
	if c := children[0]; c.Subagent != "subagent_acp" || c.StopReason != "max-tokens" || c.Usage.TotalTokens != sum-calls[0]*perCall[0] {
		t.Fatalf("the child's share %+v, want subagent_acp stopped at max-tokens with %d tokens", c, sum-calls[0]*perCall[0])
	}
}

func TestBudget_MaxTokensPerTurnBoundsTheRootsTurnWithEveryLevelBelowIt(t *testing.T) {
	srv, perCall := treeModel(t)
	code, stdout, stderr := runDshd(t, nil, promptArgs(t, srv, "--json", "--mode", "yolo", "--max-tokens-per-turn", "150", "--subagent", "subagent_acp=acp", treeRoot)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the turn stopped at its limit); stdout %s; stderr:\n%s", code, stdout, stderr)
	}
	var calls [3]int64
	for _, r := range srv.Requests() {
		if r.Chat != nil {
			calls[treeLevel(r.Chat)]++
		}
	}
	// The root's first call (50) leaves 100 for the child dshd, which its
	// call (20) and eight of the grandchild's (10 each) spend; the root's
	// second call is refused too.
	if calls != [3]int64{1, 1, 8} {
		t.Fatalf("model calls per level %v, want [1 1 8]; stderr:\n%s", calls, stderr)
	}
	last := lastJSONLine(t, stdout)
	var total usageLine
	_ = json.Unmarshal(last["usage"], &total)
	sum := calls[0]*perCall[0] + calls[1]*perCall[1] + calls[2]*perCall[2]
	if string(last["stopReason"]) != `"max_tokens"` || total.TotalTokens != sum || sum != 150 {
		t.Fatalf("last line %v, want max_tokens with the levels' 150 tokens", last)
	}
}
