package registry

import (
	"encoding/json"
	"strings"
	"testing"
)

// goodEntry is a valid binary entry; the cases below change one thing.
func goodEntry() map[string]any {
	bin := map[string]any{}
	for _, p := range Platforms {
		bin[p.Key] = map[string]any{
			"archive": "https://example.com/releases/download/v1.2.3/a-" + p.Key + p.ArchiveExt(),
			"sha256":  strings.Repeat("ab", 32),
			"cmd":     "./" + p.Exe("a"),
		}
	}
	return map[string]any{
		"id": "an-agent", "name": "An agent", "version": "1.2.3", "description": "Does things.",
		"repository": "https://example.com/an-agent", "authors": []any{"Someone"}, "license": "MIT",
		"distribution": map[string]any{"binary": bin},
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidate_AGoodEntryPasses(t *testing.T) {
	e, err := Validate(marshal(t, goodEntry()), "an-agent")
	if err != nil {
		t.Fatal(err)
	}
	if e.ID != "an-agent" || len(e.Distribution.Binary) != 6 || e.Distribution.Binary["linux-x86_64"].Cmd != "./a" {
		t.Fatalf("decoded %+v", e)
	}
	pkg := goodEntry()
	pkg["distribution"] = map[string]any{"npx": map[string]any{"package": "@scope/agent@1.2.3", "args": []any{"--acp"}}}
	if _, err := Validate(marshal(t, pkg), ""); err != nil {
		t.Fatalf("an npx entry: %v", err)
	}
}

func TestValidate_RefusesWhatTheRegistryRefuses(t *testing.T) {
	target := func(e map[string]any, key string) map[string]any {
		return e["distribution"].(map[string]any)["binary"].(map[string]any)[key].(map[string]any)
	}
	for _, tc := range []struct {
		name, dir, want string
		change          func(map[string]any)
	}{
		{"no description", "", "description", func(e map[string]any) { delete(e, "description") }},
		{"an id with capitals", "", "id", func(e map[string]any) { e["id"] = "Agent" }},
		{"an id that is not its directory", "other", "directory", func(e map[string]any) {}},
		{"a two-part version", "", "version", func(e map[string]any) { e["version"] = "1.2" }},
		{"a pre-release version", "", "MAJOR.MINOR.PATCH", func(e map[string]any) { e["version"] = "1.2.3-rc1" }},
		{"no distribution", "", "distribution", func(e map[string]any) { e["distribution"] = map[string]any{} }},
		{"an unknown distribution", "", "distribution", func(e map[string]any) { e["distribution"].(map[string]any)["brew"] = map[string]any{} }},
		{"an unknown platform", "", "freebsd", func(e map[string]any) {
			e["distribution"].(map[string]any)["binary"].(map[string]any)["freebsd-x86_64"] = map[string]any{"archive": "https://e.com/a.zip", "cmd": "a"}
		}},
		{"no windows build", "", "windows", func(e map[string]any) {
			bin := e["distribution"].(map[string]any)["binary"].(map[string]any)
			delete(bin, "windows-x86_64")
			delete(bin, "windows-aarch64")
		}},
		{"a target without cmd", "", "cmd", func(e map[string]any) { delete(target(e, "linux-x86_64"), "cmd") }},
		{"an unknown target field", "", "checksum", func(e map[string]any) { target(e, "linux-x86_64")["checksum"] = "x" }},
		{"a short sha256", "", "sha256", func(e map[string]any) { target(e, "linux-x86_64")["sha256"] = "abc" }},
		{"an installer", "", "installer", func(e map[string]any) {
			target(e, "darwin-x86_64")["archive"] = "https://example.com/releases/download/v1.2.3/a.dmg"
		}},
		{"a latest URL", "", "latest", func(e map[string]any) {
			target(e, "linux-x86_64")["archive"] = "https://example.com/releases/latest/download/a.tar.gz"
		}},
		{"another release's URL", "", "release 1.2.2", func(e map[string]any) {
			target(e, "linux-x86_64")["archive"] = "https://example.com/releases/download/v1.2.2/a.tar.gz"
		}},
		{"a relative URL", "", "absolute", func(e map[string]any) { target(e, "linux-x86_64")["archive"] = "a.tar.gz" }},
		{"an npx package at latest", "", "latest", func(e map[string]any) {
			e["distribution"] = map[string]any{"npx": map[string]any{"package": "agent@latest"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := goodEntry()
			tc.change(e)
			_, err := Validate(marshal(t, e), tc.dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error about %q", err, tc.want)
			}
		})
	}
}

func TestCheckIcon_WantsA16PixelMonochromeSVG(t *testing.T) {
	good := []string{
		`<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><path fill="currentColor" d="M0 0h16v16H0z"/></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" fill="none"><g stroke="currentColor"><path d="M1 1L15 15"/></g></svg>`,
		`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="16px" height="16px"><circle style="fill: inherit; opacity: .5" r="4"/></svg>`,
	}
	for _, svg := range good {
		if err := CheckIcon([]byte(svg)); err != nil {
			t.Errorf("%s: %v", svg, err)
		}
	}
	for _, tc := range []struct{ svg, want string }{
		{`<svg width="24" height="24"/>`, "16×16"},
		{`<svg width="16" height="32"/>`, "16×16"},
		{`<svg viewBox="0 0 28 28"/>`, "viewBox"},
		{`<svg width="16" height="16"><path fill="#FF5500"/></svg>`, "#FF5500"},
		{`<svg width="16" height="16"><path stroke="red"/></svg>`, "red"},
		{`<svg width="16" height="16"><path style="fill:rgb(1,2,3)"/></svg>`, "rgb"},
		{`<html/>`, "not <svg>"},
		{`not xml`, "no <svg>"},
	} {
		if err := CheckIcon([]byte(tc.svg)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error about %q", tc.svg, err, tc.want)
		}
	}
}

func TestPlatforms_AreTheRegistrysSixOnTheirGoTargets(t *testing.T) {
	want := map[string]string{
		"darwin-aarch64": "darwin/arm64", "darwin-x86_64": "darwin/amd64",
		"linux-aarch64": "linux/arm64", "linux-x86_64": "linux/amd64",
		"windows-aarch64": "windows/arm64", "windows-x86_64": "windows/amd64",
	}
	if len(Platforms) != len(want) {
		t.Fatalf("%d platforms, want %d", len(Platforms), len(want))
	}
	for _, p := range Platforms {
		if want[p.Key] != p.GOOS+"/"+p.GOARCH {
			t.Errorf("%s builds %s/%s, want %s", p.Key, p.GOOS, p.GOARCH, want[p.Key])
		}
	}
}
