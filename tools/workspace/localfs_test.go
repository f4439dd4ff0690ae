package workspace

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestLocalFSRead(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "f.txt", "one\ntwo\nthree\nfour")
	l := NewLocalFS(mustNew(t, dir))
	tests := []struct {
		name        string
		line, limit int
		want        string
	}{
		{"zero for both is the whole file", 0, 0, "one\ntwo\nthree\nfour"},
		{"a window in the middle", 2, 2, "two\nthree\n"},
		{"from a line to the end", 3, 0, "three\nfour"},
		{"a limit past the end", 4, 10, "four"},
		{"a line past the end is empty", 9, 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := l.ReadTextFile(t.Context(), p, tc.line, tc.limit)
			if err != nil || got != tc.want {
				t.Fatalf("ReadTextFile(%d, %d) = %q, %v; want %q", tc.line, tc.limit, got, err, tc.want)
			}
		})
	}
	t.Run("a missing file matches fs.ErrNotExist", func(t *testing.T) {
		_, err := l.ReadTextFile(t.Context(), filepath.Join(dir, "nope"), 0, 0)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a cancelled context stops the read", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := l.ReadTextFile(ctx, p, 0, 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestLocalFSPagesAHugeFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "huge.txt")
	const lines = 5_600_000 // 9 bytes each: about 50 MB
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 1<<20)
	for i := 1; i <= lines; i++ {
		buf = append(buf, "00000000\n"...)
		for j, v := len(buf)-2, i; v > 0; j, v = j-1, v/10 {
			buf[j] = byte('0' + v%10)
		}
		if len(buf) > cap(buf)-16 || i == lines {
			if _, err := f.Write(buf); err != nil {
				t.Fatal(err)
			}
			buf = buf[:0]
		}
	}
	f.Close()

	// A cap far below the file's size: reading it whole would fail.
	l := &LocalFS{ws: mustNew(t, dir), ReadLimits: ReadLimits{MaxReadBytes: 64 << 10}}
	if _, err := l.ReadTextFile(t.Context(), p, 0, 0); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("whole read of 50 MB with a 64 KiB cap: err = %v, want ErrTooLarge", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := l.ReadTextFile(t.Context(), p, 1_000_000, 3)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if want := "01000000\n01000001\n01000002\n"; got != want {
		t.Fatalf("window = %q, want %q", got, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading 3 lines of a 50 MB file allocated %d bytes", alloc)
	}
}

// A read over the read limit is refused with an error that names the
// setting (what an operator raises), and the first such refusal of a
// LocalFS is logged, once: a model or a child asking again and again is
// not a line each time. A read under the limit still works after it.
// Before, the limit was a constant and a refusal said neither its setting
// nor anything in the log.
func TestLocalFS_AReadOverTheLimitNamesTheSettingAndIsLoggedOnce(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "big.txt", strings.Repeat("0123456789abcdef\n", 4096)) // 64 KiB
	logs := &testkit.SyncBuffer{}
	l := NewLocalFS(mustNew(t, dir))
	l.ReadLimits = ReadLimits{MaxReadBytes: 16 << 10, Setting: "--max-read-bytes"}
	l.Logger = slog.New(slog.NewTextHandler(logs, nil))
	for range 3 {
		_, err := l.ReadTextFile(t.Context(), p, 0, 0)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "--max-read-bytes") || !strings.Contains(err.Error(), "16384 bytes") {
			t.Fatalf("a 64 KiB read under a 16 KiB limit: err = %v, want ErrTooLarge naming the setting and the limit", err)
		}
	}
	if got, err := l.ReadTextFile(t.Context(), p, 2, 1); err != nil || got != "0123456789abcdef\n" {
		t.Fatalf("a read of one line after the refusals = %q, %v", got, err)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), "setting=--max-read-bytes limit=16384") {
		t.Errorf("%d lines logged for 3 refusals, want 1 naming the setting and the limit:\n%s", n, logs.String())
	}
}

func TestLocalFSWrite(t *testing.T) {
	dir := t.TempDir()
	l := NewLocalFS(mustNew(t, dir))
	t.Run("missing parent directories are created", func(t *testing.T) {
		p := filepath.Join(dir, "a", "b", "c.txt")
		if err := l.WriteTextFile(t.Context(), p, "hello"); err != nil {
			t.Fatal(err)
		}
		if got := read(t, dir, "a/b/c.txt"); got != "hello" {
			t.Errorf("content = %q", got)
		}
		fi, _ := os.Stat(p)
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("new file mode = %v", fi.Mode())
		}
	})
	t.Run("replacing keeps the mode and leaves no temporary file", func(t *testing.T) {
		p := write(t, dir, "x/script.sh", "old")
		if err := os.Chmod(p, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := l.WriteTextFile(t.Context(), p, "new"); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(p)
		if fi.Mode().Perm() != 0o750 {
			t.Errorf("mode = %v, want 0750", fi.Mode())
		}
		entries, _ := os.ReadDir(filepath.Dir(p))
		if len(entries) != 1 {
			t.Errorf("directory holds %d entries, want 1", len(entries))
		}
		if got := read(t, dir, "x/script.sh"); got != "new" {
			t.Errorf("content = %q", got)
		}
	})
	t.Run("a directory cannot be written", func(t *testing.T) {
		if err := l.WriteTextFile(t.Context(), dir, "x"); err == nil {
			t.Fatal("wrote over a directory")
		}
	})
}
