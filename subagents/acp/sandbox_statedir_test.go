package acpprovider

import (
	"errors"
	"slices"
	"testing"

	"github.com/dshd/dshd/tools/sandbox"
)

// askedStateDir records what the provider asks a state dir rule and
// answers with the child's DSHD_STATE_DIR (or err).
type askedStateDir struct {
	args  []string
	env   map[string]string // the names looked up, and what they were
	dir   string            // the directory the child runs in
	calls int
	err   error
}

func (a *askedStateDir) rule(args []string, lookupEnv func(string) (string, bool), dir string) (string, error) {
	a.calls++
	a.args, a.dir = args, dir
	a.env = map[string]string{}
	for _, name := range []string{"DSHD_STATE_DIR", "FROM_DEFAULT", "FROM_DAEMON", "DROPPED", "SOME_API_KEY"} {
		if v, ok := lookupEnv(name); ok {
			a.env[name] = v
		}
	}
	sd, _ := lookupEnv("DSHD_STATE_DIR")
	return sd, a.err
}

func TestSandbox_AChildDshdsStateDirIsWhatItsArgsAndItsEnvironmentResolve(t *testing.T) {
	t.Setenv("FROM_DAEMON", "1")
	t.Setenv("DROPPED", "1")
	t.Setenv("SOME_API_KEY", "k")
	newP := func(t *testing.T, asked *askedStateDir) *Provider {
		p, err := New(&Options{
			Self:        "/usr/bin/dshd",
			DefaultArgs: []string{"serve", "--model", "m"},
			DefaultEnv:  []string{"FROM_DEFAULT=1"},
			Agents:      map[string]AgentConfig{"kid": {Env: map[string]string{"DSHD_STATE_DIR": "/srv/kid"}}},
			Sandbox:     &sandbox.Config{Mode: sandbox.WorkspaceWrite},
			StateDirOf:  asked.rule,
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("the binding's env, over the daemon's and the default child's", func(t *testing.T) {
		var asked askedStateDir
		p := newP(t, &asked)
		tg, err := p.resolveTarget(map[string]string{"env": "DSHD_STATE_DIR=/srv/state", "unset-env": "DROPPED"})
		if err != nil {
			t.Fatal(err)
		}
		if asked.calls != 0 {
			t.Errorf("the rule was asked before the child's working directory is known")
		}
		if w := p.confinementIn(tg, "/work/session").writable; !slices.Contains(w, "/srv/state") {
			t.Errorf("writable = %v, want /srv/state in it", w)
		}
		if !slices.Equal(asked.args, []string{"serve", "--model", "m"}) {
			t.Errorf("the rule was given the args %q, want the child's", asked.args)
		}
		if asked.dir != "/work/session" {
			t.Errorf("the rule was given the dir %q, want the one the child runs in", asked.dir)
		}
		// What the child gets: the daemon's environment less what is
		// unset and what looks like a credential, the default child's
		// entries, the binding's.
		want := map[string]string{"DSHD_STATE_DIR": "/srv/state", "FROM_DEFAULT": "1", "FROM_DAEMON": "1"}
		if len(asked.env) != len(want) {
			t.Errorf("the rule saw the environment %v, want %v", asked.env, want)
		}
		for k, v := range want {
			if asked.env[k] != v {
				t.Errorf("the rule saw %s=%q, want %q", k, asked.env[k], v)
			}
		}
	})
	t.Run("a named agent's env", func(t *testing.T) {
		var asked askedStateDir
		p := newP(t, &asked)
		tg, err := p.resolveTarget(map[string]string{"agent": "kid"})
		if err != nil {
			t.Fatal(err)
		}
		if w := p.confinementIn(tg, "/work/session").writable; !slices.Contains(w, "/srv/kid") {
			t.Fatalf("writable = %v; want /srv/kid in it", w)
		}
	})
	for _, tc := range []struct {
		name string
		opts map[string]string
		err  error
		// asked: whether the rule is asked at all
		asked bool
	}{
		{"a relative answer", map[string]string{"env": "DSHD_STATE_DIR=state"}, nil, true},
		{"a mistake the child will stop on", map[string]string{"env": "DSHD_STATE_DIR=/srv/state"}, errors.New("bad setting"), true},
		{"a child dshd with sandbox=off", map[string]string{"env": "DSHD_STATE_DIR=/srv/state", "sandbox": "off"}, nil, false},
		{"a third-party agent", map[string]string{"command": "/bin/true", "env": "DSHD_STATE_DIR=/srv/state", "sandbox": "workspace-write"}, nil, false},
	} {
		t.Run("none for "+tc.name, func(t *testing.T) {
			asked := askedStateDir{err: tc.err}
			p := newP(t, &asked)
			tg, err := p.resolveTarget(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if w := p.confinementIn(tg, "/work/session").writable; len(w) != 0 {
				t.Errorf("writable = %v, want none", w)
			}
			if got := asked.calls > 0; got != tc.asked {
				t.Errorf("the rule was asked = %v, want %v", got, tc.asked)
			}
		})
	}
}
