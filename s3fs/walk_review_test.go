package s3fs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/s3fs"
	"github.com/agentfs/agentfs/s3fs/s3test"
)

func putOnDisk(t *testing.T, dir, bucket string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		p := filepath.Join(dir, bucket, "ws", k)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func walkFrom(t *testing.T, f *s3fs.FS, from string) []string {
	t.Helper()
	var seen []string
	err := f.Walk(context.Background(), ".", backend.WalkOptions{From: from}, func(e backend.WalkEntry) error {
		seen = append(seen, fmt.Sprintf("%s:%s", e.Rel, e.Type))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seen
}

// From naming the doubled name itself.
func TestReviewWalkFromTheFileBesideADirectoryOfItsName(t *testing.T) {
	dir := s3test.Dir(t)
	bucket := s3test.Bucket(t)
	putOnDisk(t, dir, bucket, "a/b", "a/c", "a_", "z")
	f := transportFS(t, "s3://"+bucket+"/ws", &renamingList{from: "ws/a_", to: "ws/a"})
	all := walkFrom(t, f, "")
	t.Logf("all: %q", all)
	got := walkFrom(t, f, "a")
	t.Logf("from a: %q", got)
	if !slices.Equal(got, all) {
		t.Errorf("from a: %q, want %q", got, all)
	}
}

// A name with a byte below '/' after its first: the directory sorts
// before the file (entries holds a.b back until a.b/ is listed, and
// inserts the directory before it), unlike a and a/. A walk resumed at any
// rel goes on from the first entry of that rel.
func TestReviewWalkDirFirstOrder(t *testing.T) {
	dir := s3test.Dir(t)
	bucket := s3test.Bucket(t)
	putOnDisk(t, dir, bucket, "a.b/1", "a.b/2", "a.b_", "z")
	f := transportFS(t, "s3://"+bucket+"/ws", &renamingList{from: "ws/a.b_", to: "ws/a.b"})
	all := walkFrom(t, f, "")
	want := []string{"a.b:dir", "a.b/1:file", "a.b/2:file", "a.b:file", "z:file"}
	if !slices.Equal(all, want) {
		t.Fatalf("the whole walk saw %q, want %q", all, want)
	}
	for _, rel := range []string{"a.b", "a.b/1", "a.b/2", "z"} {
		k := slices.IndexFunc(all, func(s string) bool { return strings.HasPrefix(s, rel+":") })
		if got := walkFrom(t, f, rel); !slices.Equal(got, all[k:]) {
			t.Errorf("the walk resumed at %s saw %q, want %q", rel, got, all[k:])
		}
	}
}

// find paged by cursor over a file and a directory of one name.
func TestReviewFindPagesByCursor(t *testing.T) {
	for _, name := range []string{"a", "a.b"} {
		for _, limit := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/%d", name, limit), func(t *testing.T) {
				dir := s3test.Dir(t)
				bucket := s3test.Bucket(t)
				putOnDisk(t, dir, bucket, name+"/1", name+"/2", name+"_", "z")
				f := transportFS(t, "s3://"+bucket+"/ws", &renamingList{from: "ws/" + name + "_", to: "ws/" + name})
				tl := &core.Tools{FS: f, MaxBytes: 64 << 20}
				var got []string
				cur := ""
				for page := 0; ; page++ {
					if page > 20 {
						t.Fatalf("no end after 20 pages: %q", got)
					}
					res, err := tl.Find(context.Background(), core.FindRequest{Pattern: "**", Path: ".", Limit: limit, Cursor: cur})
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range res.Results {
						got = append(got, e.Path+":"+e.Type)
					}
					if res.NextCursor == "" {
						break
					}
					cur = res.NextCursor
				}
				all, err := tl.Find(context.Background(), core.FindRequest{Pattern: "**", Path: ".", Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, e := range all.Results {
					want = append(want, e.Path+":"+e.Type)
				}
				if !slices.Equal(got, want) {
					t.Errorf("paged %q, want %q", got, want)
				}
			})
		}
	}
}
