package localfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"golang.org/x/sys/unix"
)

// listed is a listing of n entries, named as a wide directory's.
func listed(n int) []dirEntry {
	out := make([]dirEntry, n)
	for i := range out {
		out[i] = dirEntry{name: fmt.Sprintf("f%05d", i), typ: backend.TypeFile}
	}
	return out
}

// statAt is the stat of directory ino of device 1.
func statAt(ino uint64, mtime, ctime time.Time) unix.Stat_t {
	var st unix.Stat_t
	st.Dev, st.Ino, st.Size = 1, ino, 4096
	st.Mtim = unix.NsecToTimespec(mtime.UnixNano())
	st.Ctim = unix.NsecToTimespec(ctime.UnixNano())
	return st
}

// TestListingsProven: a listing is kept only when the stat taken before
// it proves that any later change to the directory changes the stat, and
// given back only for that very stat.
func TestListingsProven(t *testing.T) {
	now := time.Unix(2_000_000_000, 0)
	old := now.Add(-time.Hour)
	kept := statAt(2, old, old)
	changed := func(f func(*unix.Stat_t)) unix.Stat_t { st := kept; f(&st); return st }
	for _, tc := range []struct {
		name     string
		put, get unix.Stat_t
		n        int
		want     bool
	}{
		{"unchanged", kept, kept, memoMin, true},
		{"small directory", kept, kept, memoMin - 1, false},
		{"mtime within the slack", statAt(2, now.Add(-backend.RacySlack/2), old), statAt(2, now.Add(-backend.RacySlack/2), old), memoMin, false},
		{"mtime at the slack's edge", statAt(2, now.Add(-backend.RacySlack), old), statAt(2, now.Add(-backend.RacySlack), old), memoMin, false},
		{"ctime within the slack", statAt(2, old, now.Add(-time.Second)), statAt(2, old, now.Add(-time.Second)), memoMin, false},
		{"ctime at the slack's edge", statAt(2, old, now.Add(-backend.RacySlack)), statAt(2, old, now.Add(-backend.RacySlack)), memoMin, false},
		{"mtime in the future", statAt(2, now.Add(time.Hour), old), statAt(2, now.Add(time.Hour), old), memoMin, false},
		{"mtime changed", kept, changed(func(st *unix.Stat_t) { st.Mtim.Nsec++ }), memoMin, false},
		{"ctime changed", kept, changed(func(st *unix.Stat_t) { st.Ctim.Nsec++ }), memoMin, false},
		{"size changed", kept, changed(func(st *unix.Stat_t) { st.Size++ }), memoMin, false},
		{"another inode", kept, changed(func(st *unix.Stat_t) { st.Ino++ }), memoMin, false},
		{"another device", kept, changed(func(st *unix.Stat_t) { st.Dev++ }), memoMin, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m listings
			m.put(&tc.put, now, listed(tc.n))
			got, ok := m.get(&tc.get)
			if ok != tc.want {
				t.Fatalf("get = %v, want %v", ok, tc.want)
			}
			if ok && len(got) != tc.n {
				t.Fatalf("got %d entries, want %d", len(got), tc.n)
			}
		})
	}
}

// TestListingsReplaced: a directory listed again after a change keeps
// one listing, the new one, which its new stat finds.
func TestListingsReplaced(t *testing.T) {
	now := time.Unix(2_000_000_000, 0)
	before, after := statAt(2, now.Add(-2*time.Hour), now.Add(-2*time.Hour)), statAt(2, now.Add(-time.Hour), now.Add(-time.Hour))
	var m listings
	m.put(&before, now, listed(memoMin))
	m.put(&after, now, listed(memoMin+1))
	if len(m.kept) != 1 {
		t.Fatalf("kept %d listings of one directory", len(m.kept))
	}
	if got, ok := m.get(&after); !ok || len(got) != memoMin+1 {
		t.Fatalf("get = %d entries, %v: not the new listing", len(got), ok)
	}
}

// TestListingsBounded: the memo keeps the listings used last, memoKeep of
// them within memoBytes; one larger, the newest alone, until it is unused
// for memoIdle.
func TestListingsBounded(t *testing.T) {
	now := time.Unix(2_000_000_000, 0)
	old := now.Add(-time.Hour)
	stats := make([]unix.Stat_t, memoKeep+2)
	for i := range stats {
		stats[i] = statAt(uint64(10+i), old, old)
	}
	has := func(m *listings, i int) bool { _, ok := m.get(&stats[i]); return ok }

	clock := now
	m := listings{now: func() time.Time { return clock }}
	for i := range memoKeep {
		m.put(&stats[i], now, listed(memoMin))
	}
	if !has(&m, 0) { // used: now the newest
		t.Fatal("listing 0 was not kept")
	}
	m.put(&stats[memoKeep], now, listed(memoMin))
	if has(&m, 1) {
		t.Fatal("listing 1, the least recently used, was kept past memoKeep")
	}
	for _, i := range []int{0, 2, memoKeep} {
		if !has(&m, i) {
			t.Fatalf("listing %d was not kept", i)
		}
	}

	// One long name shared by every entry: counted each time, held once.
	huge, long := listed(memoMin), strings.Repeat("x", memoBytes/memoMin)
	for i := range huge {
		huge[i].name = long
	}
	m.put(&stats[memoKeep+1], now, huge)
	defer m.bigTimer.Stop()
	// Kept for the pages that follow, each of which uses it again.
	for range 3 {
		clock = clock.Add(memoIdle - time.Second)
		m.releaseIdle()
		if !has(&m, memoKeep+1) {
			t.Fatal("a listing over memoBytes was let go while its pages used it")
		}
	}
	for _, i := range []int{0, 2, memoKeep} {
		if !has(&m, i) {
			t.Fatalf("listing %d was dropped for one over memoBytes", i)
		}
	}
	clock = clock.Add(memoIdle)
	m.releaseIdle()
	if has(&m, memoKeep+1) {
		t.Fatal("a listing over memoBytes was kept once unused for memoIdle")
	}

	// Two halves of memoBytes: the second drops the first, and the rest.
	half := listed(memoMin)
	for i := range half {
		half[i].name = long[:len(long)/2]
	}
	m.put(&stats[1], now, half)
	m.put(&stats[memoKeep+1], now, slices.Clone(half))
	if !has(&m, memoKeep+1) || has(&m, 1) || len(m.kept) != 1 {
		t.Fatalf("kept %d listings past memoBytes", len(m.kept))
	}
}

// wideDir makes root/wide, a directory of memoMin files whose mtime is
// long past, walked by a clock an hour ahead (its ctime is now, which
// Chtimes set): its listing is proven, and whatever changes it later
// changes its mtime, the file system stamping to the nanosecond.
func wideDir(t *testing.T) (f *FS, root string) {
	t.Helper()
	root = t.TempDir()
	dir := filepath.Join(root, "wide")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range listed(memoMin) {
		if err := os.WriteFile(filepath.Join(dir, e.name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(dir, past, past); err != nil {
		t.Fatal(err)
	}
	f = newFS(t, Config{Roots: []string{root}, Cwd: root})
	f.listings.now = func() time.Time { return time.Now().Add(time.Hour) }
	return f, root
}

// starts are where the tests walk: the wide directory itself, and the
// root above it (which lists it as it enters it).
var starts = []struct{ start, prefix string }{{"wide", ""}, {".", "wide/"}}

// page walks start from the entry at from (the start when ""), as find
// pages by cursor, and gives the names of up to n files.
func page(t *testing.T, f *FS, start, from string, n int) []string {
	t.Helper()
	var got []string
	err := f.Walk(context.Background(), start, backend.WalkOptions{From: from}, func(e backend.WalkEntry) error {
		if len(got) == n {
			return backend.ErrStopWalk
		}
		if e.Type == backend.TypeFile {
			got = append(got, e.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestWalkListsWideDirOnce: the pages of a walk through a wide directory
// list it once, not once a page. The memo is doctored after the first
// page: a later page that listed the directory would show the name taken
// out of it.
func TestWalkListsWideDirOnce(t *testing.T) {
	for _, s := range starts {
		t.Run(s.start, func(t *testing.T) {
			f, root := wideDir(t)
			first := page(t, f, s.start, "", 200)
			if len(first) != 200 || first[199] != "f00199" {
				t.Fatalf("first page: %d files, not f00000 to f00199", len(first))
			}
			var st unix.Stat_t
			if err := unix.Stat(filepath.Join(root, "wide"), &st); err != nil {
				t.Fatal(err)
			}
			entries, ok := f.listings.get(&st)
			if !ok {
				t.Fatal("the wide directory's listing was not kept")
			}
			doctored := slices.DeleteFunc(slices.Clone(entries), func(e dirEntry) bool { return e.name == "f00500" })
			f.listings.kept[len(f.listings.kept)-1].entries = doctored
			second := page(t, f, s.start, s.prefix+"f00200", 400)
			if slices.Contains(second, "f00500") || len(second) != 400 {
				t.Fatalf("the second page listed the directory again: %d files", len(second))
			}
		})
	}
}

// TestWalkSeesFileAddedBetweenPages: a file made after a page listed the
// directory changes its mtime, and the next page lists it again.
func TestWalkSeesFileAddedBetweenPages(t *testing.T) {
	for _, s := range starts {
		t.Run(s.start, func(t *testing.T) {
			f, root := wideDir(t)
			page(t, f, s.start, "", 200)
			if err := os.WriteFile(filepath.Join(root, "wide", "f00500a"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			rest := page(t, f, s.start, s.prefix+"f00200", memoMin)
			if !slices.Contains(rest, "f00500a") || len(rest) != memoMin-200+1 {
				t.Fatalf("the next page has %d files, without f00500a", len(rest))
			}
		})
	}
}

// TestWalkKeepsNoRacyListing: a directory changed within backend.RacySlack of
// the clock (ctime, here: Chtimes set it now) may change again without a
// new stat, so its listing is not kept.
func TestWalkKeepsNoRacyListing(t *testing.T) {
	f, _ := wideDir(t)
	f.listings.now = nil // the real clock
	if got := page(t, f, "wide", "", 10); len(got) != 10 {
		t.Fatalf("got %d files", len(got))
	}
	if len(f.listings.kept) != 0 {
		t.Fatal("a listing within the slack was kept")
	}
}

// TestWalkKeepsNoRemoteListing: on a network or FUSE file system a
// directory's times are a server's (its clock may lag this one's by more
// than backend.RacySlack) or made up (mountpoint-s3 gives every directory the
// mount's), so they prove nothing of a listing, which is not kept.
func TestWalkKeepsNoRemoteListing(t *testing.T) {
	f, root := wideDir(t)
	var asked []int
	f.listings.local = func(fd int) bool { asked = append(asked, fd); return false }
	if got := page(t, f, "wide", "", 10); len(got) != 10 {
		t.Fatalf("got %d files", len(got))
	}
	if len(asked) != 1 || len(f.listings.kept) != 0 {
		t.Fatalf("asked %d times, kept %d listings", len(asked), len(f.listings.kept))
	}
	// The file systems tests run on are this machine's.
	d, err := os.Open(filepath.Join(root, "wide"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !localTimes(int(d.Fd())) {
		t.Fatalf("%s is not on a file system of this machine's", root)
	}
}
