// Package settingnames fills the names a package's log lines and refusals
// give its limits. It is the one way a package below cmd/dshd names them:
// a struct of strings beside its limits (conventionally Settings), one
// field for each limit and named like it, which the daemon fills with its
// flags and Fill completes with the fields' own names, so that a line
// always says what bound was hit and the package needs no flag of the
// daemon's.
package settingnames
