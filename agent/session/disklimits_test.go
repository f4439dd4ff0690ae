// This file tests the store's disk bounds: a journal at its bound takes
// no new turn (a running one finishes past it), a fork that would start
// there is not made, and a file system below the free-space bound, or a
// directory whose sessions hold the state bound, gets no turn and no new
// journal, each refusal logged once; the store counts what the directory
// held at start and what it writes and deletes.

package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/scripted"
	"github.com/dshd/dshd/internal/testkit"
)

func limitsStore(t *testing.T, limits DiskLimits, free func(string) (int64, error)) (*StoreOptions, *testkit.SyncBuffer) {
	t.Helper()
	logs := &testkit.SyncBuffer{}
	return &StoreOptions{Logger: slog.New(slog.NewTextHandler(logs, nil)), Limits: limits, freeSpace: free}, logs
}

func TestAJournalAtItsBoundTakesNoNewTurnAndARunningTurnFinishesPastIt(t *testing.T) {
	opts, logs := limitsStore(t, DiskLimits{MaxJournalBytes: 2048, Settings: DiskSettings{MaxJournalBytes: "--max-journal-bytes"}}, nil)
	s, _ := hangSession(t, opts, nil)
	t.Cleanup(func() { s.Close() })
	big := strings.Repeat("y", 4096)
	if _, err := runTurn(t, s, big); err != nil {
		t.Fatalf("a turn that starts under the bound failed: %v", err)
	}
	size := s.stored.journal.Size()
	if size < 2*4096 {
		t.Fatalf("the turn that crossed the bound was not saved whole: the journal is %d bytes", size)
	}
	for range 2 {
		_, err := runTurn(t, s, "one more")
		var le *LimitError
		if !errors.As(err, &le) || le.Setting != "--max-journal-bytes" || le.Limit != 2048 || le.SessionID != "s1" || le.Journal != size {
			t.Fatalf("a turn on a journal at its bound: %v, want a LimitError naming the bound, the session and the size", err)
		}
		if !strings.Contains(le.Error(), "--max-journal-bytes (2048)") {
			t.Fatalf("the refusal says %q", le.Error())
		}
	}
	var le *LimitError
	if err := s.SetMode("yolo"); !errors.As(err, &le) || s.Mode() != "ask" {
		t.Fatalf("a mode change at the bound: %v, mode %q", err, s.Mode())
	}
	if err := s.SetModel("other"); !errors.As(err, &le) || s.Agent().ModelID() == "other" {
		t.Fatalf("a model change at the bound: %v", err)
	}
	if err := s.SetThinking(true); !errors.As(err, &le) || s.Thinking() != nil {
		t.Fatalf("a thinking change at the bound: %v", err)
	}
	if got := s.stored.journal.Size(); got != size {
		t.Fatalf("refused turns and changes grew the journal from %d to %d bytes", size, got)
	}
	if n := strings.Count(logs.String(), LogJournalBound); n != 1 {
		t.Fatalf("two refusals logged %d times, want once:\n%s", n, logs)
	}
}

func TestAForkThatWouldStartAtTheJournalBoundIsNotMade(t *testing.T) {
	opts, _ := limitsStore(t, DiskLimits{MaxJournalBytes: 4096}, nil)
	store, err := NewStore(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	update := json.RawMessage(`{"sessionId":"f","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("z", 1000) + `"}}}`)
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "hi"}}
	small, err := CreateFork(store, Meta{SessionID: "small", Cwd: t.TempDir()}, State{}, msgs, []json.RawMessage{update})
	if err != nil {
		t.Fatalf("a fork under the bound: %v", err)
	}
	small.Close()
	for _, name := range []string{"by its updates", "by its conversation"} {
		var ups []json.RawMessage
		ms := msgs
		if name == "by its updates" {
			ups = []json.RawMessage{update, update, update, update, update}
		} else {
			ms = []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("w", 5000)}}
		}
		_, err = CreateFork(store, Meta{SessionID: "big", Cwd: t.TempDir()}, State{}, ms, ups)
		var le *LimitError
		if !errors.As(err, &le) || !le.Fork || le.Journal < 4096 {
			t.Fatalf("a fork over the bound %s: %v, want a fork's LimitError", name, err)
		}
		if store.Exists("big") {
			t.Fatalf("the refused fork (over %s) left its journal", name)
		}
		if _, err := store.Info("big"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("the refused fork (over %s) left its sidecar: %v", name, err)
		}
	}
}

// lowDiskSession is a hangSession in a store bounded to 1 MiB of free
// space, whose free space is 10 MiB until setFree says otherwise.
func lowDiskSession(t *testing.T) (s *Session, store *Store, logs *testkit.SyncBuffer, setFree func(int64)) {
	t.Helper()
	var mu sync.Mutex
	free := int64(10 << 20)
	setFree = func(n int64) { mu.Lock(); free = n; mu.Unlock() }
	opts, logs := limitsStore(t, DiskLimits{MinFreeBytes: 1 << 20, Settings: DiskSettings{MinFreeBytes: "--min-free-disk-bytes"}}, func(string) (int64, error) {
		mu.Lock()
		defer mu.Unlock()
		return free, nil
	})
	s, store = hangSession(t, opts, nil)
	return s, store, logs, setFree
}

func TestBelowTheFreeSpaceBoundNoTurnRunsAndNoJournalIsCreated(t *testing.T) {
	s, store, logs, setFree := lowDiskSession(t)
	t.Cleanup(func() { s.Close() })
	if _, err := runTurn(t, s, "with room"); err != nil {
		t.Fatal(err)
	}
	size := s.stored.journal.Size()

	setFree(1<<20 - 1)
	for range 2 {
		_, err := runTurn(t, s, "without room")
		var le *LimitError
		if !errors.As(err, &le) || le.Setting != "--min-free-disk-bytes" || le.Free != 1<<20-1 || le.Dir != store.Dir() {
			t.Fatalf("a turn below the free-space bound: %v, want a LimitError naming the bound, the directory and the free bytes", err)
		}
		if !strings.Contains(le.Error(), store.Dir()) || !strings.Contains(le.Error(), "--min-free-disk-bytes (1048576)") {
			t.Fatalf("the refusal says %q", le.Error())
		}
	}
	_, err := Create(store, Meta{SessionID: "s2", Cwd: t.TempDir()}, State{})
	var le *LimitError
	if !errors.As(err, &le) || le.SessionID != "s2" {
		t.Fatalf("a new session below the free-space bound: %v", err)
	}
	if store.Exists("s2") {
		t.Fatal("the refused session has a journal")
	}
	if got := s.stored.journal.Size(); got != size {
		t.Fatalf("refused turns grew the journal from %d to %d bytes", size, got)
	}
	if n := strings.Count(logs.String(), LogFreeBound); n != 1 {
		t.Fatalf("three refusals logged %d times, want once:\n%s", n, logs)
	}

	setFree(1 << 20)
	if _, err := runTurn(t, s, "with room again"); err != nil {
		t.Fatalf("a turn once space returned: %v", err)
	}
	st, err := Create(store, Meta{SessionID: "s2", Cwd: t.TempDir()}, State{})
	if err != nil {
		t.Fatalf("a new session once space returned: %v", err)
	}
	st.Close()
	if !strings.Contains(logs.String(), "free space is back") {
		t.Fatalf("the recovery was not logged:\n%s", logs)
	}
}

func TestDuringATurnPastTheJournalBoundAChangeIsRefusedToo(t *testing.T) {
	opts, _ := limitsStore(t, DiskLimits{MaxJournalBytes: 1024}, nil)
	s, store := hangSession(t, opts, nil)
	t.Cleanup(func() { s.Close() })
	turn, wait := hangingTurn(t, s)
	var ended error
	end := func() { turn.Cancel(); ended = wait() }
	// The turn's own updates take the journal past the bound, and it
	// goes on: its own limits bound it.
	if err := s.RecordUpdate(json.RawMessage(`{"update":"` + strings.Repeat("u", 2048) + `"}`)); err != nil {
		t.Fatal(err)
	}
	// Changes sent while it runs are bounded by nothing of the turn's:
	// made, a client sending them without end would grow the journal
	// without end.
	var le *LimitError
	for range 3 {
		if err := s.SetMode("yolo"); !errors.As(err, &le) || s.Mode() != "ask" {
			t.Fatalf("a mode change during a turn past the bound: %v, mode %q", err, s.Mode())
		}
		if err := s.SetModel("other"); !errors.As(err, &le) || s.Agent().ModelID() == "other" {
			t.Fatalf("a model change during a turn past the bound: %v", err)
		}
	}
	end()
	if ended != nil {
		t.Fatalf("the turn that passed the bound: %v", ended)
	}
	ld, err := Read(store, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if ld.State.Mode != "ask" || ld.State.Model != "" {
		t.Fatalf("the journal records the refused changes: %+v", ld.State)
	}
}

// dirBytes is what the journals and sidecars in dir hold on disk.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, pattern := range []string{"*.jsonl", "*.json"} {
		paths, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			n += fi.Size()
		}
	}
	return n
}

func TestTheStoreCountsItsDirectoryAndAtTheStateBoundNoTurnRunsAndNoJournalIsCreated(t *testing.T) {
	dir := t.TempDir()
	// What an earlier daemon left: counted from the start. Other files
	// are not sessions.
	for name, size := range map[string]int{"old.jsonl": 3000, "old.json": 100, "notes.txt": 50000} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const limit = 3100 + 12<<10
	opts, logs := limitsStore(t, DiskLimits{MaxStateBytes: limit, Settings: DiskSettings{MaxStateBytes: "--max-state-bytes"}}, nil)
	store, err := NewStore(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := store.stateBytes.Load(); got != 3100 {
		t.Fatalf("a store over a directory holding 3100 bytes of sessions counts %d", got)
	}
	s := hangSessionIn(t, store, nil)
	cwd := s.Cwd()
	t.Cleanup(func() { s.Close() })

	var refused *LimitError
	turns := 0
	for ; turns < 100 && refused == nil; turns++ {
		before := dirBytes(t, dir)
		_, err := runTurn(t, s, fmt.Sprintf("turn %d %s", turns, strings.Repeat("p", 1000)))
		if got := store.stateBytes.Load(); got != dirBytes(t, dir) {
			t.Fatalf("after turn %d the store counts %d bytes, the directory holds %d", turns, got, dirBytes(t, dir))
		}
		if errors.As(err, &refused) {
			if before < limit {
				t.Fatalf("turn %d was refused with %d bytes in the directory, under the bound %d", turns, before, limit)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if refused == nil {
		t.Fatalf("%d turns ran under a bound of %d bytes; the directory holds %d", turns, limit, dirBytes(t, dir))
	}
	if turns < 2 {
		t.Fatalf("turn %d was refused already; the test needs turns that fit", turns)
	}
	held := dirBytes(t, dir)
	if refused.Setting != "--max-state-bytes" || refused.Limit != limit || refused.Sessions != store.Dir() || refused.Held != held || refused.SessionID != "s1" {
		t.Fatalf("the refusal is %+v, want the setting, the directory and its %d bytes", refused, held)
	}
	if msg := refused.Error(); !strings.Contains(msg, store.Dir()) || !strings.Contains(msg, fmt.Sprintf("--max-state-bytes (%d)", limit)) || !strings.Contains(msg, "dshd sessions delete") {
		t.Fatalf("the refusal says %q", msg)
	}
	var le *LimitError
	if _, err := runTurn(t, s, "again"); !errors.As(err, &le) {
		t.Fatalf("a second turn at the bound: %v", err)
	}
	if err := s.SetMode("yolo"); !errors.As(err, &le) {
		t.Fatalf("a mode change at the bound: %v", err)
	}
	if _, err := Create(store, Meta{SessionID: "s2", Cwd: cwd}, State{}); !errors.As(err, &le) || le.SessionID != "s2" {
		t.Fatalf("a new session at the bound: %v", err)
	}
	if store.Exists("s2") {
		t.Fatal("the refused session has a journal")
	}
	if got := dirBytes(t, dir); got != held {
		t.Fatalf("the refusals changed the directory from %d to %d bytes", held, got)
	}
	if n := strings.Count(logs.String(), LogStateBound); n != 1 {
		t.Fatalf("four refusals logged %d times, want once:\n%s", n, logs)
	}

	// Deleting what the earlier daemon left takes its bytes off.
	if err := store.Delete("old"); err != nil {
		t.Fatal(err)
	}
	if got, want := store.stateBytes.Load(), held-3100; got != want {
		t.Fatalf("after a delete the store counts %d bytes, want %d", got, want)
	}
	if _, err := runTurn(t, s, "with room again"); err != nil {
		t.Fatalf("a turn after a delete took the directory under the bound: %v", err)
	}
	if !strings.Contains(logs.String(), "below the bound again") {
		t.Fatalf("the recovery was not logged:\n%s", logs)
	}
	s.Close()
	if got := store.stateBytes.Load(); got != dirBytes(t, dir) {
		t.Fatalf("after the close the store counts %d bytes, the directory holds %d", got, dirBytes(t, dir))
	}
}

// A session another process removes (dshd sessions delete, another
// daemon) frees its bytes for a running store: at the bound it counts the
// directory again when files were created or removed there since its
// last count, and only then.
func TestAtTheStateBoundTheStoreCountsAgainWhatAnotherProcessRemoved(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.jsonl")
	if err := os.WriteFile(other, make([]byte, 8000), 0o600); err != nil {
		t.Fatal(err)
	}
	const limit = 8000
	opts, _ := limitsStore(t, DiskLimits{MaxStateBytes: limit, Settings: DiskSettings{MaxStateBytes: "--max-state-bytes"}}, nil)
	store, err := NewStore(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var le *LimitError
	if _, err := Create(store, Meta{SessionID: "s1", Cwd: t.TempDir()}, State{}); !errors.As(err, &le) {
		t.Fatalf("a new session with the directory at the bound: %v", err)
	}
	// A file that grows without a file created or removed is not seen:
	// the directory is not read again for it.
	if err := os.WriteFile(other, make([]byte, 4000), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := store.checkState("s1"); !errors.As(err, &le) || le.Held != 8000 {
		t.Fatalf("with the directory unchanged the bound answered %v, want the count kept (8000)", err)
	}
	// Removed by another process: counted again, room again.
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	if err := store.checkState("s1"); err != nil {
		t.Fatalf("after another process removed the session the bound answered %v", err)
	}
	if got := store.stateBytes.Load(); got != 0 {
		t.Fatalf("the store counts %d bytes in an empty directory", got)
	}
}

func TestARunningTasksOutputIsLeftOutWhileADiskBoundRefuses(t *testing.T) {
	s, _, logs, setFree := lowDiskSession(t)
	t.Cleanup(func() { s.Close() })
	if s.outputHeld() {
		t.Fatal("output is held with room on the disk")
	}
	setFree(1)
	for range 3 {
		if !s.outputHeld() {
			t.Fatal("output is recorded below the free-space bound")
		}
	}
	setFree(10 << 20)
	if s.outputHeld() {
		t.Fatal("output is still held once space returned")
	}
	if n := strings.Count(logs.String(), LogTaskOutputHeld); n != 1 || !strings.Contains(logs.String(), "setting=--min-free-disk-bytes") {
		t.Fatalf("three held records logged %d times, want once naming the setting:\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "task output is recorded again") {
		t.Fatalf("the episode's end was not logged:\n%s", logs)
	}
}

func TestARelayedUpdateBelowTheFreeSpaceBoundIsLeftOutAndStopsTheTurn(t *testing.T) {
	s, _, logs, setFree := lowDiskSession(t)
	t.Cleanup(func() { s.Close() })
	update := json.RawMessage(`{"sessionId":"s1/c","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"child"}}}`)
	if err := s.RecordRelayed(update); err != nil {
		t.Fatalf("a relayed update with room: %v", err)
	}
	_, wait := hangingTurn(t, s)
	size := s.stored.journal.Size()
	setFree(1)
	for range 3 {
		var le *LimitError
		if err := s.RecordRelayed(update); !errors.As(err, &le) || le.Setting != "--min-free-disk-bytes" {
			t.Fatalf("a relayed update below the free-space bound: %v, want a LimitError naming the bound", err)
		}
	}
	ended := wait() // not cancelled: the bound stops it
	var le *LimitError
	if !errors.As(ended, &le) || le.Setting != "--min-free-disk-bytes" {
		t.Fatalf("the running turn ended with %v, want the LimitError", ended)
	}
	if got := s.stored.journal.Size(); got > size+1024 {
		t.Fatalf("refused updates grew the journal from %d to %d bytes", size, got)
	}
	if n := strings.Count(logs.String(), LogRelayHeld); n != 1 || !strings.Contains(logs.String(), "setting=--min-free-disk-bytes") {
		t.Fatalf("three refused updates logged %d times, want once naming the setting:\n%s", n, logs)
	}
	setFree(10 << 20)
	if err := s.RecordRelayed(update); err != nil {
		t.Fatalf("a relayed update once space returned: %v", err)
	}
	if !strings.Contains(logs.String(), "subagents' updates are recorded again") {
		t.Fatalf("the episode's end was not logged:\n%s", logs)
	}
}

// hangingTurn begins a turn of s that hangs until it is cancelled or
// stopped. wait waits for its end (once; later calls return the same
// error) and finishes it; a test that fails first still cancels and
// ends it, which Close waits for.
func hangingTurn(t *testing.T, s *Session) (turn *Turn, wait func() error) {
	t.Helper()
	turn, err := s.BeginTurn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := turn.Run(agent.Input{Text: "hang"}, func(agent.Event) {})
		done <- err
	}()
	wait = sync.OnceValue(func() error {
		err := testkit.Await(t, done, "the turn to end")
		turn.Finish()
		return err
	})
	t.Cleanup(func() { turn.Cancel(); wait() })
	return turn, wait
}

// BenchmarkRecordUpdate records a relayed child update (RecordRelayed:
// the disk bounds checked first, the free space by statfs) beside the
// same update recorded as the session's own (RecordUpdate), in a store
// with the daemon's default bounds.
func BenchmarkRecordUpdate(b *testing.B) {
	store, err := NewStore(b.TempDir(), &StoreOptions{Limits: DiskLimits{MaxJournalBytes: 1 << 40, MinFreeBytes: 1, MaxStateBytes: 1 << 40}})
	if err != nil {
		b.Fatal(err)
	}
	stored, err := Create(store, Meta{SessionID: "s1", Cwd: b.TempDir()}, State{})
	if err != nil {
		b.Fatal(err)
	}
	model, err := scripted.New(scripted.Script{Rules: []scripted.Rule{{Text: "ok"}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(b.Context(), Config{ID: "s1", Cwd: stored.Meta.Cwd, Model: model, Stored: stored})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	update := json.RawMessage(`{"sessionId":"s1/c","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello, world: a typical streamed chunk."}}}`)
	for _, bc := range []struct {
		name   string
		record func(json.RawMessage) error
	}{{"own", s.RecordUpdate}, {"relayed", s.RecordRelayed}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.record(update); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
