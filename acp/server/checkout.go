// checkout.go: a session on a checkout of its own — a parent that sends
// the child a repository (session/new's _meta "dshd.dev/checkout": {repo,
// rev}) gets a session whose cwd is a fresh clone on this host, instead of
// working on the parent's files through fs/* and terminal/*.

package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/rpc"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/localrun"
)

// metaCheckout is the _meta key of session/new naming the repository.
const metaCheckout = "dshd.dev/checkout"

// DefaultCheckoutTimeout is the default of Options.CheckoutTimeout.
const DefaultCheckoutTimeout = 5 * time.Minute

// checkoutOutputTail is how much of git's output a failed checkout's
// error keeps: the end, where git says what went wrong. A repository or
// a remote that prints without end costs this much.
const checkoutOutputTail = 4 << 10

// errCheckoutTimeout is the cause of a checkout's context that ran out
// of its time, told apart from the request's own cancel.
var errCheckoutTimeout = errors.New("checkout timed out")

// checkoutWatch is how often a running clone is held against the disk
// bounds.
const checkoutWatch = time.Second

// checkout clones the repository a session/new asks for, if any, into
// session id's workspace in the store (workspaces/<id> in the state
// directory's sessions/, which deleting the session removes) and returns
// it ("" when the request names none). The store's disk bounds are
// checked before the clone starts, as session.Create checks them, so
// that a refused session clones nothing; while it runs, so that a clone
// stops once it would take the sessions to --max-state-bytes or the disk
// below --min-free-disk-bytes; and once it is done, when it is counted
// in the state bound. Each check counts every clone under way on the
// daemon (the store's BeginWorkspace), so that clones of several
// connections hold --max-state-bytes together. The clone refuses git's
// ext:: transport, which would run a command named by the URL. A clone
// that fails is removed.
func (c *Conn) checkout(ctx context.Context, id string, meta acp.Meta) (string, error) {
	raw, ok := meta[metaCheckout].(map[string]any)
	if !ok {
		return "", nil
	}
	repo, _ := raw["repo"].(string)
	rev, _ := raw["rev"].(string)
	if repo == "" || strings.HasPrefix(repo, "-") || strings.HasPrefix(rev, "-") {
		return "", acp.ErrInvalidParams.WithData(map[string]any{"reason": "_meta " + metaCheckout + " needs a repository URL (and optionally a revision) that do not start with -"})
	}
	if err := c.sessionsFull(); err != nil {
		return "", err
	}
	// A clone may take minutes: the connection's later messages (other
	// sessions' prompts and cancels) go on meanwhile. The connection's
	// end still stops and removes it: acp/rpc cancels the handlers still
	// running and waits for them. Its clones run one at a time, as when
	// each held up the connection: a client cannot start one git per
	// message.
	rpc.Detach(ctx)
	select {
	case c.cloneSlot <- struct{}{}:
		defer func() { <-c.cloneSlot }()
	case <-ctx.Done():
		return "", acp.ErrInternal.WithData(map[string]any{"reason": "cloning " + hideCredentials(repo, repo) + ": " + ctx.Err().Error()})
	}
	store := c.srv.opts.Store
	if err := store.BeginWorkspace(id); err != nil {
		return "", notCreated(err)
	}
	dir := store.WorkspaceDir(id)
	err := os.MkdirAll(filepath.Dir(dir), 0o700)
	if err != nil {
		err = acp.ErrInternal.Errorf("creating the workspace: %v", err)
	} else if err = c.clone(ctx, id, dir, repo, rev); err == nil {
		if cerr := store.CountWorkspace(id); cerr != nil {
			err = notCreated(cerr)
		}
	}
	if err != nil {
		if rerr := store.DropWorkspace(id); rerr != nil {
			c.log.Warn("cannot remove a failed checkout", "dir", dir, "err", rerr)
		}
		return "", err
	}
	c.log.Info("session workspace checked out", "session", id, "repo", hideCredentials(repo, repo), "rev", rev, "dir", dir)
	return dir, nil
}

// notCreated is the answer of a session/new refused by the store: a disk
// bound, or an error of the store's.
func notCreated(err error) error { return storeRefused("The session was not created", "", err) }

// clone clones repo into dir, at rev if given, within the checkout
// timeout, and stops when the disk bounds refuse dir's growth (the
// store's CheckWorkspace, looked at every checkoutWatch).
func (c *Conn) clone(ctx context.Context, id, dir, repo, rev string) error {
	timeout := c.srv.opts.CheckoutTimeout
	ctx, stop := context.WithCancelCause(ctx)
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errCheckoutTimeout)
	defer cancel()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tick := time.NewTicker(checkoutWatch)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := c.srv.opts.Store.CheckWorkspace(id); err != nil {
					stop(err)
					return
				}
			}
		}
	}()
	defer func() { <-watched }()
	defer stop(nil) // ends the watch before waiting for it
	// A runner of its own: unconfined like the daemon (the clone needs the
	// network and writes the state directory, which commands' sandboxes
	// keep out), in its own session so that no ssh or credential helper
	// can prompt on a terminal, and git's output kept as a tail.
	run := localrun.New(&localrun.Options{Env: append(os.Environ(), "GIT_TERMINAL_PROMPT=0"), OutputLimit: checkoutOutputTail})
	git := func(args ...string) error {
		res, err := run.Run(ctx, tools.Command{Command: "git", Args: append([]string{"-c", "protocol.ext.allow=never"}, args...), Dir: filepath.Dir(dir)}, nil, nil)
		var le *session.LimitError
		switch cause := context.Cause(ctx); {
		case errors.As(cause, &le):
			return notCreated(le)
		case errors.Is(cause, errCheckoutTimeout):
			if !c.srv.checkoutTimedOut.Swap(true) {
				c.log.Warn("a checkout took longer than its bound and was stopped", "setting", c.srv.opts.Settings.CheckoutTimeout, "timeout", timeout, "repo", hideCredentials(repo, repo))
			}
			return fmt.Errorf("git %s did not finish within %s (%s)", args[0], c.srv.opts.Settings.CheckoutTimeout, timeout)
		}
		if err != nil {
			return fmt.Errorf("git %s: %v", args[0], err)
		}
		status := "killed by " + res.Signal
		if res.ExitCode != nil {
			if *res.ExitCode == 0 {
				return nil
			}
			status = fmt.Sprintf("exit code %d", *res.ExitCode)
		}
		out := hideCredentials(repo, strings.TrimSpace(res.Output))
		if res.Truncated {
			out = "…" + out
		}
		return fmt.Errorf("git %s failed (%s): %s", args[0], status, out)
	}
	if err := git("clone", "--quiet", "--", repo, dir); err != nil {
		return failed(acp.ErrInternal, "cloning "+hideCredentials(repo, repo), err)
	}
	if rev != "" {
		if err := git("-C", dir, "checkout", "--quiet", "--detach", rev, "--"); err != nil {
			return failed(acp.ErrInvalidParams, "checking out "+rev, err)
		}
	}
	return nil
}

// hideCredentials is text with the credentials of the URL repo (its
// user information, user:password@ or a token as the user, which is how
// CI gives a clone its access) replaced by REDACTED: logs and answers
// name the repository, never its secret. git gets repo as it is.
func hideCredentials(repo, text string) string {
	scheme, rest, ok := strings.Cut(repo, "://")
	if !ok {
		return text // scp-like user@host:path names a user, not a secret
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	at := strings.LastIndex(authority, "@")
	if at <= 0 {
		return text
	}
	info := authority[:at]
	// ssh://git@host names an ssh user; a password or an http(s) user
	// (a token) is a secret.
	if !strings.Contains(info, ":") && !strings.HasPrefix(strings.ToLower(scheme), "http") {
		return text
	}
	return strings.ReplaceAll(text, info+"@", "REDACTED@")
}

// failed is the answer of a checkout whose git failed: code, with a
// reason saying what was done (naming the repository or revision) and
// how git failed; a disk bound's refusal stays as it is.
func failed(code *acp.Error, what string, err error) error {
	var ae *acp.Error
	if errors.As(err, &ae) {
		return err
	}
	return code.WithData(map[string]any{"reason": what + ": " + err.Error()})
}

// removeCheckout removes the checkout of session id, which was not
// created after all.
func (c *Conn) removeCheckout(id string) {
	if err := c.srv.opts.Store.RemoveWorkspace(id); err != nil {
		c.log.Warn("cannot remove the checkout of a session that was not created", "session", id, "err", err)
	}
}
