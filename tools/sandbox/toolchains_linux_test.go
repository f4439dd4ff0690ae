package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultSandbox_TheCommonTestRunnersWork runs `go test`, `npm test`,
// `cargo test` and `pytest` on a tiny project each, in the default sandbox
// (workspace-write, the default caches of a fresh home): what breaks most
// often in other agents' sandboxes. A toolchain missing from this machine
// is skipped by name.
func TestDefaultSandbox_TheCommonTestRunnersWork(t *testing.T) {
	needLandlock(t)
	home := t.TempDir()
	// The toolchains live where they are installed; everything else a
	// test runner writes goes below the fresh home.
	if _, ok := os.LookupEnv("RUSTUP_HOME"); !ok {
		if real, err := os.UserHomeDir(); err == nil {
			t.Setenv("RUSTUP_HOME", filepath.Join(real, ".rustup"))
		}
	}
	// Go's build cache stays the machine's (a named GOCACHE is one of the
	// default caches): a cold one takes this test twenty seconds.
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		gocache := strings.TrimSpace(string(out))
		if err := os.MkdirAll(gocache, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("GOCACHE", gocache)
	}
	t.Setenv("HOME", home)
	t.Setenv("GOFLAGS", "")
	t.Setenv("GOTOOLCHAIN", "local")
	for _, v := range []string{"XDG_CACHE_HOME", "GOPATH", "GOMODCACHE", "CARGO_HOME", "CARGO_TARGET_DIR"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	s, err := New(&Config{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool, script string
		files        map[string]string
	}{
		{"go", "go test ./...", map[string]string{
			"go.mod":    "module example.com/t\n\ngo 1.21\n",
			"t_test.go": "package t\n\nimport (\"os\"; \"testing\")\n\nfunc TestT(t *testing.T) { if err := os.WriteFile(t.TempDir()+\"/x\", nil, 0o644); err != nil { t.Fatal(err) } }\n",
		}},
		{"npm", "npm test", map[string]string{
			"package.json": `{"name":"t","version":"1.0.0","scripts":{"test":"node test.js"}}`,
			"test.js":      `require("fs").writeFileSync(require("os").tmpdir() + "/x", ""); console.log("ok")`,
		}},
		{"cargo", "cargo test --offline", map[string]string{
			"Cargo.toml": "[package]\nname = \"t\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
			"src/lib.rs": "#[test]\nfn t() { assert_eq!(1 + 1, 2); }\n",
		}},
		{"pytest", "pytest -q", map[string]string{
			"test_t.py": "def test_t(tmp_path):\n    (tmp_path / 'x').write_text('x')\n",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			if _, err := exec.LookPath(tc.tool); err != nil {
				t.Skipf("no %s on this machine", tc.tool)
			}
			ws := t.TempDir()
			for name, content := range tc.files {
				write(t, filepath.Join(ws, name), content)
			}
			r := sh(t, s, ws, []string{ws}, tc.script)
			if r.err != nil || r.st.Code != 0 {
				t.Fatalf("%s in the default sandbox: %v %+v\n%s", tc.script, r.err, r.st, r.out)
			}
		})
	}
}
