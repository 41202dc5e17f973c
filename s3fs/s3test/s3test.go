// Package s3test gives tests a fresh bucket on the S3-compatible server
// named by AGENTFS_TEST_S3_ENDPOINT, or skips them, saying how to start
// one.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// EnvEndpoint names the server's URL (http://127.0.0.1:PORT), whose keys
// are in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (k and s when unset),
// as .ci/run starts it.
const EnvEndpoint = "AGENTFS_TEST_S3_ENDPOINT"

// Skip is the message of a test skipped for want of a server.
const Skip = EnvEndpoint + " is not set: start a server with `ROOT_ACCESS_KEY=k ROOT_SECRET_KEY=s versitygw --port 127.0.0.1:7070 posix DIR` " +
	"(go install github.com/versity/versitygw/cmd/versitygw@v1.8.0) and set " + EnvEndpoint + "=http://127.0.0.1:7070"

// Endpoint returns the server's URL, or skips t.
func Endpoint(t testing.TB) string {
	t.Helper()
	ep := os.Getenv(EnvEndpoint)
	if ep == "" {
		t.Skip(Skip)
	}
	return ep
}

// EnvDir names the directory the server (versitygw posix) keeps its
// buckets in, as .ci/run starts it: a test changes an object's file there
// behind the server's back.
const EnvDir = "AGENTFS_TEST_S3_DIR"

// Dir returns the server's directory, or skips t.
func Dir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(EnvDir)
	if dir == "" {
		t.Skip(EnvDir + " is not set: set it to the DIR of `versitygw ... posix DIR` (.ci/run does)")
	}
	return dir
}

// Keys are the server's access and secret keys.
func Keys() (access, secret string) {
	access, secret = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if access == "" {
		access, secret = "k", "s"
	}
	return access, secret
}

// Client connects to the server at the URL endpoint, path-style.
func Client(endpoint string) (*minio.Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	access, secret := Keys()
	return minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(access, secret, ""), Secure: u.Scheme == "https",
		Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
}

// Make creates a bucket of a unique name on the server at endpoint; drop
// removes it with its objects.
func Make(ctx context.Context, endpoint string) (name string, drop func(), err error) {
	c, err := Client(endpoint)
	if err != nil {
		return "", nil, err
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name = "agentfs-test-" + hex.EncodeToString(b)
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
		return "", nil, fmt.Errorf("make bucket %s: %w", name, err)
	}
	return name, func() {
		objects := c.ListObjects(ctx, name, minio.ListObjectsOptions{Recursive: true})
		for range c.RemoveObjects(ctx, name, objects, minio.RemoveObjectsOptions{}) {
		}
		_ = c.RemoveBucket(ctx, name)
	}, nil
}

// Bucket creates a bucket of a unique name, removed with its objects when
// t ends, or skips t.
func Bucket(t testing.TB) string {
	t.Helper()
	name, drop, err := Make(context.Background(), Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	return name
}
