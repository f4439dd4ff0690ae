package smallfile_test

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/dshd/dshd/internal/smallfile"
)

// A file of /proc stats as empty and holds more: it stands for a file
// that grew after its stat, read in full up to the bound and refused as
// "more than" the bound past it.
func TestRead_AFileLongerThanItsStatSays(t *testing.T) {
	const path = "/proc/self/status"
	if st, err := os.Stat(path); err != nil || st.Size() != 0 {
		t.Skipf("%s is not a regular file that stats as empty here: %v", path, err)
	}
	data, err := smallfile.Read(path, smallfile.Bound{Max: 1 << 20, What: "a test file"})
	if err != nil || !bytes.HasPrefix(data, []byte("Name:")) || !bytes.Contains(data, []byte("\nPid:")) {
		t.Fatalf("Read = %q, %v", data, err)
	}
	data, err = smallfile.Read(path, bound)
	var tl *smallfile.TooLargeError
	if !errors.As(err, &tl) || tl.Size != -1 || len(data) != 17 || !bytes.HasPrefix(data, []byte("Name:")) {
		t.Fatalf("Read with a bound of 16 = %q, %v", data, err)
	}
}
