package localfs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// holdFile takes the flock agentfs takes on a file it changes (its data
// lock), as another agentfs process would, until the returned func.
func holdFile(t *testing.T, p string) func() {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// waitSignal is a lockWaitHook that says each time a lock is found held.
func waitSignal(t *testing.T) <-chan struct{} {
	waiting := make(chan struct{}, 1)
	localfs.SetLockWaitHook(func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	})
	t.Cleanup(func() { localfs.SetLockWaitHook(nil) })
	return waiting
}

// swapForLink replaces the file at p by a link to target.
func swapForLink(t *testing.T, p, target string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// replace's walk skips links; a file it found, swapped for a link while
// replace waited for the file's lock, is no longer one it changes. It
// followed the link, and rewrote a file outside PATH without its locks.
func TestReplaceSkipsAFileSwappedForALink(t *testing.T) {
	dir := workspace(t)
	writeFiles(t, dir, map[string]string{"src/a.txt": "foo\n", "src/b.txt": "foo\n", "other.txt": "foo\n"})
	tl := &core.Tools{FS: newFS(t, dir), LockTimeout: 10 * time.Second}
	waiting := waitSignal(t)
	release := holdFile(t, filepath.Join(dir, "src/a.txt"))
	defer release()
	type outcome struct {
		res *core.ReplaceResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := tl.Replace(context.Background(), core.ReplaceRequest{Query: "foo", Replacement: new("bar"), Path: "src"})
		done <- outcome{res, err}
	}()
	localfs.Within(t, waiting, "wait for the file's lock")
	swapForLink(t, filepath.Join(dir, "src/a.txt"), "../other.txt")
	release()
	got := localfs.Within(t, done, "end of the replace")
	if got.err != nil {
		t.Fatal(got.err)
	}
	if s := readString(t, filepath.Join(dir, "other.txt")); s != "foo\n" {
		t.Errorf("other.txt, outside PATH, holds %q, want it unchanged", s)
	}
	if s := readString(t, filepath.Join(dir, "src/b.txt")); s != "bar\n" {
		t.Errorf("src/b.txt holds %q, want it replaced", s)
	}
	if got.res.FilesChanged != 1 || got.res.Files[0].Path != "src/b.txt" {
		t.Errorf("changed %+v, want src/b.txt alone", got.res.Files)
	}
}

// edit and write follow a final link, as documented: a file swapped for a
// link while the tool waited for the file's lock is changed through the
// link only under the locks of the file the link leads to. They wrote it
// while another process held its lock.
func TestMutationRelocksAFileSwappedForALink(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(*core.Tools) error
	}{
		{"edit", func(tl *core.Tools) error {
			_, err := tl.Edit(context.Background(), core.EditRequest{Path: "a.txt", OldText: new("one"), NewText: new("two")})
			return err
		}},
		{"write", func(tl *core.Tools) error {
			_, err := tl.Write(context.Background(), core.WriteRequest{Path: "a.txt", Content: new("two\n")})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := workspace(t)
			writeFiles(t, dir, map[string]string{"a.txt": "one\n", "other.txt": "one\n"})
			tl := &core.Tools{FS: newFS(t, dir), LockTimeout: 10 * time.Second}
			waiting := waitSignal(t)
			releaseA := holdFile(t, filepath.Join(dir, "a.txt"))
			defer releaseA()
			done := make(chan error, 1)
			go func() { done <- tc.call(tl) }()
			localfs.Within(t, waiting, "wait for a.txt's lock")
			swapForLink(t, filepath.Join(dir, "a.txt"), "other.txt")
			releaseOther := holdFile(t, filepath.Join(dir, "other.txt"))
			defer releaseOther()
			releaseA()
			select {
			case <-waiting: // the lock of other.txt, now the file a.txt leads to
			case err := <-done:
				t.Fatalf("%s ended (%v) while other.txt's lock was held elsewhere: other.txt holds %q", tc.name, err, readString(t, filepath.Join(dir, "other.txt")))
			case <-time.After(30 * time.Second):
				t.Fatal("no wait for other.txt's lock within 30 s")
			}
			releaseOther()
			if err := localfs.Within(t, done, "end of the "+tc.name); err != nil {
				t.Fatal(err)
			}
			if s := readString(t, filepath.Join(dir, "other.txt")); s != "two\n" {
				t.Errorf("other.txt holds %q, want the change made through the link", s)
			}
			if fi, err := os.Lstat(filepath.Join(dir, "a.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("a.txt is no longer the link: %v, %v", fi, err)
			}
		})
	}
}

// swapAfterLstatFS swaps path for a link to target just after the first
// Lstat of it, as another program racing replace's look at the file would.
type swapAfterLstatFS struct {
	*localfs.FS
	t                 *testing.T
	dir, path, target string
	swapped           bool
}

func (s *swapAfterLstatFS) Lstat(ctx context.Context, p string) (backend.FileInfo, error) {
	fi, err := s.FS.Lstat(ctx, p)
	if p == s.path && !s.swapped {
		s.swapped = true
		swapForLink(s.t, filepath.Join(s.dir, p), s.target)
	}
	return fi, err
}

// replace reads a file only as the file at its path itself: one swapped
// for a link between replace's look at it and its read was read through
// the link, and the compare-and-swap, against what was read, let the
// link's target be written.
func TestReplaceReadsNoFileThroughALink(t *testing.T) {
	dir := workspace(t)
	writeFiles(t, dir, map[string]string{"src/a.txt": "foo\n", "src/b.txt": "foo\n", "other.txt": "foo\n"})
	fsys := &swapAfterLstatFS{FS: newFS(t, dir), t: t, dir: dir, path: "src/a.txt", target: "../other.txt"}
	tl := &core.Tools{FS: fsys, LockTimeout: 10 * time.Second}
	res, err := tl.Replace(context.Background(), core.ReplaceRequest{Query: "foo", Replacement: new("bar"), Path: "src"})
	if err != nil {
		t.Fatal(err)
	}
	if !fsys.swapped {
		t.Fatal("src/a.txt was never looked at")
	}
	if s := readString(t, filepath.Join(dir, "other.txt")); s != "foo\n" {
		t.Errorf("other.txt, outside PATH, holds %q, want it unchanged", s)
	}
	if res.FilesChanged != 1 || res.Files[0].Path != "src/b.txt" {
		t.Errorf("changed %+v, want src/b.txt alone", res.Files)
	}
}
