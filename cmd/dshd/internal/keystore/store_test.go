package keystore

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestSave_WritesTheKeyOwnerOnlyAndLoadReadsItBack(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "dshd", "keys")}
	if err := s.Save("DEEPSEEK_API_KEY", "sk-first"); err != nil {
		t.Fatal(err)
	}
	if err := s.Save("DEEPSEEK_API_KEY", "sk-second"); err != nil {
		t.Fatal(err)
	}
	key, ok, err := s.Load("DEEPSEEK_API_KEY")
	if err != nil || !ok || key != "sk-second" {
		t.Fatalf("Load = %q, %v, %v; want the key saved last", key, ok, err)
	}
	if runtime.GOOS != "windows" {
		for path, want := range map[string]os.FileMode{s.Dir: 0o700, s.Path("DEEPSEEK_API_KEY"): 0o600} {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("%s: mode %04o, want %04o", path, got, want)
			}
		}
	}
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("the store holds %d files, want the key's alone (no temporary left)", len(entries))
	}
}

func TestSave_MakesAWiderStoreDirectoryOwnerOnly(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no unix mode bits on windows")
	}
	s := Store{Dir: filepath.Join(t.TempDir(), "keys")}
	if err := os.Mkdir(s.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Save("K", "v"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(s.Dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("store dir mode %04o, want 0700", fi.Mode().Perm())
	}
}

func TestLoad_NothingStoredIsNotAnError(t *testing.T) {
	key, ok, err := Store{Dir: filepath.Join(t.TempDir(), "none")}.Load("OPENAI_API_KEY")
	if err != nil || ok || key != "" {
		t.Fatalf("Load = %q, %v, %v; want nothing, no error", key, ok, err)
	}
}

func TestLoad_RefusesAKeyOthersMayRead(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no unix mode bits on windows")
	}
	s := Store{Dir: t.TempDir()}
	if err := os.WriteFile(s.Path("K"), []byte("sk-x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(s.Path("K"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ok, err := s.Load("K")
	if ok || err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("Load = %v, %v; want a refusal that says how to fix it", ok, err)
	}
}

func TestLoad_RefusesAFileThatHoldsNoKey(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	for _, content := range []string{"", "\n", "two words\n", strings.Repeat("k", MaxKeyLen+1)} {
		if err := os.WriteFile(s.Path("K"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.Load("K"); ok || err == nil {
			t.Errorf("Load of %.20q = %v, %v; want an error", content, ok, err)
		}
	}
}

func TestSaveAndLoad_RefuseNamesThatAreNotVariables(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	for _, name := range []string{"", "../config.json", "A/B", "1KEY", "KEY.txt"} {
		if err := s.Save(name, "k"); err == nil {
			t.Errorf("Save(%q) succeeded", name)
		}
		if _, _, err := s.Load(name); err == nil {
			t.Errorf("Load(%q) succeeded", name)
		}
	}
	if entries, _ := os.ReadDir(s.Dir); len(entries) != 0 {
		t.Fatalf("refused names left %d files", len(entries))
	}
}

func TestSave_RefusesWhatCannotBeAKeyAndKeepsTheOldOne(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if err := s.Save("K", "sk-good"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "sk bad", "sk\nbad", strings.Repeat("k", MaxKeyLen+1)} {
		if err := s.Save("K", bad); err == nil {
			t.Errorf("Save(%.20q) succeeded", bad)
		}
	}
	if key, _, _ := s.Load("K"); key != "sk-good" {
		t.Fatalf("stored key %q after refused saves, want the old one", key)
	}
}

func TestDefault_FollowsXDGThenHome(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	s, err := Default(env(map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}))
	if err != nil || s.Dir != filepath.Join("/x", "dshd", "keys") {
		t.Fatalf("with XDG_CONFIG_HOME: %q, %v", s.Dir, err)
	}
	s, err = Default(env(map[string]string{"HOME": "/h"}))
	if err != nil || s.Dir != filepath.Join("/h", ".config", "dshd", "keys") {
		t.Fatalf("with HOME only: %q, %v", s.Dir, err)
	}
}

func TestReadKey_APipeGivesItsFirstLineTrimmed(t *testing.T) {
	var out strings.Builder
	key, err := ReadKey(strings.NewReader("  sk-piped \r\nsecond line\n"), &out, "Key: ")
	if err != nil || key != "sk-piped" {
		t.Fatalf("ReadKey = %q, %v", key, err)
	}
	if out.Len() != 0 {
		t.Fatalf("a pipe got a prompt: %q", out.String())
	}
	if key, err := ReadKey(strings.NewReader("sk-no-newline"), &out, ""); err != nil || key != "sk-no-newline" {
		t.Fatalf("without a newline: %q, %v", key, err)
	}
	if _, err := ReadKey(strings.NewReader(strings.Repeat("k", MaxKeyLen+10)), &out, ""); err == nil {
		t.Fatal("an overlong line was read as a key")
	}
}
