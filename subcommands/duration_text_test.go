package subcommands

import (
	"os"
	"strings"
	"testing"
)

// A duration refused for its range is quoted as the caller gave it, flag
// or variable: --lock-timeout 99h was "not 99h0m0s", a text the caller
// never wrote and cannot find in its command.
func TestDurationOutOfRangeQuotesCallerText(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/a.txt", []byte("a\n"), 0o644)
	t.Chdir(dir)
	for _, c := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"--lock-timeout", "99h", "read", "a.txt"}, "not 99h."},
		{"", []string{"--lock-timeout=1440m1s", "read", "a.txt"}, "not 1440m1s."},
		{"", []string{"read", "--lock-timeout", "-90m", "a.txt"}, "not -90m."},
		{"", []string{"--s3-idle-timeout", "500ms", "read", "a.txt"}, "not 500ms."},
		{"99h", []string{"read", "a.txt"}, "AGENTFS_LOCK_TIMEOUT must be from 0 to 24h, not 99h."},
		{"", []string{"index", "--watch", "--idle", "-90m", "."}, "--idle -90m is negative"},
		// JSON quoted the caller's text, but named its bound 24h0m0s.
		{"", []string{"grep", "--json", `{"pattern":"a","timeout":"99h"}`}, "from 0 to 24h, not 99h."},
		{"", []string{"grep", "--json", `{"pattern":"a","timeout":1e9}`}, "from 0 to 24h, not 1e9."},
	} {
		t.Setenv("AGENTFS_LOCK_TIMEOUT", c.env)
		code, _, errs := run(t, "", c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%q (AGENTFS_LOCK_TIMEOUT=%q): %d %s, want %q", c.args, c.env, code, errs, c.want)
		}
	}
}
