// This file stores and loads keys.

package keystore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/dshd/dshd/internal/dirsync"
)

// MaxKeyLen bounds a key: real API keys are well under a hundred bytes, and
// a pasted file is not a key.
const MaxKeyLen = 4096

// Store is the directory keys are kept in.
type Store struct {
	// Dir holds one file per key variable.
	Dir string
}

// Default is the store under dshd's config dir: $XDG_CONFIG_HOME/dshd/keys,
// else $HOME/.config/dshd/keys, else the system's user config dir (on
// Windows %AppData%\dshd\keys). lookupEnv is os.LookupEnv in production.
func Default(lookupEnv func(string) (string, bool)) (Store, error) {
	if dir, _ := lookupEnv("XDG_CONFIG_HOME"); dir != "" {
		return Store{Dir: filepath.Join(dir, "dshd", "keys")}, nil
	}
	if home, _ := lookupEnv("HOME"); home != "" {
		return Store{Dir: filepath.Join(home, ".config", "dshd", "keys")}, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return Store{}, fmt.Errorf("no config dir for stored keys (set XDG_CONFIG_HOME or HOME): %w", err)
	}
	return Store{Dir: filepath.Join(dir, "dshd", "keys")}, nil
}

// Path is the file the key of variable name is kept in.
func (s Store) Path(name string) string { return filepath.Join(s.Dir, name) }

// Save stores key as the key of variable name, replacing any stored
// before: the file is written in full and synced under a temporary name,
// then renamed into place, so a reader finds the old key or the new one.
func (s Store) Save(name, key string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	// The directory is dshd's own: whatever made it wider, it holds
	// secrets now.
	if err := os.Chmod(s.Dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(s.Dir, "."+name+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// CreateTemp makes the file 0600; say so rather than rely on it.
	if err := f.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		return err
	}
	if _, err := f.WriteString(key + "\n"); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.Path(name)); err != nil {
		return err
	}
	ok = true
	return dirsync.Sync(s.Dir)
}

// Load returns the stored key of variable name; ok is false when none is
// stored. A key file that its owner's group or others may read is an
// error, and so is one that does not hold a key.
func (s Store) Load(name string) (key string, ok bool, err error) {
	if err := checkName(name); err != nil {
		return "", false, err
	}
	path := s.Path(name)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", false, err
	}
	if !fi.Mode().IsRegular() {
		return "", false, fmt.Errorf("stored key %s is not a regular file", path)
	}
	// Windows has no such mode bits; its files inherit the profile's ACL.
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return "", false, fmt.Errorf("stored key %s may be read by others (mode %04o): run `chmod 600 %s`, or `dshd auth` again", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxKeyLen+3))
	if err != nil {
		return "", false, fmt.Errorf("stored key %s: %w", path, err)
	}
	key = strings.TrimRight(string(b), "\r\n")
	if err := CheckKey(key); err != nil {
		return "", false, fmt.Errorf("stored key %s: %w; run `dshd auth` again", path, err)
	}
	return key, true, nil
}

// CheckKey says why key cannot be a key: empty, too long, or holding
// spaces or control characters (a key goes into an HTTP header whole).
func CheckKey(key string) error {
	switch {
	case key == "":
		return errors.New("the key is empty")
	case len(key) > MaxKeyLen:
		return fmt.Errorf("the key is %d bytes long; a key has at most %d", len(key), MaxKeyLen)
	}
	for _, r := range key {
		if r <= ' ' || r == 0x7f {
			return errors.New("the key holds a space or a control character")
		}
	}
	return nil
}

// checkName refuses a name that is not an environment variable's, which
// keeps the file inside the store.
func checkName(name string) error {
	if name == "" {
		return errors.New("no key variable")
	}
	for i, r := range name {
		if r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return fmt.Errorf("%q is not an environment variable's name", name)
	}
	return nil
}
