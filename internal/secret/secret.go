// This file implements the rule.

package secret

import "strings"

// Words are the parts of a name that make it a credential's, in upper
// case: a name holding one of them, in any case, is taken for a secret
// (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, PGPASSWORD, GOOGLE_APPLICATION_CREDENTIALS).
// Broad words that also name harmless variables (AUTH in SSH_AUTH_SOCK
// and GIT_AUTHOR_NAME, SESSION in DBUS_SESSION_BUS_ADDRESS) are left out:
// a command needs those.
var Words = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "COOKIE"}

// Name reports whether an environment variable (or any key) named name
// looks like it holds a credential: it contains one of the [Words], in
// any case.
func Name(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range Words {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// KeyPattern is a regular expression, for use with the (?i) flag, that
// matches a whole key for which [Name] holds: a run of letters, digits,
// '_' and '-' holding one of the [Words].
func KeyPattern() string {
	return `[A-Za-z0-9_-]*(` + strings.ToLower(strings.Join(Words, "|")) + `)[A-Za-z0-9_-]*`
}
