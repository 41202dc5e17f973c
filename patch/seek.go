package patch

import (
	"math/bits"
	"slices"
	"strings"
	"unicode"

	"github.com/agentfs/agentfs/editmatch"
)

// The rungs of the default ladder, from the strictest: those of edit's
// ladder, whose names the results of both tools share.
const (
	RungExact              = editmatch.RungExact
	RungTrailingWhitespace = editmatch.RungTrailingWhitespace
	RungWhitespace         = editmatch.RungWhitespace
	RungUnicode            = editmatch.RungUnicode
)

// Matcher locates the old lines of a chunk in a file.
type Matcher interface {
	// Seek returns the first index at or after start where old occurs in
	// lines (both without line terminators), trying a ladder of ever
	// looser comparisons and stopping at the first rung that finds one;
	// rung names it. An empty old occurs at start.
	Seek(lines, old []string, start int) (at int, rung string, ok bool)
}

// Ladder is the Matcher of Codex's seek_sequence: exact, then ignoring
// whitespace at the end of lines, then at both ends, then also folding
// typographic dashes, quotes and spaces to ASCII, and NFKC forms as edit
// does.
var Ladder Matcher = ladder{}

type ladder struct {
	// steps, when set, counts the work of every Seek: a line keyed at a
	// rung, and a comparison of keys, are a step each.
	steps *int
}

var ladderRungs = []struct {
	name string
	key  func(string) string
}{
	{RungExact, func(s string) string { return s }},
	{RungTrailingWhitespace, func(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }},
	{RungWhitespace, strings.TrimSpace},
	// Edit's unicode fold, a superset of Codex's last pass (dashes,
	// quotes, odd spaces): NFKC too, so that NFD text, ligatures and an
	// ellipsis match as they do in edit.
	{RungUnicode, func(s string) string { return strings.TrimSpace(editmatch.FoldUnicode(s)) }},
}

func (l ladder) Seek(lines, old []string, start int) (int, string, bool) {
	if l.steps == nil {
		l.steps = new(int)
	}
	return seekLadder(lines, old, start, l.steps)
}

// seekLadder is the ladder's Seek, counting its comparisons in steps. Each
// rung scans the file's lines once (editmatch.Index): every window checked
// line by line took minutes for a chunk of many like lines in a file of
// them, at each rung.
func seekLadder(lines, old []string, start int, steps *int) (int, string, bool) {
	if len(old) == 0 {
		return start, RungExact, true
	}
	start = max(start, 0)
	if start+len(old) > len(lines) {
		return 0, "", false
	}
	have := make([]string, len(lines)-start)
	want := make([]string, len(old))
	for _, r := range ladderRungs {
		for i, l := range lines[start:] {
			have[i] = r.key(l)
		}
		for i, o := range old {
			want[i] = r.key(o)
		}
		*steps += len(have) + len(want)
		if s := editmatch.Index(have, want, steps); s >= 0 {
			return start + s, r.name, true
		}
	}
	return 0, "", false
}

// fileLadder is the ladder for the lines of one file, texts, which one
// locateChunks seeks in again and again: it keys them once per rung, and
// finds every place of an old at a rung in one scan, from which the next
// Seeks of that old take their answers. Each Seek keyed the rest of the
// file at every rung and scanned it: a chunk of many lines alike its @@
// line, each tried as the chunk's start (spans), took seconds, 200 of them
// in a file of 600,000 lines 12 s. Lines that are not texts, or not from
// its start, are sought as the ladder does.
type fileLadder struct {
	texts []string
	keys  [][]string   // per rung, nil until keyed
	lines []*lineIndex // per rung, nil until indexed
	olds  []*places    // most recently sought first, at most maxOlds
	steps *int
}

// places is where an old occurs in the file at each rung.
type places struct {
	old    []string
	starts [][]int // per rung, ascending
	found  []bool  // per rung: starts was sought
	seeks  int     // Seeks of old
}

// maxOlds bounds the olds a fileLadder keeps the places of, each up to
// the file's lines at each rung: spans seeks two, by turns.
const maxOlds = 4

func newFileLadder(texts []string, steps *int) *fileLadder {
	if steps == nil {
		steps = new(int)
	}
	n := len(ladderRungs)
	return &fileLadder{texts: texts, keys: make([][]string, n), lines: make([]*lineIndex, n), steps: steps}
}

// Seek is the ladder's: the first rung with a place of old at or after
// start, and its first such place, which must end within lines.
func (f *fileLadder) Seek(lines, old []string, start int) (int, string, bool) {
	if len(old) == 0 || len(lines) == 0 || len(lines) > len(f.texts) || &lines[0] != &f.texts[0] {
		return seekLadder(lines, old, start, f.steps)
	}
	start = max(start, 0)
	if start+len(old) > len(lines) {
		return 0, "", false
	}
	p := f.places(old)
	p.seeks++
	for r, rung := range ladderRungs {
		if !p.found[r] {
			want := make([]string, len(old))
			for i, o := range old {
				want[i] = rung.key(o)
			}
			*f.steps += len(want)
			if p.seeks <= 2 {
				// Sought once or twice, as most olds are (a chunk's old
				// lines, again past them, the lines it leaves), an old
				// is sought from start to its first place: every place
				// in the whole file, for each chunk, made a patch of
				// 5,000 chunks in a file of 50,000 lines take 3 s, four
				// times that at twice both.
				if s := f.first(r, want, start, len(lines)); s >= 0 {
					return s, rung.name, true
				}
				continue
			}
			p.starts[r], p.found[r] = f.all(r, want), true
		}
		i, _ := slices.BinarySearch(p.starts[r], start)
		*f.steps += bits.Len(uint(len(p.starts[r])))
		if i < len(p.starts[r]) && p.starts[r][i]+len(old) <= len(lines) {
			return p.starts[r][i], rung.name, true
		}
	}
	return 0, "", false
}

// keyed is the file's lines keyed at rung r.
func (f *fileLadder) keyed(r int) []string {
	if f.keys[r] == nil {
		keys := make([]string, len(f.texts))
		for i, l := range f.texts {
			keys[i] = ladderRungs[r].key(l)
		}
		*f.steps += len(keys)
		f.keys[r] = keys
	}
	return f.keys[r]
}

// places is the places of old, sought or to seek, now the most recent.
func (f *fileLadder) places(old []string) *places {
	i := slices.IndexFunc(f.olds, func(p *places) bool {
		if len(p.old) != len(old) {
			return false
		}
		*f.steps += len(old)
		return slices.Equal(p.old, old)
	})
	var p *places
	if i >= 0 {
		p = f.olds[i]
		f.olds = slices.Delete(f.olds, i, i+1)
	} else {
		n := len(ladderRungs)
		p = &places{old: slices.Clone(old), starts: make([][]int, n), found: make([]bool, n)}
		if len(f.olds) == maxOlds {
			f.olds = f.olds[:maxOlds-1]
		}
	}
	f.olds = slices.Insert(f.olds, 0, p)
	return p
}

// first is the first start s of want in the file's keys at rung r with
// from <= s and s+len(want) <= to, -1 when there is none. Only the
// windows where want's rarest line stands are compared, unless they are
// so many that one scan of keys[from:to] costs less: a chunk found only
// at a loose rung scanned the rest of the file at each stricter one, and
// again for a second place, 5,000 such chunks in 50,000 lines 6 s.
func (f *fileLadder) first(r int, want []string, from, to int) int {
	keys := f.keyed(r)
	// A short scan (between two chunks) costs little more than the
	// index's look-ups, and needs no index.
	if to-from > 4*len(want)+256 {
		if at, cands, ok := f.rarest(r, want, from, to); ok {
			if starts := f.windows(keys, want, at, cands, 1); len(starts) > 0 {
				return starts[0]
			}
			return -1
		}
	}
	if s := editmatch.Index(keys[from:to], want, f.steps); s >= 0 {
		return from + s
	}
	return -1
}

// all is every start of want in the file's keys at rung r, as first
// finds them.
func (f *fileLadder) all(r int, want []string) []int {
	keys := f.keyed(r)
	if at, cands, ok := f.rarest(r, want, 0, len(keys)); ok {
		return f.windows(keys, want, at, cands, len(cands))
	}
	return editmatch.Starts(keys, want, f.steps)
}

// windows is the starts, up to most of them, of the windows of keys that
// hold want, among those where its line at stands at cands.
func (f *fileLadder) windows(keys, want []string, at int, cands []int32, most int) []int {
	var starts []int
	for _, p := range cands {
		if len(starts) == most {
			break
		}
		s := int(p) - at
		*f.steps += len(want)
		if slices.Equal(keys[s:s+len(want)], want) {
			starts = append(starts, s)
		}
	}
	return starts
}

// rarest is the line of want (its index at) that stands in the fewest
// places at rung r, and those of its places cands that start a window of
// want within [from, to); ok when comparing those windows line by line
// costs no more than a scan of keys[from:to] (a line absent from the
// file leaves none).
func (f *fileLadder) rarest(r int, want []string, from, to int) (at int, cands []int32, ok bool) {
	if f.lines[r] == nil {
		f.lines[r] = newLineIndex(f.keyed(r))
		*f.steps += 2 * len(f.texts)
	}
	at = -1
	for i, w := range want {
		*f.steps++
		places := f.lines[r].places(w)
		if at < 0 || len(places) < len(cands) {
			at, cands = i, places
		}
		if len(places) == 0 {
			return at, nil, true
		}
	}
	lo, _ := slices.BinarySearch(cands, int32(from+at))
	hi, _ := slices.BinarySearch(cands, int32(to-len(want)+at+1))
	cands = cands[lo:max(lo, hi)]
	*f.steps += 2 * bits.Len(uint(len(cands)))
	return at, cands, len(cands)*len(want) <= to-from+len(want)
}

// lineIndex is where each key of a file's lines stands: the lines of
// the key numbered id are at[from[id]:from[id+1]], ascending. A slice of
// places per key took twice the memory of the file's lines, at each rung.
type lineIndex struct {
	ids  map[string]int32
	from []int32
	at   []int32
}

func newLineIndex(keys []string) *lineIndex {
	x := &lineIndex{ids: map[string]int32{}}
	id := make([]int32, len(keys))
	for i, k := range keys {
		v, ok := x.ids[k]
		if !ok {
			v = int32(len(x.ids))
			x.ids[k] = v
		}
		id[i] = v
	}
	x.from = make([]int32, len(x.ids)+1)
	for _, v := range id {
		x.from[v+1]++
	}
	for k := 1; k < len(x.from); k++ {
		x.from[k] += x.from[k-1]
	}
	next := slices.Clone(x.from[:len(x.ids)])
	x.at = make([]int32, len(keys))
	for i, v := range id {
		x.at[next[v]] = int32(i)
		next[v]++
	}
	return x
}

// places is where key stands, ascending.
func (x *lineIndex) places(key string) []int32 {
	v, ok := x.ids[key]
	if !ok {
		return nil
	}
	return x.at[x.from[v]:x.from[v+1]]
}
