// End-to-end test of a state dir dshd cannot use (README: --state-dir is
// "a directory"): every command that opens the store stops at start with
// exit 2 and one line naming the setting, where it came from and the path
// that failed, instead of exit 1 and "state dir: session: state
// directory: …".

package main

import (
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestAStateDirThatIsAFileStopsDshdAtStartNamingTheSetting(t *testing.T) {
	file := testkit.Write(t, t.TempDir(), "state", "not a directory\n")
	runMistakes(t, []mistake{
		{name: "prompt", args: []string{"prompt", "--state-dir", file, "hi"},
			want: []string{`--state-dir "` + file + `"`, "not a directory"}},
		{name: "serve on stdio from the environment", args: []string{"serve"}, env: []string{"DSHD_STATE_DIR=" + file},
			want: []string{`env DSHD_STATE_DIR "` + file + `"`, "not a directory"}},
		{name: "sessions list", args: []string{"sessions", "list", "--state-dir", file},
			want: []string{`--state-dir "` + file + `"`, "not a directory"}},
	})
}
