package localfs

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDirStackBounded goes down a chain of directories and back up, asking
// for each directory on the way up as a walk does, with room for 8
// descriptors: never more than 8 are held (and counted), and every
// directory given back is the one pushed there. Straight back up, the way
// costs a few reopens per level (the checkpoints spare going back to the
// top each time); the second run also enters a sibling at each level on the
// way up, as a walk does, which closes checkpoints.
func TestDirStackBounded(t *testing.T) {
	for _, tc := range []struct {
		depth    int
		siblings bool
	}{{2000, false}, {300, true}} {
		t.Run(fmt.Sprint("siblings ", tc.siblings), func(t *testing.T) {
			testDirStackBounded(t, tc.depth, tc.siblings)
		})
	}
}

func testDirStackBounded(t *testing.T, depth int, siblings bool) {
	const budget = 8
	dir := t.TempDir()
	open := func(parent int, name string) (int, unix.Stat_t) {
		t.Helper()
		fd, st, err := openDir(parent, name)
		if err != nil {
			t.Fatal(err)
		}
		return fd, st
	}
	fd, st := open(unix.AT_FDCWD, dir)
	s := newDirStack(fd, &st)
	defer s.close()
	s.max = budget
	ids := []uint64{st.Ino}
	checkHeld := func() {
		t.Helper()
		held := 0
		for _, f := range s.frames {
			if f.dir != nil {
				held++
			}
		}
		if held != s.open || held > budget {
			t.Fatalf("%d directories held, %d counted, at depth %d", held, s.open, len(s.frames)-1)
		}
	}
	for range depth {
		top, err := s.top()
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Mkdirat(top.fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		fd, st := open(top.fd, "d")
		s.push("d", fd, &st)
		ids = append(ids, st.Ino)
		checkHeld()
	}
	reopens := 0
	for len(s.frames) > 1 {
		s.pop()
		// top opens every closed frame from the nearest open one down.
		i, a := len(s.frames)-1, len(s.frames)-1
		for s.frames[a].dir == nil {
			a--
		}
		reopens += i - a
		top, err := s.top()
		if err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(top.fd, &st); err != nil || st.Ino != ids[len(s.frames)-1] {
			t.Fatalf("depth %d: got inode %d (%v), want %d", len(s.frames)-1, st.Ino, err, ids[len(s.frames)-1])
		}
		checkHeld()
		if siblings {
			if err := unix.Mkdirat(top.fd, "e", 0o755); err != nil {
				t.Fatal(err)
			}
			fd, st := open(top.fd, "e")
			s.push("e", fd, &st)
			checkHeld()
			s.pop()
		}
	}
	// 14.7 a level with this budget; going back up from the top each time
	// would be about depth/2.
	if !siblings && reopens > 16*depth {
		t.Errorf("%d reopens on the way up %d levels", reopens, depth)
	}
}
