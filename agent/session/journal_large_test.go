// This file tests large records: they are written as they are encoded,
// without a copy of them in memory, and the bytes are those of any record.

package session

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/agent/llm"
)

// wantLine is the line Append wrote before large records were streamed:
// the record's fields around json.Marshal's encoding of data, or the
// compacted data when it is already JSON.
func wantLine(t *testing.T, kind string, at time.Time, data any) string {
	t.Helper()
	var d []byte
	if raw, ok := data.(json.RawMessage); ok {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			t.Fatal(err)
		}
		d = b.Bytes()
	} else {
		var err error
		if d, err = json.Marshal(data); err != nil {
			t.Fatal(err)
		}
	}
	k, _ := json.Marshal(kind)
	return `{"k":` + string(k) + `,"t":"` + at.Format(time.RFC3339Nano) + `","d":` + string(d) + "}\n"
}

// fixedClock always reads the same instant.
func fixedClock(at time.Time) func() time.Time { return func() time.Time { return at } }

// awkwardText is n bytes of text in which every kind of character JSON
// escapes, multi-byte runes and invalid UTF-8 fall across the places a
// large string is cut to be encoded in pieces.
func awkwardText(n int) string {
	var b strings.Builder
	pieces := []string{"plain ", "\n\t\r\"\\", "<b>&amp;</b>", "\x00\x1f\x7f", "é", "€", "😀", "\u2028\u2029",
		"\xff", "\xe2\x82", "\x80\x80\x80\x80\x80", "\xf0\x9f\x98"}
	for i := 0; b.Len() < n; i++ {
		b.WriteString(pieces[i%len(pieces)])
		if i%7 == 0 {
			b.WriteString(strings.Repeat("x", i%5)) // shift the pieces against the cuts
		}
	}
	return b.String()[:n]
}

// liveDuring returns the most heap that collections run while f runs
// find live, above what was live before it.
func liveDuring(f func()) uint64 {
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base := live()
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var p uint64
		for {
			p = max(p, live())
			select {
			case <-stop:
				peak <- p
				return
			default:
			}
		}
	}()
	f()
	close(stop)
	p := max(<-peak, live()) // a copy left in a pool is still live
	return max(p, base) - base
}

func TestJournalWritesALargeRecordWithoutACopyOfIt(t *testing.T) {
	const size = 16 << 20
	text := strings.Repeat("y", size)
	update, err := json.Marshal(map[string]any{"sessionUpdate": "user_message_chunk", "content": map[string]any{"type": "text", "text": text}})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 2, 9, 14, 0, 0, time.UTC)
	for _, c := range []struct {
		what, kind string
		data       any
	}{
		{"a user message", KindMessage, llm.Message{Role: llm.RoleUser, Content: text}},
		{"an update already encoded", KindUpdate, json.RawMessage(update)},
		{"a conversation after compaction", KindReset, []llm.Message{{Role: llm.RoleUser, Content: "summary"}, {Role: llm.RoleUser, Content: text}}},
	} {
		t.Run(c.what, func(t *testing.T) {
			dir := t.TempDir()
			j, err := CreateJournal(dir, "big", "meta", &JournalOptions{Now: fixedClock(at)})
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			var aerr error
			n := liveDuring(func() { aerr = j.Append(c.kind, c.data) })
			if aerr != nil {
				t.Fatal(aerr)
			}
			t.Logf("Append held %d KiB more for a %d MiB record", n>>10, size>>20)
			// A copy of the record, or of its encoding, is twice this; the
			// pieces in flight and the encoder's pooled buffers, up to about
			// 4 MiB under -race on a loaded machine, stay well below it.
			if n > size/2 {
				t.Errorf("Append held %d MiB more for a %d MiB record, want no copy of it", n>>20, size>>20)
			}
			got, err := os.ReadFile(JournalPath(dir, "big"))
			if err != nil {
				t.Fatal(err)
			}
			_, line, _ := strings.Cut(string(got), "\n")
			if want := wantLine(t, c.kind, at, c.data); line != want {
				t.Errorf("the record's line differs from json.Marshal's (%d bytes, want %d)", len(line), len(want))
			}
		})
	}
}

func TestJournalLargeRecordsAreEncodedAsSmallOnes(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 14, 0, 0, time.UTC)
	dir := t.TempDir()
	j, err := CreateJournal(dir, "big", "meta", &JournalOptions{Now: fixedClock(at)})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	reasoning := "thought <&>"
	spaced := json.RawMessage(`{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "` + strings.Repeat(`a \" b `, largeData/4) + `"}}`)
	var want []string
	for _, d := range []struct {
		kind string
		data any
	}{
		{KindMessage, llm.Message{Role: llm.RoleUser, Content: awkwardText(3*textPiece + 17)}},
		{KindMessage, llm.Message{Role: "odd,\"content\":\"\\u0000\"", Content: awkwardText(largeData), Images: []llm.Image{{MimeType: "image/png", Data: "aGk="}}}},
		{KindMessage, llm.Message{Role: llm.RoleAssistant, Content: awkwardText(textPiece + 1), Reasoning: &reasoning,
			ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}}}},
		{KindMessage, llm.Message{Role: llm.RoleTool, Content: awkwardText(2 * textPiece), ToolCallID: "c1"}},
		{KindMessage, llm.Message{Role: llm.RoleUser, Content: "small"}},
		{KindReset, []llm.Message(nil)},
		{KindReset, []llm.Message{{Role: llm.RoleUser, Content: awkwardText(largeData + 3)}, {Role: llm.RoleAssistant}}},
		{KindUpdate, spaced},
		{KindUpdate, json.RawMessage(`{"text":"` + strings.Repeat("z", largeData) + `"}`)},
	} {
		if err := j.Append(d.kind, d.data); err != nil {
			t.Fatal(err)
		}
		want = append(want, wantLine(t, d.kind, at, d.data))
	}
	got, err := os.ReadFile(JournalPath(dir, "big"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(got), "\n")[1:]
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Errorf("record %d differs from json.Marshal's encoding", i+1)
		}
	}
}

func TestJournalALargeRecordThatFailsHalfWrittenIsHeldWhole(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 14, 0, 0, time.UTC)
	dir := t.TempDir()
	fl := &faults{short: true}
	j := faultyJournal(t, dir, fl)
	j.now = fixedClock(at)
	big := llm.Message{Role: llm.RoleUser, Content: awkwardText(6 * textPiece)}
	fl.mu.Lock()
	fl.failNth = 3 // the record's first writes land, its third fails half way
	fl.mu.Unlock()
	wantNotSaved(t, "Append", j.Append(KindMessage, big), false)
	if err := j.Append(KindMessage, llm.Message{Role: llm.RoleAssistant, Content: "after"}); err == nil {
		t.Fatal("a record after a failed one was saved")
	}
	if err := j.Sync(); err != nil {
		t.Fatalf("Sync after the disk has room again: %v", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	data, warnings := journalData(t, dir)
	if warnings != 0 {
		t.Errorf("%d warnings reading the journal back: the failed record left a torn line", warnings)
	}
	if len(data) != 3 {
		t.Fatalf("%d records, want meta and both messages", len(data))
	}
	if want, _ := json.Marshal(big); data[1] != string(want) {
		t.Errorf("the large record came back as %d bytes, want its %d", len(data[1]), len(want))
	}
	if !strings.Contains(data[2], "after") {
		t.Errorf("the record after it is %s", data[2])
	}
}
