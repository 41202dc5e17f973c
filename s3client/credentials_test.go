package s3client_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/s3client"
)

func TestLoadCredentials(t *testing.T) {
	file := filepath.Join(t.TempDir(), "credentials")
	err := os.WriteFile(file, []byte(`[default]
aws_access_key_id = dk
aws_secret_access_key = ds

[work]
aws_access_key_id=wk
aws_secret_access_key=ws
aws_session_token=wt

[half]
aws_access_key_id = hk
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		static s3client.Credentials
		env    map[string]string
		want   s3client.Credentials
		none   bool
		why    string // what the error says is missing
	}{
		{name: "static first", static: s3client.Credentials{AccessKey: "sk", SecretKey: "ss"},
			env:  map[string]string{"AWS_ACCESS_KEY_ID": "ek", "AWS_SECRET_ACCESS_KEY": "es"},
			want: s3client.Credentials{AccessKey: "sk", SecretKey: "ss"}},
		{name: "variables before the file",
			env:  map[string]string{"AWS_ACCESS_KEY_ID": "ek", "AWS_SECRET_ACCESS_KEY": "es", "AWS_SESSION_TOKEN": "et"},
			want: s3client.Credentials{AccessKey: "ek", SecretKey: "es", SessionToken: "et"}},
		{name: "a key without its secret", env: map[string]string{"AWS_ACCESS_KEY_ID": "ek"}, none: true, why: "AWS_SECRET_ACCESS_KEY is not"},
		{name: "default profile", want: s3client.Credentials{AccessKey: "dk", SecretKey: "ds"}},
		{name: "named profile", env: map[string]string{"AWS_PROFILE": "work"},
			want: s3client.Credentials{AccessKey: "wk", SecretKey: "ws", SessionToken: "wt"}},
		{name: "profile without a secret", env: map[string]string{"AWS_PROFILE": "half"}, none: true, why: `profile "half" in ` + file + " has no aws_secret_access_key"},
		{name: "missing profile", env: map[string]string{"AWS_PROFILE": "nope"}, none: true, why: `profile "nope" is not in ` + file},
		{name: "missing file", env: map[string]string{"AWS_SHARED_CREDENTIALS_FILE": file + ".none"}, none: true, why: file + ".none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
				t.Setenv(k, tc.env[k])
			}
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
			if f, ok := tc.env["AWS_SHARED_CREDENTIALS_FILE"]; ok {
				t.Setenv("AWS_SHARED_CREDENTIALS_FILE", f)
			}
			got, err := s3client.LoadCredentials(tc.static)
			if tc.none {
				if !errors.Is(err, s3client.ErrNoCredentials) || !strings.Contains(err.Error(), tc.why) {
					t.Fatalf("got %+v, %v, want ErrNoCredentials saying %q", got, err, tc.why)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v, want %+v", got, err, tc.want)
			}
		})
	}
}
