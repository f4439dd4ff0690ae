// Package version holds dshd's version, set at link time by the Makefile.
package version

import "runtime/debug"

// Version is the release version; the Makefile sets it with -ldflags -X.
var Version = "dev"

// String returns Version, or the module version when built with go install.
func String() string {
	if Version != "dev" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return Version
}
