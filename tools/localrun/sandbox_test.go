//go:build linux

package localrun

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/sandbox"
)

func TestRun_ARefusedWriteEndsTheOutputWithTheSettingThatAllowsIt(t *testing.T) {
	// The daemon's name of the setting, which the note must carry.
	s, err := sandbox.New(&sandbox.Config{Caches: []string{t.TempDir()}, Settings: sandbox.Settings{WritableRoots: "--sandbox-writable"}})
	if err != nil {
		t.Fatal(err)
	}
	ws, outside := t.TempDir(), t.TempDir()
	r := New(&Options{Sandbox: s, KillGrace: 300 * time.Millisecond})
	c := tools.Command{Command: "echo in > in.txt; echo out > " + outside + "/out.txt", Dir: ws, Roots: []string{ws}}
	d, err := r.DescribeSandbox(c)
	if errors.Is(err, sandbox.ErrRefused) {
		t.Skipf("this kernel cannot confine: %v", err)
	}
	if err != nil || !strings.Contains(d, "workspace-write") || !strings.Contains(d, ws) {
		t.Fatalf("DescribeSandbox = %q, %v", d, err)
	}
	res, err := r.Run(t.Context(), c, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "out.txt")); err == nil {
		t.Fatal("the write outside the workspace landed")
	}
	if _, err := os.Stat(filepath.Join(ws, "in.txt")); err != nil {
		t.Fatalf("the write inside the workspace failed: %s", res.Output)
	}
	for _, want := range []string{"Permission denied", "[dshd sandbox]", outside + "/out.txt", "--sandbox-writable"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("the output does not say %q:\n%s", want, res.Output)
		}
	}
}

func TestNew_TheDefaultEnvironmentHasNoSecrets(t *testing.T) {
	t.Setenv("DSHD_TOKEN", "tok-0123456789abcdef")
	t.Setenv("DEEPSEEK_API_KEY", "sk-live-secret")
	t.Setenv("DSHD_TEST_VISIBLE", "yes")
	res, err := New(nil).Run(t.Context(), tools.Command{Command: "env"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Output, "tok-0123456789abcdef") || strings.Contains(res.Output, "sk-live-secret") {
		t.Fatalf("a secret reached the command:\n%s", res.Output)
	}
	if !strings.Contains(res.Output, "DSHD_TEST_VISIBLE=yes") {
		t.Fatalf("the ordinary variables are missing:\n%s", res.Output)
	}
}
