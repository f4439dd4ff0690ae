package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The container image is only useful if run_command works in it; this
// machine has no Docker engine, so the Dockerfile is checked as text: its
// final stage must have a shell and git, run as a non-root user, stamp the
// version, and the build context must leave out local state and binaries.

// dockerStage is one FROM … stage of a Dockerfile.
type dockerStage struct {
	from  string
	lines []string // instructions after FROM, continuation lines joined
}

func readDockerfile(t *testing.T) []dockerStage {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stages []dockerStage
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	flush := func() {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return
		}
		if from, ok := strings.CutPrefix(line, "FROM "); ok {
			stages = append(stages, dockerStage{from: from})
			return
		}
		if len(stages) == 0 {
			t.Fatalf("Dockerfile: %q before the first FROM", line)
		}
		s := &stages[len(stages)-1]
		s.lines = append(s.lines, line)
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if body, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(line)
		flush()
	}
	flush()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(stages) == 0 {
		t.Fatal("Dockerfile has no stage")
	}
	return stages
}

func TestDockerfile_TheRuntimeImageHasAShellGitAndCoreutils(t *testing.T) {
	stages := readDockerfile(t)
	final := stages[len(stages)-1]
	for _, bare := range []string{"scratch", "distroless/static", "distroless/base"} {
		if strings.Contains(final.from, bare) {
			t.Fatalf("the runtime stage is %q, which has no shell: run_command would fail with fork/exec /bin/sh", final.from)
		}
	}
	var installs string
	for _, l := range final.lines {
		if strings.HasPrefix(l, "RUN ") {
			installs += " " + l
		}
	}
	for _, pkg := range []string{"git", "coreutils", "bash", "ca-certificates"} {
		if !regexp.MustCompile(`(apk add|apt-get install)[^&]*\b` + regexp.QuoteMeta(pkg) + `\b`).MatchString(installs) {
			t.Errorf("the runtime stage does not install %s: %s", pkg, installs)
		}
	}
}

func TestDockerfile_RunsAsANonRootUserAndStampsTheVersion(t *testing.T) {
	stages := readDockerfile(t)
	final := stages[len(stages)-1]
	user := ""
	for _, l := range final.lines {
		if u, ok := strings.CutPrefix(l, "USER "); ok {
			user = strings.TrimSpace(u)
		}
	}
	if user == "" || strings.HasPrefix(user, "root") || strings.HasPrefix(user, "0") {
		t.Errorf("the runtime stage runs as %q, want a non-root user", user)
	}
	stamped := false
	for _, s := range stages {
		for _, l := range s.lines {
			if strings.Contains(l, "go build") && strings.Contains(l, "internal/version.Version=${VERSION}") {
				stamped = true
			}
		}
	}
	if !stamped {
		t.Error("no stage builds dshd with -X …/internal/version.Version=${VERSION}: `dshd version` in the image would say dev")
	}
}

func TestDockerignore_LeavesOutHistoryBinariesAndNpmTrees(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".dockerignore"))
	if err != nil {
		t.Fatalf("no .dockerignore: the whole checkout (history, bin/, node_modules) becomes the build context: %v", err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			have[l] = true
		}
	}
	for _, want := range []string{".git", "bin", "**/node_modules"} {
		if !have[want] {
			t.Errorf(".dockerignore does not leave out %s", want)
		}
	}
}
