// Package keystore keeps the model API keys `dshd auth` stores, so that an
// editor that installed dshd from the ACP registry can log in through
// terminal auth instead of editing environment variables.
//
// A key lives in one file per key variable, $XDG_CONFIG_HOME/dshd/keys/NAME
// (NAME being the variable, DEEPSEEK_API_KEY for instance), mode 0600 in a
// directory of mode 0700, written whole or not at all. The daemon reads a
// stored key only when the variable itself is unset or empty: the
// environment always wins. A key file that others may read is refused, as
// ssh refuses a private key with loose permissions.
//
// ReadKey is the key's way in: from a terminal without echo, or one line
// from a pipe.
//
// The package imports nothing of the project.
package keystore
