// This file finds the model's API key: the key variable, else the key
// `dshd auth` stored, even one stored after the daemon started.

package daemon

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/openai"
	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/cmd/dshd/internal/keystore"
)

// KeyVar is the environment variable the model key of st comes from, and
// under whose name `dshd auth` stores it; "" when the model needs no key
// (the scripted model, a server configured with --api-key-env "").
func KeyVar(st *config.Settings) (string, error) {
	if scriptedModel(st) {
		return "", nil
	}
	_, keyEnv, err := modelOptions(st)
	return keyEnv, err
}

// CheckKey asks the model server of st whether it takes key (GET /models).
// The error is an [*llm.APIError] with status 401 or 403 when the server
// refused the key, another error when it could not tell.
func CheckKey(ctx context.Context, st *config.Settings, key string, log *slog.Logger) error {
	opts, _, err := modelOptions(st)
	if err != nil {
		return err
	}
	opts.APIKey, opts.KeySource = openai.APIKey(key), "the key given to `dshd auth`"
	opts.Logger = log
	c, err := openai.New(opts)
	if err != nil {
		return err
	}
	_, err = c.Models(ctx)
	return err
}

// Refused reports whether err, from [CheckKey], is the server refusing the
// key.
func Refused(err error) bool {
	var ae *llm.APIError
	return errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden)
}

// keySource is where the key of variable name comes from: the variable
// when it is set and not empty, else the store.
type keySource struct {
	name      string
	lookupEnv func(string) (string, bool)
	store     keystore.Store
	storeErr  error
	log       *slog.Logger
	// warned keeps a broken key file to one warning.
	warned sync.Once
}

func newKeySource(name string, lookupEnv func(string) (string, bool), log *slog.Logger) *keySource {
	s := &keySource{name: name, lookupEnv: lookupEnv, log: log}
	s.store, s.storeErr = keystore.Default(lookupEnv)
	return s
}

// key returns the key and whether it came from the store; "" when there
// is none.
func (s *keySource) key() (key string, stored bool) {
	if v, ok := s.lookupEnv(s.name); ok && v != "" {
		return v, false
	}
	if s.storeErr != nil {
		return "", false
	}
	k, ok, err := s.store.Load(s.name)
	if err != nil {
		s.warned.Do(func() { s.log.Warn("stored model key not used", "err", err) })
		return "", false
	}
	return k, ok
}

// keyedClient is the model client of a backend that needs a key. Without
// one it is a client without a key, and it looks for one again whenever
// it is used, so a key `dshd auth` stores while the daemon runs serves the
// next session/new; once it has a key it keeps it for the daemon's life.
type keyedClient struct {
	opts openai.Options
	keys *keySource
	log  *slog.Logger

	mu     sync.Mutex
	client *openai.Client
	// inUse is the key client sends; "" until one is known.
	inUse string
}

var (
	_ llm.Model  = (*keyedClient)(nil)
	_ llm.Lister = (*keyedClient)(nil)
)

func newKeyedClient(opts openai.Options, keys *keySource, log *slog.Logger) (*keyedClient, error) {
	k := &keyedClient{opts: opts, keys: keys, log: log}
	opts.KeySource = keys.name + " is not set and `dshd auth` stored no key for it"
	c, err := openai.New(opts)
	if err != nil {
		return nil, err
	}
	k.client = c
	k.current()
	return k, nil
}

// current is the client to use now, and the key it sends: the keyed
// client once a key is known.
func (k *keyedClient) current() (*openai.Client, string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.inUse != "" {
		return k.client, k.inUse
	}
	key, stored := k.keys.key()
	if key == "" {
		return k.client, ""
	}
	opts := k.opts
	opts.APIKey, opts.KeySource = openai.APIKey(key), k.keys.name
	if stored {
		opts.KeySource = "the key `dshd auth` stored for " + k.keys.name + " (" + k.keys.store.Path(k.keys.name) + ")"
	}
	c, err := openai.New(opts)
	if err != nil {
		// The same options built the keyless client, so only the key
		// differs; keep the keyless one and say why.
		k.log.Warn("model client with the key", "err", err)
		return k.client, ""
	}
	if stored {
		k.log.Info("using the stored model key", "var", k.keys.name, "path", k.keys.store.Path(k.keys.name))
	}
	k.client, k.inUse = c, key
	return c, key
}

// has reports whether a key is known.
func (k *keyedClient) has() bool {
	_, key := k.current()
	return key != ""
}

// key is the key in use, "" without one.
func (k *keyedClient) key() string {
	_, key := k.current()
	return key
}

func (k *keyedClient) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	c, _ := k.current()
	return c.Stream(ctx, req)
}

func (k *keyedClient) Models(ctx context.Context) ([]llm.Info, error) {
	c, _ := k.current()
	return c.Models(ctx)
}

// scriptedModel reports whether st names the built-in scripted model.
func scriptedModel(st *config.Settings) bool {
	return st.Model == "scripted" || strings.HasPrefix(st.Model, "scripted:")
}
