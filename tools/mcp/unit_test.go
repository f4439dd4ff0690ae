package mcp

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/dshd/dshd/tools"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolNames(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct {
		name, server, tool, want string
	}{
		{"plain names are kept", "docs", "search", "mcp__docs__search"},
		{"dashes and underscores are kept", "my-srv_1", "get-sum", "mcp__my-srv_1__get-sum"},
		{"other characters become underscores", "my docs", "a.b/c", "mcp__my_docs__a_b_c"},
		{"a multibyte rune is one underscore", "dé", "ü", "mcp__d____"},
		{"invalid UTF-8 is one underscore a byte", "a\xffb", "t", "mcp__a_b__t"},
		{"a name of exactly 64 characters is kept", "s", strings.Repeat("t", 56), "mcp__s__" + strings.Repeat("t", 56)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toolName(tt.server, tt.tool); got != tt.want {
				t.Errorf("toolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
			}
		})
	}

	t.Run("a name too long is cut and hashed, deterministically", func(t *testing.T) {
		a := toolName("server", long)
		if len(a) != maxNameLen || !tools.ValidToolName(a) || a != toolName("server", long) {
			t.Errorf("got %q (%d)", a, len(a))
		}
		if !strings.HasPrefix(a, "mcp__server__xxxx") {
			t.Errorf("got %q", a)
		}
		if b := toolName("server", long+"y"); b == a {
			t.Errorf("two long names collide: %q", a)
		}
	})

	t.Run("a hashed short name stays whole", func(t *testing.T) {
		h := hashedName("s", "a.b")
		if !strings.HasPrefix(h, "mcp__s__a_b_") || len(h) != len("mcp__s__a_b")+hashLen {
			t.Errorf("got %q", h)
		}
		if h == hashedName("s", "a_b") {
			t.Error("the hashes of a.b and a_b collide")
		}
	})

	t.Run("two tools that sanitize alike both get a name", func(t *testing.T) {
		s := &server{cfg: ServerConfig{Name: "s"}, opts: (*Options)(nil).withDefaults(), reg: tools.NewRegistry(nil), tools: map[string]*registered{}, log: discard, red: &redactor{}}
		defs := []*sdk.Tool{
			{Name: "a.b", InputSchema: objectSchema},
			{Name: "a_b", InputSchema: objectSchema},
		}
		want := []string{"mcp__s__a_b", hashedName("s", "a_b")}
		// Neither keeps its own name: the model is told of both.
		w := s.sync(defs)
		if len(w) != 2 || !errors.Is(w[0], ErrToolRenamed) || !strings.Contains(w[0].Error(), `tool "a.b": offered to the model as `+want[0]) ||
			!errors.Is(w[1], ErrToolRenamed) || !strings.Contains(w[1].Error(), `tool "a_b": offered to the model as `+want[1]) {
			t.Fatalf("warnings %v", w)
		}
		names := s.reg.Names()
		if len(names) != 2 || !contains(names, want[0]) || !contains(names, want[1]) {
			t.Errorf("names %v, want %v", names, want)
		}
	})
}

var discard = slog.New(slog.DiscardHandler)

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  ServerConfig
		kind error
	}{
		{"a stdio server with a command is valid", ServerConfig{Name: "a", Command: "/bin/x"}, nil},
		{"transport stdio may be spelled out", ServerConfig{Name: "a", Transport: "stdio", Command: "/bin/x"}, nil},
		{"an http server with an https URL is valid", ServerConfig{Name: "a", Transport: "http", URL: "https://h/x"}, nil},
		{"a blank name is invalid", ServerConfig{Name: " ", Command: "/bin/x"}, ErrInvalidConfig},
		{"a NUL in an argument is invalid", ServerConfig{Name: "a", Command: "/bin/x", Args: []string{"a\x00"}}, ErrInvalidConfig},
		{"an env name with = is invalid", ServerConfig{Name: "a", Command: "/bin/x", Env: []EnvVar{{Name: "A=B", Value: "v"}}}, ErrInvalidConfig},
		{"a relative URL is invalid", ServerConfig{Name: "a", Transport: "sse", URL: "/x"}, ErrInvalidConfig},
		{"a header name with a colon is invalid", ServerConfig{Name: "a", Transport: "http", URL: "http://h", Headers: []Header{{Name: "A:", Value: "v"}}}, ErrInvalidConfig},
		{"a header value with a newline is invalid", ServerConfig{Name: "a", Transport: "http", URL: "http://h", Headers: []Header{{Name: "A", Value: "v\nX: y"}}}, ErrInvalidConfig},
		{"an unknown transport is unsupported", ServerConfig{Name: "a", Transport: "ws", URL: "ws://h"}, ErrUnsupportedTransport},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.validate()
			if tt.kind == nil && err != nil || tt.kind != nil && !errors.Is(err, tt.kind) {
				t.Errorf("validate() = %v, want %v", err, tt.kind)
			}
		})
	}
}

func TestBuildEnv(t *testing.T) {
	ours := map[string]string{"PATH": "/bin", "HOME": "/home/me", "SECRET_API_KEY": "k"}
	lookup := func(k string) (string, bool) { v, ok := ours[k]; return v, ok }
	got := buildEnv([]string{"PATH", "HOME", "TZ"}, lookup, []EnvVar{{Name: "HOME", Value: "/srv"}, {Name: "X", Value: "1"}})
	want := []string{"PATH=/bin", "HOME=/srv", "X=1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v, want %v", got, want)
	}
	if e := buildEnv([]string{}, lookup, nil); len(e) != 0 {
		t.Errorf("empty inherit list inherited %v", e)
	}
}

func TestRedactor(t *testing.T) {
	cfg := ServerConfig{
		Env:     []EnvVar{{Name: "API_TOKEN", Value: "abc"}, {Name: "MODE", Value: "fast"}, {Name: "LONG", Value: "a-long-plain-value"}},
		Headers: []Header{{Name: "Authorization", Value: "Bearer hdr-secret"}},
		URL:     "https://user:pw-secret@h.example/mcp?key=q-secret&x=1",
	}
	r := newRedactor(&cfg)
	msg := "abc fast a-long-plain-value hdr-secret Bearer hdr-secret pw-secret q-secret " + cfg.URL
	got := r.scrub(msg)
	for _, s := range []string{"abc", "a-long-plain-value", "hdr-secret", "pw-secret", "q-secret"} {
		if strings.Contains(got, s) {
			t.Errorf("%q left in %q", s, got)
		}
	}
	if !strings.Contains(got, "fast") {
		t.Errorf("a short plain value was scrubbed: %q", got)
	}
	if !strings.Contains(got, "https://h.example/mcp?") {
		t.Errorf("the URL lost its safe part: %q", got)
	}
	var nilR *redactor
	if nilR.scrub("x") != "x" {
		t.Error("a nil redactor changes text")
	}
}

func TestMapResult(t *testing.T) {
	tests := []struct {
		name    string
		res     *sdk.CallToolResult
		max     int
		want    string
		isError bool
	}{
		{"no result is an error", nil, 100, `MCP server "s" returned no result`, true},
		{"empty content says so", &sdk.CallToolResult{}, 100, "(the tool returned no content)", false},
		{"an error without text says so", &sdk.CallToolResult{IsError: true}, 100, "MCP tool error: the tool reported an error without a message", true},
		{"text blocks are joined by newlines", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}}, 100, "a\nb", false},
		{"structured content beside text is not repeated", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "t"}}, StructuredContent: map[string]any{"a": 1}}, 100, "t", false},
		{"a binary resource without a type says so", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "u", Blob: []byte{1}}}}}, 100, "[resource <u>: unknown type, 1 bytes]", false},
		{"long output is cut on a rune boundary", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "aéb"}}}, 2, "a\n[output truncated: 1 of 4 bytes shown (--mcp-max-output-bytes)]", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := mapResult("s", tt.res, tt.max, "--mcp-max-output-bytes")
			if got.Output != tt.want || got.IsError != tt.isError {
				t.Errorf("got %q (error %v), want %q (error %v)", got.Output, got.IsError, tt.want, tt.isError)
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	if c := Capabilities(); !c.Stdio || !c.HTTP || !c.SSE {
		t.Errorf("Capabilities() = %+v", c)
	}
}
