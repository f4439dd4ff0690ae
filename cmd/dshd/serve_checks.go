// This file checks, before a daemon is built, what `dshd serve` can only
// judge once every setting is read: the token and where it came from, and
// what a listener needs (a token off loopback and on tcp, TLS files for
// https and only there). Each mistake is a config.Error: exit 2, one line
// naming the setting and where its value came from.

package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/cmd/dshd/internal/listen"
)

// minTokenLen is the shortest token a daemon accepts: a guess must be
// hopeless even without the brake on failed authentications.
const minTokenLen = 16

// resolveToken returns the daemon token: DSHD_TOKEN, else the content of
// --token-file (one line; surrounding white space is not part of it), else
// none. A token shorter than minTokenLen is refused. The token's value is
// never part of an error.
func resolveToken(st *config.Settings, lookupEnv func(string) (string, bool)) (string, error) {
	// An empty DSHD_TOKEN (DSHD_TOKEN="$UNSET") is no token, so it does
	// not clash with --token-file.
	tok, _ := lookupEnv("DSHD_TOKEN")
	fromEnv := tok != ""
	switch {
	case fromEnv && st.TokenFile != "":
		return "", st.Invalid("token-file", errors.New("DSHD_TOKEN is set too; the token comes from one of them, not both"))
	case st.TokenFile != "":
		b, err := os.ReadFile(st.TokenFile)
		if err != nil {
			return "", st.Invalid("token-file", err)
		}
		tok = strings.TrimSpace(string(b))
		if tok == "" {
			return "", st.Invalid("token-file", errors.New("the file is empty"))
		}
		if len(tok) < minTokenLen {
			return "", st.Invalid("token-file", fmt.Errorf("the token in it is %d characters long; it must have at least %d", len(tok), minTokenLen))
		}
	case tok != "" && len(tok) < minTokenLen:
		return "", &config.Error{Where: "env DSHD_TOKEN", Problem: fmt.Sprintf("the token is %d characters long; it must have at least %d", len(tok), minTokenLen)}
	}
	return tok, nil
}

// serveToken is the token `dshd serve` runs with. On stdio the token is
// never asked for (the peer is the process that started dshd), so a
// DSHD_TOKEN meant for a daemon elsewhere, even one this daemon would
// refuse, must not stop an editor's dshd from starting.
func serveToken(st *config.Settings, lookupEnv func(string) (string, bool)) (string, error) {
	tok, err := resolveToken(st, lookupEnv)
	if err != nil && st.Listen == "" {
		return "", nil
	}
	return tok, err
}

// checkListener vets what the listener of st needs, st.Token resolved.
// It returns the TLS configuration of an https listener.
func checkListener(st *config.Settings) (*tls.Config, error) {
	switch {
	case listen.IsTCP(st.Listen) && st.Token == "":
		return nil, st.Invalid("listen", errors.New("a tcp listener needs a token (DSHD_TOKEN or --token-file)"))
	case !isRemoteListen(st.Listen):
		// On stdio no listener setting is read (a DSHD_TLS_* meant for
		// another daemon must not stop an editor's dshd).
		if st.Listen != "" && tlsFiles(st) {
			return nil, st.Invalid(tlsSetting(st), errors.New("TLS files need --listen https://"))
		}
		return nil, nil
	}
	u, err := url.Parse(st.Listen)
	if err != nil {
		return nil, st.Invalid("listen", err)
	}
	host, _, err := net.SplitHostPort(u.Host)
	if err != nil {
		return nil, st.Invalid("listen", err)
	}
	if host != "" && !loopbackOnly(host) && st.Token == "" {
		return nil, st.Invalid("listen", errors.New("a listener off loopback needs a token (DSHD_TOKEN or --token-file)"))
	}
	secure := u.Scheme == "https"
	switch {
	case secure && (st.TLSCert == "" || st.TLSKey == ""):
		return nil, st.Invalid("listen", errors.New("https:// needs --tls-cert and --tls-key"))
	case !secure && tlsFiles(st):
		return nil, st.Invalid(tlsSetting(st), errors.New("TLS files need --listen https://"))
	case !secure:
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(st.TLSCert, st.TLSKey)
	if err != nil {
		return nil, &config.Error{Where: "--tls-cert, --tls-key", Value: fmt.Sprintf("%q, %q", st.TLSCert, st.TLSKey), Problem: err.Error()}
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// tlsFiles reports whether a TLS file is set.
func tlsFiles(st *config.Settings) bool { return st.TLSCert != "" || st.TLSKey != "" }

// tlsSetting names the TLS setting that is set, for an error about it.
func tlsSetting(st *config.Settings) string {
	if st.TLSCert != "" {
		return "tls-cert"
	}
	return "tls-key"
}
