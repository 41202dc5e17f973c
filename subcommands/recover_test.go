package subcommands

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/s3fs/s3test"
	"github.com/minio/minio-go/v7"
)

// crashedCommit leaves in bucket, below prefix ws, what a commit of a from
// "old a" to "new a" leaves when its process is killed after the change:
// the journal (whose lease is lease), the copy of the old object, and the
// new one. It returns the journal's key.
func crashedCommit(t *testing.T, c *minio.Client, bucket, lease string) string {
	t.Helper()
	ctx := context.Background()
	put := func(key, data string) string {
		t.Helper()
		info, err := c.PutObject(ctx, bucket, key, strings.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return info.ETag
	}
	old := put("ws/a", "old a")
	sum := md5.Sum([]byte("new a"))
	id := "20260101T000000-" + lease
	journal, err := json.Marshal(map[string]any{"lease": lease, "ops": []map[string]string{{
		"key": "ws/a", "old": old, "backup": "ws/.agentfs-journal/" + id + "/0", "new": hex.EncodeToString(sum[:]),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	put("ws/.agentfs-journal/"+id+".json", string(journal))
	put("ws/.agentfs-journal/"+id+"/0", "old a")
	put("ws/a", "new a")
	return "ws/.agentfs-journal/" + id + ".json"
}

// storeEnv points agentfs at the test's S3 server, by the variables a
// caller sets, and returns its endpoint and a bucket made for the test.
func storeEnv(t *testing.T) (endpoint, bucket string) {
	endpoint, bucket = s3test.Endpoint(t), s3test.Bucket(t)
	access, secret := s3test.Keys()
	t.Setenv("AWS_ENDPOINT_URL", endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	return endpoint, bucket
}

// TestRecoverAtNextCall: a journal whose lease ran out is rolled back by
// the next call that uses the store, a read included; one whose lease
// lives is never touched, and --recover waits for it up to --lock-timeout.
// In a workspace whose first root is local, a call on the local root never
// reaches the store, so it leaves the journal for the next call that does.
func TestRecoverAtNextCall(t *testing.T) {
	endpoint, bucket := storeEnv(t)
	c, err := s3test.Client(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	exists := func(key string) bool {
		_, err := c.StatObject(context.Background(), bucket, key, minio.StatObjectOptions{})
		return err == nil
	}
	root := "--root=s3://" + bucket + "/ws"
	local := t.TempDir()
	if err := os.WriteFile(filepath.Join(local, "l"), []byte("local l"), 0o644); err != nil {
		t.Fatal(err)
	}
	mixed := []string{"--root=" + local, root}
	for _, tc := range []struct {
		name string
		// roots are the workspace's, the store alone when nil.
		roots []string
		// lease is the journal's: "-1m" ran out a minute before it was
		// written.
		lease   string
		args    []string
		code    int
		content string
		stderr  string
		kept    bool
	}{
		{"a dead journal, by a read", nil, "-1m", []string{"read", "a"}, 0, "old a", "", false},
		{"a live journal, by a read", nil, "15s", []string{"read", "a"}, 0, "new a", "", true},
		{"a dead journal, by --recover", nil, "-1m", []string{"--recover", "read", "a"}, 0, "old a",
			`{"recovery":{"rolledBack":1,"finished":0,"copiesRemoved":0,"live":0},"root":"s3://`, false},
		{"a live journal, by --recover", nil, "15s", []string{"--recover", "--lock-timeout=0s", "read", "a"}, 3, "",
			`"code":"LOCK_TIMEOUT"`, true},
		{"a dead journal, by a read under --readonly", nil, "-1m", []string{"--readonly", "read", "a"}, 0, "new a", "", true},
		{"a dead journal, by a read of the local root", mixed, "-1m", []string{"read", "l"}, 0, "local l", "", true},
		{"a dead journal, by a read of the store in a mixed workspace", mixed, "-1m",
			[]string{"read", "s3://" + bucket + "/ws/a"}, 0, "old a", "", false},
		{"a dead journal, by --recover on the local root", mixed, "-1m", []string{"--recover", "read", "l"}, 0, "local l",
			`{"recovery":{"rolledBack":1,"finished":0,"copiesRemoved":0,"live":0},"root":"s3://`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jkey := crashedCommit(t, c, bucket, tc.lease)
			defer c.RemoveObject(context.Background(), bucket, jkey, minio.RemoveObjectOptions{})
			roots := tc.roots
			if roots == nil {
				roots = []string{root}
			}
			code, out, errs := run(t, "", append(slices.Clone(roots), tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errs, tc.code, tc.stderr)
			}
			var res struct{ Content string }
			if code == 0 {
				if err := json.Unmarshal([]byte(out), &res); err != nil || res.Content != tc.content {
					t.Errorf("read %q (%v), want %q", out, err, tc.content)
				}
			}
			if exists(jkey) != tc.kept {
				t.Errorf("the journal is there: %v, want %v", exists(jkey), tc.kept)
			}
		})
	}
}

// TestRecoverLineUnescaped: the line --recover writes on stderr is JSON
// as the rest of the output is, without HTML escaping: a root whose
// prefix has < and & names them as they are (it said \u003c and \u0026).
func TestRecoverLineUnescaped(t *testing.T) {
	_, bucket := storeEnv(t)
	root := "s3://" + bucket + "/a<b&c"
	if code, _, errs := run(t, "", "--root="+root, "write", "x", "--content", "hi"); code != 0 {
		t.Fatalf("write: exit %d, %s", code, errs)
	}
	code, _, errs := run(t, "", "--root="+root, "--recover", "read", "x")
	want := `{"recovery":{"rolledBack":0,"finished":0,"copiesRemoved":0,"live":0},"root":"` + root + `"}` + "\n"
	if code != 0 || errs != want {
		t.Fatalf("exit %d, stderr %q; want 0 and %q", code, errs, want)
	}
}
