// checkout.go: a session on a checkout of its own — a parent that sends
// the child a repository (session/new's _meta "dshd.dev/checkout": {repo,
// rev}) gets a session whose cwd is a fresh clone on this host, instead of
// working on the parent's files through fs/* and terminal/*.

package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshd/dshd/acp"
)

// metaCheckout is the _meta key of session/new naming the repository.
const metaCheckout = "dshd.dev/checkout"

// checkoutTimeout bounds the clone.
const checkoutTimeout = 5 * time.Minute

// checkout clones the repository a session/new asks for, if any, into a
// new directory under the state dir's workspaces/ and returns it ("" when the
// request names none). The clone refuses git's ext:: transport, which
// would run a command named by the URL.
func (c *Conn) checkout(ctx context.Context, meta acp.Meta) (string, error) {
	raw, ok := meta[metaCheckout].(map[string]any)
	if !ok {
		return "", nil
	}
	repo, _ := raw["repo"].(string)
	rev, _ := raw["rev"].(string)
	if repo == "" || strings.HasPrefix(repo, "-") || strings.HasPrefix(rev, "-") {
		return "", acp.ErrInvalidParams.WithData(map[string]any{"reason": "_meta " + metaCheckout + " needs a repository URL (and optionally a revision) that do not start with -"})
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(c.srv.opts.Store.Dir(), "workspaces", hex.EncodeToString(b[:]))
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", acp.ErrInternal.Errorf("creating the workspace: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, checkoutTimeout)
	defer cancel()
	git := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "protocol.ext.allow=never"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(out.String()))
		}
		return nil
	}
	if err := git("clone", "--quiet", "--", repo, dir); err != nil {
		os.RemoveAll(dir)
		return "", acp.ErrInternal.WithData(map[string]any{"reason": "cloning " + repo + ": " + err.Error()})
	}
	if rev != "" {
		if err := git("-C", dir, "checkout", "--quiet", "--detach", rev, "--"); err != nil {
			os.RemoveAll(dir)
			return "", acp.ErrInvalidParams.WithData(map[string]any{"reason": "checking out " + rev + ": " + err.Error()})
		}
	}
	c.log.Info("session workspace checked out", "repo", repo, "rev", rev, "dir", dir)
	return dir, nil
}
