package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// stubTool is a tool that does nothing but answer its name.
type stubTool struct{ name string }

func (s stubTool) Name() string                 { return s.name }
func (s stubTool) Description() string          { return "stub" }
func (s stubTool) InputSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (s stubTool) Kind() Kind                   { return KindOther }
func (s stubTool) Execute(context.Context, *Call) (*Result, error) {
	return &Result{Output: s.name}, nil
}

func mustRegister(t *testing.T, r *Registry, name string) func() {
	t.Helper()
	un, err := r.Register(stubTool{name})
	if err != nil {
		t.Fatal(err)
	}
	return un
}

func TestRegistry(t *testing.T) {
	t.Run("a duplicate name is refused with a typed error", func(t *testing.T) {
		r := NewRegistry(nil)
		mustRegister(t, r, "a")
		_, err := r.Register(stubTool{"a"})
		var dup *DuplicateToolError
		if !errors.Is(err, ErrDuplicateTool) || !errors.As(err, &dup) || dup.Name != "a" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a name visible through the parent is a duplicate", func(t *testing.T) {
		parent := NewRegistry(nil)
		mustRegister(t, parent, "a")
		child := NewRegistry(parent)
		if _, err := child.Register(stubTool{"a"}); !errors.Is(err, ErrDuplicateTool) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("invalid names are refused", func(t *testing.T) {
		r := NewRegistry(nil)
		for _, n := range []string{"", "has space", "dot.ted", string(make([]byte, 65))} {
			if _, err := r.Register(stubTool{n}); !errors.Is(err, ErrInvalidToolName) {
				t.Errorf("Register(%q) = %v", n, err)
			}
		}
	})
	t.Run("the child sees the parent's tools, sorted, and the parent's later changes", func(t *testing.T) {
		parent := NewRegistry(nil)
		mustRegister(t, parent, "zeta")
		child := NewRegistry(parent)
		mustRegister(t, child, "alpha")
		un := mustRegister(t, parent, "mid")
		if got := child.Names(); !slices.Equal(got, []string{"alpha", "mid", "zeta"}) {
			t.Errorf("Names = %v", got)
		}
		if _, ok := child.Get("zeta"); !ok {
			t.Error("Get through the parent failed")
		}
		un()
		un() // idempotent
		if _, ok := child.Get("mid"); ok {
			t.Error("unregistered tool still visible")
		}
		if got := parent.Names(); !slices.Equal(got, []string{"zeta"}) {
			t.Errorf("parent Names = %v (the child's tool leaked up?)", got)
		}
	})
	t.Run("a stale unregister does not remove a newer tool of the same name", func(t *testing.T) {
		r := NewRegistry(nil)
		un := mustRegister(t, r, "a")
		un()
		mustRegister(t, r, "a")
		un()
		if _, ok := r.Get("a"); !ok {
			t.Error("stale unregister removed the new tool")
		}
	})
}

func TestRegistryFilter(t *testing.T) {
	parent := NewRegistry(nil)
	for _, n := range []string{"read_file", "write_file", "run_command"} {
		mustRegister(t, parent, n)
	}
	r := NewRegistry(parent)
	mustRegister(t, r, "mcp_x")

	tests := []struct {
		name        string
		allow, deny []string
		want        []string
	}{
		{"no lists keep everything", nil, nil, []string{"mcp_x", "read_file", "run_command", "write_file"}},
		{"allow keeps only those", []string{"read_file", "mcp_x"}, nil, []string{"mcp_x", "read_file"}},
		{"deny removes those", nil, []string{"run_command"}, []string{"mcp_x", "read_file", "write_file"}},
		{"deny wins over allow", []string{"read_file", "run_command"}, []string{"run_command"}, []string{"read_file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := r.Filter(tc.allow, tc.deny)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Names(); !slices.Equal(got, tc.want) {
				t.Errorf("Names = %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("unknown names in either list are named in the error", func(t *testing.T) {
		_, err := r.Filter([]string{"read_file", "nope"}, []string{"gone"})
		var unk *UnknownToolError
		if !errors.Is(err, ErrUnknownTool) || !errors.As(err, &unk) || !slices.Equal(unk.Names, []string{"nope", "gone"}) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("the filtered view is a snapshot", func(t *testing.T) {
		f, err := r.Filter(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		mustRegister(t, parent, "later")
		if _, ok := f.Get("later"); ok {
			t.Error("snapshot saw a later registration")
		}
	})
}

func TestRegistryConcurrentUse(t *testing.T) {
	parent := NewRegistry(nil)
	child := NewRegistry(parent)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				reg := parent
				if i%2 == 0 {
					reg = child
				}
				un, err := reg.Register(stubTool{fmt.Sprintf("t%d_%d", w, i)})
				if err != nil {
					t.Error(err)
					return
				}
				child.Get(fmt.Sprintf("t%d_%d", (w+1)%8, i))
				if i%5 == 0 {
					child.Tools()
				}
				if i%20 == 0 {
					if _, err := child.Filter(nil, nil); err != nil {
						t.Error(err)
					}
				}
				if i%3 == 0 {
					un()
				}
			}
		})
	}
	wg.Wait()
	if n := len(child.Tools()); n != 8*200-8*67 {
		t.Errorf("%d tools left, want %d", n, 8*200-8*67)
	}
}

func TestRegistryTools_ACachedListSeesEveryLaterChangeInAnyLayer(t *testing.T) {
	parent := NewRegistry(nil)
	mustRegister(t, parent, "zeta")
	child := NewRegistry(parent)
	grandchild := NewRegistry(child)
	names := func() []string {
		var out []string
		for _, tl := range grandchild.Tools() {
			out = append(out, tl.Name())
		}
		return out
	}
	want := func(step string, w ...string) {
		t.Helper()
		if got := names(); !slices.Equal(got, w) {
			t.Fatalf("%s: Tools = %v, want %v", step, got, w)
		}
	}
	want("at first", "zeta")
	want("asked again", "zeta")
	unParent := mustRegister(t, parent, "mid")
	want("the grandparent registered", "mid", "zeta")
	unChild := mustRegister(t, child, "alpha")
	want("the parent registered", "alpha", "mid", "zeta")
	unOwn := mustRegister(t, grandchild, "omega")
	want("its own layer registered", "alpha", "mid", "omega", "zeta")
	unParent()
	want("the grandparent unregistered", "alpha", "omega", "zeta")
	unChild()
	unChild()
	want("the parent unregistered", "omega", "zeta")
	// A parent may later take a name a child has; the nearest layer wins.
	mustRegister(t, parent, "omega")
	if tl, _ := grandchild.Get("omega"); grandchild.Tools()[0] != tl {
		t.Fatal("Tools and Get disagree on which omega is visible")
	}
	unOwn()
	want("its own layer unregistered", "omega", "zeta")
	if got := child.Names(); !slices.Equal(got, []string{"omega", "zeta"}) {
		t.Fatalf("the middle layer's own list is %v", got)
	}
}

func TestRegistryTools_ACallerAppendingToTheListDoesNotChangeTheNext(t *testing.T) {
	r := NewRegistry(nil)
	for _, n := range []string{"a", "b", "c"} {
		mustRegister(t, r, n)
	}
	_ = append(r.Tools(), stubTool{"extra"})
	if got := r.Names(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("after a caller appended to its list, Names = %v", got)
	}
}

func TestRegistryTools_ReadersDuringChangesSeeAConsistentSortedList(t *testing.T) {
	parent := NewRegistry(nil)
	child := NewRegistry(parent)
	mustRegister(t, parent, "base")
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				ts := child.Tools()
				if !slices.IsSortedFunc(ts, func(a, b Tool) int { return cmpName(a, b) }) || len(ts) == 0 || !slices.ContainsFunc(ts, func(tl Tool) bool { return tl.Name() == "base" }) {
					t.Errorf("an inconsistent list: %d tools", len(ts))
					return
				}
			}
		})
	}
	for i := range 300 {
		reg := parent
		if i%2 == 0 {
			reg = child
		}
		un := mustRegister(t, reg, fmt.Sprintf("t%d", i))
		if i%3 == 0 {
			un()
		}
	}
	close(done)
	wg.Wait()
	if n := len(child.Tools()); n != 1+300-100 {
		t.Fatalf("%d tools at the end, want %d", n, 1+300-100)
	}
}

func BenchmarkRegistryTools(b *testing.B) {
	base := NewRegistry(nil)
	for i := range 20 {
		if _, err := base.Register(stubTool{fmt.Sprintf("tool_%02d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	session := NewRegistry(base)
	if _, err := session.Register(stubTool{"mcp_x"}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(session.Tools()) != 21 {
			b.Fatal("wrong count")
		}
	}
}
