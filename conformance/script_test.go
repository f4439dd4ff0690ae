package conformance

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func decodePattern(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPatternsMatchTheWayDataCasesNeed(t *testing.T) {
	for _, tc := range []struct {
		name, want, got string
		ok              bool
	}{
		{"an object may carry more keys", `{"id":1,"result":{"protocolVersion":1}}`, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{}}}`, true},
		{"a missing key fails", `{"id":1,"error":{"code":-32601}}`, `{"id":1,"result":{}}`, false},
		{"a string id is not an integer id", `{"id":"7"}`, `{"id":7}`, false},
		{"large integer ids compare by their digits", `{"id":9007199254740993}`, `{"id":9007199254740992}`, false},
		{"large integer ids that agree match", `{"id":9007199254740993}`, `{"id":9007199254740993}`, true},
		{"null matches only null", `{"id":null}`, `{"id":0}`, false},
		{"$any matches null", `{"id":"$any"}`, `{"id":null}`, true},
		{"$absent refuses a present key", `{"id":"$absent"}`, `{"id":null}`, false},
		{"$absent accepts a missing key", `{"id":"$absent","method":"x"}`, `{"method":"x"}`, true},
		{"arrays match element by element", `{"a":[1,{"b":2}]}`, `{"a":[1,{"b":2,"c":3}]}`, true},
		{"arrays must have the same length", `{"a":[1]}`, `{"a":[1,2]}`, false},
		{"a variable captures a value", `{"result":{"sessionId":"$sid"}}`, `{"result":{"sessionId":"s_1"}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]any{}
			why := matchValue(decodePattern(t, tc.want), decodePattern(t, tc.got), "", vars)
			if (why == "") != tc.ok {
				t.Errorf("match = %q, want ok=%v", why, tc.ok)
			}
		})
	}
}

func TestACapturedVariableMustMatchAgainAndIsSubstituted(t *testing.T) {
	st := &scriptState{vars: map[string]any{}}
	if why := st.match(decodePattern(t, `{"result":{"sessionId":"$sid"}}`), []byte(`{"result":{"sessionId":"s_1"}}`)); why != "" {
		t.Fatal(why)
	}
	if why := st.match(decodePattern(t, `{"params":{"sessionId":"$sid"}}`), []byte(`{"params":{"sessionId":"s_2"}}`)); why == "" {
		t.Errorf("a captured variable matched a different value")
	}
	got := st.substitute(`{"params":{"sessionId":"$sid","other":"$unset"}}`)
	if got != `{"params":{"sessionId":"s_1","other":"$unset"}}` {
		t.Errorf("substitute = %s", got)
	}
}

func TestDataCaseFilesNeedAHeaderAndKnownLines(t *testing.T) {
	for _, tc := range []struct{ name, src, err string }{
		{"no items", "# guards: x\n>> {}\n", "header"},
		{"no guards", "# items: acp-v1#1\n>> {}\n", "header"},
		{"a stray line", "# guards: x\n# items: acp-v1#1\nhello\n", "must start with"},
		{"a bad pattern", "# guards: x\n# items: acp-v1#1\n<< {oops\n", "bad pattern"},
		{"an unknown directive", "# guards: x\n# items: acp-v1#1\n== sleep 1\n", "unknown directive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDataCase("x.acp", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
		})
	}
	c, err := ParseDataCase("ok.acp", []byte("# guards: it works\n# items: acp-v1#9 acp-v1#5\n# needs: loadSession\n>> {}\n<< {\"id\":1}\n== barrier\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "data/ok" || c.Name != "it works" || len(c.Items) != 2 || c.Needs[0] != "loadSession" {
		t.Errorf("parsed %+v", c)
	}
}

func TestEveryShippedDataCaseParses(t *testing.T) {
	for _, c := range dataCases() {
		if c.Name == "a data case that does not parse" {
			t.Errorf("%s does not parse", c.ID)
		}
	}
}

func TestTheTableHasARowPerItemAndFailsItemsOfViolations(t *testing.T) {
	res := []Result{
		{ID: "a", Items: []string{"acp-v1#1"}, Status: Pass},
		{ID: "b", Items: []string{"acp-v1#1", "acp-v1#2"}, Status: Skip},
		{ID: "c", Items: []string{"acp-v1#3"}, Status: Pass, Violations: []Violation{{Item: "acp-v1#40", Text: "bad"}}},
		// A case whose own checks passed but whose traffic broke a rule
		// fails that rule's item, not every item it covers.
		{ID: "d", Items: []string{"acp-v1#38", "acp-v1#59"}, Status: Fail, Verdict: Pass, Violations: []Violation{{Item: "acp-v1#51", Text: "id reused"}, {Item: "acp-v1#59", Text: "bad usage"}}},
		{ID: "e", Items: []string{"acp-v1#47"}, Status: Fail, Verdict: Advice, Violations: []Violation{{Item: "acp-v1#51", Text: "id reused"}}},
	}
	agg := Aggregate(res)
	byID := map[string]ItemResult{}
	for _, ir := range agg {
		byID[ir.ID] = ir
	}
	for id, want := range map[string]Status{"acp-v1#1": Pass, "acp-v1#2": Skip, "acp-v1#3": Pass, "acp-v1#40": Fail, "acp-v1#41": "",
		"acp-v1#38": Pass, "acp-v1#59": Fail, "acp-v1#51": Fail, "acp-v1#47": Advice} {
		if got := byID[id].Status; got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	var b bytes.Buffer
	if err := WriteTable(&b, res); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\nacp-v1#") + strings.Count(b.String(), "\nsubagents#"); n != 101 {
		t.Errorf("the table has %d item rows, want 101", n)
	}
	if !strings.Contains(b.String(), "items: 3 pass, 3 fail, 1 skip, 101 not covered; cases: 2 pass, 2 fail, 1 skip\nadvice (never a failure): 1 items, 0 cases") {
		t.Errorf("summary line missing:\n%s", b.String())
	}
}
