package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func stdDecode(data []byte) (wireChunk, error) {
	var c wireChunk
	err := json.Unmarshal(data, &c)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		err = nil
	}
	return c, err
}

var fastSeeds = []string{
	`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"usage":null}`,
	`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"prompt_cache_hit_tokens":8,"prompt_tokens_details":{"cached_tokens":8},"completion_tokens_details":{"reasoning_tokens":1}}}`,
	`{"choices":null,"usage":{"prompt_tokens":1}}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_x","type":"function","function":{"name":"f","arguments":"{\"a\":\"\\u00e9\"}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":7,"function":{"arguments":{"a":1}}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":"r","reasoning_content":null,"content":"x\ty"},"finish_reason":"stop"}]}`,
	`{"error":{"message":"boom","code":502}}`,
	`{"Choices":[{"index":0,"delta":{"content":"case"}}]}`,
	`{"choices":[{"index":1.5,"delta":{"content":7}}]}`,
	`{"choices":[{"index":0,"delta":null,"message":{"content":"m"}}],"extra":[1,true,false,null,{"x":"\u2028"}]}`,
	"  {\"choices\" : [ { \"index\" : 0 , \"delta\" : { \"content\" : \"sp\" } } ] }  ",
	`{"choices":[{"index":0,"delta":{"content":"\xff\xfe"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}]`,
	`[1,2]`,
	`null`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}]}}`,
	`{"usage":{"prompt_tokens_details":{"cached_tokens":1},"prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":1},"completion_tokens_details":null}}`,
}

// TestFastDecodeMatchesEncodingJSON checks the fast path on every chunk of
// the benchmark stream and on odd ones: when it accepts, it must agree
// with encoding/json exactly.
func TestFastDecodeMatchesEncodingJSON(t *testing.T) {
	inputs := append([]string(nil), fastSeeds...)
	for _, line := range bytes.Split(benchStream(), []byte("\n\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && string(d) != "[DONE]" {
			inputs = append(inputs, string(d))
		}
	}
	accepted := 0
	for _, in := range inputs {
		if checkFastDecode(t, []byte(in)) {
			accepted++
		}
	}
	if accepted < len(inputs)-8 {
		t.Errorf("fast path accepted only %d of %d inputs", accepted, len(inputs))
	}
}

func checkFastDecode(t *testing.T, data []byte) bool {
	t.Helper()
	var fast wireChunk
	if !fastDecode(data, &fast) {
		return false
	}
	std, err := stdDecode(data)
	if err != nil {
		t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", err, data)
	}
	if !reflect.DeepEqual(fast, std) {
		t.Fatalf("fast path disagrees on %q:\nfast %+v\nstd  %+v", data, fast, std)
	}
	return true
}

func FuzzFastDecode(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastDecode(t, data)
	})
}
