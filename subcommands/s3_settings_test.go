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

// A publish setting's variable is checked only by what publishes (the
// command publish, a publish in batch or mcp): AGENTFS_PUBLISH_MAX_SIZE=0
// or abc, left in a shell, made every command INVALID_ARGUMENT, a purely
// local read and a batch of reads too. publish still refuses it, naming
// the variable, before anything is published; the flag on the command
// line overrides it.
func TestPublishSettingsCheckedOnlyByPublish(t *testing.T) {
	dir, assetsDir := t.TempDir(), t.TempDir()+"/assets"
	os.WriteFile(dir+"/a.txt", []byte("a\n"), 0o644)
	t.Chdir(dir)
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	for _, v := range []string{"0", "-3", "abc", "1.5", "99999999999999999999"} {
		t.Setenv("AGENTFS_PUBLISH_MAX_SIZE", v)
		code, out, errs := run(t, "", "--root", dir, "read", "a.txt")
		if code != 0 || !strings.Contains(out, `"content":"a\n"`) {
			t.Errorf("AGENTFS_PUBLISH_MAX_SIZE=%s, read: %d %s %s", v, code, out, errs)
		}
		code, out, errs = run(t, `{"tool":"read","args":{"path":"a.txt"}}`+"\n", "--root", dir, "batch")
		if code != 0 || !strings.Contains(out, `"content":"a\n"`) {
			t.Errorf("AGENTFS_PUBLISH_MAX_SIZE=%s, batch of a read: %d %s %s", v, code, out, errs)
		}
		code, _, errs = run(t, "", "--root", dir, "--assets", assetsDir, "publish", "a.txt")
		if code != 2 || !strings.Contains(errs, `"INVALID_ARGUMENT"`) || !strings.Contains(errs, "AGENTFS_PUBLISH_MAX_SIZE") {
			t.Errorf("AGENTFS_PUBLISH_MAX_SIZE=%s, publish: %d %s, want INVALID_ARGUMENT naming the variable", v, code, errs)
		}
		code, out, _ = run(t, `{"tool":"publish","args":{"path":"a.txt"}}`+"\n", "--root", dir, "--assets", assetsDir, "batch")
		if !strings.Contains(out, `"INVALID_ARGUMENT"`) || !strings.Contains(out, "AGENTFS_PUBLISH_MAX_SIZE") {
			t.Errorf("AGENTFS_PUBLISH_MAX_SIZE=%s, batch of a publish: %d %s, want INVALID_ARGUMENT naming the variable", v, code, out)
		}
		if entries, _ := os.ReadDir(assetsDir); len(entries) > 0 {
			t.Fatalf("AGENTFS_PUBLISH_MAX_SIZE=%s: %d entries published", v, len(entries))
		}
		code, out, errs = run(t, "", "--root", dir, "--assets", assetsDir, "--publish-max-size", "5", "publish", "a.txt")
		if code != 0 || !strings.Contains(out, `"url"`) {
			t.Errorf("AGENTFS_PUBLISH_MAX_SIZE=%s --publish-max-size 5, publish: %d %s %s", v, code, out, errs)
		}
		os.RemoveAll(assetsDir)
	}
}

// AGENTFS_BASE_URL is refused by publish naming the variable, which a
// script that only set it can find (it named --base-url), and ignored by
// a read.
func TestBaseURLVariableNamed(t *testing.T) {
	dir, assetsDir := t.TempDir(), t.TempDir()+"/assets"
	os.WriteFile(dir+"/a.txt", []byte("a\n"), 0o644)
	t.Chdir(dir)
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	t.Setenv("AGENTFS_BASE_URL", "ftp://h")
	if code, out, errs := run(t, "", "--root", dir, "read", "a.txt"); code != 0 {
		t.Errorf("AGENTFS_BASE_URL=ftp://h, read: %d %s %s", code, out, errs)
	}
	code, _, errs := run(t, "", "--root", dir, "--assets", assetsDir, "publish", "a.txt")
	if code != 2 || !strings.Contains(errs, `"message":"AGENTFS_BASE_URL must be an http or https URL`) || !strings.Contains(errs, "unset AGENTFS_BASE_URL") {
		t.Errorf("AGENTFS_BASE_URL=ftp://h, publish: %d %s, want INVALID_ARGUMENT naming the variable", code, errs)
	}
	code, _, errs = run(t, "", "--root", dir, "--assets", assetsDir, "--base-url", "http://h/#", "publish", "a.txt")
	if code != 2 || !strings.Contains(errs, `"message":"--base-url must be an http or https URL`) {
		t.Errorf("--base-url http://h/#, publish: %d %s, want INVALID_ARGUMENT naming the flag", code, errs)
	}
	if code, out, errs := run(t, "", "--root", dir, "--assets", assetsDir, "--base-url", "http://h:1", "publish", "a.txt"); code != 0 {
		t.Errorf("--base-url http://h:1 over the variable, publish: %d %s %s", code, out, errs)
	}
}

// A publish of batch (or mcp) refuses a publish setting's variable before
// any work, as the command publish does: it was checked only as the
// target opened, after the size check and the hash of the whole file, so
// that AGENTFS_PUBLISH_MAX_SIZE=0 with a file over the default limit was
// TOO_LARGE, over a limit the caller never set, with a hint to raise
// --publish-max-size, and AGENTFS_BASE_URL=ftp://h was refused only once
// the file was read through; so were the S3 settings of an s3:// target,
// by the command too.
func TestBatchPublishChecksSettingsFirst(t *testing.T) {
	dir, assetsDir := t.TempDir(), t.TempDir()+"/assets"
	// Over the default limit, sparse: a check after the size's is TOO_LARGE.
	if err := os.WriteFile(dir+"/big.bin", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(dir+"/big.bin", 200<<20); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1") // nothing listens
	for _, tc := range []struct{ env, value, assets string }{
		{"AGENTFS_PUBLISH_MAX_SIZE", "0", assetsDir},
		{"AGENTFS_PUBLISH_MAX_SIZE", "abc", assetsDir},
		{"AGENTFS_BASE_URL", "ftp://h", assetsDir},
		{"AGENTFS_S3_IDLE_TIMEOUT", "0", "s3://b/p"},
	} {
		t.Run(tc.env+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			_, out, _ := run(t, `{"tool":"publish","args":{"path":"big.bin"},"id":1}`+"\n", "--root", dir, "--assets", tc.assets, "batch")
			if !strings.Contains(out, `"INVALID_ARGUMENT"`) || !strings.Contains(out, tc.env) {
				t.Errorf("batch of a publish: %s, want INVALID_ARGUMENT naming %s", out, tc.env)
			}
			if tc.env != "AGENTFS_S3_IDLE_TIMEOUT" {
				return
			}
			code, _, errs := run(t, "", "--root", dir, "--assets", tc.assets, "publish", "big.bin")
			if code != 2 || !strings.Contains(errs, tc.env) {
				t.Errorf("publish: %d %s, want INVALID_ARGUMENT naming %s", code, errs, tc.env)
			}
		})
	}
}
