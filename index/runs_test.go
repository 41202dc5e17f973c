package index

import (
	"encoding/binary"
	"errors"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// A run lists each trigram's files in order, whatever the chunk's size
// (its four streams split it in quarters, with a remainder) and however
// far apart its files are, up to chunkFiles.
func TestSortRunListsFilesInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name          string
		pairs, files  int
		trigramsAbove uint32
	}{
		{"one pair", 1, 1, 0},
		{"three pairs", 3, 2, 0},
		{"a remainder of three", 4*50 + 3, 20, 0},
		{"many files, few trigrams", 5000, 3000, 1<<24 - 64},
		{"files up to chunkFiles apart", 20000, chunkFiles, 0},
		{"text-like", 100000, 400, 0x202020},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := uint32(rng.IntN(1 << 20))
			ids := make([]uint32, tc.files)
			for i := range ids {
				ids[i] = base + uint32(i)*uint32(chunkFiles/tc.files)
			}
			ids[len(ids)-1] = base + chunkFiles - 1
			want := map[uint32][]uint32{}
			var c chunk
			pairs := 0
			for i := 0; pairs < tc.pairs; i++ {
				id := ids[min(i, len(ids)-1)]
				if i >= len(ids) {
					break
				}
				seen := map[uint32]bool{}
				var tgs []uint32
				for n := 0; n < (tc.pairs+tc.files-1)/tc.files && pairs < tc.pairs; {
					tg := tc.trigramsAbove + uint32(rng.IntN(1<<24-int(tc.trigramsAbove)))
					if tc.name == "text-like" {
						tg = uint32(0x20+rng.IntN(8))<<16 | uint32(0x20+rng.IntN(96))<<8 | uint32(0x20+rng.IntN(96))
					}
					if seen[tg] {
						continue
					}
					seen[tg] = true
					n++
					pairs++
					tgs = append(tgs, tg)
					want[tg] = append(want[tg], id)
				}
				c.add(id, tgs)
			}
			if pairs != tc.pairs {
				t.Fatalf("made %d pairs, want %d", pairs, tc.pairs)
			}
			s := sorter{trigrams: newTrigramSet()}
			for range 2 { // the second reuses the sorter's buffers
				ru := s.sort(&c)
				got := map[uint32][]uint32{}
				for i := range ru.len() {
					e := ru.entry(i)
					if i > 0 && e.trigram <= ru.entry(i-1).trigram {
						t.Fatalf("entries out of order at %d", i)
					}
					end := len(ru.data)
					if i+1 < ru.len() {
						end = int(ru.entry(i + 1).off)
					}
					list := appendIDs(nil, []piece{{first: e.first, last: e.last, deltas: ru.data[e.off:end]}})
					if list[len(list)-1] != e.last {
						t.Fatalf("trigram %x: last %d, list ends at %d", e.trigram, e.last, list[len(list)-1])
					}
					got[e.trigram] = list
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%d pairs: the run's lists differ from the pairs'", pairs)
				}
				if ts, wantTs := s.trigrams.sorted(), slices.Sorted(maps.Keys(want)); !slices.Equal(ts, wantTs) {
					t.Fatalf("%d pairs: the sorter gathered %d trigrams, want %d", pairs, len(ts), len(wantTs))
				}
			}
		})
	}
}

// Files chunkFiles apart or more do not share a chunk: a file's place in
// its chunk takes 16 bits.
func TestRunsSplitFilesFarApart(t *testing.T) {
	r := newRuns(filepath.Join(t.TempDir(), "runs"))
	r.add(3, []uint32{0x616263, 0x626364})
	r.add(3+chunkFiles-1, []uint32{0x616263})
	r.add(3+chunkFiles, []uint32{0x616263})
	if err := r.finish(); err != nil {
		t.Fatal(err)
	}
	if len(r.sorted) != 2 {
		t.Fatalf("%d runs, want 2", len(r.sorted))
	}
	var got []uint32
	c := newCursor(r.sorted)
	got = appendIDs(got, c.pieces(0x616263, nil))
	if want := []uint32{3, 3 + chunkFiles - 1, 3 + chunkFiles}; !slices.Equal(got, want) {
		t.Fatalf("abc in %v, want %v", got, want)
	}
}

// Runs go to a file, mapped back for the merge, and give each trigram's
// files in order, whatever the runs' count; the file's name is gone once
// it is made, and a file a killed build left there is replaced; a run read
// back as other bytes than those written fails the build. A file that
// cannot be made fails it too, which then leaves the old index.
func TestRunsSpilledMergeAsPaired(t *testing.T) {
	defer func(n int) { runPairs = n }(runPairs)
	rng := rand.New(rand.NewPCG(3, 4))
	files := make([][]uint32, 500)
	want := map[uint32][]uint32{}
	for i := range files {
		seen := map[uint32]bool{}
		for range 40 {
			seen[uint32(0x202020+rng.IntN(3000))] = true
		}
		for tg := range seen {
			files[i] = append(files[i], tg)
		}
		slices.Sort(files[i])
		for _, tg := range files[i] {
			want[tg] = append(want[tg], uint32(i))
		}
	}
	name := filepath.Join(t.TempDir(), "runs")
	for _, pairs := range []int{64, 1 << 20} {
		if err := os.WriteFile(name, []byte("a killed build's"), 0o600); err != nil {
			t.Fatal(err)
		}
		runPairs = pairs
		r := newRuns(name)
		for id, tgs := range files {
			r.add(uint32(id), tgs)
		}
		if err := r.finish(); err != nil {
			t.Fatal(err)
		}
		got := map[uint32][]uint32{}
		c := newCursor(r.sorted)
		for tg := uint32(0x202020); tg < 0x202020+3000; tg++ {
			if ps := c.pieces(tg, nil); len(ps) > 0 {
				got[tg] = appendIDs(nil, ps)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("runs of %d pairs: the lists of %d runs differ from the files'", pairs, len(r.sorted))
		}
		// A segment's lists, joined, take no more than listBytes says,
		// and it says no more than a first file's varint each over that.
		for _, width := range []uint32{1, 7} {
			for first := uint32(0x202020); first < 0x202020+3000; first += width {
				c := newCursorAt(r.sorted, first)
				bound := c.listBytes(first + width - 1)
				var enc []byte
				pieces := 0
				for tg := first; tg < first+width; tg++ {
					ps := c.pieces(tg, nil)
					enc, pieces = appendPieces(enc, ps), pieces+len(ps)
				}
				if len(enc) > bound || bound > len(enc)+binary.MaxVarintLen32*pieces {
					t.Fatalf("runs of %d pairs, trigrams %x+%d: %d bytes of lists from %d pieces, bound %d", pairs, first, width, len(enc), pieces, bound)
				}
			}
		}
		if _, err := os.Lstat(name); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the spill file's name is left: %v", err)
		}
		r.release()
	}
	// A page read back as zeros (written out in vain and dropped) or with
	// a byte changed fails the build before the merge.
	for _, zeros := range []bool{true, false} {
		r := newRuns(name)
		for id, tgs := range files {
			r.add(uint32(id), tgs)
		}
		if err := r.wait(); err != nil {
			t.Fatal(err)
		}
		at := r.sorted[len(r.sorted)-1].at
		bad := make([]byte, 16)
		if !zeros {
			if _, err := r.spill.ReadAt(bad[:1], at); err != nil {
				t.Fatal(err)
			}
			bad = []byte{bad[0] ^ 1}
		}
		if _, err := r.spill.WriteAt(bad, at); err != nil {
			t.Fatal(err)
		}
		if err := r.mapBack(); !errors.Is(err, errRunsCorrupt) {
			t.Fatalf("%x written over a run: %v", bad, err)
		}
		r.release()
	}
	r := newRuns(filepath.Join(t.TempDir(), "missing", "runs"))
	r.add(1, files[0])
	if err := r.finish(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("runs spilled to a directory that is not there: %v", err)
	}
	r.release()
}
