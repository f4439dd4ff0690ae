// This file tests the journal: its golden format, torn tails at every
// byte, concurrent appends and a process killed while appending.

package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// warnCounter is a slog handler that counts warnings.
type warnCounter struct {
	mu   sync.Mutex
	msgs []string
}

func (h *warnCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *warnCounter) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *warnCounter) WithGroup(string) slog.Handler            { return h }
func (h *warnCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.mu.Lock()
		h.msgs = append(h.msgs, r.Message)
		h.mu.Unlock()
	}
	return nil
}

func (h *warnCounter) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.msgs)
}

// openCounted opens journal id in dir with a logger that counts its
// warnings.
func openCounted(t *testing.T, dir, id string) (*Journal, []Record, *warnCounter) {
	t.Helper()
	h := &warnCounter{}
	j, recs, err := OpenJournal(dir, id, &JournalOptions{Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	return j, recs, h
}

// stepClock returns a clock that starts at a fixed instant and moves one
// millisecond per reading.
func stepClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 3, 2, 9, 14, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

// writeGoldenJournal writes the journal the golden file holds.
func writeGoldenJournal(t *testing.T, dir string) {
	t.Helper()
	j, err := CreateJournal(dir, "golden", Meta{SessionID: "golden", Cwd: "/home/dev/shop", CreatedAt: time.Date(2026, 3, 2, 9, 14, 0, 0, time.UTC)},
		&JournalOptions{Now: stepClock()})
	if err != nil {
		t.Fatal(err)
	}
	appends := []struct {
		kind string
		data any
	}{
		{KindState, map[string]any{"modeId": "ask", "title": "Rename Cart"}},
		{KindUpdate, json.RawMessage(`{"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "Rename Cart to Basket"}}`)},
		{KindMessage, map[string]any{"role": "assistant", "content": "line one\nline two <b>&</b> «é» \u2028"}},
		{KindUpdate, map[string]any{"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read main.go", "status": "pending"}},
		{KindUpdate, nil},
	}
	for _, a := range appends {
		if err := j.Append(a.kind, a.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

func goldenBytes(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestJournalGolden(t *testing.T) {
	dir := t.TempDir()
	writeGoldenJournal(t, dir)
	got, err := os.ReadFile(JournalPath(dir, "golden"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden.jsonl")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := goldenBytes(t)
	if !bytes.Equal(got, want) {
		t.Fatalf("journal bytes mismatch (-want +got):\n-%s\n+%s", want, got)
	}

	t.Run("every line is one record ending in a newline", func(t *testing.T) {
		lines := strings.SplitAfter(string(want), "\n")
		if lines[len(lines)-1] != "" {
			t.Fatal("the file does not end with a newline")
		}
		lines = lines[:len(lines)-1]
		if len(lines) != 6 {
			t.Fatalf("got %d lines, want 6", len(lines))
		}
		for i, l := range lines {
			if !json.Valid([]byte(l)) {
				t.Errorf("line %d is not JSON: %s", i+1, l)
			}
		}
	})

	t.Run("the golden file loads record by record", func(t *testing.T) {
		j, recs, h := openCounted(t, dir, "golden")
		defer j.Close()
		kinds := []string{KindMeta, KindState, KindUpdate, KindMessage, KindUpdate, KindUpdate}
		if len(recs) != len(kinds) {
			t.Fatalf("got %d records, want %d", len(recs), len(kinds))
		}
		for i, r := range recs {
			if r.Kind != kinds[i] {
				t.Errorf("record %d kind %q, want %q", i, r.Kind, kinds[i])
			}
			if want := time.Date(2026, 3, 2, 9, 14, 0, int(i+1)*int(time.Millisecond), time.UTC); !r.Time.Equal(want) {
				t.Errorf("record %d time %v, want %v", i, r.Time, want)
			}
		}
		var m Meta
		if err := recs[0].Decode(&m); err != nil || m.SessionID != "golden" || m.Cwd != "/home/dev/shop" {
			t.Errorf("meta = %+v, %v", m, err)
		}
		var msg struct{ Content string }
		if err := recs[3].Decode(&msg); err != nil || msg.Content != "line one\nline two <b>&</b> «é» \u2028" {
			t.Errorf("message = %q, %v", msg.Content, err)
		}
		if string(recs[2].Data) != `{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"Rename Cart to Basket"}}` {
			t.Errorf("raw data was not kept compactly: %s", recs[2].Data)
		}
		if string(recs[5].Data) != "null" {
			t.Errorf("nil data = %s, want null", recs[5].Data)
		}
		if h.count() != 0 {
			t.Errorf("warnings: %v", h.msgs)
		}
	})
}

// recordEnds returns, for each line of a journal, the offset just past
// its JSON text (before the newline).
func recordEnds(data []byte) []int {
	var ends []int
	for off := 0; off < len(data); {
		i := bytes.IndexByte(data[off:], '\n')
		ends = append(ends, off+i)
		off += i + 1
	}
	return ends
}

func TestJournalTornLastLine(t *testing.T) {
	data := goldenBytes(t)
	dir := t.TempDir()
	all, _, _, err := readRecords(bytes.NewReader(data), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ends := recordEnds(data)
	for n := 0; n <= len(data); n++ {
		t.Run(fmt.Sprintf("the file cut after %d bytes", n), func(t *testing.T) {
			complete, boundary := 0, n == 0
			for _, e := range ends {
				if e <= n {
					complete++
				}
				boundary = boundary || n == e || n == e+1
			}
			wantWarnings := 1
			if boundary {
				wantWarnings = 0
			}
			id := fmt.Sprintf("cut-%d", n)
			if err := os.WriteFile(JournalPath(dir, id), data[:n], 0o600); err != nil {
				t.Fatal(err)
			}

			h := &warnCounter{}
			opts := &JournalOptions{Logger: slog.New(h), Now: stepClock()}
			j, recs, err := OpenJournal(dir, id, opts)
			if err != nil {
				t.Fatal(err)
			}
			assertRecords(t, recs, all[:complete])
			if h.count() != wantWarnings {
				t.Errorf("%d warnings (%v), want %d", h.count(), h.msgs, wantWarnings)
			}
			if err := j.Append(KindUpdate, map[string]int{"after": n}); err != nil {
				t.Fatal(err)
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}

			j, recs, h2 := openCounted(t, dir, id)
			defer j.Close()
			if len(recs) != complete+1 {
				t.Fatalf("after an append: %d records, want %d", len(recs), complete+1)
			}
			assertRecords(t, recs[:complete], all[:complete])
			if last := recs[complete]; last.Kind != KindUpdate || string(last.Data) != fmt.Sprintf(`{"after":%d}`, n) {
				t.Errorf("appended record = %s %s", last.Kind, last.Data)
			}
			if h2.count() != wantWarnings {
				t.Errorf("after an append: %d warnings (%v), want %d", h2.count(), h2.msgs, wantWarnings)
			}
			b, err := os.ReadFile(JournalPath(dir, id))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(b, []byte("}\n")) || bytes.Contains(b, []byte("\n\n")) {
				t.Errorf("file is not one record per line:\n%s", b)
			}
		})
	}
}

func assertRecords(t *testing.T, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Kind != want[i].Kind || !got[i].Time.Equal(want[i].Time) || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Errorf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestJournalSkipsCorruptLines(t *testing.T) {
	dir := t.TempDir()
	content := `{"k":"meta","d":{}}` + "\n" +
		"not json\n" +
		`{"d":1}` + "\n" + // no kind
		`["k","d"]` + "\n" +
		"   \n" + // blank: skipped silently
		`{"k":"update","t":"yesterday","d":1}` + "\n" +
		`{"k":"update","d":2} trailing` + "\n" +
		`{"k":"update","t":"2026-03-02T09:14:00Z","d":3}` + "\n"
	if err := os.WriteFile(JournalPath(dir, "c"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	j, recs, h := openCounted(t, dir, "c")
	defer j.Close()
	if len(recs) != 2 || recs[0].Kind != KindMeta || string(recs[1].Data) != "3" {
		t.Fatalf("records = %+v", recs)
	}
	if h.count() != 5 {
		t.Errorf("warnings = %v, want 5", h.msgs)
	}
}

func TestJournalLifecycle(t *testing.T) {
	dir := t.TempDir()
	t.Run("a created journal is private and holds its meta record", func(t *testing.T) {
		j, err := CreateJournal(dir, "life", map[string]string{"cwd": "/w"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		st, err := os.Stat(j.Path())
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", st.Mode().Perm())
		}
		if j.ID() != "life" || j.Path() != JournalPath(dir, "life") {
			t.Errorf("ID %q Path %q", j.ID(), j.Path())
		}
	})
	t.Run("creating an existing journal fails with ErrExists", func(t *testing.T) {
		if _, err := CreateJournal(dir, "life", nil, nil); !errors.Is(err, ErrExists) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("opening a missing journal fails with ErrNotFound", func(t *testing.T) {
		if _, _, err := OpenJournal(dir, "nope", nil); !errors.Is(err, ErrNotFound) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("an appended record reaches the file before any sync", func(t *testing.T) {
		j, _, err := OpenJournal(dir, "life", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		if err := j.Append(KindUpdate, "visible"); err != nil {
			t.Fatal(err)
		}
		j2, recs, err := OpenJournal(dir, "life", nil)
		if err != nil {
			t.Fatal(err)
		}
		j2.Close()
		if len(recs) != 2 || string(recs[1].Data) != `"visible"` {
			t.Fatalf("records = %+v", recs)
		}
	})
	t.Run("a failed marshal writes nothing", func(t *testing.T) {
		j, _, err := OpenJournal(dir, "life", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Append(KindUpdate, make(chan int)); err == nil {
			t.Error("appending a channel succeeded")
		}
		if err := j.Append("", 1); err == nil {
			t.Error("appending an empty kind succeeded")
		}
		j.Close()
		_, recs, err := OpenJournal(dir, "life", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2 {
			t.Errorf("got %d records, want 2", len(recs))
		}
	})
	t.Run("a closed journal refuses appends and syncs and closes again quietly", func(t *testing.T) {
		j, _, err := OpenJournal(dir, "life", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		if err := j.Append(KindUpdate, 1); !errors.Is(err, ErrClosed) {
			t.Errorf("Append after Close = %v", err)
		}
		if err := j.Sync(); !errors.Is(err, ErrClosed) {
			t.Errorf("Sync after Close = %v", err)
		}
		if err := j.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
	})
}

func TestValidID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"s_4be1", true},
		{"0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", true},
		{"a.b", true},
		{"a..b", true},
		{strings.Repeat("x", 128), true},
		{"", false},
		{strings.Repeat("x", 129), false},
		{".", false},
		{"..", false},
		{".hidden", false},
		{"-rf", false},
		{"_x", false},
		{"a/b", false},
		{"../x", false},
		{`a\b`, false},
		{"a b", false},
		{"a\x00b", false},
		{"é", false},
	}
	for _, tt := range tests {
		if got := ValidID(tt.id); got != tt.want {
			t.Errorf("ValidID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
	dir := t.TempDir()
	for _, id := range []string{"../escape", "a/b", ""} {
		if _, err := CreateJournal(dir, id, nil, nil); !errors.Is(err, ErrInvalidID) {
			t.Errorf("CreateJournal(%q) = %v, want ErrInvalidID", id, err)
		}
		if _, _, err := OpenJournal(dir, id, nil); !errors.Is(err, ErrInvalidID) || !errors.Is(err, ErrNotFound) {
			t.Errorf("OpenJournal(%q) = %v, want ErrInvalidID and ErrNotFound", id, err)
		}
	}
}

func TestJournalConcurrentAppends(t *testing.T) {
	const writers, each = 8, 200
	dir := t.TempDir()
	j, err := CreateJournal(dir, "busy", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := j.Append(KindUpdate, map[string]any{"w": w, "i": i, "pad": strings.Repeat("x", w*100)}); err != nil {
					t.Error(err)
					return
				}
				if i%50 == 0 {
					if err := j.Sync(); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j, recs, h := openCounted(t, dir, "busy")
	defer j.Close()
	if len(recs) != 1+writers*each || h.count() != 0 {
		t.Fatalf("%d records, %d warnings; want %d, 0", len(recs), h.count(), 1+writers*each)
	}
	next := make([]int, writers)
	for _, r := range recs[1:] {
		var d struct{ W, I int }
		if err := r.Decode(&d); err != nil {
			t.Fatal(err)
		}
		if d.I != next[d.W] {
			t.Fatalf("writer %d: record %d after %d", d.W, d.I, next[d.W]-1)
		}
		next[d.W]++
	}
}

func TestJournalSurvivesKill(t *testing.T) {
	const waitFor = 499
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Watchdog: a stuck helper is killed, which ends the read below.
	watchdog := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer watchdog.Stop()

	synced := -1
	sc := bufio.NewScanner(stdout)
	for synced < waitFor && sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "synced %d", &synced); err != nil {
			t.Fatalf("helper said %q", sc.Text())
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if synced < waitFor {
		t.Fatalf("helper stopped after syncing %d records", synced+1)
	}

	store, err := NewStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	j, recs, err := store.Open("crash")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if len(recs) == 0 || recs[0].Kind != KindMeta {
		t.Fatalf("no meta record")
	}
	for i, r := range recs[1:] {
		var d struct{ Seq int }
		if err := r.Decode(&d); err != nil || d.Seq != i {
			t.Fatalf("record %d: seq %d, %v", i+1, d.Seq, err)
		}
	}
	if got := len(recs) - 1; got < synced+1 {
		t.Fatalf("%d update records load, but %d were synced", got, synced+1)
	}
	if err := j.Append(KindUpdate, map[string]int{"seq": len(recs) - 1}); err != nil {
		t.Fatal(err)
	}
	if err := j.Sync(); err != nil {
		t.Fatal(err)
	}
	_, recs2, err := OpenJournal(dir, "crash", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs2) != len(recs)+1 {
		t.Fatalf("after reopening and appending: %d records, want %d", len(recs2), len(recs)+1)
	}
	info, err := store.Info("crash")
	if err != nil || info.Cwd != "/work" {
		t.Fatalf("sidecar = %+v, %v", info, err)
	}
}

func BenchmarkJournalAppend(b *testing.B) {
	j, err := CreateJournal(b.TempDir(), "bench", nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	update := json.RawMessage(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello, world: a typical streamed chunk."}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := j.Append(KindUpdate, update); err != nil {
			b.Fatal(err)
		}
	}
}
