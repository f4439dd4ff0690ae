package agent_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
)

func msgs(prefix string, n int) []llm.Message {
	out := make([]llm.Message, n)
	for i := range out {
		out[i] = llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("%s %d %s", prefix, i, strings.Repeat("x", i%37))}
	}
	return out
}

// The estimate a prefix carries is the one its messages would get from
// scratch, at every cut and every level of forking, and appends on either
// side of a fork never change the other's.
func TestHistory_EveryPrefixCarriesTheEstimateOfItsMessages(t *testing.T) {
	fresh := func(h agent.History) int64 {
		var all []llm.Message
		for _, m := range h.All() {
			all = append(all, m)
		}
		return agent.NewHistory(all...).Estimate()
	}
	root := agent.NewHistory(msgs("root", 40)...)
	for _, n := range []int{0, 1, 17, 39, 40, 99} {
		p := root.Prefix(n)
		if got, want := p.Estimate(), fresh(p); got != want {
			t.Fatalf("Prefix(%d).Estimate() = %d, want %d", n, got, want)
		}
	}
	// Fork twice, append on every side, and cut again across segments.
	child := root.Prefix(30)
	child.Append(msgs("child", 12)...)
	root.Append(msgs("late root", 5)...)
	grand := child.Prefix(35)
	grand.Append(msgs("grand", 3)...)
	for name, h := range map[string]agent.History{"root": root, "child": child, "grandchild": grand} {
		if got, want := h.Estimate(), fresh(h); got != want {
			t.Fatalf("%s: Estimate() = %d, want %d", name, got, want)
		}
		for _, n := range []int{5, 30, 31, 34, 36, h.Len()} {
			p := h.Prefix(n)
			if got, want := p.Estimate(), fresh(p); got != want {
				t.Fatalf("%s.Prefix(%d).Estimate() = %d, want %d", name, n, got, want)
			}
		}
	}
	if root.Len() != 45 || child.Len() != 42 || grand.Len() != 38 {
		t.Fatalf("lengths %d %d %d", root.Len(), child.Len(), grand.Len())
	}
}
