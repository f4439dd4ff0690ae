package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// ranTrue returns a command of s that has run /bin/true in ws, its one
// root: what a test of the command's account of refusals starts from.
func ranTrue(t *testing.T, s *Sandbox, ws string) *Cmd {
	t.Helper()
	c, err := s.Command(t.Context(), Spec{Argv: []string{"/bin/true"}, Dir: ws, Env: os.Environ(), Roots: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRefused_FindsEachRefusedPathOnceWhereTheCwdIsNotWritable(t *testing.T) {
	needLandlock(t)
	ws := t.TempDir()
	// Read-only: the cwd is not writable, so a word misread as a name
	// relative to it would be "refused" too.
	s := newSandbox(t, Config{Mode: ReadOnly})
	c := ranTrue(t, s, ws)
	outside := filepath.Dir(ws)
	for _, tc := range []struct{ name, output string }{
		{"coreutils in a UTF-8 locale", "mkdir: cannot create directory ‘" + outside + "/a’: Permission denied\n"},
		{"coreutils in the C locale", "mkdir: cannot create directory '" + outside + "/a': Permission denied\n"},
		{"Go", "mkdir " + outside + "/a: permission denied\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.Refused(tc.output).Paths; !slices.Equal(got, []string{outside + "/a"}) {
				t.Errorf("Refused(%q).Paths = %q, want only %s", tc.output, got, outside+"/a")
			}
		})
	}
}
