// This file is the test binary's other life: re-executed with
// DSHD_MCP_TEST_SERVER set, it is a stdio MCP server (the go-sdk's server
// side) that can behave well or badly on demand.

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// helperEnv selects the helper's mode:
//
//	tools     a well-behaved server (exits when stdin closes)
//	stubborn  the same tools, but it ignores SIGTERM, never exits on its own
//	          and has started a grandchild that holds its stderr
//	exit      prints to stderr (with $HELPER_SECRET) and exits 1 at once
//	hang      reads stdin and never answers the handshake
//	sleeper   (the stubborn server's grandchild) ignores SIGTERM, sleeps
//	hostile   a hand-written JSON-RPC server that misbehaves on demand
//	          (hostile_helper_test.go)
//	writefail writes the file its last argument names and, when it
//	          cannot, says why on stderr and exits 1
const helperEnv = "DSHD_MCP_TEST_SERVER"

// longToolName is longer than any model API allows once prefixed.
var longToolName = strings.Repeat("very_long_tool_name_", 4)

func runHelper(mode string) int {
	switch mode {
	case "exit":
		fmt.Fprintf(os.Stderr, "starting\nboom: cannot start (token=%s)\n", os.Getenv("HELPER_SECRET"))
		return 1
	case "hang":
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case "sleeper":
		signal.Ignore(syscall.SIGTERM)
		waitForever()
		return 0
	case "hostile":
		return runHostile()
	case "writefail":
		if err := os.WriteFile(os.Args[len(os.Args)-1], []byte("x"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "tools", "stubborn":
	default:
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		return 2
	}
	grandchild := 0
	if mode == "stubborn" {
		signal.Ignore(syscall.SIGTERM)
		self, err := os.Executable()
		if err != nil {
			return 2
		}
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), helperEnv+"=sleeper")
		cmd.Stderr = os.Stderr // holds our stderr pipe open
		if err := cmd.Start(); err != nil {
			return 2
		}
		grandchild = cmd.Process.Pid
	}
	srv := newHelperServer(grandchild)
	err := srv.Run(context.Background(), &sdk.StdioTransport{})
	if mode == "stubborn" {
		waitForever()
	}
	if err != nil {
		return 1
	}
	return 0
}

// waitForever blocks until the process is killed. (A bare select{} would
// be reported as a deadlock.)
func waitForever() {
	for {
		time.Sleep(time.Hour)
	}
}

var objectSchema = map[string]any{"type": "object"}

// stringArgSchema is the input schema of a tool that takes one required
// string argument, name.
func stringArgSchema(name string) map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{name: map[string]any{"type": "string"}},
		"required":   []string{name},
	}
}

// stringArg is the string argument name of a call to a tool declared with
// stringArgSchema.
func stringArg(req *sdk.CallToolRequest, name string) (string, error) {
	var in map[string]any
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return "", err
	}
	s, _ := in[name].(string)
	return s, nil
}

func newHelperServer(grandchild int) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "helper", Version: "1"}, nil)
	var count, cancelled atomic.Int64
	cancelledCh := make(chan struct{}, 1)
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true}
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	add := func(t *sdk.Tool, h sdk.ToolHandler) {
		if t.InputSchema == nil {
			t.InputSchema = objectSchema
		}
		srv.AddTool(t, h)
	}

	add(&sdk.Tool{Name: "echo", Title: "Echo", Description: "Echoes its message.", Annotations: readOnly, InputSchema: stringArgSchema("message")},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			msg, err := stringArg(req, "message")
			if err != nil {
				return nil, err
			}
			return text("echo: " + msg), nil
		})
	add(&sdk.Tool{Name: "count", Description: "Counts its calls."},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text("count=" + strconv.FormatInt(count.Add(1), 10)), nil
		})
	add(&sdk.Tool{Name: "crash", Description: "Exits mid-call."},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "crashing now")
			os.Exit(3)
			return nil, nil
		})
	add(&sdk.Tool{Name: "block", Description: "Blocks until cancelled; reports progress once it blocks."},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(), Message: "blocking",
			})
			<-ctx.Done()
			cancelled.Add(1)
			select {
			case cancelledCh <- struct{}{}:
			default:
			}
			return nil, ctx.Err()
		})
	add(&sdk.Tool{Name: "cancelled", Description: "Waits for a cancelled block call.", Annotations: readOnly},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if cancelled.Load() == 0 {
				select {
				case <-cancelledCh:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return text("cancelled=" + strconv.FormatInt(cancelled.Load(), 10)), nil
		})
	add(&sdk.Tool{Name: "mixed", Description: "Returns every kind of content.", Annotations: readOnly},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{
				Content: []sdk.Content{
					&sdk.TextContent{Text: "hello"},
					&sdk.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"},
					&sdk.AudioContent{Data: []byte{1, 2}, MIMEType: "audio/wav"},
					&sdk.ResourceLink{URI: "file:///tmp/a.txt", Name: "a.txt", MIMEType: "text/plain"},
					&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://notes", Text: "note text"}},
					&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://blob", MIMEType: "application/gzip", Blob: []byte{9, 9, 9, 9}}},
				},
				StructuredContent: map[string]any{"n": 1},
			}, nil
		})
	add(&sdk.Tool{Name: "structured", Description: "Returns structured content only.", Annotations: readOnly},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]any{"temperature": 21, "unit": "C"}}, nil
		})
	add(&sdk.Tool{Name: "fail", Description: "Reports an error.", Annotations: readOnly},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			r := text("bad thing happened")
			r.IsError = true
			return r, nil
		})
	add(&sdk.Tool{Name: "env", Description: "Returns its cwd and environment.", Annotations: readOnly},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			wd, _ := os.Getwd()
			b, _ := json.Marshal(map[string]any{"cwd": wd, "env": os.Environ()})
			return text(string(b)), nil
		})
	add(&sdk.Tool{Name: "pids", Description: "Returns its pid and its grandchild's.", Annotations: readOnly},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(fmt.Sprintf("%d %d", os.Getpid(), grandchild)), nil
		})
	add(&sdk.Tool{Name: "progress", Description: "Reports progress twice.", Annotations: readOnly},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			token := req.Params.GetProgressToken()
			for i := 1; i <= 2; i++ {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
					ProgressToken: token, Progress: float64(i), Total: 2, Message: "step " + strconv.Itoa(i),
				})
			}
			return text(fmt.Sprintf("token=%v", token)), nil
		})
	add(&sdk.Tool{Name: "write", Description: "Writes a file.", InputSchema: stringArgSchema("path")},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			path, err := stringArg(req, "path")
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(path, []byte("written by the server"), 0o644); err != nil {
				r := text(err.Error())
				r.IsError = true
				return r, nil
			}
			return text("wrote " + path), nil
		})
	late := &sdk.Tool{Name: "late", Description: "Added at run time.", InputSchema: objectSchema}
	lateHandler := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text("late"), nil
	}
	add(&sdk.Tool{Name: "grow", Description: "Adds the tool late."},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			srv.AddTool(late, lateHandler)
			return text("grown"), nil
		})
	add(&sdk.Tool{Name: "shrink", Description: "Removes the tool late."},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			srv.RemoveTools("late")
			return text("shrunk"), nil
		})
	add(&sdk.Tool{Name: "weird.name/ü", Description: "Has a name models refuse.", Annotations: readOnly},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text("weird"), nil
		})
	add(&sdk.Tool{Name: longToolName, Description: "Has a long name.", Annotations: readOnly},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text("long"), nil
		})
	return srv
}
