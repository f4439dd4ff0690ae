package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// decodeRequest decodes raw into a new T as a connection does, and
// panics when DecodeValidParams (what a connection calls for params its
// stream checked) decodes it otherwise than DecodeParams.
func decodeRequest[T any](raw string) (*T, error) {
	v, w := new(T), new(T)
	err := DecodeParams(json.RawMessage(raw), v)
	if werr := DecodeValidParams(json.RawMessage(raw), w); !reflect.DeepEqual(v, w) || !reflect.DeepEqual(err, werr) {
		panic(fmt.Sprintf("DecodeValidParams(%s) = %#v, %v; DecodeParams = %#v, %v", raw, w, werr, v, err))
	}
	return v, err
}

// TestRequestsDecodeWhatThePinnedSchemaAccepts feeds the requests a client
// may send the shapes the pinned schema (SDK 2.4.0) accepts beyond the
// obvious: null lists it reads as empty (x-deserialize-default-on-null),
// optional members it drops when malformed
// (x-deserialize-default-on-error, bad list items skipped), and keys it
// does not know.
func TestRequestsDecodeWhatThePinnedSchemaAccepts(t *testing.T) {
	t.Run("mcpServers null is an empty list on session/new, load, resume and fork", func(t *testing.T) {
		n, err := decodeRequest[NewSessionRequest](`{"cwd":"/w","mcpServers":null}`)
		if err != nil || n.McpServers == nil || len(n.McpServers) != 0 {
			t.Errorf("session/new: %v, servers %#v", err, n.McpServers)
		}
		l, err := decodeRequest[LoadSessionRequest](`{"sessionId":"s","cwd":"/w","mcpServers":null}`)
		if err != nil || l.McpServers == nil || len(l.McpServers) != 0 {
			t.Errorf("session/load: %v, servers %#v", err, l.McpServers)
		}
		if _, err := decodeRequest[ResumeSessionRequest](`{"sessionId":"s","cwd":"/w","mcpServers":null}`); err != nil {
			t.Errorf("session/resume: %v", err)
		}
		if _, err := decodeRequest[ForkSessionRequest](`{"sessionId":"s","cwd":"/w","mcpServers":null}`); err != nil {
			t.Errorf("session/fork: %v", err)
		}
	})
	t.Run("args, env and headers null are empty lists", func(t *testing.T) {
		n, err := decodeRequest[NewSessionRequest](`{"cwd":"/w","mcpServers":[
			{"name":"a","command":"/bin/a","args":null,"env":null},
			{"type":"http","name":"b","url":"http://127.0.0.1:1/","headers":null},
			{"type":"sse","name":"c","url":"http://127.0.0.1:1/","headers":null}]}`)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"cwd":"/w","mcpServers":[{"name":"a","command":"/bin/a","args":[],"env":[]},{"type":"http","name":"b","url":"http://127.0.0.1:1/","headers":[]},{"type":"sse","name":"c","url":"http://127.0.0.1:1/","headers":[]}]}`
		if string(b) != want {
			t.Errorf("re-encoded as\n%s\nwant\n%s", b, want)
		}
	})
	t.Run("unknown keys are ignored everywhere", func(t *testing.T) {
		if _, err := decodeRequest[NewSessionRequest](`{"cwd":"/w","mcpServers":[{"name":"a","command":"/a","args":[],"env":[],"futureKey":1}],"futureKey":{"x":[1]}}`); err != nil {
			t.Error(err)
		}
		if _, err := decodeRequest[PromptRequest](`{"sessionId":"s","prompt":[{"type":"text","text":"hi","futureKey":true}],"futureKey":null}`); err != nil {
			t.Error(err)
		}
	})
	t.Run("a malformed optional member of initialize is absent", func(t *testing.T) {
		r, err := decodeRequest[InitializeRequest](`{"protocolVersion":1,"clientInfo":"junk","clientCapabilities":7}`)
		if err != nil || r.ClientInfo != nil {
			t.Errorf("clientInfo junk: %v, %+v", err, r.ClientInfo)
		}
		r, err = decodeRequest[InitializeRequest](`{"protocolVersion":1,"clientInfo":{"name":"zed","version":"1","title":5}}`)
		if err != nil || r.ClientInfo == nil || r.ClientInfo.Name != "zed" || r.ClientInfo.Title != "" {
			t.Errorf("a numeric title: %v, %+v", err, r.ClientInfo)
		}
	})
	t.Run("malformed optional members of content blocks are absent", func(t *testing.T) {
		r, err := decodeRequest[PromptRequest](`{"sessionId":"s","prompt":[
			{"type":"text","text":"hi","annotations":"junk"},
			{"type":"text","text":"ho","annotations":{"priority":"high","audience":["user",5,"assistant"],"lastModified":7}},
			{"type":"resource_link","uri":"file:///a","name":"a","size":"big","title":5,"description":6,"mimeType":7},
			{"type":"image","data":"AA==","mimeType":"image/png","uri":5},
			{"type":"resource","resource":{"uri":"file:///b","blob":"AA==","mimeType":5}},
			{"type":"resource","resource":{"uri":"file:///c","text":"x","mimeType":5},"annotations":[]}]}`)
		if err != nil {
			t.Fatal(err)
		}
		if a := r.Prompt[0].(*TextContent).Annotations; a != nil {
			t.Errorf("annotations \"junk\" decoded as %+v", a)
		}
		a := r.Prompt[1].(*TextContent).Annotations
		if a == nil || a.Priority != nil || a.LastModified != "" || len(a.Audience) != 2 {
			t.Errorf("annotations with bad members decoded as %+v, want the two valid roles only", a)
		}
		link := r.Prompt[2].(*ResourceLink)
		if link.URI != "file:///a" || link.Name != "a" || link.Size != nil || link.Title != "" || link.MimeType != "" {
			t.Errorf("resource link %+v", link)
		}
		if img := r.Prompt[3].(*ImageContent); img.URI != "" || img.Data != "AA==" {
			t.Errorf("image %+v", img)
		}
		if res := r.Prompt[4].(*EmbeddedResource).Resource.(*BlobResourceContents); res.MimeType != "" || res.Blob != "AA==" {
			t.Errorf("blob %+v", res)
		}
		if res := r.Prompt[5].(*EmbeddedResource).Resource.(*TextResourceContents); res.MimeType != "" || res.Text != "x" {
			t.Errorf("text resource %+v", res)
		}
	})
}

// decodeFailure is a case's decode: raw decoded as the params of a T.
func decodeFailure[T any](raw string) func() error {
	return func() error {
		_, err := decodeRequest[T](raw)
		return err
	}
}

// TestRequestsRejectWhatTheSchemaOrAnRFDForbids keeps the errors the
// leniency must not swallow.
func TestRequestsRejectWhatTheSchemaOrAnRFDForbids(t *testing.T) {
	for name, tc := range map[string]struct {
		decode func() error
		field  string
	}{
		"additionalDirectories null (rfd:additional-directories)": {decodeFailure[NewSessionRequest](`{"cwd":"/w","mcpServers":[],"additionalDirectories":null}`), "additionalDirectories"},
		"additionalDirectories null on session/fork":              {decodeFailure[ForkSessionRequest](`{"sessionId":"s","cwd":"/w","additionalDirectories":null}`), "additionalDirectories"},
		"mcpServers missing on session/new":                       {decodeFailure[NewSessionRequest](`{"cwd":"/w"}`), "mcpServers"},
		"mcpServers missing on session/load":                      {decodeFailure[LoadSessionRequest](`{"sessionId":"s","cwd":"/w"}`), "mcpServers"},
		"a required text that is not a string":                    {decodeFailure[PromptRequest](`{"sessionId":"s","prompt":[{"type":"text","text":5}]}`), "prompt[0].text"},
		"a required uri that is not a string":                     {decodeFailure[PromptRequest](`{"sessionId":"s","prompt":[{"type":"resource_link","uri":5,"name":"a"}]}`), "prompt[0].uri"},
		"a fork without cwd":                                      {decodeFailure[ForkSessionRequest](`{"sessionId":"s"}`), "cwd"},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.decode()
			var e *Error
			if !errors.As(err, &e) || e.Code != ErrInvalidParams.Code {
				t.Fatalf("got %v, want -32602", err)
			}
			if d, _ := e.Data.(map[string]any); d["field"] != tc.field {
				t.Errorf("data %v, want field %q", e.Data, tc.field)
			}
		})
	}
}
