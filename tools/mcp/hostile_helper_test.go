// This file is a hostile stdio MCP server: raw JSON-RPC lines written by
// hand, so it can send what the SDK's server side never would. The test
// binary runs it when DSHD_MCP_TEST_SERVER is "hostile"; HOSTILE_LIST says
// what tools/list answers and each tool's name says what its call does.

package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// hostileList selects the tools/list answer:
//
//	many N        N small tools, in one page
//	endless       a page of one tool and a next cursor, forever
//	bigdesc N     the call tools, the first one's description N bytes
//	bigschema N   the call tools, the first one's inputSchema N bytes
//	deepschema N  the call tools, the first one's inputSchema nested N deep
//	badschemas    the tools of badSchemas: one good, the others' schemas
//	              no model API takes, and a name it does not take
//	(empty)       the call tools below
const hostileListEnv = "HOSTILE_LIST"

// hostileTools are the tools whose calls misbehave:
//
//	bigtext      answers with {"n": N} bytes of text
//	bigraw       answers with N bytes of structuredContent and a short text
//	banner       writes a non-JSON line on stdout, then answers
//	sample       asks us sampling/createMessage, elicitation/create and
//	             roots/list, and answers with what it was told
//	flood        sends N logging and progress notifications, then answers
//	never        never answers
var hostileTools = []string{"bigtext", "bigraw", "banner", "sample", "flood", "never"}

type rpcMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

func runHostile() int {
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	var mu sync.Mutex
	send := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		mu.Lock()
		defer mu.Unlock()
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	raw := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		out.WriteString(s)
		out.Flush()
	}
	reply := func(id json.RawMessage, result any) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	// answers to our own requests to the client, by id
	answers := make(chan rpcMsg, 16)
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return 0
		}
		var m rpcMsg
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch {
		case m.Method == "" && len(m.ID) > 0:
			answers <- m
		case m.Method == "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(m.Params, &p)
			reply(m.ID, map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}, "logging": map[string]any{}},
				"serverInfo":      map[string]any{"name": "hostile", "version": "1"},
			})
		case m.Method == "tools/list":
			reply(m.ID, hostileListResult(m.Params))
		case m.Method == "tools/call":
			go hostileCall(m, reply, send, raw, answers)
		case len(m.ID) > 0 && !strings.HasPrefix(m.Method, "notifications/"):
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		}
	}
}

func hostileListResult(params json.RawMessage) map[string]any {
	tool := func(name, desc string, schema any) map[string]any {
		return map[string]any{"name": name, "description": desc, "inputSchema": schema}
	}
	obj := map[string]any{"type": "object"}
	mode, arg, _ := strings.Cut(os.Getenv(hostileListEnv), " ")
	n, _ := strconv.Atoi(arg)
	var list []map[string]any
	switch mode {
	case "many":
		for i := range n {
			list = append(list, tool("t"+strconv.Itoa(i), "tool number "+strconv.Itoa(i), obj))
		}
		return map[string]any{"tools": list}
	case "badschemas":
		for _, b := range badSchemas {
			list = append(list, tool(b.name, "does "+b.name, b.schema))
		}
		return map[string]any{"tools": list}
	case "endless":
		var p struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(params, &p)
		page, _ := strconv.Atoi(p.Cursor)
		return map[string]any{
			"tools":      []any{tool("p"+strconv.Itoa(page), "page tool", obj)},
			"nextCursor": strconv.Itoa(page + 1),
		}
	}
	for i, name := range hostileTools {
		desc, schema := "does "+name, any(obj)
		if i == 0 && mode == "bigdesc" {
			desc = strings.Repeat("d", n)
		}
		if i == 0 && mode == "bigschema" {
			schema = map[string]any{"type": "object", "description": strings.Repeat("s", n)}
		}
		if i == 0 && mode == "deepschema" {
			for range n {
				schema = map[string]any{"type": "object", "properties": map[string]any{"a": schema}}
			}
		}
		list = append(list, tool(name, desc, schema))
	}
	return map[string]any{"tools": list}
}

// badSchemas are the tools of the badschemas list, with the fault each
// schema must be refused for ("" for a good one).
var badSchemas = []struct {
	name   string
	schema any
	fault  string
}{
	{"good", map[string]any{"type": "object", "properties": map[string]any{}}, ""},
	{"arr", map[string]any{"type": "array"}, `not of type "object" (it has type "array")`},
	{"notype", map[string]any{"properties": map[string]any{}}, `not of type "object" (it has type none)`},
	{"banana", map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "banana"}}}, `the type "banana", which is not a JSON type`},
	{"deepbanana", map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{map[string]any{"type": []any{"string", "banana"}}}}}}}, `the type "banana"`},
	{"dangling", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/nope"}}}, "not a valid JSON Schema"},
	{"required", map[string]any{"type": "object", "required": "x"}, "not a JSON Schema"},
	{"bad name with spaces", map[string]any{"type": "object"}, ""},
}

func hostileCall(m rpcMsg, reply func(json.RawMessage, any), send func(any), raw func(string), answers chan rpcMsg) {
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			N int `json:"n"`
		} `json:"arguments"`
		Meta struct {
			ProgressToken any `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	text := func(s string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
	}
	switch p.Name {
	case "bigtext":
		reply(m.ID, text(strings.Repeat("x", p.Arguments.N)))
	case "bigraw":
		r := text("small text")
		r["structuredContent"] = map[string]any{"blob": strings.Repeat("r", p.Arguments.N)}
		reply(m.ID, r)
	case "banner":
		raw("Server ready! Listening on stdio\n")
		reply(m.ID, text("after the banner"))
	case "sample":
		var got []string
		for i, method := range []string{"sampling/createMessage", "elicitation/create", "roots/list"} {
			send(map[string]any{"jsonrpc": "2.0", "id": 1000 + i, "method": method, "params": map[string]any{}})
			a := <-answers
			if len(a.Error) > 0 {
				got = append(got, method+" error "+string(a.Error))
			} else {
				got = append(got, method+" result "+string(a.Result))
			}
		}
		reply(m.ID, text(strings.Join(got, "\n")))
	case "flood":
		for i := range p.Arguments.N {
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "log " + strconv.Itoa(i)}})
			if p.Meta.ProgressToken != nil {
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": p.Meta.ProgressToken, "progress": i}})
			}
		}
		reply(m.ID, text(fmt.Sprintf("flooded %d", p.Arguments.N)))
	case "never":
	}
}
