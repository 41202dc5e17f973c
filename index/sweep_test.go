package index

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// sweepTrees are two indexed trees in one state directory: kept, which
// every case leaves as it is, and gone, which each case does something to.
type sweepTrees struct {
	t          *testing.T
	state      string
	kept, gone string
	keptLoc    location
	goneLoc    location
}

func newSweepTrees(t *testing.T) *sweepTrees {
	t.Helper()
	s := &sweepTrees{t: t, state: t.TempDir()}
	t.Setenv(localfs.StateDirEnv, s.state)
	base := t.TempDir()
	s.kept, s.gone = filepath.Join(base, "kept"), filepath.Join(base, "gone")
	for _, dir := range []string{s.kept, s.gone} {
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sub", "a.txt"), []byte("a needle in "+dir+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fsys, err := localfs.New(localfs.Config{Roots: []string{dir}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Build(context.Background(), fsys, dir, dir, BuildOptions{LockTimeout: time.Second})
		fsys.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if s.keptLoc, err = locate(s.state, s.kept); err != nil {
		t.Fatal(err)
	}
	if s.goneLoc, err = locate(s.state, s.gone); err != nil {
		t.Fatal(err)
	}
	return s
}

// files are the names in the state directory's index directory.
func (s *sweepTrees) files() []string {
	s.t.Helper()
	entries, err := os.ReadDir(filepath.Join(s.state, "index"))
	if err != nil {
		s.t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// of are the file names of the tree at loc, as files lists them.
func of(loc location, names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, filepath.Base(loc.file)[:24]+n)
	}
	return out
}

func (s *sweepTrees) write(name, content string) {
	s.t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

// rewriteIndex rewrites the index file at name as edit changes its bytes,
// given its header.
func rewriteIndex(t *testing.T, name string, edit func(data []byte, h header)) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	h, err := decodeHeader(data, len(data))
	if err != nil {
		t.Fatal(err)
	}
	edit(data, h)
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// header changes the header of gone's index.
func (s *sweepTrees) header(change func(*header)) {
	rewriteIndex(s.t, s.goneLoc.file, func(data []byte, h header) {
		change(&h)
		copy(data, h.encode())
	})
}

// damage flips a byte of gone's index, at the offset at gives.
func (s *sweepTrees) damage(at func(header) uint64) {
	rewriteIndex(s.t, s.goneLoc.file, func(data []byte, h header) { data[at(h)] ^= 0x40 })
}

func (s *sweepTrees) removeGone() {
	s.t.Helper()
	if err := os.RemoveAll(s.gone); err != nil {
		s.t.Fatal(err)
	}
}

// held takes the lock at name for the rest of the test, as another
// process's builder or watcher would.
func (s *sweepTrees) held(name string) {
	s.t.Helper()
	unlock, err := lock(context.Background(), name, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(unlock)
}

// Sweep removes the index of a tree that is gone, replaced, renamed away
// or whose index fails its checks, with everything its builds and watcher
// left; it keeps one whose tree a builder or watcher holds, or that
// another version of agentfs made, and the indexes of the trees in place.
func TestSweepRemovesWhatNoSearchCanUse(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(s *sweepTrees)
		// removed is how many index files Sweep says it removed;
		// goneLeft are the files of gone left in place.
		removed  int
		goneLeft []string
	}{
		{name: "removed", do: func(s *sweepTrees) { s.removeGone() }, removed: 1},
		{name: "renamed", do: func(s *sweepTrees) {
			if err := os.Rename(s.gone, s.gone+".old"); err != nil {
				t.Fatal(err)
			}
		}, removed: 1},
		{name: "another directory at its path", do: func(s *sweepTrees) {
			if err := os.Rename(s.gone, s.gone+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(s.gone, 0o755); err != nil {
				t.Fatal(err)
			}
		}, removed: 1},
		{name: "a file at its path", do: func(s *sweepTrees) {
			s.removeGone()
			s.write(s.gone, "not a tree\n")
		}, removed: 1},
		{name: "corrupt, its tree in place", do: func(s *sweepTrees) { s.write(s.goneLoc.file, "junk") }, removed: 1},
		{name: "its root damaged", do: func(s *sweepTrees) {
			s.damage(func(h header) uint64 { return h.metaOff + 1 }) // the root's leading /
		}, removed: 1},
		{name: "damaged past its root, its tree in place", do: func(s *sweepTrees) {
			// Never trusted by a search, and replaced by the tree's next build.
			s.damage(func(h header) uint64 { return h.postOff })
		}, goneLeft: []string{".idx", ".lock"}},
		{name: "what a killed build and watcher left", do: func(s *sweepTrees) {
			s.removeGone()
			if err := os.MkdirAll(filepath.Join(s.goneLoc.building, "x"), 0o700); err != nil {
				t.Fatal(err)
			}
			s.write(s.goneLoc.runs, "runs")
			s.write(s.goneLoc.watchLock, "")
			s.write(socketName(s.goneLoc.file), "")
			s.write(s.goneLoc.ended, "{}")
			s.write(s.goneLoc.ended+".tmp", "{}")
		}, removed: 1},
		{name: "a dead watcher's socket without its lock file", do: func(s *sweepTrees) {
			s.removeGone()
			s.write(socketName(s.goneLoc.file), "")
		}, removed: 1},
		{name: "gone, on another file system than where its root was", do: func(s *sweepTrees) {
			// As a tree on a disk not mounted now: its index is of use
			// once the disk is mounted again.
			s.header(func(h *header) { h.rootDev++ })
			s.removeGone()
		}, goneLeft: []string{".idx", ".lock"}},
		{name: "replaced, on another file system than where its root was", do: func(s *sweepTrees) {
			s.header(func(h *header) { h.rootDev++ })
			s.removeGone()
			if err := os.Mkdir(s.gone, 0o755); err != nil {
				t.Fatal(err)
			}
		}, goneLeft: []string{".idx", ".lock"}},
		{name: "gone, on another file system, built longer ago than kept", do: func(s *sweepTrees) {
			// A file system gone for good (a subvolume removed), or back
			// under another device number (tmpfs, NFS): the index can
			// never be used again.
			s.header(func(h *header) {
				h.rootDev++
				h.built = time.Now().Add(-awayKept - time.Hour).UnixNano()
			})
			s.removeGone()
		}, removed: 1},
		{name: "gone, made before devices were recorded", do: func(s *sweepTrees) {
			s.header(func(h *header) { h.rootDev, h.hasRootDev = 0, false })
			s.removeGone()
		}, removed: 1},
		{name: "dropped", do: func(s *sweepTrees) {
			if _, err := Drop(context.Background(), s.gone, []string{s.gone}, time.Second); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "another version's", do: func(s *sweepTrees) {
			s.removeGone()
			data, err := os.ReadFile(s.goneLoc.file)
			if err != nil {
				t.Fatal(err)
			}
			s.write(s.goneLoc.file, "AGFSIX01"+string(data[8:]))
		}, goneLeft: []string{".idx", ".lock"}},
		{name: "held by a builder", do: func(s *sweepTrees) {
			s.removeGone()
			s.held(s.goneLoc.lock)
		}, goneLeft: []string{".idx", ".lock"}},
		{name: "held by a watcher", do: func(s *sweepTrees) {
			s.removeGone()
			s.held(s.goneLoc.watchLock)
		}, goneLeft: []string{".idx", ".lock", ".watch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSweepTrees(t)
			tc.do(s)
			if got := Sweep(); got != tc.removed {
				t.Errorf("Sweep removed %d index files, want %d", got, tc.removed)
			}
			want := append(of(s.keptLoc, ".idx", ".lock"), of(s.goneLoc, tc.goneLeft...)...)
			slices.Sort(want)
			if got := s.files(); !slices.Equal(got, want) {
				t.Errorf("left %q, want %q", got, want)
			}
			if _, err := StatusOf(s.kept, []string{s.kept}); err != nil {
				t.Errorf("the kept tree's index: %v", err)
			}
		})
	}
}

// A sweep never holds the lock of a tree whose index is usable: a build
// that takes it with no wait (--lock-timeout 0) never fails for a sweep,
// nor does a watcher's build again, which would end the watcher.
func TestSweepLeavesLiveTreesUnlocked(t *testing.T) {
	s := newSweepTrees(t)
	fsys, err := localfs.New(localfs.Config{Roots: []string{s.kept}})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	swept := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				swept <- n
				return
			default:
				Sweep()
				n++
			}
		}
	}()
	for i := range 200 {
		if _, err := Build(context.Background(), fsys, s.kept, s.kept, BuildOptions{}); err != nil {
			close(stop)
			t.Fatalf("build %d, sweeps running: %v", i, err)
		}
	}
	close(stop)
	if n := <-swept; n == 0 {
		t.Fatal("no sweep ran during the builds")
	}
}

// An index whose root cannot be looked up now (a directory on its path
// that this user may not search) is kept: its tree may well be there.
func TestSweepKeepsATreeItCannotLookUp(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may search any directory; CI runs this unprivileged (su agentfs-ci -c 'go test ./index -run SweepKeepsATreeItCannotLookUp')")
	}
	s := newSweepTrees(t)
	parent := filepath.Dir(s.gone)
	if err := os.Chmod(parent, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(parent, 0o755) })
	before := s.files()
	if n := Sweep(); n != 0 {
		t.Errorf("Sweep removed %d index files of trees it could not look up, want 0", n)
	}
	if got := s.files(); !slices.Equal(got, before) {
		t.Errorf("left %q, want %q", got, before)
	}
}

// A root on a file system that hangs (a hard NFS mount whose server is
// gone) keeps a sweep's caller no longer than sweepWait: a build's answer
// is not held by another tree's index.
func TestSweepOfAHungRootReturns(t *testing.T) {
	newSweepTrees(t)
	release, returned := make(chan struct{}), make(chan struct{})
	stat, wait := rootStat, sweepWait
	rootStat = func(string, *unix.Stat_t) error {
		<-release
		defer func() { returned <- struct{}{} }()
		return unix.EIO // kept: nothing more of the tree is touched
	}
	sweepWait = 50 * time.Millisecond
	t.Cleanup(func() {
		close(release)
		<-returned // the first tree's stat, left to the background
		<-returned // the second's
		rootStat, sweepWait = stat, wait
	})
	if n := Sweep(); n != 0 {
		t.Fatalf("Sweep removed %d index files, want 0", n)
	}
}

// A build of a tree whose index was made before the root's device was
// recorded writes the index again though nothing changed, so that the
// next sweep can tell the tree's file system away.
func TestUnchangedBuildRecordsTheDevice(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.build()
	loc := f.location()
	rewriteIndex(t, loc.file, func(data []byte, h header) {
		if !h.hasRootDev || h.rootDev != loc.dev {
			t.Fatalf("the header after a build: %+v; want the device %d", h, loc.dev)
		}
		h.rootDev, h.hasRootDev = 0, false // as an older agentfs wrote it
		copy(data, h.encode())
	})
	// Not f.build, which dates the directories back again (a change).
	if st := f.update(f.fsys); st.Read != 0 {
		t.Fatalf("the build again read %d files, want none (nothing changed)", st.Read)
	}
	if _, h, err := rootOf(loc.file); err != nil || !h.hasRootDev || h.rootDev != loc.dev {
		t.Fatalf("the header after a build of the unchanged tree: %+v, %v; want the device %d", h, err, loc.dev)
	}
}
