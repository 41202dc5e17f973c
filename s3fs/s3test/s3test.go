// Package s3test gives tests a fresh bucket on the S3-compatible server
// named by AGENTFS_TEST_S3_ENDPOINT, or skips them, saying how to start
// one.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// EnvEndpoint names the server, host:port, on loopback.
const EnvEndpoint = "AGENTFS_TEST_S3_ENDPOINT"

// The keys the server is started with.
const (
	AccessKey = "k"
	SecretKey = "s"
)

// Skip is the message of a test skipped for want of a server.
const Skip = EnvEndpoint + " is not set: start a server with `ROOT_ACCESS_KEY=k ROOT_SECRET_KEY=s versitygw --port 127.0.0.1:7070 posix DIR` " +
	"(go install github.com/versity/versitygw/cmd/versitygw@v1.8.0) and set " + EnvEndpoint + "=127.0.0.1:7070"

// Endpoint returns the server's host:port, or skips t.
func Endpoint(t testing.TB) string {
	t.Helper()
	ep := os.Getenv(EnvEndpoint)
	if ep == "" {
		t.Skip(Skip)
	}
	return ep
}

// Client connects to the server, path-style.
func Client(t testing.TB) *minio.Client {
	t.Helper()
	c, err := minio.New(Endpoint(t), &minio.Options{Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""),
		Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Bucket creates a bucket of a unique name, removed with its objects when
// t ends.
func Bucket(t testing.TB) string {
	t.Helper()
	c := Client(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "agentfs-test-" + hex.EncodeToString(b)
	ctx := context.Background()
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket %s: %v", name, err)
	}
	t.Cleanup(func() { Drop(ctx, c, name) })
	return name
}

// Drop removes a bucket with its objects.
func Drop(ctx context.Context, c *minio.Client, bucket string) {
	objects := c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true})
	for range c.RemoveObjects(ctx, bucket, objects, minio.RemoveObjectsOptions{}) {
	}
	_ = c.RemoveBucket(ctx, bucket)
}
