// This file warns of DSHD_* variables that name no setting.

package main

import (
	"log/slog"
	"os"

	"github.com/dshd/dshd/cmd/dshd/internal/config"
)

// testVars are the DSHD_* variables this package's tests give the dshd
// they run (main_test.go sets them); none in production.
var testVars []string

// warnUnknownEnv logs, once at start, each DSHD_* variable of the
// environment that names no setting (config.Settings.UnknownEnv).
func warnUnknownEnv(st *config.Settings, log *slog.Logger) {
	for _, w := range st.UnknownEnv(os.Environ(), testVars...) {
		log.Warn(w)
	}
}
