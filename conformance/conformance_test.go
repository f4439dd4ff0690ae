package conformance

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

var (
	caseFilter = flag.String("case", "", "run only the conformance cases matching this regexp")
	dshdFlag   = flag.String("dshd", "", "the dshd binary to test (default: bin/dshd, rebuilt when stale)")
)

// buildDir holds a dshd built for this test run when bin/dshd is stale.
var buildDir string

func TestMain(m *testing.M) {
	if os.Getenv("CONFORMANCE_FAKE_AGENT") == "1" {
		fakeAgent()
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "dshd-conformance-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// knownFailures are cases that fail because of dshd bugs or missing
// features outside this package; each names why. Remove an entry once
// the lead has fixed it.
var knownFailures = map[string]string{}

var (
	runOnce    sync.Once
	runResults []Result
	runErr     error
)

// results runs the whole suite against dshd once per test binary; the
// conformance test and the schema test share it.
func results(t *testing.T) []Result {
	t.Helper()
	runOnce.Do(func() {
		bin, err := dshdBinary()
		if err != nil {
			runErr = err
			return
		}
		var re *regexp.Regexp
		if *caseFilter != "" {
			re = regexp.MustCompile(*caseFilter)
		}
		home, err := os.MkdirTemp("", "acp-home-")
		if err != nil {
			runErr = err
			return
		}
		defer os.RemoveAll(home)
		target := Target{Command: bin, Args: []string{"--model", "scripted"}, Env: []string{
			"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
			"XDG_STATE_HOME=" + filepath.Join(home, "state"),
		}}
		opts := &Options{Cases: re, Dshd: true, KnownFailures: knownFailures, Transcripts: true, Timeout: 60 * time.Second}
		if dir, err := FindSchemaDir(filepath.Dir(bin)); err == nil {
			if opts.Schema, err = LoadSchemas(dir); err != nil {
				runErr = err
				return
			}
		} else if wd, err := os.Getwd(); err == nil {
			if dir, err := FindSchemaDir(wd); err == nil {
				if opts.Schema, err = LoadSchemas(dir); err != nil {
					runErr = err
					return
				}
			}
		}
		runResults = Run(t.Context(), target, opts)
	})
	if runErr != nil {
		t.Fatal(runErr)
	}
	return runResults
}

// dshdBinary returns bin/dshd when it is newer than every Go file of the
// module, and otherwise builds dshd into a temporary directory.
func dshdBinary() (string, error) {
	if *dshdFlag != "" {
		return filepath.Abs(*dshdFlag)
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	bin := filepath.Join(root, "bin", "dshd")
	if st, err := os.Stat(bin); err == nil && !newerSource(root, st.ModTime()) {
		return bin, nil
	}
	bin = filepath.Join(buildDir, "dshd")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/dshd")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", &buildError{err: err, out: stderr.String()}
	}
	return bin, nil
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "building dshd: " + e.err.Error() + "\n" + e.out }

// newerSource reports whether any Go file or embedded asset under root
// changed after t.
func newerSource(root string, t time.Time) bool {
	newer := false
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || newer {
			return filepath.SkipDir
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".git", "bin", "conformance":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".md") || p == filepath.Join(root, "go.mod") {
			if info, err := d.Info(); err == nil && info.ModTime().After(t) {
				newer = true
			}
		}
		return nil
	})
	return newer
}

func TestConformanceAgainstDshd(t *testing.T) {
	res := results(t)
	var table bytes.Buffer
	if err := WriteTable(&table, res); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
	for _, r := range res {
		switch r.Status {
		case Fail, Advice:
			// dshd follows its own policy: advice is a failure here.
			t.Errorf("%s %s [%s] %s\n%s", r.Status, r.ID, strings.Join(r.Items, " "), r.Name, r.Detail)
		case Skip:
			if testing.Verbose() {
				t.Logf("skip %s: %s", r.ID, r.Detail)
			}
		}
	}
}

func TestEveryCaseNamesKnownItems(t *testing.T) {
	known := map[string]bool{}
	for _, it := range Checklist() {
		known[it.ID] = true
	}
	ids := map[string]bool{}
	for _, c := range Cases() {
		if ids[c.ID] {
			t.Errorf("case id %s is used twice", c.ID)
		}
		ids[c.ID] = true
		if len(c.Items) == 0 {
			t.Errorf("case %s covers no checklist item", c.ID)
		}
		for _, it := range c.Items {
			if !known[it] {
				t.Errorf("case %s names unknown item %q", c.ID, it)
			}
		}
	}
	for id := range knownFailures {
		if !ids[id] {
			t.Errorf("knownFailures names unknown case %s", id)
		}
	}
}
