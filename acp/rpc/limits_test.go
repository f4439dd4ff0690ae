package rpc

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dshd/dshd/acp"
)

// closed reports whether the connection has ended.
func closed(c *AgentSideConn) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// closesAt waits, in synctest's bubble, until just before the connection
// should close at deadline and checks it is open, then until just after and
// checks it is closed.
func closesAt(t *testing.T, c *AgentSideConn, before, after time.Duration, deadline string) {
	t.Helper()
	time.Sleep(before)
	synctest.Wait()
	if closed(c) {
		t.Fatal("closed before the " + deadline)
	}
	time.Sleep(after)
	synctest.Wait()
	if !closed(c) {
		t.Fatal("still open after the " + deadline)
	}
}

// drain reads r to the end, like a peer that reads everything.
func drain(r io.Reader) {
	buf := make([]byte, 4096)
	for {
		if _, err := r.Read(buf); err != nil {
			return
		}
	}
}

func TestAConnectionThatMustAuthenticateIsClosedAtTheHandshakeDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agentEnd, peer := net.Pipe()
		defer peer.Close()
		go drain(peer)
		a := &fakeAgent{}
		a.conn = NewAgentSideConn(agentEnd, a, &ConnOptions{RequireAuth: true, Limits: Limits{HandshakeTimeout: 10 * time.Second}})
		closesAt(t, a.conn, 9*time.Second, 2*time.Second, "handshake deadline")
	})
}

func TestAnAuthenticatedConnectionOutlivesTheHandshakeDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agentEnd, clientEnd := net.Pipe()
		authed := make(chan struct{})
		a := &fakeAgent{initialize: func(ctx context.Context, _ *acp.InitializeRequest) (*acp.InitializeResponse, error) {
			Authenticated(ctx) // as a token check would, from inside a handler
			close(authed)
			return &acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersion1}, nil
		}}
		a.conn = NewAgentSideConn(agentEnd, a, &ConnOptions{RequireAuth: true, Limits: Limits{HandshakeTimeout: 10 * time.Second}})
		c := NewClientSideConn(clientEnd, &fakeClient{}, nil)
		if _, err := c.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
			t.Fatal(err)
		}
		<-authed
		time.Sleep(time.Minute)
		synctest.Wait()
		if closed(a.conn) {
			t.Fatal("an authenticated connection was closed at the handshake deadline")
		}
		c.Close()
		<-a.conn.Done()
	})
}

func TestTheIdleTimeoutSparesAConnectionWithARunningRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agentEnd, clientEnd := net.Pipe()
		release := make(chan struct{})
		a := &fakeAgent{prompt: func(ctx context.Context, _ *acp.PromptRequest) (*acp.PromptResponse, error) {
			Detach(ctx)
			<-release
			return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
		}}
		a.conn = NewAgentSideConn(agentEnd, a, &ConnOptions{Limits: Limits{IdleTimeout: time.Minute}})
		c := NewClientSideConn(clientEnd, &fakeClient{}, nil)
		defer c.Close()
		if _, err := c.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := c.Prompt(context.Background(), &acp.PromptRequest{SessionID: "s", Prompt: []acp.ContentBlock{acp.TextBlock("long")}})
			done <- err
		}()
		time.Sleep(10 * time.Minute) // a long turn
		synctest.Wait()
		if closed(a.conn) {
			t.Fatal("closed as idle while a request ran")
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		closesAt(t, a.conn, 59*time.Second, 2*time.Second, "idle timeout")
	})
}

func TestAPeerThatReadsNothingIsClosedAfterTheWriteTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agentEnd, peer := net.Pipe() // nobody reads peer
		defer peer.Close()
		a := &fakeAgent{}
		a.conn = NewAgentSideConn(agentEnd, a, &ConnOptions{Limits: Limits{WriteTimeout: 30 * time.Second, MaxQueuedOutput: 64 << 10}})
		n := &acp.SessionNotification{SessionID: "s", Update: &acp.AgentMessageChunk{Content: acp.TextBlock(strings.Repeat("x", 1000))}}
		var err error
		sent := 0
		for err == nil {
			err = a.conn.SessionUpdate(t.Context(), n)
			sent++
		}
		if !errors.Is(err, acp.ErrConnClosed) {
			t.Fatalf("after %d updates: %v, want ErrConnClosed", sent, err)
		}
		if sent > 200 { // 64 KiB of queue, 1 KB each
			t.Errorf("%d updates were accepted for a peer that reads nothing", sent)
		}
		<-a.conn.Done()
	})
}

func TestAFloodIsNotReadWhileItsAnswersAreNotRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agentEnd, peer := net.Pipe()
		a := &fakeAgent{}
		a.conn = NewAgentSideConn(agentEnd, a, &ConnOptions{Limits: Limits{WriteTimeout: -1, MaxQueuedOutput: 16 << 10, MaxQueuedInput: 16 << 10}})
		sent := make(chan int)
		go func() {
			line := []byte(`{"jsonrpc":"2.0","id":1,"method":"x/unknown"}` + "\n")
			n := 0
			for {
				if _, err := peer.Write(line); err != nil {
					sent <- n
					return
				}
				n++
			}
		}()
		synctest.Wait() // the writer is blocked: the agent stopped reading
		peer.Close()    // the peer gives up, and the connection ends
		n := <-sent
		<-a.conn.Done()
		// The answers queue holds ~16 KiB (-32601 answers of ~90 bytes), the
		// input queue 16 requests of 1 KiB each, the reader 16 KiB.
		t.Logf("%d requests read", n)
		if n > 2000 {
			t.Errorf("the agent read %d requests whose answers nobody read", n)
		}
	})
}
