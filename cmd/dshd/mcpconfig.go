// This file reads `dshd prompt --mcp-config FILE`: the MCP servers of a
// prompt's session in the format of Claude Code's --mcp-config and a
// project's .mcp.json, so that a CI job gives a session the servers an
// editor gives in session/new.

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/internal/smallfile"
)

// maxMCPConfigBytes bounds the file: a list of a few servers, the user's
// own, read once at start.
const maxMCPConfigBytes = 1 << 20

// mcpConfig is the file: {"mcpServers": {NAME: entry, …}}.
type mcpConfig struct {
	MCPServers map[string]json.RawMessage `json:"mcpServers"`
}

// mcpEntry is one server: a command (type "stdio" or none), or the URL of
// an "http" or "sse" server.
type mcpEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// readMCPConfig reads the servers of the file at path, by name. A mistake
// is a configuration error naming the flag, the file and the server: an
// unknown key, a missing command or URL, a key of the other kind of
// server, a command not found.
func readMCPConfig(path string) ([]acp.McpServer, error) {
	where := "--mcp-config " + path
	data, err := smallfile.Read(path, smallfile.Bound{Max: maxMCPConfigBytes, What: "an MCP config file"})
	if err != nil {
		return nil, &config.Error{Where: where, Problem: err.Error()}
	}
	var file mcpConfig
	if err := strictJSON(data, &file); err != nil {
		return nil, &config.Error{Where: where, Problem: err.Error() + ` (want {"mcpServers": {"NAME": {"command": …} or {"type": "http", "url": …}}})`}
	}
	if file.MCPServers == nil {
		return nil, &config.Error{Where: where, Problem: `no "mcpServers" object`}
	}
	names := make([]string, 0, len(file.MCPServers))
	for name := range file.MCPServers {
		names = append(names, name)
	}
	slices.Sort(names)
	servers := make([]acp.McpServer, 0, len(names))
	for _, name := range names {
		s, err := mcpServer(name, file.MCPServers[name])
		if err != nil {
			return nil, &config.Error{Where: where + ": " + name, Problem: err.Error()}
		}
		servers = append(servers, s)
	}
	return servers, nil
}

// mcpServer is the server name's entry raw as ACP gives it.
func mcpServer(name string, raw json.RawMessage) (acp.McpServer, error) {
	var e mcpEntry
	if err := strictJSON(raw, &e); err != nil {
		return nil, err
	}
	switch e.Type {
	case "", "stdio":
		if e.Command == "" || e.URL != "" || e.Headers != nil {
			return nil, fmt.Errorf("a stdio server takes command, args and env")
		}
		command, err := absoluteCommand(e.Command)
		if err != nil {
			return nil, err
		}
		s := &acp.McpServerStdio{Name: name, Command: command, Args: e.Args}
		for _, k := range sortedKeys(e.Env) {
			s.Env = append(s.Env, acp.EnvVariable{Name: k, Value: e.Env[k]})
		}
		return s, nil
	case "http", "sse":
		if e.URL == "" || e.Command != "" || e.Args != nil || e.Env != nil {
			return nil, fmt.Errorf("an %s server takes url and headers", e.Type)
		}
		s := &acp.McpServerHTTP{Name: name, URL: e.URL}
		for _, k := range sortedKeys(e.Headers) {
			s.Headers = append(s.Headers, acp.HTTPHeader{Name: k, Value: e.Headers[k]})
		}
		if e.Type == "sse" {
			return (*acp.McpServerSSE)(s), nil
		}
		return s, nil
	}
	return nil, fmt.Errorf("type %q: want stdio, http or sse", e.Type)
}

// absoluteCommand is command as ACP takes it, absolute: a bare name found
// on PATH, a relative path against the current directory.
func absoluteCommand(command string) (string, error) {
	path, err := exec.LookPath(command)
	if err != nil {
		return "", fmt.Errorf("command %q: %w", command, unwrapExec(err))
	}
	return filepath.Abs(path)
}

// unwrapExec is exec's error without the command it repeats.
func unwrapExec(err error) error {
	if ee, ok := err.(*exec.Error); ok {
		return ee.Err
	}
	return err
}

// strictJSON decodes data into v, refusing a key v has no field for and
// anything after the value.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
