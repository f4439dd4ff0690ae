// Package settingnames fills the names a package's log lines give its
// limits: a low package (acp/rpc, acp/remote) names each limit with the
// daemon's flag when the daemon passes one in, and with its own field's
// name otherwise, so that a line always says what bound was hit.
package settingnames
