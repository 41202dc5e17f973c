package core

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// replacedAfterOpenFS replaces a file just after each open of it, as
// another writer racing a read would.
type replacedAfterOpenFS struct {
	*memfs.FS
	with string
}

func (s replacedAfterOpenFS) Open(ctx context.Context, p string) (backend.FileReader, error) {
	r, err := s.FS.Open(ctx, p)
	if err == nil {
		_, err = s.FS.WriteFile(ctx, p, []byte(s.with), backend.WriteOptions{})
	}
	return r, err
}

// A byteOffset continuation reads the version it reports: a file replaced
// between the checks and the window (it opened the file twice) gave the
// new file's bytes under the old version.
func TestReadContinuationIsOneVersion(t *testing.T) {
	old := "line one\nline two\nline three\n"
	fsys := replacedAfterOpenFS{memfs.New(map[string]string{"f": old}), "LINE ONE\nLINE TWO\nLINE THREE\n"}
	v1 := versionOf(fsys, "f")
	tl := &Tools{FS: fsys}
	res, err := tl.Read(context.Background(), ReadRequest{Path: "f", Offset: 2, ByteOffset: int64(len("line one\n"))})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "line two\nline three\n" || res.Version != v1 {
		t.Errorf("the continuation read %q as version %s, want the old file's lines as %s", res.Content, res.Version, v1)
	}
}

// interferingFS changes the file just before each of the first n writes or
// removals reach the backend, as a writer without locks racing the tool
// would: the tool's compare-and-swap must lose, and the tool run again.
type interferingFS struct {
	*memfs.FS
	n, done int
}

func (f *interferingFS) interfere(ctx context.Context, p string) {
	if f.done < f.n {
		f.done++
		old, _ := f.FS.Content(p)
		if _, err := f.FS.WriteFile(ctx, p, []byte(old+"other "+strconv.Itoa(f.done)+"\n"), backend.WriteOptions{}); err != nil {
			panic(err)
		}
	}
}

func (f *interferingFS) WriteFile(ctx context.Context, p string, data []byte, opts backend.WriteOptions) (backend.FileInfo, error) {
	f.interfere(ctx, p)
	return f.FS.WriteFile(ctx, p, data, opts)
}

func (f *interferingFS) Remove(ctx context.Context, p string, opts backend.RemoveOptions) (bool, error) {
	f.interfere(ctx, p)
	return f.FS.Remove(ctx, p, opts)
}

// On a backend without locks, a mutation that loses the race to another
// writer runs again on the new content: neither change is lost. Past
// maxAttempts and the lock timeout it gives up with LOCK_TIMEOUT, having
// changed nothing; within the lock timeout it goes on.
func TestMutationsRetryALostRace(t *testing.T) {
	line := "mine\n"
	for _, tc := range []struct {
		name  string
		races int
		call  func(*Tools) error
		want  string
		code  fault.Code
		wait  time.Duration // the lock timeout
	}{
		{"append", 2, func(tl *Tools) error {
			_, err := tl.Write(context.Background(), WriteRequest{Path: "f", Content: &line, Append: true})
			return err
		}, "a\nother 1\nother 2\nmine\n", "", 0},
		{"edit", 1, func(tl *Tools) error {
			_, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{op("a\n", "A\n")}})
			return err
		}, "A\nother 1\n", "", 0},
		{"write", 3, func(tl *Tools) error {
			_, err := tl.Write(context.Background(), WriteRequest{Path: "f", Content: &line})
			return err
		}, "mine\n", "", 0},
		{"rm", 1, func(tl *Tools) error {
			_, err := tl.Rm(context.Background(), RmRequest{Path: "f"})
			return err
		}, "<missing>", "", 0},
		{"edit against a version read before the race", 1, func(tl *Tools) error {
			v := versionOf(tl.FS, "f")
			_, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{op("a\n", "A\n")}, Precondition: Precondition{ExpectedVersion: v}})
			return err
		}, "a\nother 1\n", fault.CodeStale, 0},
		{"append that always loses", maxAttempts, func(tl *Tools) error {
			_, err := tl.Write(context.Background(), WriteRequest{Path: "f", Content: &line, Append: true})
			return err
		}, "a\n" + lines("other ", maxAttempts), fault.CodeLockTimeout, 0},
		{"append that loses past maxAttempts within the lock timeout", maxAttempts + 3, func(tl *Tools) error {
			_, err := tl.Write(context.Background(), WriteRequest{Path: "f", Content: &line, Append: true})
			return err
		}, "a\n" + lines("other ", maxAttempts+3) + "mine\n", "", time.Minute},
	} {
		fsys := &interferingFS{FS: memfs.New(map[string]string{"f": "a\n"}), n: tc.races}
		err := tc.call(&Tools{FS: fsys, LockTimeout: tc.wait})
		if got := fault.AsError(err); tc.code == "" && err != nil || tc.code != "" && (got == nil || got.Code != tc.code) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.code)
		}
		if got := fileText(fsys.FS, "f"); got != tc.want {
			t.Errorf("%s: the file is %q, want %q", tc.name, got, tc.want)
		}
		if fsys.done != tc.races {
			t.Errorf("%s: %d races, want %d", tc.name, fsys.done, tc.races)
		}
	}
}

func lines(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(prefix + strconv.Itoa(i) + "\n")
	}
	return b.String()
}

// Concurrent appends to one file on a backend without locks: every one
// lands, by compare-and-swap and retry alone.
func TestConcurrentAppendsWithoutLocks(t *testing.T) {
	const workers, each = 4, 25
	fsys := memfs.New(nil)
	tl := &Tools{FS: fsys}
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				line := fmt.Sprintf("%d-%d\n", w, i)
				if _, err := tl.Write(context.Background(), WriteRequest{Path: "log", Content: &line, Append: true}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(fileText(fsys, "log"), "\n"), "\n")
	slices.Sort(got)
	got = slices.Compact(got)
	if len(got) != workers*each {
		t.Fatalf("after %d appends the file has %d distinct lines", workers*each, len(got))
	}
}

// changingReads is a backend whose first n opens find the file replaced
// during the read, as an object store's read does under other writers.
type changingReads struct {
	*memfs.FS
	n int
}

func (f *changingReads) Open(ctx context.Context, p string) (backend.FileReader, error) {
	if f.n > 0 {
		f.n--
		return nil, fault.Errorf(fault.CodeStale, "the file changed while it was read.").WithCause(backend.ErrChangedDuringRead)
	}
	return f.FS.Open(ctx, p)
}

// A mutation whose read keeps finding the file replaced lost a race as a
// failed compare-and-swap does: it runs again, and succeeds, where it once
// answered STALE to a caller who gave no precondition.
func TestMutationRetriesAReadThatMetAChange(t *testing.T) {
	fsys := &changingReads{FS: memfs.New(map[string]string{"f": "L1\nL2\n"}), n: 3}
	res, err := (&Tools{FS: fsys}).Edit(context.Background(), EditRequest{Path: "f", OldText: str("L1"), NewText: str("DONE")})
	if err != nil || res.EditsApplied != 1 || fileText(fsys.FS, "f") != "DONE\nL2\n" {
		t.Fatalf("%+v, %v; the file is %q", res, err, fileText(fsys.FS, "f"))
	}
}

// A read that keeps meeting other writers is a lost race like any other:
// it goes on past maxAttempts until the lock timeout, and only then is
// LOCK_TIMEOUT. Once it stopped at maxAttempts, and 16 to 23 of 40
// appends at once to a 70 KB object failed whatever --lock-timeout said.
func TestChangingReadsWaitForTheLockTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		wantErr bool
	}{
		{"within the timeout", time.Minute, false},
		{"a lock timeout of 0", 0, true},
	} {
		fsys := &changingReads{FS: memfs.New(map[string]string{"f": "L1\n"}), n: maxAttempts + 2}
		_, err := (&Tools{FS: fsys, LockTimeout: tc.timeout}).Edit(context.Background(), EditRequest{Path: "f", OldText: str("L1"), NewText: str("DONE")})
		if tc.wantErr {
			if fe := fault.AsError(err); fe == nil || fe.Code != fault.CodeLockTimeout || fileText(fsys.FS, "f") != "L1\n" {
				t.Errorf("%s: %v; the file is %q", tc.name, err, fileText(fsys.FS, "f"))
			}
		} else if err != nil || fileText(fsys.FS, "f") != "DONE\n" {
			t.Errorf("%s: %v; the file is %q", tc.name, err, fileText(fsys.FS, "f"))
		}
	}
}
