package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/internal/registry"
)

// root is the module's directory, from this package's.
const root = "../.."

// defaultBase is the -base-url default.
const defaultBase = "https://github.com/dshd/dshd/releases/download/v{version}"

func TestArchives_AreTheSameBytesForTheSameInputAndHoldTheExecutable(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "exe")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho hi\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1700000000, 0).UTC()
	for _, tc := range []struct {
		ext   string
		write func(dst, src, name string, mtime time.Time) error
		read  func(t *testing.T, path string) (name string, mode os.FileMode, body []byte, mod time.Time)
	}{
		{".tar.gz", writeTarGz, readTarGz},
		{".zip", writeZip, readZip},
	} {
		a, b := filepath.Join(dir, "a"+tc.ext), filepath.Join(dir, "b"+tc.ext)
		if err := tc.write(a, src, "dshd", mtime); err != nil {
			t.Fatal(err)
		}
		if err := tc.write(b, src, "dshd", mtime); err != nil {
			t.Fatal(err)
		}
		ba, _ := os.ReadFile(a)
		bb, _ := os.ReadFile(b)
		if !bytes.Equal(ba, bb) {
			t.Fatalf("%s: two archives of the same file differ", tc.ext)
		}
		name, mode, body, mod := tc.read(t, a)
		if name != "dshd" || mode.Perm() != 0o755 || string(body) != "#!/bin/sh\necho hi\n" || !mod.Equal(mtime) {
			t.Fatalf("%s holds %q mode %v time %v body %q", tc.ext, name, mode, mod, body)
		}
	}
}

func readTarGz(t *testing.T, path string) (string, os.FileMode, []byte, time.Time) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	h, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(tr)
	if _, err := tr.Next(); err != io.EOF {
		t.Fatalf("more than one file in %s", path)
	}
	return h.Name, h.FileInfo().Mode(), body, h.ModTime
}

func readZip(t *testing.T, path string) (string, os.FileMode, []byte, time.Time) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 {
		t.Fatalf("%d files in %s", len(zr.File), path)
	}
	f := zr.File[0]
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(rc)
	rc.Close()
	return f.Name, f.Mode(), body, f.Modified.UTC()
}

// The committed entry is what gets submitted to the registry for its
// version: it must pass the registry's checks, point at the archives
// `make release` names, and start dshd with no arguments, because a client
// runs terminal auth by appending the method's args ("auth") to the
// command line the entry gives: `dshd auth`.
func TestTheRepositorysEntry_PassesTheRegistrysChecksAndPointsAtTheReleaseArchives(t *testing.T) {
	path := filepath.Join(root, "registry", "dshd", "agent.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := registry.Validate(raw, "dshd")
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	icon, err := os.ReadFile(filepath.Join(root, "registry", "dshd", "icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := registry.CheckIcon(icon); err != nil {
		t.Fatal(err)
	}
	base := strings.ReplaceAll(defaultBase, "{version}", e.Version)
	if len(e.Distribution.Binary) != len(registry.Platforms) {
		t.Fatalf("%d platforms, want all %d", len(e.Distribution.Binary), len(registry.Platforms))
	}
	for _, p := range registry.Platforms {
		tg, ok := e.Distribution.Binary[p.Key]
		if !ok {
			t.Fatalf("no %s", p.Key)
		}
		if want := base + "/" + archiveName(e.Version, p); tg.Archive != want {
			t.Errorf("%s: archive %s, want %s", p.Key, tg.Archive, want)
		}
		if tg.Cmd != "./"+p.Exe("dshd") || len(tg.Args) != 0 || len(tg.Env) != 0 {
			t.Errorf("%s: runs %s %v with %v; want ./%s with no arguments and no environment", p.Key, tg.Cmd, tg.Args, tg.Env, p.Exe("dshd"))
		}
		if tg.SHA256 != "" {
			t.Errorf("%s: a checksum in the repository's entry belongs to one build; make release puts them in dist/agent.json", p.Key)
		}
	}
	// Written by make release: byte for byte what it would write.
	again := entryFor(e, e.Version, base, builtAll(e.Version), false)
	dir := t.TempDir()
	if err := writeEntry(filepath.Join(dir, "agent.json"), again); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "agent.json")); !bytes.Equal(b, raw) {
		t.Fatalf("%s is not what make release writes:\n%s", path, b)
	}
}

// builtAll is an archive per platform, as release names them.
func builtAll(version string) []built {
	var out []built
	for _, p := range registry.Platforms {
		out = append(out, built{platform: p, name: archiveName(version, p)})
	}
	return out
}

func TestEntryFor_CarriesEveryArchivesURLAndChecksum(t *testing.T) {
	tmpl := &registry.Entry{ID: "dshd", Name: "dshd", Version: "0.0.1", Description: "d", Repository: "https://example.com/dshd"}
	out := builtAll("2.3.4")
	for i := range out {
		out[i].sha256 = strings.Repeat(string(rune('a'+i)), 64)
	}
	e := entryFor(tmpl, "2.3.4", "https://example.com/download/v2.3.4/", out, true)
	path := filepath.Join(t.TempDir(), "agent.json")
	if err := writeEntry(path, e); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	got, err := registry.Validate(raw, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != "2.3.4" || got.Repository != tmpl.Repository || tmpl.Version != "0.0.1" {
		t.Fatalf("entry %+v (template %+v)", got, tmpl)
	}
	for _, a := range out {
		tg := got.Distribution.Binary[a.platform.Key]
		if tg.Archive != "https://example.com/download/v2.3.4/"+a.name || tg.SHA256 != a.sha256 {
			t.Errorf("%s: %+v, want %s with %s", a.platform.Key, tg, a.name, a.sha256)
		}
	}
}

// The host's archive is built for real, the way make release builds every
// platform's: it unpacks to a static dshd that reports the version it was
// stamped with, and SHA256SUMS names its checksum.
func TestRelease_TheHostsArchiveHoldsADshdStampedWithTheVersion(t *testing.T) {
	var host registry.Platform
	for _, p := range registry.Platforms {
		if p.GOOS == runtime.GOOS && p.GOARCH == runtime.GOARCH {
			host = p
		}
	}
	if host.Key == "" {
		t.Skipf("%s/%s is not a registry platform, so no archive of it can be run here", runtime.GOOS, runtime.GOARCH)
	}
	out := t.TempDir()
	entry := filepath.Join(root, "registry", "dshd", "agent.json")
	before, _ := os.ReadFile(entry)
	var log bytes.Buffer
	o := &options{version: "9.8.7", out: out, entry: entry, baseURL: defaultBase, only: host.Key, goCmd: "go", root: root, log: &log}
	if err := release(o); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	after, _ := os.ReadFile(entry)
	if !bytes.Equal(before, after) {
		t.Fatal("a one-platform build rewrote the repository's entry")
	}
	if _, err := os.Stat(filepath.Join(out, "agent.json")); !os.IsNotExist(err) {
		t.Fatal("a one-platform build wrote an agent.json")
	}
	name := archiveName("9.8.7", host)
	sum, err := fileSHA256(filepath.Join(out, name))
	if err != nil {
		t.Fatal(err)
	}
	sums, _ := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if string(sums) != sum+"  "+name+"\n" {
		t.Fatalf("SHA256SUMS:\n%s\nwant %s  %s", sums, sum, name)
	}

	var body []byte
	if host.ArchiveExt() == ".zip" {
		_, _, body, _ = readZip(t, filepath.Join(out, name))
	} else {
		_, _, body, _ = readTarGz(t, filepath.Join(out, name))
	}
	exe := filepath.Join(t.TempDir(), host.Exe("dshd"))
	if err := os.WriteFile(exe, body, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := exec.CommandContext(ctx, exe, "version").Output()
	if err != nil {
		t.Fatalf("dshd version: %v", err)
	}
	if !strings.HasPrefix(string(got), "dshd 9.8.7 (") {
		t.Fatalf("dshd version printed %q, want version 9.8.7", got)
	}
}
