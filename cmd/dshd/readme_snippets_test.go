// Tests that README's JSON snippets work as pasted: the Zed settings entry
// has the shape Zed reads (an agent server of type custom, a command) and
// runs dshd on stdio, and every config-file example loads in a real dshd
// without a mistake.

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/internal/testkit"
)

// readmeJSON returns README's ```json blocks, in order.
func readmeJSON(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

func TestTheReadmesZedEntryIsOneZedReads(t *testing.T) {
	var found bool
	for _, block := range readmeJSON(t) {
		if !strings.Contains(block, "agent_servers") {
			continue
		}
		found = true
		var s struct {
			AgentServers map[string]struct {
				Type    string            `json:"type"`
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
			} `json:"agent_servers"`
		}
		if err := json.Unmarshal([]byte(block), &s); err != nil {
			t.Fatalf("the Zed snippet is not JSON: %v\n%s", err, block)
		}
		e, ok := s.AgentServers["dshd"]
		// Zed's agent_servers entries are tagged by "type"; a custom one
		// needs "type": "custom" and a command.
		if !ok || e.Type != "custom" || e.Command == "" {
			t.Fatalf("the Zed entry %+v lacks what Zed reads (type custom, a command):\n%s", e, block)
		}
		if len(e.Args) != 0 {
			t.Fatalf("the entry passes %q; dshd on stdio needs no arguments", e.Args)
		}
	}
	if !found {
		t.Fatal("README has no Zed settings snippet")
	}
}

func TestEveryConfigExampleInTheReadmeLoads(t *testing.T) {
	n := 0
	for _, block := range readmeJSON(t) {
		if strings.Contains(block, "agent_servers") || strings.Contains(block, `"mcpServers"`) {
			continue // Zed's settings; dshd prompt --mcp-config's file
		}
		n++
		file := testkit.Write(t, t.TempDir(), "config.json", block)
		// The agents' programs are looked up at start: the examples' are
		// installed, as stubs that are never run, on the PATH.
		var cfg struct {
			Agents map[string]struct{ Command string } `json:"agents"`
		}
		_ = json.Unmarshal([]byte(block), &cfg)
		bin := t.TempDir()
		for _, a := range cfg.Agents {
			if a.Command != "" && !strings.Contains(a.Command, "/") {
				if err := os.WriteFile(filepath.Join(bin, a.Command), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
		env := []string{"PATH=" + bin + string(filepath.ListSeparator) + os.Getenv("PATH")}
		// The flag's model wins over the file's, so no key is needed.
		code, stdout, stderr := runDshd(t, env, "prompt", "--config", file, "--model", "scripted", "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "hi")
		if code != 0 || stdout != "You said: hi\n" {
			t.Errorf("README config example %d: exit %d, stdout %q; stderr:\n%s\n%s", n, code, stdout, stderr, block)
		}
	}
	if n == 0 {
		t.Fatal("README has no config example")
	}
}

// The README's --mcp-config example reads as the servers it shows, its
// command found on the PATH.
func TestTheMCPConfigExampleInTheReadmeReads(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "npx"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	n := 0
	for _, block := range readmeJSON(t) {
		if !strings.Contains(block, `"mcpServers"`) {
			continue
		}
		n++
		servers, err := readMCPConfig(testkit.Write(t, t.TempDir(), "mcp.json", block))
		if err != nil || len(servers) != 2 {
			t.Fatalf("the README's MCP config: %d servers, %v\n%s", len(servers), err, block)
		}
		stdio, ok := servers[1].(*acp.McpServerStdio)
		if _, isHTTP := servers[0].(*acp.McpServerHTTP); !isHTTP || !ok || stdio.Command != filepath.Join(bin, "npx") || len(stdio.Env) != 1 {
			t.Fatalf("the README's MCP config reads as %#v", servers)
		}
	}
	if n == 0 {
		t.Fatal("README has no MCP config example")
	}
}
