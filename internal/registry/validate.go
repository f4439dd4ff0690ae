// This file checks an entry and its icon as the registry's CI does.

package registry

import (
	_ "embed"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

//go:embed agent.schema.json
var schemaJSON []byte

var schema = sync.OnceValues(func() (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(schemaJSON, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
})

var (
	semver = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
	// versionInURL finds a release version in a download URL, as GitHub
	// release URLs carry it: /download/v1.2.3/ or /download/1.2.3/.
	versionInURL = regexp.MustCompile(`/download/v?([0-9]+\.[0-9]+\.[0-9]+[^/]*)/`)
)

// archiveExts are the archive formats the registry accepts; a name with
// none of them is a raw binary, also accepted.
var archiveExts = []string{".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2"}

// installerExts are formats the registry rejects.
var installerExts = []string{".dmg", ".pkg", ".deb", ".rpm", ".msi", ".appimage"}

// Validate checks the agent.json data the way the registry's CI does and
// returns the entry: the schema; an id that names the entry's directory
// (dir; "" skips this); a version of three numbers; absolute http(s) URLs,
// none of them "latest" and every release version in them the entry's; an
// archive format the registry takes; and binaries for all three operating
// systems, which the registry RFD requires of a binary distribution.
func Validate(data []byte, dir string) (*Entry, error) {
	s, err := schema()
	if err != nil {
		return nil, fmt.Errorf("registry schema: %w", err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("agent.json: %w", err)
	}
	if err := s.Validate(v); err != nil {
		return nil, fmt.Errorf("agent.json does not match the registry schema: %w", err)
	}
	var e Entry
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("agent.json: %w", err)
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if dir != "" && e.ID != dir {
		bad("id %q does not name its directory %q", e.ID, dir)
	}
	if !semver.MatchString(e.Version) {
		bad("version %q is not MAJOR.MINOR.PATCH", e.Version)
	}
	for _, f := range []struct{ name, v string }{{"repository", e.Repository}, {"website", e.Website}} {
		if f.v != "" {
			if err := checkURL(f.v, e.Version); err != nil {
				bad("%s: %v", f.name, err)
			}
		}
	}
	oses := map[string]bool{}
	for _, key := range slices.Sorted(maps.Keys(e.Distribution.Binary)) {
		t := e.Distribution.Binary[key]
		os, _, _ := strings.Cut(key, "-")
		oses[os] = true
		if err := checkURL(t.Archive, e.Version); err != nil {
			bad("binary %s: archive: %v", key, err)
		}
		if err := checkArchive(t.Archive); err != nil {
			bad("binary %s: %v", key, err)
		}
		if strings.TrimSpace(t.Cmd) == "" {
			bad("binary %s: no cmd", key)
		}
	}
	if len(e.Distribution.Binary) > 0 {
		for _, os := range []string{"darwin", "linux", "windows"} {
			if !oses[os] {
				bad("binary: no build for %s (the registry wants darwin, linux and windows)", os)
			}
		}
	}
	for _, p := range []*Package{e.Distribution.Npx, e.Distribution.Uvx} {
		if p != nil && strings.HasSuffix(p.Package, "@latest") {
			bad("package %q: a pinned version, not @latest", p.Package)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &e, nil
}

// checkURL wants an absolute http(s) URL that does not point at "latest"
// and names no release version but version.
func checkURL(raw, version string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	if strings.Contains(u.Path, "/latest/") {
		return fmt.Errorf("%q points at latest; the registry wants the version's own URL", raw)
	}
	if m := versionInURL.FindStringSubmatch(u.Path); m != nil && m[1] != version {
		return fmt.Errorf("%q is release %s, the entry is %s", raw, m[1], version)
	}
	return nil
}

// checkArchive refuses an installer, which the registry cannot unpack.
func checkArchive(raw string) error {
	u, _ := url.Parse(raw)
	name := strings.ToLower(u.Path[strings.LastIndexByte(u.Path, '/')+1:])
	for _, ext := range installerExts {
		if strings.HasSuffix(name, ext) {
			return fmt.Errorf("archive %q is an installer (%s); the registry takes %s or a raw binary", name, ext, strings.Join(archiveExts, ", "))
		}
	}
	return nil
}

// CheckIcon checks an icon.svg as the registry's CI does: an SVG root,
// 16×16 (by width and height, else by the viewBox), and monochrome: every
// fill and stroke, as an attribute or in a style, is currentColor, none or
// inherit, so the icon follows the client's light or dark theme.
func CheckIcon(svg []byte) error {
	d := xml.NewDecoder(strings.NewReader(string(svg)))
	root := true
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("icon: %w", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root {
			if el.Name.Local != "svg" {
				return fmt.Errorf("icon: the root element is <%s>, not <svg>", el.Name.Local)
			}
			if err := checkSize(el); err != nil {
				return err
			}
			root = false
		}
		for _, a := range el.Attr {
			switch a.Name.Local {
			case "fill", "stroke":
				if err := checkPaint(el.Name.Local, a.Name.Local, a.Value); err != nil {
					return err
				}
			case "style":
				for _, decl := range strings.Split(a.Value, ";") {
					prop, val, _ := strings.Cut(decl, ":")
					if p := strings.TrimSpace(prop); p == "fill" || p == "stroke" {
						if err := checkPaint(el.Name.Local, p, val); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	if root {
		return errors.New("icon: no <svg> element")
	}
	return nil
}

func checkPaint(el, prop, value string) error {
	switch strings.TrimSpace(value) {
	case "currentColor", "none", "inherit":
		return nil
	}
	return fmt.Errorf("icon: <%s> %s=%q; only currentColor, none or inherit keep it monochrome", el, prop, value)
}

func checkSize(svg xml.StartElement) error {
	var w, h, box string
	for _, a := range svg.Attr {
		switch a.Name.Local {
		case "width":
			w = a.Value
		case "height":
			h = a.Value
		case "viewBox":
			box = a.Value
		}
	}
	if w != "" || h != "" {
		if px(w) != 16 || px(h) != 16 {
			return fmt.Errorf("icon: %s×%s, want 16×16", w, h)
		}
		return nil
	}
	f := strings.Fields(strings.ReplaceAll(box, ",", " "))
	if len(f) != 4 || px(f[2]) != 16 || px(f[3]) != 16 {
		return fmt.Errorf("icon: viewBox %q, want a 16×16 box (or width and height of 16)", box)
	}
	return nil
}

// px reads a length in pixels; -1 when it is not one.
func px(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "px"), 64)
	if err != nil {
		return -1
	}
	return v
}
