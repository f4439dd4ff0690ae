package sandbox

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

func init() { osHelpers["sethostname"] = func(args []string) int { return setHostname(args[0]) } }

// setHostname tries to rename the machine (or the UTS namespace it runs
// in) and prints the outcome.
func setHostname(name string) int {
	if err := syscall.Sethostname([]byte(name)); err != nil {
		fmt.Println("sethostname:", err)
		return 1
	}
	fmt.Println("sethostname: done")
	return 0
}

// capSets reads the Cap* lines of a /proc/PID/status the command printed.
func capSets(out string) map[string]string {
	sets := map[string]string{}
	for line := range strings.Lines(out) {
		if name, v, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(name, "Cap") {
			sets[name] = strings.TrimSpace(v)
		}
	}
	return sets
}

// Run as root (CI, containers), a confined command is still uid 0: it
// must not keep root's capabilities, which would let it read dshd's
// memory and environment, reconfigure the machine's network or rename it.
// As any user, the hostname it may change is its own namespace's.
func TestWorkspaceWrite_AndReadOnlyCommandsHoldNoCapabilitiesAndCannotRenameTheMachine(t *testing.T) {
	needLandlock(t)
	before, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"workspace-write", Config{}},
		{"workspace-write without network", Config{NoNetwork: true}},
		{"workspace-write without namespaces", Config{NoNamespaces: true}},
		{"read-only", Config{Mode: ReadOnly}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t, tc.cfg)
			if why := s.unconfinedReason(); why != "" {
				t.Skip(why)
			}
			ws := t.TempDir()
			r := sh(t, s, ws, []string{ws}, "grep ^Cap /proc/self/status")
			if r.err != nil || r.st.Code != 0 {
				t.Fatalf("reading the command's capabilities: %v %+v %s", r.err, r.st, r.out)
			}
			sets := capSets(r.out)
			want := []string{"CapInh", "CapPrm", "CapEff", "CapAmb"}
			if os.Geteuid() == 0 {
				// Dropping the bounding set takes CAP_SETPCAP; without it
				// an exec under no_new_privs gains nothing anyway.
				want = append(want, "CapBnd")
			}
			for _, name := range want {
				if sets[name] != "0000000000000000" {
					t.Errorf("the command's %s is %q, want none:\n%s", name, sets[name], r.out)
				}
			}
			// The name it has: a command that may set it (a regression)
			// renames nothing, even in the machine's namespace, and the
			// call's success says it all.
			r = run(t, s, ws, []string{ws}, exe(t), "sethostname", before)
			after, err := os.Hostname()
			if err != nil {
				t.Fatal(err)
			}
			if after != before {
				// Put the machine's name back before failing.
				_ = syscall.Sethostname([]byte(before))
				t.Fatalf("the command renamed the machine from %q to %q (%s)", before, after, r.out)
			}
			if r.st.Code == 0 {
				t.Errorf("the command changed a hostname without any capability: %s", r.out)
			}
		})
	}
}

// Off is documented as unconfined: a root command keeps root's powers.
func TestOff_ARootCommandKeepsItsCapabilities(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root command has capabilities to keep")
	}
	s := newSandbox(t, Config{Mode: Off})
	r := sh(t, s, t.TempDir(), nil, "grep ^CapEff /proc/self/status")
	if r.err != nil || capSets(r.out)["CapEff"] == "0000000000000000" {
		t.Fatalf("an unconfined root command lost its capabilities: %v %s", r.err, r.out)
	}
}
