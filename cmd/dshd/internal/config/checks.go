// This file parses values by kind and holds the checks rows refer to.

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dshd/dshd/internal/suggest"
)

// parse reads the text of a flag, a variable or a default as kind k (a
// list's items as kString).
func parse(k kind, s string) (any, error) {
	switch k {
	case kInt:
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, errors.New("want a whole number")
		}
		return n, nil
	case kBool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return nil, errors.New("want true or false")
		}
		return b, nil
	case kDuration:
		return parseDuration(s)
	}
	return s, nil
}

// parseDuration reads a Go duration or a number of seconds.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("want a duration like 90s or 2m, or a number of seconds")
	}
	return d, nil
}

// decode reads a JSON value from the config file as kind k (a list's
// items as kString).
func decode(k kind, raw []byte) (any, error) {
	var err error
	switch k {
	case kInt:
		var n int
		if err = json.Unmarshal(raw, &n); err == nil {
			return n, nil
		}
		return nil, errors.New("want a whole number")
	case kBool:
		var b bool
		if err = json.Unmarshal(raw, &b); err == nil {
			return b, nil
		}
		return nil, errors.New("want true or false")
	case kDuration:
		var secs float64
		if json.Unmarshal(raw, &secs) == nil {
			return time.Duration(secs * float64(time.Second)), nil
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return parseDuration(s)
		}
		return nil, errors.New("want a duration like \"90s\" or a number of seconds")
	}
	var s string
	if err = json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	return nil, errors.New("want a string")
}

// defaultCheck is the rule of a row without a check of its own.
func defaultCheck(k kind) func(any) error {
	switch k {
	case kInt:
		return atLeast(0)
	case kDuration:
		return positive
	}
	return nil
}

// oneOf accepts exactly the given strings ("" among them if it is
// allowed), suggesting the closest for anything else.
func oneOf(values ...string) func(any) error {
	return func(v any) error {
		s := v.(string)
		if slices.Contains(values, s) {
			return nil
		}
		shown := slices.DeleteFunc(slices.Clone(values), func(s string) bool { return s == "" })
		return fmt.Errorf("want one of %s%s", strings.Join(shown, ", "), suggest.DidYouMean(s, shown))
	}
}

// atLeast accepts whole numbers from n up.
func atLeast(n int) func(any) error {
	return func(v any) error {
		if v.(int) < n {
			return fmt.Errorf("want %d or more", n)
		}
		return nil
	}
}

// between accepts whole numbers from lo to hi.
func between(lo, hi int) func(any) error {
	return func(v any) error {
		if n := v.(int); n < lo || n > hi {
			return fmt.Errorf("want %d to %d", lo, hi)
		}
		return nil
	}
}

// positive accepts durations above zero: a zero timeout would cut
// everything off and a negative one means nothing.
func positive(v any) error {
	if v.(time.Duration) <= 0 {
		return errors.New("want a duration above zero")
	}
	return nil
}

// seconds accepts durations of a second or more: run_command's timeouts
// are whole seconds, to the model (its description says them, its
// calls give them) as to the user.
func seconds(v any) error {
	if v.(time.Duration) < time.Second {
		return errors.New("want 1s or more")
	}
	return nil
}

// optional accepts "" or what check accepts.
func optional(check func(string) error) func(any) error {
	return func(v any) error {
		if s := v.(string); s != "" {
			return check(s)
		}
		return nil
	}
}

// httpURL accepts an absolute http(s) URL.
func httpURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("want an http:// or https:// URL")
	}
	return nil
}

// envName accepts an environment variable name.
func envName(s string) error {
	for i, r := range s {
		if !(r == '_' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || i > 0 && '0' <= r && r <= '9') {
			return errors.New("not a variable name (letters, digits and _, not starting with a digit)")
		}
	}
	return nil
}

// cookieName accepts a cookie name (an RFC 6265 token): net/http drops a
// cookie whose name is not one without a word, so a bad name would set
// no cookie at all.
func cookieName(s string) error {
	for _, r := range s {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`()<>@,;:\"/[]?={}`, r) {
			return errors.New(`not a cookie name (letters, digits and !#$%&'*+-.^_|~; "" for none)`)
		}
	}
	return nil
}

// address accepts a listen address: unix:PATH or tcp:HOST:PORT (HOST may
// be empty: loopback), or http(s)://HOST:PORT.
func address(s string) error {
	network, where, _ := strings.Cut(s, ":")
	switch network {
	case "http", "https":
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			return errors.New("want http://HOST:PORT or https://HOST:PORT (the endpoint is /acp)")
		}
		_, port, err := net.SplitHostPort(u.Host)
		if err != nil {
			return errors.New("want http://HOST:PORT or https://HOST:PORT: the port is missing")
		}
		return portNumber(port)
	case "unix":
		if where != "" {
			return nil
		}
	case "tcp":
		if _, port, err := net.SplitHostPort(where); err == nil {
			return portNumber(port)
		}
	}
	return errors.New("want unix:PATH, tcp:HOST:PORT, http://HOST:PORT or https://HOST:PORT")
}

// portNumber accepts a TCP port, 0 to 65535.
func portNumber(port string) error {
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return nil
}

// absolute accepts an absolute path.
func absolute(v any) error {
	if !filepath.IsAbs(v.(string)) {
		return errors.New("want an absolute path")
	}
	return nil
}

// glob accepts a shell glob (*, ?, [...]).
func glob(v any) error {
	if _, err := path.Match(v.(string), ""); err != nil {
		return errors.New("not a glob pattern (*, ?, [...])")
	}
	return nil
}

// assignment accepts NAME=VALUE with a variable name.
func assignment(v any) error {
	name, _, ok := strings.Cut(v.(string), "=")
	if !ok || name == "" {
		return errors.New("want NAME=VALUE")
	}
	return envName(name)
}
