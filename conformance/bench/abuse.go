// This file measures what abuse costs a fresh token daemon with its
// default limits (issue 10): its peak RSS under a request flood from a
// client that never reads (and whether a second client is served
// meanwhile), with ten unauthenticated connections each holding a 50 MB
// partial line, and for one accepted 50 MB prompt.

package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// abuseToken is the bench daemons' token.
const abuseToken = "bench-abuse-token-0123456789"

// startAbuseDaemon starts a tcp token daemon on a free loopback port,
// its state in a directory of its own name.
func (b *bench) startAbuseDaemon(name string, extra ...string) (*daemon, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	return b.startDaemon("tcp", addr, filepath.Join(b.tmp, "abuse-"+name), append(b.env, "DSHD_TOKEN="+abuseToken), extra...)
}

// abuseClient dials a token daemon and authenticates.
func abuseClient(d *daemon) (*rpc, net.Conn, error) {
	nc, err := d.dial()
	if err != nil {
		return nil, nil, err
	}
	c := newRPC(nc, nc, func() { nc.Close() })
	err = c.initialize()
	if err == nil {
		_, _, err = c.call("authenticate", map[string]any{"methodId": "token", "_meta": map[string]any{"dshd.dev/token": abuseToken}})
	}
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return c, nc, nil
}

func (b *bench) abuse() {
	b.abuseFlood()
	b.abuseHalfLines()
	b.abuseBigPrompt()
}

// abuseFlood: one connection sends requests as fast as it can and reads
// nothing, for three seconds; meanwhile a second client runs a turn.
func (b *bench) abuseFlood() {
	const what = "abuse: peak RSS, a client flooding requests and never reading"
	progress("abuse: a request flood from a client that never reads, 3 s")
	d, err := b.startAbuseDaemon("flood")
	if err != nil {
		b.fail(what, err)
		return
	}
	flooder, err := d.dial()
	if err != nil {
		d.stop()
		b.fail(what, err)
		return
	}
	var sent int64
	var wg sync.WaitGroup
	wg.Go(func() {
		batch := bytes.Repeat([]byte(`{"jsonrpc":"2.0","id":1,"method":"x/unknown"}`+"\n"), 1400)
		for {
			n, err := flooder.Write(batch)
			sent += int64(n)
			if err != nil {
				return
			}
		}
	})
	start := time.Now()
	served := "no"
	if c, nc, err := abuseClient(d); err == nil {
		if sid, err := c.newSession(b.tmp); err == nil {
			if stop, _, err := c.prompt(sid, "still served?"); err == nil && stop == "end_turn" {
				served = fmt.Sprintf("yes, a turn in %s", ms(time.Since(start)))
			}
		}
		nc.Close()
	}
	time.Sleep(time.Until(start.Add(3 * time.Second))) // the flood's duration: a tool, not a test
	hwm := d.hwmKB()
	flooder.Close()
	wg.Wait()
	maxrss := d.stop()
	b.add(what, mib(max(hwm, maxrss)), "< 64 MB", fmt.Sprintf("%d MB sent before the daemon stopped reading; a second client served: %s", sent>>20, served))
}

// abuseHalfLines: ten connections that never authenticate each send 50 MB
// of one line without its end.
func (b *bench) abuseHalfLines() {
	const what = "abuse: peak RSS, 10 unauthenticated 50 MB partial lines"
	progress("abuse: 10 unauthenticated connections each holding a 50 MB partial line")
	d, err := b.startAbuseDaemon("halflines")
	if err != nil {
		b.fail(what, err)
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var total int64
	for range 10 {
		wg.Go(func() {
			nc, err := d.dial()
			if err != nil {
				return
			}
			defer nc.Close()
			k, err := nc.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"`))
			n := int64(k)
			xs := bytes.Repeat([]byte("x"), 1<<16) // the line never ends
			for err == nil && n < 50<<20 {
				k, err = nc.Write(xs)
				n += int64(k)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	hwm := d.hwmKB()
	maxrss := d.stop()
	b.add(what, mib(max(hwm, maxrss)), "< 32 MB", fmt.Sprintf("the daemon took %d MB in all before closing them", total>>20))
}

// abuseBigPrompt: one authenticated client sends a 50 MB prompt.
func (b *bench) abuseBigPrompt() {
	const what = "abuse: peak RSS for one accepted 50 MB prompt"
	const size = 50 << 20
	progress("abuse: one accepted 50 MB prompt")
	script := filepath.Join(b.tmp, "ok.json")
	if err := os.WriteFile(script, []byte(`{"rules": [{"text": "ok"}]}`), 0o600); err != nil {
		b.fail(what, err)
		return
	}
	d, err := b.startAbuseDaemon("bigprompt", "--model", "scripted:"+script)
	if err != nil {
		b.fail(what, err)
		return
	}
	c, nc, err := abuseClient(d)
	var sid string
	if err == nil {
		sid, err = c.newSession(b.tmp)
	}
	before := d.hwmKB()
	if err == nil {
		var stop string
		stop, _, err = c.prompt(sid, strings.Repeat("y", size))
		if err == nil && stop != "end_turn" {
			err = errors.New("stop reason " + stop)
		}
	}
	if nc != nil {
		nc.Close()
	}
	maxrss := d.stop()
	if err != nil {
		b.fail(what, err)
		return
	}
	grown := float64(maxrss-before) * 1024 / size
	b.add(what, mib(maxrss), "< 6x the line", fmt.Sprintf("%.1fx the line above the %s before it", grown, mib(before)))
}
