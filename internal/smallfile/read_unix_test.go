//go:build unix

package smallfile_test

import (
	"errors"
	"os"
	"testing"

	"github.com/dshd/dshd/internal/smallfile"
	"github.com/dshd/dshd/internal/testkit"
)

// A FIFO nobody writes, and a device that never ends, are refused without
// a wait and without a read, also behind a symbolic link and through a
// root.
func TestRead_AFIFOOrADeviceIsRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo, zero := testkit.FIFO(t, dir, "fifo"), testkit.LinkToZero(t, dir, "zero")
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tc := range []struct {
		name, want string
		read       func() ([]byte, error)
	}{
		{"a FIFO", "a named pipe (FIFO), not a regular file", func() ([]byte, error) { return smallfile.Read(fifo, bound) }},
		{"a FIFO in a root", "a named pipe (FIFO), not a regular file", func() ([]byte, error) { return smallfile.ReadIn(root, "fifo", bound) }},
		{"a FIFO opened in a root", "a named pipe (FIFO), not a regular file", func() ([]byte, error) {
			f, _, err := smallfile.OpenIn(root, "fifo")
			if f != nil {
				f.Close()
				return []byte("opened"), err
			}
			return nil, err
		}},
		{"/dev/zero", "a character device, not a regular file", func() ([]byte, error) { return smallfile.Read("/dev/zero", bound) }},
		{"a link to /dev/zero", "a character device, not a regular file", func() ([]byte, error) { return smallfile.Read(zero, bound) }},
	} {
		testkit.Within(t, "a read of "+tc.name, func() {
			data, err := tc.read()
			var nr *smallfile.NotRegularError
			if !errors.As(err, &nr) || err.Error() != tc.want || data != nil {
				t.Errorf("%s: Read = %q, %v; want %q", tc.name, data, err, tc.want)
			}
		})
	}
}

// A FIFO in place of a workspace's directory is refused at once, as not
// a directory, and not waited for.
func TestRoot_AFIFOInPlaceOfADirectoryIsRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := testkit.FIFO(t, dir, ".dshd/commands")
	r, err := smallfile.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	testkit.Within(t, "the listing of a FIFO", func() {
		if entries, err := readDir(r, fifo); err == nil || err.Error() != "open "+fifo+": not a directory" || entries != nil {
			t.Errorf("ReadDir = %v, %v; want not a directory", entries, err)
		}
	})
}
