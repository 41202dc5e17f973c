package s3fs_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3fs"
)

// TestLostAnswerOverETagsNotMD5: a write whose answer is lost (the
// connection cut, or a 500, once the store has the request) on a store
// whose ETags are no MD5 of the bytes (a bucket whose default encryption
// is a KMS key, a store of other ETags) is judged by the mark it carries:
// made, it succeeds at the version the object has; not made, it is sent
// again; another writer's version there, it may have been made. A made
// write was IO_ERROR "may have been made": its proof was the object's
// ETag as the MD5 of the bytes sent.
func TestLostAnswerOverETagsNotMD5(t *testing.T) {
	ctx := context.Background()
	for i, st := range storesNotMD5 {
		for j, tc := range []struct {
			name  string
			l     *losing
			other string // what another writer puts in log meanwhile
			opts  func(f *s3fs.FS) backend.WriteOptions
			path  string
			want  string // log's content after ("" for the same as written)
			code  fault.Code
		}{
			{"edit made, cut", &losing{landed: true}, "", ifAt("log"), "log", "", ""},
			{"edit made, 500", &losing{landed: true, status: 500}, "", ifAt("log"), "log", "", ""},
			{"write made", &losing{landed: true}, "", none, "log", "", ""},
			{"create made", &losing{landed: true}, "", absent, "new", "", ""},
			{"create made, taken for unsent", &losing{landed: true, unread: true}, "", absent, "new", "", ""},
			{"edit not made", &losing{status: 500}, "", ifAt("log"), "log", "", ""},
			{"edit made, then changed", &losing{landed: true, status: 500}, "other\n", ifAt("log"), "log", "other\n", fault.CodeIOError},
			{"edit not made, same bytes", &losing{status: 500}, "written\n", ifAt("log"), "log", "written\n", fault.CodeIOError},
		} {
			t.Run(st.name+"/"+tc.name, func(t *testing.T) {
				name := fmt.Sprintf("lostnotmd5-%d-%d", i, j)
				f, _, root := seeded(t, name, map[string]string{"log": "entry 1\n"})
				l := tc.l
				l.lose = func(r *http.Request) bool { return putTo(name, tc.path)(r) }
				if tc.other != "" {
					l.meanwhile = func() {
						if _, err := f.WriteFile(ctx, "log", []byte(tc.other), backend.WriteOptions{}); err != nil {
							t.Error(err)
						}
					}
				}
				w := transportFS(t, root, &notMD5{kms: st.kms, fresh: st.fresh, next: l})
				fi, err := w.WriteFile(ctx, tc.path, []byte("written\n"), tc.opts(w))
				e := fault.AsError(err)
				switch {
				case tc.code == "" && err != nil:
					t.Fatalf("%v, want success", err)
				case tc.code != "" && (e == nil || e.Code != tc.code || !strings.Contains(e.Hint, "may have been made")):
					t.Errorf("%v, want %s saying it may have been made", err, tc.code)
				case tc.code == "":
					if now := versionOf(t, w, tc.path); fi.Version != now {
						t.Errorf("the write answered version %q; the file is at %q", fi.Version, now)
					}
				}
				if got := tree(t, f, tc.path); got[tc.path] != cmp.Or(tc.want, "written\n") {
					t.Errorf("%s holds %q, want %q", tc.path, got[tc.path], cmp.Or(tc.want, "written\n"))
				}
			})
		}
	}
}

func ifAt(p string) func(f *s3fs.FS) backend.WriteOptions {
	return func(f *s3fs.FS) backend.WriteOptions {
		fi, err := f.Stat(context.Background(), p)
		if err != nil {
			panic(err)
		}
		return backend.WriteOptions{IfVersion: fi.Version}
	}
}

func none(*s3fs.FS) backend.WriteOptions   { return backend.WriteOptions{} }
func absent(*s3fs.FS) backend.WriteOptions { return backend.WriteOptions{IfAbsent: true} }

// TestLostAnswerInATransactionOverETagsNotMD5: a transaction on such a
// store, or on one of MD5 ETags, whose write of a file, or of its journal
// (its first write, a rewrite saying removals begin, the commit point),
// is made but answered with an error, knows it made by the mark the write
// carried, and commits. The journal's write, judged by its ETag as the
// MD5 of its bytes, was taken for not made on such a store, and the
// transaction failed, undone; a file's write was taken for a failure on
// any store.
func TestLostAnswerInATransactionOverETagsNotMD5(t *testing.T) {
	ctx := context.Background()
	type store struct {
		name string
		next func() http.RoundTripper
	}
	stores := []store{{"md5 etags", func() http.RoundTripper { return nil }}}
	for _, st := range storesNotMD5 {
		stores = append(stores, store{st.name, func() http.RoundTripper { return &notMD5{kms: st.kms, fresh: st.fresh} }})
	}
	for i, st := range stores {
		for j, lost := range []struct {
			name, suffix string
			after        int
		}{{"its write of a file", "/b", 0}, {"its journal's first write", ".json", 0},
			{"its journal's rewrite", ".json", 1}, {"its commit point", ".json", 2}} {
			t.Run(st.name+"/"+lost.name, func(t *testing.T) {
				name := fmt.Sprintf("losttxnnotmd5-%d-%d", i, j)
				f, bucket, root := seeded(t, name, map[string]string{"a": "old a", "b": "old b", "d": "old d"})
				c := transportFS(t, root, &lostAnswer{suffix: lost.suffix, after: lost.after, next: st.next()})
				infos, err := c.Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a"), Write: backend.WriteOptions{IfVersion: versionOf(t, c, "a")}},
					{Path: "b", Data: []byte("new b"), Write: backend.WriteOptions{IfVersion: versionOf(t, c, "b")}},
					{Path: "d", Remove: true}})
				if err != nil {
					t.Fatalf("the transaction: %v", err)
				}
				for i, p := range []string{"a", "b"} {
					if now := versionOf(t, c, p); infos[i].Version != now {
						t.Errorf("%s: the transaction answered version %q; the file is at %q", p, infos[i].Version, now)
					}
				}
				want := map[string]string{"a": "new a", "b": "new b", "d": ""}
				if got := tree(t, f, "a", "b", "d"); !maps.Equal(got, want) {
					t.Errorf("after the transaction: %s, want %s", brief(got), brief(want))
				}
				noJournal(t, bucket, name, "the transaction")
			})
		}
	}
}
