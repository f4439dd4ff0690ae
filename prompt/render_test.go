// This file tests the renderer's rules one by one.

package prompt

import (
	"errors"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	vars := Vars{"model": "deepseek-chat", "cwd": "/src/shop", "a_b1_c": "underscored", "empty": "", "inject": "{{model}}"}
	tests := []struct {
		name string
		tmpl string
		want string
	}{
		{"text without groups is returned unchanged", "plain text { } }{", "plain text { } }{"},
		{"empty template renders empty", "", ""},
		{"a registered variable is substituted", "model={{model}}", "model=deepseek-chat"},
		{"every occurrence is substituted", "{{cwd}}:{{model}}:{{cwd}}", "/src/shop:deepseek-chat:/src/shop"},
		{"names may contain digits and underscores after the first letter", "{{a_b1_c}}", "underscored"},
		{"an empty value is substituted", "[{{empty}}]", "[]"},
		{"a substituted value is never re-scanned", "x {{inject}} y", "x {{model}} y"},
		{"a lone opener without a closer after it stays verbatim", "a {{ b", "a {{ b"},
		{"a lone opener after the last group stays verbatim", "{{model}} then {{ and {", "deepseek-chat then {{ and {"},
		{"a closer without an opener stays verbatim", "a }} b }}", "a }} b }}"},
		{"a closer before a group stays verbatim", "}} {{model}}", "}} deepseek-chat"},
		{"a brace after a group stays verbatim", "{{model}}}", "deepseek-chat}"},
		{"a single brace before a group stays verbatim", "{ {{model}}", "{ deepseek-chat"},
		{"adjacent groups are both substituted", "{{model}}{{cwd}}", "deepseek-chat/src/shop"},
		{"multibyte text around groups is kept", "«{{model}}» ✓", "«deepseek-chat» ✓"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(tt.tmpl, vars)
			if err != nil {
				t.Fatalf("Render(%q) error: %v", tt.tmpl, err)
			}
			if got != tt.want {
				t.Errorf("Render(%q) = %q, want %q", tt.tmpl, got, tt.want)
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	vars := Vars{"model": "m"}
	tests := []struct {
		name      string
		tmpl      string
		sentinel  error
		varName   string
		line, col int
		offset    int
	}{
		{"an unregistered name is an error naming it", "hi {{nope}}", ErrUnknownVariable, "nope", 1, 4, 3},
		{"constructor is not inherited from anywhere", "{{constructor}}", ErrUnknownVariable, "constructor", 1, 1, 0},
		{"hasownproperty is not inherited from anywhere", "{{hasownproperty}}", ErrUnknownVariable, "hasownproperty", 1, 1, 0},
		{"a capital letter is malformed, not another name", "{{Model}}", ErrMalformedGroup, "", 1, 1, 0},
		{"spaces around the name are malformed", "{{ model }}", ErrMalformedGroup, "", 1, 1, 0},
		{"a leading underscore is malformed", "{{__proto__}}", ErrMalformedGroup, "", 1, 1, 0},
		{"a dot or a dash is malformed", "{{a.b}} {{a-b}}", ErrMalformedGroup, "", 1, 1, 0},
		{"a triple opener is malformed", "{{{model}}}", ErrMalformedGroup, "", 1, 1, 0},
		{"a brace inside the name is malformed", "{{a{b}}", ErrMalformedGroup, "", 1, 1, 0},
		{"an empty group is malformed", "{{}}", ErrMalformedGroup, "", 1, 1, 0},
		{"a blank group is malformed", "x\n  {{ }}", ErrMalformedGroup, "", 2, 3, 4},
		{"a name starting with a digit is malformed", "{{1x}}", ErrMalformedGroup, "", 1, 1, 0},
		{"two names in one group are malformed", "{{model cwd}}", ErrMalformedGroup, "", 1, 1, 0},
		{"a newline inside a group is malformed", "{{\nmodel}}", ErrMalformedGroup, "", 1, 1, 0},
		{"an opener whose closer comes much later is malformed", "use {{ in text, then {{model}}", ErrMalformedGroup, "", 1, 5, 4},
		{"an error after a good group is reported at its position", "{{model}}\n«é» {{x}}", ErrUnknownVariable, "x", 2, 5, 17},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(tt.tmpl, vars)
			if err == nil {
				t.Fatalf("Render(%q) = %q, want an error", tt.tmpl, got)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("error %v does not match %v", err, tt.sentinel)
			}
			var re *RenderError
			if !errors.As(err, &re) {
				t.Fatalf("error %T is not a *RenderError", err)
			}
			if re.Name != tt.varName || re.Line != tt.line || re.Column != tt.col || re.Offset != tt.offset {
				t.Errorf("got name %q at %d:%d offset %d, want %q at %d:%d offset %d",
					re.Name, re.Line, re.Column, re.Offset, tt.varName, tt.line, tt.col, tt.offset)
			}
			if !strings.HasPrefix(re.Group, "{{") || !strings.HasSuffix(re.Group, "}}") {
				t.Errorf("Group = %q, want the text from {{ to }}", re.Group)
			}
			if tt.varName != "" && !strings.Contains(err.Error(), tt.varName) {
				t.Errorf("message %q does not name %q", err, tt.varName)
			}
		})
	}
}

func TestRenderWith(t *testing.T) {
	t.Run("the resolver supplies an unregistered name", func(t *testing.T) {
		got, err := RenderWith("in {{cwd}} with {{model}}", Vars{"model": "m"}, func(name string) (string, bool) {
			return "/rescued", name == "cwd"
		})
		if err != nil || got != "in /rescued with m" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("registered names never reach the resolver", func(t *testing.T) {
		_, err := RenderWith("{{model}}", Vars{"model": "m"}, func(name string) (string, bool) {
			t.Errorf("resolver called for %q", name)
			return "", false
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a resolver that declines leaves an unknown variable error", func(t *testing.T) {
		_, err := RenderWith("{{cwd}}", nil, func(string) (string, bool) { return "", false })
		var re *RenderError
		if !errors.As(err, &re) || re.Name != "cwd" || !errors.Is(err, ErrUnknownVariable) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("the resolver is asked once per occurrence in order", func(t *testing.T) {
		var asked []string
		got, err := RenderWith("{{b}}{{a}}{{b}}", nil, func(name string) (string, bool) {
			asked = append(asked, name)
			return name, true
		})
		if err != nil || got != "bab" || strings.Join(asked, ",") != "b,a,b" {
			t.Fatalf("got %q, %v, asked %v", got, err, asked)
		}
	})
	t.Run("a resolved value is never re-scanned", func(t *testing.T) {
		got, err := RenderWith("{{x}}", nil, func(string) (string, bool) { return "{{x}}{{", true })
		if err != nil || got != "{{x}}{{" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("a malformed group fails before the resolver sees it", func(t *testing.T) {
		_, err := RenderWith("{{a b}}", nil, func(name string) (string, bool) {
			t.Errorf("resolver called for %q", name)
			return "", true
		})
		if !errors.Is(err, ErrMalformedGroup) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestVariables(t *testing.T) {
	t.Run("names are distinct and in order of first use", func(t *testing.T) {
		got, err := Variables("{{b}} {{a}} {{b}} {{c_d}} }} {{")
		if err != nil || strings.Join(got, ",") != "b,a,c_d" {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("a malformed group is reported", func(t *testing.T) {
		if _, err := Variables("{{a}} {{{b}}}"); !errors.Is(err, ErrMalformedGroup) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a template without groups has no variables", func(t *testing.T) {
		if got, err := Variables("no {{ groups"); err != nil || len(got) != 0 {
			t.Fatalf("got %v, %v", got, err)
		}
	})
}

func TestRenderErrorMessageIsCapped(t *testing.T) {
	tmpl := "{{" + strings.Repeat("é", 200) + "}}"
	_, err := Render(tmpl, nil)
	if err == nil {
		t.Fatal("want an error")
	}
	if len(err.Error()) > 300 {
		t.Errorf("message is %d bytes long: %s", len(err.Error()), err)
	}
	if !strings.Contains(err.Error(), "…") {
		t.Errorf("message %q does not mark the cut", err)
	}
}

func BenchmarkRenderSystem(b *testing.B) {
	tmpl, err := Template(System)
	if err != nil {
		b.Fatal(err)
	}
	vars := Vars{"cwd": "/home/dev/shop", "model": "deepseek-chat", "date": "2026-03-02", "os": "linux/amd64"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(tmpl, vars); err != nil {
			b.Fatal(err)
		}
	}
}
