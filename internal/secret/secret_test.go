package secret

import (
	"regexp"
	"testing"
)

func TestName_TakesANameHoldingACredentialWordForASecret(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"GITHUB_TOKEN", true},
		{"DEEPSEEK_API_KEY", true},
		{"AWS_SECRET_ACCESS_KEY", true},
		{"aws_session_token", true},
		{"PGPASSWORD", true},
		{"MYSQL_PASSWD", true},
		{"GPG_PASSPHRASE", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", true},
		{"Session_Cookie", true},
		{"apikey", true},
		{"openai_api_key", true},
		{"Client_Secret", true},
		{"DSHD_TOKEN", true},
		{"KEYRING", true},
		{"DSHD_LISTEN", false},
		{"PATH", false},
		{"HOME", false},
		{"LANG", false},
		{"SSH_AUTH_SOCK", false},
		{"GIT_AUTHOR_NAME", false},
		{"DBUS_SESSION_BUS_ADDRESS", false},
		{"PASSTHROUGH", false},
		{"", false},
	} {
		if got := Name(tc.name); got != tc.want {
			t.Errorf("Name(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestKeyPattern_MatchesTheWholeKeyNameHoldsFor(t *testing.T) {
	re := regexp.MustCompile(`(?i)^` + KeyPattern() + `$`)
	for _, key := range []string{"DEEPSEEK_API_KEY", "token", "x-api-key", "Db_Password"} {
		if !re.MatchString(key) || !Name(key) {
			t.Errorf("%q: pattern %v, Name %v; want both true", key, re.MatchString(key), Name(key))
		}
	}
	for _, key := range []string{"PATH", "SSH_AUTH_SOCK", "the key"} {
		if re.MatchString(key) {
			t.Errorf("pattern matches %q", key)
		}
	}
}
