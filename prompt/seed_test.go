// This file pins the renderer to the seed system's own renderPrompt tests
// (deepseek-harness, packages/core/system-prompt/tests/system-prompt.spec.ts,
// "prompt variables"): each test is named after the case it mirrors.

package prompt

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Mirrors "throws on a malformed complete reference, e.g. inner spaces":
// a complete {{…}} group whose inside is not exactly a name matching
// ^[a-z][a-z0-9_]*$ fails, even when the trimmed or lowered name is
// registered.
func TestRender_ThrowsOnAMalformedCompleteReferenceEgInnerSpaces(t *testing.T) {
	vars := Vars{"model": "m", "a": "x", "b": "y", "x": "z", "proto": "p"}
	for _, group := range []string{
		"{{ model }}", "{{model }}", "{{ model}}", "{{\tmodel\t}}",
		"{{Model}}", "{{MODEL}}", "{{toString}}",
		"{{a.b}}", "{{a-b}}", "{{a b}}",
		"{{_x}}", "{{__proto__}}", "{{1x}}", "{{é}}",
	} {
		t.Run(group, func(t *testing.T) {
			got, err := Render("on "+group+" now", vars)
			if !errors.Is(err, ErrMalformedGroup) {
				t.Fatalf("Render = %q, %v; want a malformed group", got, err)
			}
			var re *RenderError
			if !errors.As(err, &re) || re.Group != group || re.Offset != 3 || re.Name != "" {
				t.Fatalf("error = %#v", err)
			}
			if msg := err.Error(); !strings.Contains(msg, strconv.Quote(group)) || !strings.Contains(msg, "^[a-z][a-z0-9_]*$") {
				t.Errorf("message %q does not quote the group and the name rule", msg)
			}
		})
	}
	t.Run("Variables rejects the same groups", func(t *testing.T) {
		if _, err := Variables("{{ model }}"); !errors.Is(err, ErrMalformedGroup) {
			t.Fatalf("Variables = %v", err)
		}
	})
	t.Run("a well-formed name with digits and underscores renders", func(t *testing.T) {
		got, err := Render("{{a_1}}{{b2_}}", Vars{"a_1": "x", "b2_": "y"})
		if err != nil || got != "xy" {
			t.Fatalf("Render = %q, %v", got, err)
		}
	})
}

// Mirrors "throws on a reference to an unregistered variable, listing
// what exists".
func TestRender_ThrowsOnAReferenceToAnUnregisteredVariableListingWhatExists(t *testing.T) {
	_, err := Render("on {{modle}}", Vars{"model": "m", "cwd": "/w"})
	var re *RenderError
	if !errors.As(err, &re) || !errors.Is(err, ErrUnknownVariable) || re.Name != "modle" {
		t.Fatalf("error = %v", err)
	}
	if !slices.Equal(re.Registered, []string{"cwd", "model"}) {
		t.Errorf("Registered = %q, want the registered names, sorted", re.Registered)
	}
	if want := `unknown variable "modle"; registered variables: cwd, model`; !strings.Contains(err.Error(), want) {
		t.Errorf("message %q lacks %q", err, want)
	}
	t.Run("with a resolver the registered names are still those of vars", func(t *testing.T) {
		_, err := RenderWith("{{nope}}", Vars{"os": "linux"}, func(string) (string, bool) { return "", false })
		if want := `unknown variable "nope"; registered variables: os`; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v lacks %q", err, want)
		}
	})
}

// Mirrors `names "(none)" when no variables are registered at all`.
func TestRender_NamesNoneWhenNoVariablesAreRegisteredAtAll(t *testing.T) {
	for _, vars := range []Vars{nil, {}} {
		_, err := Render("{{x}}", vars)
		var re *RenderError
		if !errors.As(err, &re) || len(re.Registered) != 0 {
			t.Fatalf("error = %#v", err)
		}
		if want := `unknown variable "x"; registered variables: (none)`; !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

// Mirrors "rejects {{constructor}} as UNKNOWN" and "a variable NAMED like
// a prototype property works once actually registered": constructor is a
// well-formed name, so it is unknown until registered, then it renders.
func TestRender_RejectsConstructorAsUnknownUntilItIsRegistered(t *testing.T) {
	if _, err := Render("on {{constructor}}", Vars{"model": "m"}); !errors.Is(err, ErrUnknownVariable) {
		t.Fatalf("unregistered: %v", err)
	}
	if got, err := Render("{{constructor}}", Vars{"constructor": "own-value"}); err != nil || got != "own-value" {
		t.Fatalf("registered: %q, %v", got, err)
	}
}

// Mirrors "leaves a lone {{ verbatim only when NO }} follows anywhere after
// it" and the two "throws on a mangled reference with a }} still following"
// cases.
func TestRender_LeavesALoneOpenerVerbatimOnlyWhenNoCloserFollows(t *testing.T) {
	if got, err := Render("shell ${X:-{{fallback} stays", nil); err != nil || got != "shell ${X:-{{fallback} stays" {
		t.Fatalf("lone opener: %q, %v", got, err)
	}
	for _, tmpl := range []string{"{{{model}}}", "x {{a{b}} y {{model}}"} {
		if _, err := Render(tmpl, Vars{"model": "m"}); !errors.Is(err, ErrMalformedGroup) {
			t.Errorf("Render(%q) = %v, want a malformed group", tmpl, err)
		}
	}
}

// Every template dshd embeds renders with the variables dshd gives it; a
// template added later is covered without editing this test.
func TestTemplates_EveryEmbeddedTemplateRendersWithTheStandardVariables(t *testing.T) {
	names := Templates()
	if len(names) == 0 {
		t.Fatal("no embedded templates")
	}
	vars := SubagentVars("/w", "m", time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), false)
	for _, name := range names {
		tmpl, err := Template(name)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Render(tmpl, vars)
		if err != nil {
			t.Errorf("template %s: %v", name, err)
			continue
		}
		if strings.Contains(out, "{{") {
			t.Errorf("template %s still contains {{ after rendering", name)
		}
	}
}
