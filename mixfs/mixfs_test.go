package mixfs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/backend/conformance"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/memfs"
	"github.com/agentfs/agentfs/mixfs"
	"github.com/agentfs/agentfs/s3fs"
	"github.com/agentfs/agentfs/s3fs/s3test"
)

// bare is a member with no optional capability: no modes, locks, renames
// nor transactions, as a minimal object store.
type bare struct{ conformance.Backend }

// newLocal is a localfs over a fresh root; cwd "" starts in the root,
// "outside" in a directory outside it.
func newLocal(t *testing.T, cwd string, elsewhere bool) (*localfs.FS, string) {
	t.Helper()
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	root := t.TempDir()
	if cwd == "" {
		cwd = root
	}
	lfs, err := localfs.New(localfs.Config{Roots: []string{root}, Cwd: cwd, RelativeElsewhere: elsewhere})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lfs.Close() })
	root, err = filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	return lfs, root
}

func newMixed(t *testing.T, home int, members ...mixfs.Member) *mixfs.FS {
	t.Helper()
	m, err := mixfs.New(mixfs.Config{Members: members, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func codeOf(err error) fault.Code {
	var e *fault.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func pathOf(err error) string {
	var e *fault.Error
	if errors.As(err, &e) {
		return e.Path
	}
	return ""
}

// TestConformance runs the backend suite through the router, its relative
// paths going to a local home and to a store home.
func TestConformance(t *testing.T) {
	t.Run("LocalHome", func(t *testing.T) {
		conformance.Run(t, func(t *testing.T) conformance.Backend {
			lfs, _ := newLocal(t, "", false)
			return newMixed(t, 0, mixfs.Member{FS: lfs}, mixfs.Member{Root: "s3://b/p", FS: memfs.New(nil)})
		})
	})
	t.Run("StoreHome", func(t *testing.T) {
		conformance.Run(t, func(t *testing.T) conformance.Backend {
			lfs, _ := newLocal(t, t.TempDir(), true)
			return newMixed(t, 1, mixfs.Member{FS: lfs}, mixfs.Member{Root: "s3://b/p", FS: memfs.New(nil)})
		})
	})
}

// TestConformanceOverS3 runs the suite through the router with a store as
// home, when an S3 server is at hand (s3test.Endpoint says how to run one).
func TestConformanceOverS3(t *testing.T) {
	endpoint, bucket := s3test.Endpoint(t), s3test.Bucket(t)
	access, secret := s3test.Keys()
	n := 0
	conformance.Run(t, func(t *testing.T) conformance.Backend {
		n++
		root := fmt.Sprintf("s3://%s/mix-%d", bucket, n)
		store, err := s3fs.New(s3fs.Config{Root: root, Endpoint: endpoint, AccessKey: access, SecretKey: secret})
		if err != nil {
			t.Fatal(err)
		}
		lfs, _ := newLocal(t, t.TempDir(), true)
		return newMixed(t, 1, mixfs.Member{FS: lfs}, mixfs.Member{Root: root, FS: store})
	})
}

// TestRoute: each spelling reaches the member holding it, and its display
// is a spelling that reaches it again.
func TestRoute(t *testing.T) {
	ctx := context.Background()
	for _, home := range []string{"local", "store"} {
		t.Run(home, func(t *testing.T) {
			cwd, homeIdx := "", 0
			if home == "store" {
				cwd, homeIdx = t.TempDir(), 1
			}
			lfs, root := newLocal(t, cwd, home == "store")
			p := memfs.New(map[string]string{"a.txt": "p", "q/in.txt": "under q"})
			q := memfs.New(map[string]string{"in.txt": "q"})
			c := memfs.New(map[string]string{"a.txt": "c"})
			m := newMixed(t, homeIdx, mixfs.Member{FS: lfs}, mixfs.Member{Root: "s3://b/p", FS: p},
				mixfs.Member{Root: "s3://b/p/q", FS: q}, mixfs.Member{Root: "s3://c", FS: c})
			if _, err := lfs.WriteFile(ctx, filepath.Join(root, "a.txt"), []byte("local"), backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			relative, relDisplay := "local", "a.txt"
			if home == "store" {
				relative, relDisplay = "p", "a.txt"
			}
			pDisplay := func(d string) string {
				if home == "store" {
					return d
				}
				return "s3://b/p/" + d
			}
			for _, tc := range []struct {
				path, content, display string
				owner                  backend.FS
			}{
				{filepath.Join(root, "a.txt"), "local", map[string]string{"local": "a.txt", "store": filepath.Join(root, "a.txt")}[home], lfs},
				{"a.txt", relative, relDisplay, map[string]backend.FS{"local": lfs, "store": p}[home]},
				{"s3://b/p/a.txt", "p", pDisplay("a.txt"), p},
				{"s3://b/p//./a.txt", "p", pDisplay("a.txt"), p},
				{"s3://b/p/q/../a.txt", "p", pDisplay("a.txt"), p},
				{"s3://b/p/q/in.txt", "q", "s3://b/p/q/in.txt", q},
				{"s3://c/a.txt", "c", "s3://c/a.txt", c},
			} {
				r, err := m.Open(ctx, tc.path)
				if err != nil {
					t.Errorf("open %s: %v", tc.path, err)
					continue
				}
				buf := make([]byte, 16)
				n, _ := r.ReadAt(buf, 0)
				r.Close()
				if string(buf[:n]) != tc.content {
					t.Errorf("%s reads %q, want %q", tc.path, buf[:n], tc.content)
				}
				if d := m.Display(tc.path); d != tc.display {
					t.Errorf("display of %s is %q, want %q", tc.path, d, tc.display)
				}
				if again, err := m.Stat(ctx, m.Display(tc.path)); err != nil || again.Size != int64(len(tc.content)) {
					t.Errorf("the display of %s does not reach it again: %+v %v", tc.path, again, err)
				}
				if o := backend.At(m, tc.path); o != tc.owner {
					t.Errorf("%s is held by %T %p, want %p", tc.path, o, o, tc.owner)
				}
			}
			for _, tc := range []struct {
				path string
				code fault.Code
			}{
				{"s3://other/a.txt", fault.CodeOutsideRoot},
				{"s3://b/pq/a.txt", fault.CodeOutsideRoot},
				{"s3://b/p/../x", fault.CodeOutsideRoot},
				{"s3://b/p/../../c/../../etc", fault.CodeOutsideRoot},
				{"gs://b/p/a.txt", fault.CodeOutsideRoot},
				{"/nowhere/a.txt", fault.CodeOutsideRoot},
				{"s3://b/p/missing", fault.CodeNotFound},
			} {
				if _, err := m.Stat(ctx, tc.path); codeOf(err) != tc.code {
					t.Errorf("stat %s: %v, want %s", tc.path, err, tc.code)
				}
				if !filepath.IsAbs(tc.path) && backend.At(m, tc.path) == backend.FS(lfs) {
					t.Errorf("%s is taken as local", tc.path)
				}
			}
			_, err := m.Stat(ctx, "s3://c/missing")
			if got := pathOf(err); got != "s3://c/missing" {
				t.Errorf("an error of a store that is not home names %q, want s3://c/missing", got)
			}
		})
	}
}

// TestWalkSpelling: a walk of a store that is not home gives paths that
// can be passed back, and a visit's own error comes back as it is.
func TestWalkSpelling(t *testing.T) {
	ctx := context.Background()
	lfs, _ := newLocal(t, "", false)
	store := memfs.New(map[string]string{"d/x.go": "x", "d/y.go": "y"})
	m := newMixed(t, 0, mixfs.Member{FS: lfs}, mixfs.Member{Root: "s3://b/p", FS: store})
	var paths []string
	err := m.Walk(ctx, "s3://b/p", backend.WalkOptions{}, func(e backend.WalkEntry) error {
		paths = append(paths, e.Path)
		if e.Type == backend.TypeFile {
			r, err := e.Open()
			if err != nil {
				return err
			}
			r.Close()
		}
		return nil
	})
	if want := []string{"s3://b/p/d", "s3://b/p/d/x.go", "s3://b/p/d/y.go"}; err != nil || !slices.Equal(paths, want) {
		t.Errorf("walk gave %q (%v), want %q", paths, err, want)
	}
	stop := fault.Errorf(fault.CodeTooLarge, "mine").WithPath("mine")
	err = m.Walk(ctx, "s3://b/p/d", backend.WalkOptions{}, func(backend.WalkEntry) error { return stop })
	if err != stop || stop.Path != "mine" {
		t.Errorf("the visit's error came back as %v", err)
	}
	err = m.Walk(ctx, "s3://b/p/none", backend.WalkOptions{}, func(backend.WalkEntry) error { return nil })
	if codeOf(err) != fault.CodeNotFound || pathOf(err) != "s3://b/p/none" {
		t.Errorf("walk of a missing directory: %v", err)
	}
}

// TestSpanRefused: a move or a transaction across two members is refused
// before anything changes.
func TestSpanRefused(t *testing.T) {
	ctx := context.Background()
	lfs, root := newLocal(t, "", false)
	store := memfs.New(map[string]string{"s.txt": "store"})
	m := newMixed(t, 0, mixfs.Member{FS: lfs}, mixfs.Member{Root: "s3://b/p", FS: store})
	if _, err := m.WriteFile(ctx, "l.txt", []byte("local"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := m.Rename(ctx, "l.txt", "s3://b/p/moved.txt", backend.WriteOptions{})
	if codeOf(err) != fault.CodeNotSupported {
		t.Errorf("a move from local to the store: %v, want NOT_SUPPORTED", err)
	}
	_, err = m.Rename(ctx, "s3://b/p/s.txt", filepath.Join(root, "moved.txt"), backend.WriteOptions{})
	if codeOf(err) != fault.CodeNotSupported {
		t.Errorf("a move from the store to local: %v, want NOT_SUPPORTED", err)
	}
	_, err = m.Commit(ctx, []backend.Op{
		{Path: "l.txt", Data: []byte("changed")},
		{Path: "s3://b/p/s.txt", Data: []byte("changed")},
	})
	if codeOf(err) != fault.CodeNotSupported {
		t.Errorf("a transaction over both: %v, want NOT_SUPPORTED", err)
	}
	for p, want := range map[string]string{"l.txt": "local", "s3://b/p/s.txt": "store"} {
		r, err := m.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 16)
		n, _ := r.ReadAt(buf, 0)
		r.Close()
		if string(buf[:n]) != want {
			t.Errorf("%s is %q after the refusals, want %q", p, buf[:n], want)
		}
	}
	for _, p := range []string{"moved.txt", "s3://b/p/moved.txt"} {
		if _, err := m.Stat(ctx, p); codeOf(err) != fault.CodeNotFound {
			t.Errorf("%s exists after the refusals: %v", p, err)
		}
	}
	if _, err := m.Rename(ctx, "s3://b/p/s.txt", "s3://b/p/t.txt", backend.WriteOptions{}); err != nil {
		t.Errorf("a move within the store: %v", err)
	}
}

// TestCapabilitiesPerPath: each optional capability is the member's, and an
// operation a member lacks is refused, not faked.
func TestCapabilitiesPerPath(t *testing.T) {
	ctx := context.Background()
	lfs, _ := newLocal(t, "", false)
	plain := bare{memfs.New(map[string]string{"a": "a", "b": "b"})}
	m := newMixed(t, 0, mixfs.Member{FS: lfs}, mixfs.Member{Root: "s3://b/p", FS: plain})
	if _, ok := backend.At(m, "x").(backend.Moder); !ok {
		t.Error("a local path has no modes")
	}
	for _, c := range []struct {
		name string
		has  bool
	}{
		{"Moder", is[backend.Moder](backend.At(m, "s3://b/p/a"))},
		{"Renamer", is[backend.Renamer](backend.At(m, "s3://b/p/a"))},
		{"Transactor", is[backend.Transactor](backend.At(m, "s3://b/p/a"))},
		{"Locker", is[backend.Locker](backend.At(m, "s3://b/p/a"))},
	} {
		if c.has {
			t.Errorf("a path of the bare store is a %s", c.name)
		}
	}
	if _, err := m.Rename(ctx, "s3://b/p/a", "s3://b/p/c", backend.WriteOptions{}); codeOf(err) != fault.CodeNotSupported {
		t.Errorf("rename on a member without it: %v", err)
	}
	if _, err := m.Commit(ctx, []backend.Op{{Path: "s3://b/p/a", Data: []byte("x")}}); codeOf(err) != fault.CodeNotSupported {
		t.Errorf("commit on a member without transactions: %v", err)
	}
}

func is[T any](v any) bool {
	_, ok := v.(T)
	return ok
}

// TestLocksPerMember: the local member's locks hold through the router,
// also when a store's path is locked with them.
func TestLocksPerMember(t *testing.T) {
	ctx := context.Background()
	lfs, _ := newLocal(t, "", false)
	m := newMixed(t, 0, mixfs.Member{FS: lfs}, mixfs.Member{Root: "s3://b/p", FS: bare{memfs.New(nil)}})
	unlock, err := m.LockAll(ctx, []string{"f", "s3://b/p/f"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lock(ctx, "f", 20*time.Millisecond); codeOf(err) != fault.CodeLockTimeout {
		t.Errorf("a second lock of a locked local path: %v, want LOCK_TIMEOUT", err)
	}
	again, err := m.Lock(ctx, "s3://b/p/f", time.Second)
	if err != nil {
		t.Errorf("a store without locks: %v", err)
	} else {
		again()
	}
	unlock()
	again, err = m.Lock(ctx, "f", time.Second)
	if err != nil {
		t.Fatalf("after the unlock: %v", err)
	}
	again()
}

// SameEntry is the local member's, by identity through a link to the
// directory; paths in two members, or in a member without it, never are.
func TestSameEntry(t *testing.T) {
	ctx := context.Background()
	lfs, root := newLocal(t, "", false)
	plain := bare{memfs.New(map[string]string{"a": "a"})}
	m := newMixed(t, 0, mixfs.Member{FS: lfs}, mixfs.Member{Root: "s3://b/p", FS: plain})
	if err := os.WriteFile(filepath.Join(root, "a"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(root, "here")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"a", "here/a", true},
		{"a", "s3://b/p/a", false},
		{"s3://b/p/a", "s3://b/p/a", false},
	} {
		if got := m.SameEntry(ctx, c.a, c.b); got != c.want {
			t.Errorf("SameEntry(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
