// This file measures 1,000 sessions on one socket daemon: the time to
// create them over a few connections and to list them page by page.

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// conns is how many client connections share the sessions.
const conns = 4

func (b *bench) socketSessions(n int) {
	progress("%d sessions on one socket daemon over %d connections", n, conns)
	dir, err := os.MkdirTemp("", "dshd-bench-sock")
	if err != nil {
		b.fail("socket sessions", err)
		return
	}
	defer os.RemoveAll(dir)
	d, err := b.startDaemon("unix", filepath.Join(dir, "d.sock"), filepath.Join(b.tmp, "sock"), b.env)
	if err != nil {
		b.fail("socket sessions", err)
		return
	}
	defer d.stop()
	clients := make([]*rpc, conns)
	for i := range clients {
		nc, err := d.dial()
		if err != nil {
			b.fail("socket sessions", err)
			return
		}
		defer nc.Close()
		c := newRPC(nc, nc, func() { nc.Close() })
		if err := c.initialize(); err != nil {
			b.fail("socket sessions", err)
			return
		}
		clients[i] = c
	}
	cwd := b.tmp
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, conns)
	for i, c := range clients {
		wg.Go(func() {
			for j := i; j < n; j += conns {
				if _, err := c.newSession(cwd); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	created := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		b.fail("socket sessions", err)
		return
	}
	rss := procStatusKB(d.cmd.Process.Pid, "VmRSS:")

	start = time.Now()
	listed, pages := 0, 0
	cursor := ""
	for {
		params := map[string]any{"cwd": cwd}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, _, err := clients[0].call("session/list", params)
		if err != nil {
			b.fail("socket sessions: list", err)
			return
		}
		var res struct {
			Sessions   []json.RawMessage `json:"sessions"`
			NextCursor string            `json:"nextCursor"`
		}
		_ = json.Unmarshal(raw, &res)
		listed += len(res.Sessions)
		pages++
		if res.NextCursor == "" || pages > n {
			break
		}
		cursor = res.NextCursor
	}
	listTime := time.Since(start)
	if listed != n {
		b.fail("socket sessions: list", fmt.Errorf("listed %d of %d sessions", listed, n))
		return
	}
	b.add(fmt.Sprintf("%d sessions on one socket daemon: create", n), ms(created), "works",
		fmt.Sprintf("%d connections, %s per session; daemon RSS after %s", conns, us(created/time.Duration(n)), mib(rss)))
	b.add(fmt.Sprintf("%d sessions on one socket daemon: list all", n), ms(listTime), "", fmt.Sprintf("%d pages", pages))
}
