package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secrets lays out what Config.Hidden is for: a directory of keys, a
// token file, a readable sibling, and a hidden path that does not exist.
func secrets(t *testing.T) (dir string, hidden []string) {
	t.Helper()
	dir = t.TempDir()
	write(t, filepath.Join(dir, "keys", "OPENAI_API_KEY"), "sk-stored-secret")
	write(t, filepath.Join(dir, "token"), "token-file-secret")
	write(t, filepath.Join(dir, "sibling.txt"), "sibling-visible")
	return dir, []string{filepath.Join(dir, "keys"), filepath.Join(dir, "token"), filepath.Join(dir, "missing")}
}

// readSecrets is what a command would try.
const readSecrets = `cat keys/OPENAI_API_KEY; echo "keys:[$(ls -A keys)]"; echo "token:[$(cat token)]"; cat sibling.txt; echo`

func TestHidden_ADirectoryListsEmptyAFileReadsEmptyASiblingReads(t *testing.T) {
	needLandlock(t)
	dir, hidden := secrets(t)
	ws := t.TempDir()
	s := newSandbox(t, Config{Hidden: hidden})
	r := sh(t, s, dir, []string{ws}, readSecrets)
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.out)
	}
	if strings.Contains(r.out, "secret") {
		t.Fatalf("the command read a hidden secret:\n%s", r.out)
	}
	mustContain(t, "the output", r.out, "keys:[]", "token:[]", "sibling-visible")
	// The mounts were the helper's own: dshd still sees its files.
	if b, err := os.ReadFile(filepath.Join(dir, "keys", "OPENAI_API_KEY")); err != nil || string(b) != "sk-stored-secret" {
		t.Fatalf("the key file outside the sandbox: %q, %v", b, err)
	}
}

func TestHidden_ACommandCannotWriteThroughTheHiddenPaths(t *testing.T) {
	needLandlock(t)
	dir, hidden := secrets(t)
	// The secrets' dir is writable: only the mounts keep the command out.
	s := newSandbox(t, Config{Hidden: hidden})
	r := sh(t, s, dir, []string{dir}, `echo x > keys/new; echo y > token; `+readSecrets)
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.out)
	}
	if strings.Contains(r.out, "secret") {
		t.Fatalf("the command read a hidden secret:\n%s", r.out)
	}
	if exists(filepath.Join(dir, "keys", "new")) {
		t.Fatal("a write into the hidden directory landed")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "token")); string(b) != "token-file-secret" {
		t.Fatalf("the token file was changed: %q", b)
	}
}

func TestHidden_WithoutNamespacesTheHelperMountsNothing(t *testing.T) {
	needLandlock(t)
	dir, hidden := secrets(t)
	s := newSandbox(t, Config{Hidden: hidden, NoNamespaces: true})
	r := sh(t, s, dir, []string{t.TempDir()}, readSecrets)
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.out)
	}
	// Landlock only allows: without a mount namespace nothing is hidden,
	// as Config.Hidden says.
	mustContain(t, "the output", r.out, "sk-stored-secret", "token:[token-file-secret]", "sibling-visible")
}

func TestHidden_RelativePathsAreRefused(t *testing.T) {
	if _, err := New(&Config{Hidden: []string{"keys"}}); err == nil || !strings.Contains(err.Error(), `"keys"`) {
		t.Fatalf("a relative hidden path: %v", err)
	}
}

func TestHidden_APathThatCannotBeHiddenRefusesTheCommandNamingIt(t *testing.T) {
	needLandlock(t)
	dir, hidden := secrets(t)
	// Under a file: it cannot be looked up, so neither said missing nor
	// mounted over.
	bad := filepath.Join(dir, "token", "x")
	s := newSandbox(t, Config{Hidden: append(hidden, bad)})
	r := sh(t, s, dir, []string{dir}, `touch ran; `+readSecrets)
	var se *StartError
	if !errors.As(r.err, &se) || !strings.Contains(se.Msg, bad) {
		t.Fatalf("want a start error naming %s, got %v\n%s", bad, r.err, r.out)
	}
	if exists(filepath.Join(dir, "ran")) || strings.Contains(r.out, "secret") {
		t.Fatalf("the command ran:\n%s", r.out)
	}
}
