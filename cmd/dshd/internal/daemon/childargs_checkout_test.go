package daemon

import (
	"testing"
	"time"
)

// TestAChildDshdGetsTheParentsCheckoutTimeout: a child dshd started by the
// acp provider clones a binding's repo= itself, so the parent's
// --checkout-timeout, when given, bounds that clone too; when not given
// the child has the default, as the parent does.
func TestAChildDshdGetsTheParentsCheckoutTimeout(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{{[]string{"--checkout-timeout", "90s"}, 90 * time.Second}, {nil, 5 * time.Minute}} {
		args := childArgs(settingsOf(t, tc.args))
		if got := settingsOf(t, args[1:]).CheckoutTimeout; got != tc.want {
			t.Fatalf("the child of a parent with %q has --checkout-timeout %s, want %s (arguments %q)", tc.args, got, tc.want, args)
		}
	}
}
