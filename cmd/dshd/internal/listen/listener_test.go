package listen

import (
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scripted is a net.Listener whose Accept returns the queued results.
type scripted struct {
	mu      sync.Mutex
	results []func() (net.Conn, error)
	closed  chan struct{}
	once    sync.Once
}

func newScripted(results ...func() (net.Conn, error)) *scripted {
	return &scripted{results: results, closed: make(chan struct{})}
}

func (s *scripted) Accept() (net.Conn, error) {
	s.mu.Lock()
	if len(s.results) == 0 {
		s.mu.Unlock()
		<-s.closed
		return nil, net.ErrClosed
	}
	r := s.results[0]
	s.results = s.results[1:]
	s.mu.Unlock()
	return r()
}

func (s *scripted) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

func (s *scripted) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func failing(errno syscall.Errno) func() (net.Conn, error) {
	return func() (net.Conn, error) {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
	}
}

// pipeConn is one end of a net.Pipe with a TCP remote address; the test
// keeps the other end.
type pipeConn struct {
	net.Conn
	remote net.Addr
}

func (p pipeConn) RemoteAddr() net.Addr { return p.remote }

func pipe(t *testing.T, ip string) (func() (net.Conn, error), net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	c := pipeConn{Conn: a, remote: &net.TCPAddr{IP: net.ParseIP(ip), Port: 4000}}
	return func() (net.Conn, error) { return c, nil }, b
}

// refusal reads what the listener wrote to a refused connection.
func refusal(t *testing.T, peer net.Conn) string {
	t.Helper()
	b, _ := io.ReadAll(peer)
	return string(b)
}

func TestTemporaryAcceptErrorsAreRetried(t *testing.T) {
	conn, _ := pipe(t, "127.0.0.1")
	inner := newScripted(failing(syscall.EMFILE), failing(syscall.ENFILE), failing(syscall.ECONNABORTED), conn)
	l := New(inner, Options{})
	defer l.Close()
	c, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept = %v, want the connection after the temporary errors", err)
	}
	c.Close()
}

func TestAPermanentAcceptErrorIsReturned(t *testing.T) {
	boom := errors.New("boom")
	l := New(newScripted(func() (net.Conn, error) { return nil, boom }), Options{})
	defer l.Close()
	if _, err := l.Accept(); !errors.Is(err, boom) {
		t.Fatalf("Accept = %v, want boom", err)
	}
}

func TestCloseEndsABackoff(t *testing.T) {
	results := make([]func() (net.Conn, error), 64)
	for i := range results {
		results[i] = failing(syscall.EMFILE)
	}
	l := New(newScripted(results...), Options{})
	done := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		done <- err
	}()
	l.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept = %v, want net.ErrClosed", err)
	}
}

// fed is a net.Listener whose Accept returns what the test feeds it.
type fed struct {
	next   chan func() (net.Conn, error)
	closed chan struct{}
	once   sync.Once
}

func (f *fed) Accept() (net.Conn, error) {
	select {
	case r := <-f.next:
		return r()
	case <-f.closed:
		return nil, net.ErrClosed
	}
}

func (f *fed) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

func (f *fed) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// clock is a settable time for the brake.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// feeder serves l over a fed listener: admit feeds a connection and
// returns it admitted, refused feeds one and returns what it read.
type feeder struct {
	t        *testing.T
	inner    *fed
	l        *Listener
	accepted chan net.Conn
}

func newFeeder(t *testing.T, opts Options) *feeder {
	f := &feeder{t: t, inner: &fed{next: make(chan func() (net.Conn, error)), closed: make(chan struct{})}, accepted: make(chan net.Conn)}
	f.l = New(f.inner, opts)
	go func() {
		for {
			c, err := f.l.Accept()
			if err != nil {
				close(f.accepted)
				return
			}
			f.accepted <- c
		}
	}()
	t.Cleanup(func() {
		f.l.Close()
		for range f.accepted {
		}
	})
	return f
}

func (f *feeder) admit(ip string) *Conn {
	f.t.Helper()
	c, _ := pipe(f.t, ip)
	f.inner.next <- c
	return (<-f.accepted).(*Conn)
}

func (f *feeder) refused(ip string) string {
	f.t.Helper()
	c, peer := pipe(f.t, ip)
	f.inner.next <- c
	return refusal(f.t, peer)
}

func TestConnectionsOverTheLimitAreRefusedUntilOneCloses(t *testing.T) {
	f := newFeeder(t, Options{MaxConnections: 1})
	c1 := f.admit("127.0.0.1")
	if r := f.refused("127.0.0.2"); !strings.Contains(r, "too many connections") {
		t.Fatalf("the second connection read %q, want a refusal", r)
	}
	c1.Close()
	f.admit("127.0.0.3").Close()
}

func TestUnauthenticatedConnectionsAreCountedUntilTheyAuthenticate(t *testing.T) {
	f := newFeeder(t, Options{RequireAuth: true, MaxUnauthenticated: 1})
	c1 := f.admit("127.0.0.1")
	if r := f.refused("127.0.0.2"); !strings.Contains(r, "waiting to authenticate") {
		t.Fatalf("the second connection read %q, want a refusal", r)
	}
	c1.Authenticated()
	c3 := f.admit("127.0.0.3")
	c1.Close()
	c3.Close()
}

func TestASourceThatKeepsFailingIsRefusedForADoublingPenalty(t *testing.T) {
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	f := newFeeder(t, Options{RequireAuth: true, MaxAuthFailures: 2, AuthPenalty: time.Minute, now: clk.Now})
	admit, refused, l := f.admit, f.refused, f.l

	c := admit("10.0.0.7")
	c.AuthFailed()
	c.AuthFailed() // the second failure: a penalty of one minute
	c.Close()
	if r := refused("10.0.0.7"); !strings.Contains(r, "too many failed authentications") || !strings.Contains(r, "1m0s") {
		t.Fatalf("the source's next connection read %q, want a refusal for a minute", r)
	}
	admit("10.0.0.8").Close() // another host is not affected

	clk.advance(61 * time.Second) // the penalty has passed
	c = admit("10.0.0.7")
	c.AuthFailed()
	c.AuthFailed() // a second penalty: two minutes
	c.Close()
	if r := refused("10.0.0.7"); !strings.Contains(r, "2m0s") {
		t.Fatalf("read %q, want a refusal for two minutes", r)
	}
	clk.advance(90 * time.Second)
	if r := refused("10.0.0.7"); !strings.Contains(r, "30s") {
		t.Fatalf("read %q, want a refusal for the 30 s left", r)
	}

	clk.advance(time.Minute)
	c = admit("10.0.0.7")
	c.Authenticated() // a success clears the record
	c.Close()
	l.mu.Lock()
	_, kept := l.sources["10.0.0.7"]
	l.mu.Unlock()
	if kept {
		t.Error("a successful authentication left the source's record")
	}
}

// The closes at the handshake deadline are one episode, logged once,
// until a connection authenticates.
func TestHandshakeDeadlinesAreOneEpisodeUntilAConnectionAuthenticates(t *testing.T) {
	f := newFeeder(t, Options{RequireAuth: true})
	a, b, c := f.admit("127.0.0.1"), f.admit("127.0.0.2"), f.admit("127.0.0.3")
	if !a.HandshakeExpired() {
		t.Error("the first close of an episode is not to be logged")
	}
	if b.HandshakeExpired() {
		t.Error("the second close of an episode is to be logged")
	}
	c.Authenticated()
	if !b.HandshakeExpired() {
		t.Error("the first close after an authentication is not to be logged")
	}
	for _, x := range []*Conn{a, b, c} {
		x.Close()
	}
}

// The closes for a line over the limit before authentication are an
// episode of their own beside the handshake deadline's, which an
// authentication ends too.
func TestOverLongLinesBeforeAuthenticationAreAnEpisodeOfTheirOwn(t *testing.T) {
	f := newFeeder(t, Options{RequireAuth: true})
	a, b := f.admit("127.0.0.1"), f.admit("127.0.0.2")
	defer a.Close()
	defer b.Close()
	got := []bool{a.PreAuthLineExceeded(), a.HandshakeExpired(), b.PreAuthLineExceeded(), b.HandshakeExpired()}
	b.Authenticated()
	got = append(got, a.PreAuthLineExceeded(), a.HandshakeExpired())
	if want := []bool{true, true, false, false, true, true}; !slices.Equal(got, want) {
		t.Errorf("first of an episode: %v, want %v (line, handshake, line, handshake, then both after an authentication)", got, want)
	}
}
