package outputschema

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"weak"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dshd/dshd/internal/testkit"
)

const review = `{"type":"object","required":["verdict"],"properties":{"verdict":{"type":"string","enum":["approve","changes-requested"]},"findings":{"type":"array","items":{"type":"string","pattern":"^[a-z]"}}},"additionalProperties":false}`

func TestCompile_OneCompilationPerTextWhileHeld(t *testing.T) {
	a, err := Compile([]byte(review))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Compile([]byte(review))
	if again != a {
		t.Fatal("the same text was compiled twice while its schema was held")
	}
	other, _ := Compile([]byte(`{"type":"string"}`))
	if other == a {
		t.Fatal("two texts share one schema")
	}
	runtime.KeepAlive(a)
}

// TestCompile_ValidatesAndRejectsAsAFreshCompilation holds the shared
// schema to what the library gives for the text compiled on its own,
// also while many answers are validated against it at once.
func TestCompile_ValidatesAndRejectsAsAFreshCompilation(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(review), &s); err != nil {
		t.Fatal(err)
	}
	fresh, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	held, _ := Compile([]byte(review))
	shared, _ := Compile([]byte(review))
	if shared != held {
		t.Fatal("not the shared schema")
	}
	answers := []struct {
		json string
		ok   bool
	}{
		{`{"verdict":"approve"}`, true},
		{`{"verdict":"changes-requested","findings":["a bug"]}`, true},
		{`{}`, false},
		{`{"verdict":"maybe"}`, false},
		{`{"verdict":"approve","findings":["Bug"]}`, false},
		{`{"verdict":"approve","extra":1}`, false},
		{`[1]`, false},
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, a := range answers {
				var v any
				if err := json.Unmarshal([]byte(a.json), &v); err != nil {
					t.Error(err)
					return
				}
				want, got := fresh.Validate(v), shared.Validate(v)
				if (got == nil) != a.ok || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s: shared %v, fresh %v", a.json, got, want)
				}
			}
		})
	}
	wg.Wait()
}

func TestCompile_SaysWhatIsWrong(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`{"type": 7}`, "not a JSON Schema: "},
		{`{`, "not a JSON Schema: "},
		{`{"type":"string","pattern":"("}`, "not a valid JSON Schema: "},
	} {
		if _, err := Compile([]byte(tc.raw)); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Compile(%s) = %v, want %q…", tc.raw, err, tc.want)
		}
	}
}

func TestCompile_ASchemaNobodyHoldsIsDropped(t *testing.T) {
	const text = `{"type":"object","required":["dropped"]}`
	w := compileWeak(t, text)
	testkit.Within(t, "the entry of a schema nobody holds to go", func() {
		for {
			runtime.GC()
			if _, ok := compiled.Load(text); !ok {
				return
			}
			runtime.Gosched()
		}
	})
	if w.Value() != nil {
		t.Fatal("the schema outlived its entry")
	}
}

// compileWeak compiles text and keeps no strong reference to it.
func compileWeak(t *testing.T, text string) weak.Pointer[jsonschema.Resolved] {
	r, err := Compile([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return weak.Make(r)
}
