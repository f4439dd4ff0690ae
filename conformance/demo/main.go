// Command demo is `make demo`: a small ACP client that launches dshd on
// stdio with a scripted model and holds a real conversation in a temporary
// workspace: reading and editing a file (the permission question is asked
// and answered here), running a command, a plan, delegation to a fresh and
// a forked subagent, and delegation to a child dshd process over ACP. It
// prints the streamed updates as an editor would show them.
//
//	go run ./conformance/demo -dshd ./bin/dshd
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/dshd/dshd/acp"

	"github.com/dshd/dshd/acp/rpc"
	"github.com/dshd/dshd/conformance/internal/piped"
)

//go:embed demo.json
var script []byte

// turns is the conversation the demo holds.
var turns = []string{
	"Fix the typo in greeting.txt",
	"Run the check script",
	"Plan the rest of the release",
	"Delegate the review and the changelog",
	"Ask another dshd for a second opinion",
}

func main() {
	dshd := flag.String("dshd", "bin/dshd", "the dshd binary to talk to")
	flag.Parse()
	if err := run(*dshd); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(dshd string) error {
	bin, err := filepath.Abs(dshd)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		return fmt.Errorf("dshd binary %s: %w (run `make build` first)", dshd, err)
	}
	tmp, err := os.MkdirTemp("", "dshd-demo")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ws := filepath.Join(tmp, "workspace")
	scriptPath := filepath.Join(tmp, "demo.json")
	for path, content := range map[string]string{
		filepath.Join(ws, "greeting.txt"): "Hello, wrold!\n",
		filepath.Join(ws, "check.sh"):     "echo \"greeting: $(cat greeting.txt)\"\ngrep -q 'world' greeting.txt && echo 'check: spelling ok'\n",
		scriptPath:                        string(script),
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out := newPrinter(os.Stdout)
	out.header("dshd demo: an ACP client talking to %s on stdio", dshd)
	out.note("workspace %s (greeting.txt has a typo)", ws)

	// The acp provider's binding makes the last turn reach a child dshd;
	// a dshd without that provider still runs the rest of the demo.
	args := []string{"--model", "scripted:" + scriptPath, "--state-dir", filepath.Join(tmp, "state"), "--log-level", "error",
		"--subagent", "subagent=spawn", "--subagent", "subagent_fork=fork"}
	d, err := launch(ctx, bin, append(args, "--subagent", "subagent_acp=acp"), out)
	if err != nil {
		out.note("this dshd has no acp provider (%v); delegation to a child dshd will fail visibly", err)
		if d, err = launch(ctx, bin, args, out); err != nil {
			return err
		}
	}
	defer d.close()

	sess, err := d.conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{}})
	if err != nil {
		return fmt.Errorf("session/new: %w", err)
	}
	out.note("session %s, mode %s", sess.SessionID, sess.Modes.CurrentModeID)
	out.root = sess.SessionID

	for _, text := range turns {
		out.user(text)
		resp, err := d.conn.Prompt(ctx, &acp.PromptRequest{SessionID: sess.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
		if err != nil {
			return fmt.Errorf("session/prompt %q: %w", text, err)
		}
		out.stop(resp.StopReason)
		if resp.StopReason != acp.StopReasonEndTurn {
			return fmt.Errorf("turn %q ended %s", text, resp.StopReason)
		}
	}
	b, err := os.ReadFile(filepath.Join(ws, "greeting.txt"))
	if err != nil {
		return err
	}
	out.header("done: %d turns; greeting.txt now reads %q", len(turns), string(b))
	return nil
}

// daemon is a dshd child and the client connection to it.
type daemon struct {
	cmd  *exec.Cmd
	conn *rpc.ClientSideConn
}

// launch starts dshd on stdio and runs the handshake.
func launch(ctx context.Context, bin string, args []string, out *printer) (*daemon, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	stdin, stdout, err := piped.Start(cmd)
	if err != nil {
		return nil, err
	}
	d := &daemon{cmd: cmd}
	d.conn = rpc.NewClientSideConn(pipes{stdout, stdin}, out, nil)
	init, err := d.conn.Initialize(ctx, &acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersion1,
		ClientInfo:      &acp.Implementation{Name: "dshd-demo", Version: "1"},
		// Show subagents as sessions of their own.
		ClientCapabilities: acp.ClientCapabilities{Subagents: &acp.SubagentCapabilities{}},
	})
	if err != nil {
		d.close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	name := "an agent"
	if init.AgentInfo != nil {
		name = init.AgentInfo.Name + " " + init.AgentInfo.Version
	}
	out.note("handshake done with %s (ACP v%d)", name, init.ProtocolVersion)
	return d, nil
}

// close ends the connection (stdin EOF) and waits for dshd to exit.
func (d *daemon) close() {
	d.conn.Close()
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			fmt.Fprintln(os.Stderr, "demo: dshd:", err)
		}
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		<-done
	}
}

// pipes joins a child's stdout and stdin into one connection.
type pipes struct {
	io.ReadCloser
	io.WriteCloser
}

func (p pipes) Close() error {
	werr := p.WriteCloser.Close()
	rerr := p.ReadCloser.Close()
	return errors.Join(werr, rerr)
}
