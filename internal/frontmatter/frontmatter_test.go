package frontmatter

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParse_SplitsFrontMatterAndBodyKeepingPositions(t *testing.T) {
	doc, err := Parse([]byte("---\nname: reviewer\ntools: Read, Grep\nlimits:\n  - a\n---\nYou review.\n\nCarefully.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Body != "You review.\n\nCarefully.\n" || doc.BodyLine != 7 {
		t.Fatalf("body %q on line %d", doc.Body, doc.BodyLine)
	}
	var keys []string
	for _, f := range doc.Fields {
		keys = append(keys, f.Key)
	}
	if !slices.Equal(keys, []string{"name", "tools", "limits"}) {
		t.Fatalf("keys %v", keys)
	}
	if f := doc.Fields[1]; f.Line != 3 || f.Column != 1 {
		t.Fatalf("tools at %d:%d, want 3:1", f.Line, f.Column)
	}
	tools, err := doc.Fields[1].List()
	if err != nil || !slices.Equal(tools, []string{"Read", "Grep"}) {
		t.Fatalf("comma list = %v, %v", tools, err)
	}
	seq, err := doc.Fields[2].List()
	if err != nil || !slices.Equal(seq, []string{"a"}) {
		t.Fatalf("sequence = %v, %v", seq, err)
	}
}

func TestParse_AcceptsCRLFAByteOrderMarkAndTheDotsCloser(t *testing.T) {
	doc, err := Parse([]byte("\xef\xbb\xbf---\r\nname: x\r\n...\r\nbody\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := doc.Fields[0].String(); s != "x" || doc.Body != "body\r\n" {
		t.Fatalf("name %q body %q", s, doc.Body)
	}
}

func TestParse_AFileWithoutFrontMatterIsAllBody(t *testing.T) {
	doc, err := Parse([]byte("Just a prompt with $ARGUMENTS\n"))
	if !errors.Is(err, ErrNoFrontMatter) || doc.Body != "Just a prompt with $ARGUMENTS\n" || len(doc.Fields) != 0 {
		t.Fatalf("doc %+v, err %v", doc, err)
	}
}

func TestParse_MistakesNameTheirLine(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"unclosed", "---\nname: x\n", "1:1: the front matter has no closing --- line"},
		{"duplicate key", "---\nname: x\nname: y\n---\n", "3:1: name: given twice (first on line 2)"},
		{"not a mapping", "---\n- a\n- b\n---\n", "2:1: the front matter must be a mapping"},
		{"bad yaml", "---\nname: x\n  bad: [\n---\n", "invalid YAML"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.in))
			var fe *Error
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestField_ConversionsRefuseTheWrongType(t *testing.T) {
	doc, err := Parse([]byte("---\nn: 12\nneg: -1\ns: hello\nlist: {a: 1}\nschema:\n  type: object\n  required: [a]\n  properties: {a: {type: integer, minimum: 1.5, default: null, deprecated: false, title: \"x \\\"y\\\"\"}, b: &b {const: 0x10}, c: *b}\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := map[string]Field{}
	for _, x := range doc.Fields {
		f[x.Key] = x
	}
	if n, err := f["n"].Int(); n != 12 || err != nil {
		t.Fatalf("Int = %d, %v", n, err)
	}
	if _, err := f["neg"].Int(); err == nil || !strings.Contains(err.Error(), "3:1: neg: want a whole number from 0") {
		t.Fatalf("negative: %v", err)
	}
	if _, err := f["s"].Int(); err == nil {
		t.Fatal("a string read as a number")
	}
	if _, err := f["list"].List(); err == nil {
		t.Fatal("a mapping read as a list")
	}
	if _, err := f["list"].String(); err == nil {
		t.Fatal("a mapping read as a string")
	}
	js, err := f["schema"].JSON()
	if err != nil || string(js) != `{"type":"object","required":["a"],"properties":{"a":{"type":"integer","minimum":1.5,"default":null,"deprecated":false,"title":"x \"y\""},"b":{"const":16},"c":{"const":16}}}` {
		t.Fatalf("JSON = %s, %v", js, err)
	}
	if !f["s"].IsString() || f["n"].IsString() || f["schema"].IsString() {
		t.Fatal("IsString")
	}
}
