package subcommands

import (
	"os"
	"strings"
	"testing"
)

// An S3 setting's variable is checked only where an object store is used
// (an s3:// root, publish to s3://): AGENTFS_S3_IDLE_TIMEOUT=0, left in a
// shell for another command, made a purely local read INVALID_ARGUMENT.
// With an s3:// root it is still refused, naming the variable, before any
// request is made.
func TestS3SettingsCheckedOnlyForAStore(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/a.txt", []byte("a\n"), 0o644)
	t.Chdir(dir)
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1") // nothing listens: no request may be made
	for _, v := range []string{"0", "0s", "bad", "25h", "500ms"} {
		t.Setenv("AGENTFS_S3_IDLE_TIMEOUT", v)
		code, out, errs := run(t, "", "--root", dir, "read", "a.txt")
		if code != 0 || !strings.Contains(out, `"content":"a\n"`) {
			t.Errorf("AGENTFS_S3_IDLE_TIMEOUT=%s, local read: %d %s %s", v, code, out, errs)
		}
		for _, roots := range [][]string{{"--root", "s3://b/w"}, {"--root", dir, "--root", "s3://b/w"}} {
			args := append(append([]string{}, roots...), "read", "a.txt")
			code, _, errs = run(t, "", args...)
			if code != 2 || !strings.Contains(errs, `"INVALID_ARGUMENT"`) || !strings.Contains(errs, "AGENTFS_S3_IDLE_TIMEOUT") {
				t.Errorf("AGENTFS_S3_IDLE_TIMEOUT=%s, %q: %d %s, want INVALID_ARGUMENT naming the variable", v, roots, code, errs)
			}
		}
		code, _, errs = run(t, "", "--root", dir, "--assets", "s3://b/p", "publish", "a.txt")
		if code != 2 || !strings.Contains(errs, "AGENTFS_S3_IDLE_TIMEOUT") {
			t.Errorf("AGENTFS_S3_IDLE_TIMEOUT=%s, publish to s3://: %d %s, want INVALID_ARGUMENT naming the variable", v, code, errs)
		}
		// A flag on the command line overrides the variable.
		code, _, errs = run(t, "", "--s3-idle-timeout", "5s", "--root", dir, "read", "a.txt")
		if code != 0 {
			t.Errorf("AGENTFS_S3_IDLE_TIMEOUT=%s --s3-idle-timeout 5s: %d %s", v, code, errs)
		}
	}
}
