package subcommands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A value of --assets, AGENTFS_ASSETS or --root that looks like a URL but
// is not s3:// as written (s3:/x, s3:x, S3://x, s3//x, http://x) is
// INVALID_ARGUMENT naming it, with the right form in the hint: publish
// stored the file in a local folder "s3:/x" (s3: and x below it) and
// exited 0, and a root so typed was a local folder. A local folder whose
// name holds a colon is still taken written ./a:b or absolute.
func TestSchemeTyposRefused(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/a.txt", []byte("a\n"), 0o644)
	t.Chdir(dir)
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1") // nothing listens: no request may be made
	refused := func(what string, code int, errs, name, v string) {
		t.Helper()
		if code != 2 || !strings.Contains(errs, `"INVALID_ARGUMENT"`) || !strings.Contains(errs, name+" "+v) || !strings.Contains(errs, "s3://bucket/prefix") {
			t.Errorf("%s: %d %s; want INVALID_ARGUMENT naming %s %s, with s3://bucket/prefix in the hint", what, code, errs, name, v)
		}
	}
	for _, v := range []string{"s3:/x", "s3:x", "S3://x", "s3//x", "http://x", "S3:/x", "gs:x"} {
		code, _, errs := run(t, "", "--assets", v, "publish", "a.txt")
		refused("--assets "+v, code, errs, "--assets", v)
		t.Setenv("AGENTFS_ASSETS", v)
		code, _, errs = run(t, "", "publish", "a.txt")
		refused("AGENTFS_ASSETS="+v, code, errs, "AGENTFS_ASSETS", v)
		code, out, _ := run(t, `{"tool":"publish","args":{"path":"a.txt"}}`+"\n", "batch")
		if !strings.Contains(out, `"INVALID_ARGUMENT"`) || !strings.Contains(out, "AGENTFS_ASSETS "+v) {
			t.Errorf("AGENTFS_ASSETS=%s, batch of a publish: %d %s", v, code, out)
		}
		os.Unsetenv("AGENTFS_ASSETS")
		code, _, errs = run(t, "", "--root", v, "ls")
		refused("--root "+v, code, errs, "--root", v)
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("%s: the workspace holds %d entries, want a.txt alone", v, len(entries))
		}
	}
	// Local folders, a colon in the name too.
	os.Mkdir("a:b", 0o755)
	for _, v := range []string{"./a:b", filepath.Join(dir, "a:b"), "assets", "./s3:", "./s3:/x"} {
		if code, out, errs := run(t, "", "--assets", v, "publish", "a.txt"); code != 0 || !strings.Contains(out, `"url"`) {
			t.Errorf("--assets %s: %d %s %s", v, code, out, errs)
		}
		if code, out, errs := run(t, "", "--root", dir, "--root", v, "ls", v); code != 0 {
			t.Errorf("--root %s: %d %s %s", v, code, out, errs)
		}
	}
}

// A root or deny path so typed that only AGENTFS_ROOT or AGENTFS_DENY
// gave is refused naming the variable: the error named --root or --deny,
// which a script that only set the variable never passed.
func TestSchemeTyposOfVariablesNameThem(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	for _, env := range []string{"AGENTFS_ROOT", "AGENTFS_DENY"} {
		t.Setenv(env, "s3:/x")
		code, _, errs := run(t, "", "ls")
		if code != 2 || !strings.Contains(errs, `"INVALID_ARGUMENT"`) || !strings.Contains(errs, env+" s3:/x") {
			t.Errorf("%s=s3:/x: %d %s; want INVALID_ARGUMENT naming %s s3:/x", env, code, errs, env)
		}
		flag := "--" + strings.ToLower(strings.TrimPrefix(env, "AGENTFS_"))
		code, _, errs = run(t, "", flag, "s3:y", "ls")
		if code != 2 || !strings.Contains(errs, flag+" s3:y") {
			t.Errorf("%s=s3:/x %s s3:y: %d %s; want INVALID_ARGUMENT naming %s s3:y", env, flag, code, errs, flag)
		}
		os.Unsetenv(env)
	}
}
