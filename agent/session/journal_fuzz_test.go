// This file fuzzes journal loading with arbitrary file contents.

package session

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
)

// FuzzJournalLoad writes arbitrary bytes as a journal and checks that
// opening it never panics or fails, that every record it returns has a
// kind, and that a record appended after opening loads after exactly the
// records that loaded before: whatever the file held, the next append
// starts on a fresh line.
func FuzzJournalLoad(f *testing.F) {
	for _, seed := range []string{
		"",
		"\n",
		`{"k":"meta","d":{}}` + "\n",
		`{"k":"meta","d":{}}`,
		`{"k":"meta","d":{}}` + "\n" + `{"k":"upd`,
		`{"k":"update","t":"2026-03-02T09:14:00Z","d":[1,2]}` + "\r\n",
		"garbage\n{\"k\":\"x\",\"d\":null}\n   ",
		`{"k":"","d":1}` + "\n" + `{"d":1}` + "\n" + `[]` + "\n" + `{"k":1}`,
		`{"k":"a","t":"not a time","d":1}` + "\n",
		"\x00\xff\xfe{\n}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(JournalPath(dir, "f"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		discard := &JournalOptions{Logger: slog.New(slog.DiscardHandler)}
		j, recs, err := OpenJournal(dir, "f", discard)
		if err != nil {
			t.Fatalf("OpenJournal: %v", err)
		}
		for i, r := range recs {
			if r.Kind == "" {
				t.Fatalf("record %d has no kind", i)
			}
			if r.Data != nil && !json.Valid(r.Data) {
				t.Fatalf("record %d has invalid data %q", i, r.Data)
			}
		}
		if err := j.Append("fuzz", "appended"); err != nil {
			t.Fatalf("Append: %v", err)
		}
		if err := j.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		j, again, err := OpenJournal(dir, "f", discard)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		j.Close()
		if len(again) != len(recs)+1 {
			t.Fatalf("after an append: %d records, want %d", len(again), len(recs)+1)
		}
		for i := range recs {
			if again[i].Kind != recs[i].Kind || !bytes.Equal(again[i].Data, recs[i].Data) || !again[i].Time.Equal(recs[i].Time) {
				t.Fatalf("record %d changed: %+v became %+v", i, recs[i], again[i])
			}
		}
		if last := again[len(recs)]; last.Kind != "fuzz" || string(last.Data) != `"appended"` {
			t.Fatalf("appended record = %+v", last)
		}
	})
}
