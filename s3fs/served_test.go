package s3fs_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/s3fs/s3test"
	"github.com/minio/minio-go/v7"
)

// TestWriteKeepsHowTheObjectIsServed: a write, an append or a
// transaction over an object another tool put keeps its Content-Type and
// Cache-Control, as a copy does: they were dropped, and the page of a
// website bucket (text/html) became binary/octet-stream, which a browser
// downloads. Content-Encoding is not kept: the bytes written are those
// given (plain text over a gzip object stays plain).
func TestWriteKeepsHowTheObjectIsServed(t *testing.T) {
	ctx := context.Background()
	bucket := s3test.Bucket(t)
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := openFS(t, "s3://"+bucket+"/ws")
	put := func(key string, opts minio.PutObjectOptions) {
		t.Helper()
		if _, err := c.PutObject(ctx, bucket, "ws/"+key, strings.NewReader("<p>hi</p>\n"), 10, opts); err != nil {
			t.Fatal(err)
		}
	}
	html := minio.PutObjectOptions{ContentType: "text/html; charset=utf-8", CacheControl: "max-age=60"}
	for _, tc := range []struct {
		name     string
		change   func(p string) error
		encoding string
	}{
		{"write read at a version", func(p string) error {
			fi, err := f.Stat(ctx, p)
			if err != nil {
				return err
			}
			_, err = f.WriteFile(ctx, p, []byte("<p>bye</p>\n"), backend.WriteOptions{IfVersion: fi.Version})
			return err
		}, ""},
		{"write with no version", func(p string) error {
			_, err := f.WriteFile(ctx, p, []byte("<p>bye</p>\n"), backend.WriteOptions{})
			return err
		}, ""},
		{"transaction", func(p string) error {
			fi, err := f.Stat(ctx, p)
			if err != nil {
				return err
			}
			_, err = f.Commit(ctx, []backend.Op{{Path: p, Data: []byte("<p>bye</p>\n"), Write: backend.WriteOptions{IfVersion: fi.Version}}})
			return err
		}, ""},
		{"gzip object written anew", func(p string) error {
			_, err := f.WriteFile(ctx, p, []byte("plain\n"), backend.WriteOptions{})
			return err
		}, "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := strings.ReplaceAll(tc.name, " ", "-") + ".html"
			opts := html
			opts.ContentEncoding = tc.encoding
			put(p, opts)
			if err := tc.change(p); err != nil {
				t.Fatal(err)
			}
			o, err := c.StatObject(ctx, bucket, "ws/"+p, minio.StatObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if o.ContentType != html.ContentType || o.Metadata.Get("Cache-Control") != html.CacheControl {
				t.Errorf("Content-Type %q, Cache-Control %q after the change; want %q, %q", o.ContentType, o.Metadata.Get("Cache-Control"), html.ContentType, html.CacheControl)
			}
			if enc := o.Metadata.Get("Content-Encoding"); enc != "" {
				t.Errorf("Content-Encoding %q after the change; want none", enc)
			}
		})
	}
}
