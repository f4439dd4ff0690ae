package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
)

// Finding 9 of issue 10: path checks raced with use. A process swapping a
// directory of the workspace with a symlink to outside made write_file
// land outside and grep read outside; a write awaiting approval landed
// outside every time. These tests swap for real, under -race, and check
// that nothing lands or is read outside.

// swapTree is a workspace whose directory d/ a swapper replaces with a
// symlink to outside/, which holds a secret.
type swapTree struct {
	env     *tools.Env
	ws      string // the workspace root
	d       string // ws/d
	outside string
}

const secret = "SECRET-OUTSIDE"

func newSwapTree(t *testing.T) *swapTree {
	t.Helper()
	env, ws := testEnv(t)
	outside := t.TempDir()
	write(t, ws, "d/f.txt", "inside\n")
	write(t, outside, "f.txt", secret+"\n")
	write(t, outside, "only-outside.txt", secret+"\n")
	return &swapTree{env: env, ws: ws, d: filepath.Join(ws, "d"), outside: outside}
}

// swapTo replaces d with a symlink to target, keeping the real d aside.
func (s *swapTree) swapTo(t *testing.T, target string) {
	t.Helper()
	if err := os.Rename(s.d, s.d+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, s.d); err != nil {
		t.Fatal(err)
	}
}

// restore puts the real d back.
func (s *swapTree) restore(t *testing.T) {
	t.Helper()
	if err := os.Remove(s.d); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(s.d+".away", s.d); err != nil {
		t.Fatal(err)
	}
}

// swapping swaps d and the symlink back and forth on its own goroutine
// until the test ends; the swaps it made are counted.
func (s *swapTree) swapping(t *testing.T) *atomic.Int64 {
	var n atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Errors are expected: the tools create and remove files too.
			os.Rename(s.d, s.d+".away")
			os.Symlink(s.outside, s.d)
			os.Remove(s.d)
			if os.Rename(s.d+".away", s.d) != nil {
				// A write recreated d while it was away: drop that copy
				// (RemoveAll removes a symlink, never what it points to).
				os.RemoveAll(s.d)
				os.Rename(s.d+".away", s.d)
			}
			n.Add(1)
		}
	})
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
		os.Remove(s.d) // a symlink left in place
		os.Rename(s.d+".away", s.d)
	})
	return &n
}

// outsideUntouched fails the test if outside/ holds anything but its two
// files with their content.
func (s *swapTree) outsideUntouched(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(s.outside)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "f.txt,only-outside.txt" {
		t.Fatalf("outside/ now holds %v: a write landed outside the workspace", names)
	}
	for _, n := range names {
		if got := read(t, s.outside, n); got != secret+"\n" {
			t.Fatalf("outside/%s now holds %q: a write landed outside the workspace", n, got)
		}
	}
}

// rounds runs round until it has run at least 300 times against at least
// 300 swaps, so a starved swapper cannot make the test pass unchallenged.
func rounds(t *testing.T, swaps *atomic.Int64, round func(i int)) {
	t.Helper()
	const least, most = 300, 1_000_000
	i := 0
	for ; i < least || swaps.Load() < least; i++ {
		if i == most {
			t.Fatalf("%d rounds saw only %d swaps", i, swaps.Load())
		}
		round(i)
		runtime.Gosched()
	}
	t.Logf("%d rounds against %d swaps", i, swaps.Load())
}

func TestSwap_WritesNeverLandOutside(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tool  tools.Tool
		input func(i int) any
	}{
		{"write_file", NewWriteFile(), func(i int) any {
			return WriteFileParams{Path: "d/new.txt", Content: fmt.Sprint("round ", i)}
		}},
		{"edit_file", NewEditFile(), func(i int) any {
			return EditFileParams{Path: "d/f.txt", OldText: "\n", NewText: fmt.Sprint(" ", i, "\n")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSwapTree(t)
			swaps := s.swapping(t)
			rounds(t, swaps, func(i int) {
				if _, err := callErr(t, tc.tool, s.env, tc.input(i)); err != nil {
					t.Fatal(err)
				}
			})
			s.outsideUntouched(t)
		})
	}
}

func TestSwap_ReadsNeverSeeOutside(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tool  tools.Tool
		input any
	}{
		{"read_file", NewReadFile(nil), ReadFileParams{Path: "d/f.txt"}},
		{"grep over the workspace", NewGrep(nil), GrepParams{Pattern: "SECRET|inside"}},
		{"grep in the directory", NewGrep(nil), GrepParams{Pattern: "SECRET|inside", Path: "d"}},
		{"grep of the file", NewGrep(nil), GrepParams{Pattern: "SECRET|inside", Path: "d/f.txt"}},
		{"list_dir", NewListDir(nil), ListDirParams{Path: "d"}},
		{"glob", NewGlob(nil), GlobParams{Pattern: "**/*.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSwapTree(t)
			swaps := s.swapping(t)
			rounds(t, swaps, func(int) {
				res, err := callErr(t, tc.tool, s.env, tc.input)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(res.Output, secret) || strings.Contains(res.Output, "only-outside") {
					t.Fatalf("%s read outside the workspace:\n%s", tc.name, res.Output)
				}
			})
		})
	}
}

// swapWhileAsking is an Asker that swaps d for a symlink to target while
// the question is open, then approves.
type swapWhileAsking struct {
	t      *testing.T
	s      *swapTree
	target string
	asked  []tools.PermissionRequest
}

func (a *swapWhileAsking) Ask(_ context.Context, req tools.PermissionRequest) (permission.Answer, error) {
	a.asked = append(a.asked, req)
	a.s.swapTo(a.t, a.target)
	return permission.AllowOnce, nil
}

func TestSwap_AnApprovedWriteLandsWhereItWasApprovedOrNowhere(t *testing.T) {
	tests := []struct {
		name  string
		tool  tools.Tool
		input any
	}{
		{"write_file of a new file", NewWriteFile(), WriteFileParams{Path: "d/new.txt", Content: "approved"}},
		{"write_file in a new directory", NewWriteFile(), WriteFileParams{Path: "d/sub/new.txt", Content: "approved"}},
		{"write_file over a file", NewWriteFile(), WriteFileParams{Path: "d/f.txt", Content: "approved"}},
		{"edit_file", NewEditFile(), EditFileParams{Path: "d/f.txt", OldText: "inside", NewText: "approved"}},
	}
	for _, tc := range tests {
		for _, where := range []string{"outside", "elsewhere in the workspace"} {
			t.Run(tc.name+", swapped to "+where, func(t *testing.T) {
				s := newSwapTree(t)
				target := s.outside
				if where != "outside" {
					target = filepath.Join(s.ws, "e")
					if err := os.Mkdir(target, 0o755); err != nil {
						t.Fatal(err)
					}
					write(t, target, "f.txt", "inside\n")
				}
				asker := &swapWhileAsking{t: t, s: s, target: target}
				env := *s.env
				env.Permission = permission.NewPolicy(permission.ModeAsk, asker)
				for round := range 20 {
					res := call(t, tc.tool, &env, tc.input)
					if len(asker.asked) != round+1 {
						t.Fatalf("round %d: %d questions", round, len(asker.asked))
					}
					if got := asker.asked[round].Locations[0].Path; !strings.HasPrefix(got, s.d+string(filepath.Separator)) {
						t.Fatalf("the question named %s, not the resolved path under %s", got, s.d)
					}
					s.outsideUntouched(t)
					if where != "outside" {
						if got := read(t, target, "f.txt"); got != "inside\n" {
							t.Fatalf("round %d: the write approved for d/ landed in e/: %q", round, got)
						}
						if _, err := os.Stat(filepath.Join(target, "new.txt")); err == nil {
							t.Fatalf("round %d: the write approved for d/ landed in e/", round)
						}
					}
					if !res.IsError || !strings.Contains(res.Output, "changed") {
						t.Fatalf("round %d: result %q, want an error saying the directory changed", round, res.Output)
					}
					s.restore(t)
					if got := read(t, s.ws, "d/f.txt"); got != "inside\n" {
						t.Fatalf("round %d: d/f.txt = %q, want it untouched (the write was refused)", round, got)
					}
				}
			})
		}
	}
}
