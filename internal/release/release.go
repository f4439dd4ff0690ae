// This file builds the release: binaries, archives, checksums, the entry.

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dshd/dshd/internal/registry"
)

// versionVar is the variable the version is stamped into.
const versionVar = "github.com/dshd/dshd/cmd/dshd/internal/version.Version"

// mainPkg is the package the release builds.
const mainPkg = "./cmd/dshd"

var semver = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

type options struct {
	version, out, entry, baseURL, only, goCmd string
	// root is the module's directory, "" for the current one.
	root string
	vet  bool
	// mtime is the archive entries' time, in Unix seconds.
	mtime int64
	log   io.Writer
}

// built is one platform's archive.
type built struct {
	platform registry.Platform
	name     string // the archive's file name
	sha256   string
}

// release builds every platform's archive into o.out, then SHA256SUMS,
// agent.json and icon.svg beside them, and rewrites the repository's entry
// to the version.
func release(o *options) error {
	raw, err := os.ReadFile(o.entry)
	if err != nil {
		return err
	}
	tmpl, err := registry.Validate(raw, filepath.Base(filepath.Dir(o.entry)))
	if err != nil {
		return fmt.Errorf("%s: %w", o.entry, err)
	}
	icon, err := os.ReadFile(filepath.Join(filepath.Dir(o.entry), "icon.svg"))
	if err != nil {
		return err
	}
	if err := registry.CheckIcon(icon); err != nil {
		return err
	}
	if o.version == "" {
		o.version = tmpl.Version
	}
	if !semver.MatchString(o.version) {
		return fmt.Errorf("version %q: want MAJOR.MINOR.PATCH", o.version)
	}
	platforms, err := choose(o.only)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "dshd-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	var out []built
	for _, p := range platforms {
		b, err := buildOne(o, p, work)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Key, err)
		}
		fmt.Fprintf(o.log, "%s  %s\n", b.sha256, b.name)
		out = append(out, b)
	}
	if err := writeSums(filepath.Join(o.out, "SHA256SUMS"), out); err != nil {
		return err
	}
	if len(out) != len(registry.Platforms) {
		// A partial build is for trying things: an entry names every
		// platform, so none is written.
		fmt.Fprintf(o.log, "built %d of %d platforms: no agent.json, and %s is left as it is\n", len(out), len(registry.Platforms), o.entry)
		return nil
	}
	base := strings.ReplaceAll(o.baseURL, "{version}", o.version)
	if err := writeEntry(filepath.Join(o.out, "agent.json"), entryFor(tmpl, o.version, base, out, true)); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "icon.svg"), icon, 0o644); err != nil {
		return err
	}
	return writeEntry(o.entry, entryFor(tmpl, o.version, base, out, false))
}

// choose picks the platforms named in only (comma-separated registry
// names), or all of them.
func choose(only string) ([]registry.Platform, error) {
	if only == "" {
		return registry.Platforms, nil
	}
	var out []registry.Platform
	for _, key := range strings.Split(only, ",") {
		i := slices.IndexFunc(registry.Platforms, func(p registry.Platform) bool { return p.Key == strings.TrimSpace(key) })
		if i < 0 {
			return nil, fmt.Errorf("-only %q: not a registry platform", key)
		}
		out = append(out, registry.Platforms[i])
	}
	return out, nil
}

// buildOne cross-compiles dshd for p and archives it.
func buildOne(o *options, p registry.Platform, work string) (built, error) {
	exe := filepath.Join(work, p.Key, p.Exe("dshd"))
	cmd := exec.Command(o.goCmd, "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid= -X "+versionVar+"="+o.version, "-o", exe, mainPkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.GOOS, "GOARCH="+p.GOARCH)
	cmd.Dir = o.root
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = o.log, &stderr
	if err := cmd.Run(); err != nil {
		return built{}, fmt.Errorf("go build: %w\n%s", err, stderr.String())
	}
	b := built{platform: p, name: archiveName(o.version, p)}
	dst := filepath.Join(o.out, b.name)
	mtime := time.Unix(o.mtime, 0).UTC()
	var err error
	if p.ArchiveExt() == ".zip" {
		err = writeZip(dst, exe, p.Exe("dshd"), mtime)
	} else {
		err = writeTarGz(dst, exe, p.Exe("dshd"), mtime)
	}
	if err != nil {
		return built{}, err
	}
	b.sha256, err = fileSHA256(dst)
	return b, err
}

// archiveName is "dshd-VERSION-PLATFORM.tar.gz" (.zip on windows).
func archiveName(version string, p registry.Platform) string {
	return "dshd-" + version + "-" + p.Key + p.ArchiveExt()
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeSums writes the checksums in sha256sum's format, so that
// `sha256sum -c SHA256SUMS` checks a download.
func writeSums(path string, out []built) error {
	var b strings.Builder
	for _, a := range out {
		fmt.Fprintf(&b, "%s  %s\n", a.sha256, a.name)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// entryFor is tmpl for version: one binary target per built archive at
// base, with its checksum when withSums.
func entryFor(tmpl *registry.Entry, version, base string, out []built, withSums bool) *registry.Entry {
	e := *tmpl
	e.Version = version
	e.Distribution = registry.Distribution{Binary: map[string]registry.Target{}}
	for _, a := range out {
		t := registry.Target{Archive: strings.TrimSuffix(base, "/") + "/" + a.name, Cmd: "./" + a.platform.Exe("dshd")}
		if withSums {
			t.SHA256 = a.sha256
		}
		e.Distribution.Binary[a.platform.Key] = t
	}
	return &e
}

// writeEntry writes e as agent.json at path, after checking it as the
// registry would.
func writeEntry(path string, e *registry.Entry) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := registry.Validate(b, ""); err != nil {
		return fmt.Errorf("the entry for %s: %w", path, err)
	}
	return os.WriteFile(path, b, 0o644)
}

// vetAll runs `go vet ./...` for every platform, CGO off as the release
// builds, and reports every platform that fails.
func vetAll(o *options) error {
	var errs []error
	for _, p := range registry.Platforms {
		cmd := exec.Command(o.goCmd, "vet", "./...")
		cmd.Dir = o.root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.GOOS, "GOARCH="+p.GOARCH)
		out, err := cmd.CombinedOutput()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s/%s (%s): %w\n%s", p.GOOS, p.GOARCH, p.Key, err, out))
			continue
		}
		fmt.Fprintf(o.log, "vet %s/%s: ok\n", p.GOOS, p.GOARCH)
	}
	return errors.Join(errs...)
}
