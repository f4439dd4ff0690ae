// This file fuzzes the renderer against invariants that hold for every
// template.

package prompt

import (
	"errors"
	"strings"
	"testing"
)

// FuzzRender checks, for any template and any value:
//
//   - rendering never panics, and every failure is a *RenderError matching
//     exactly one sentinel;
//   - a template that renders with a resolver accepting every name is
//     exactly one whose Variables succeed (malformedness does not depend
//     on the variables);
//   - on success, the resolver is asked once per group, and the output
//     length is the output with empty values plus one value per group, so
//     no value was re-scanned and no group was left in place;
//   - the output with empty values is a fixed point of Render with no
//     variables: no group, malformed or not, survives rendering;
//   - registering exactly the names of Variables renders the same text,
//     and dropping the registry fails naming the first of them.
func FuzzRender(f *testing.F) {
	for _, s := range []struct{ tmpl, value string }{
		{"", ""},
		{"{{model}}", "m"},
		{"{{{model}}}", "x"},
		{"{{a{b}}", ""},
		{"{{ }}", "v"},
		{"{{", "{{x}}"},
		{"}}", ""},
		{"a {{b}} c {{ d.e-f }} {{", "{{b}}"},
		{"{{constructor}}{{__proto__}}", "}}"},
		{"x}{{a}}}{b}}", "{"},
	} {
		f.Add(s.tmpl, s.value)
	}
	f.Fuzz(func(t *testing.T, tmpl, value string) {
		calls := 0
		out, err := RenderWith(tmpl, nil, func(string) (string, bool) {
			calls++
			return value, true
		})
		names, verr := Variables(tmpl)
		if (err == nil) != (verr == nil) {
			t.Fatalf("RenderWith error %v but Variables error %v", err, verr)
		}
		if err != nil {
			var re *RenderError
			if !errors.As(err, &re) {
				t.Fatalf("error %T is not a *RenderError", err)
			}
			if !errors.Is(err, ErrMalformedGroup) || errors.Is(err, ErrUnknownVariable) {
				t.Fatalf("an accepting resolver failed with %v", err)
			}
			if re.Offset < 0 || re.Offset >= len(tmpl) || !strings.HasPrefix(tmpl[re.Offset:], re.Group) {
				t.Fatalf("bad position %d / group %q", re.Offset, re.Group)
			}
			return
		}

		empties := 0
		empty, err := RenderWith(tmpl, nil, func(string) (string, bool) {
			empties++
			return "", true
		})
		if err != nil || empties != calls {
			t.Fatalf("empty values: %v, %d calls vs %d", err, empties, calls)
		}
		if len(out) != len(empty)+calls*len(value) {
			t.Fatalf("len(out)=%d, want %d+%d*%d", len(out), len(empty), calls, len(value))
		}
		if len(empty) > len(tmpl) {
			t.Fatalf("rendering with empty values grew the text")
		}
		again, err := Render(empty, nil)
		if err != nil || again != empty {
			t.Fatalf("a group survived: Render(%q) = %q, %v", empty, again, err)
		}

		vars := Vars{}
		for _, n := range names {
			vars[n] = value
		}
		reg, err := Render(tmpl, vars)
		if err != nil || reg != out {
			t.Fatalf("registry render = %q, %v; resolver render = %q", reg, err, out)
		}
		if len(names) > 0 {
			_, err := Render(tmpl, nil)
			var re *RenderError
			if !errors.As(err, &re) || !errors.Is(err, ErrUnknownVariable) || re.Name != names[0] {
				t.Fatalf("unregistered render error = %v, want unknown %q", err, names[0])
			}
		} else if calls != 0 || out != tmpl {
			t.Fatalf("a template without variables changed: %q -> %q", tmpl, out)
		}
	})
}
