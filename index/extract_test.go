package index

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/textfile"
)

// A file is read up to the size it was stat'ed with; one stat'ed empty is
// read to its end, as a file whose size its file system does not report.
func TestExtractReadsUpToSize(t *testing.T) {
	tri := func(s string) uint32 { return uint32(s[0])<<16 | uint32(s[1])<<8 | uint32(s[2]) }
	for _, tc := range []struct {
		content string
		size    int64
		want    []string
	}{
		{"abcdef", 6, []string{"abc", "bcd", "cde", "def"}},
		{"abcdef", 4, []string{"abc", "bcd"}},
		{"abcdef", 0, []string{"abc", "bcd", "cde", "def"}},
		{"abcabc", 6, []string{"abc", "bca", "cab"}},
		{"ab", 2, nil},
		{strings.Repeat("x", readPiece) + "abcdef", readPiece + 4, []string{"xxx", "xxa", "xab", "abc", "bcd"}},
		{strings.Repeat("x", wholeLimit) + "abcdef", wholeLimit + 4, []string{"xxx", "xxa", "xab", "abc", "bcd"}},
	} {
		x := newExtractor(make(chan []uint32, 1), nil)
		r := x.extract(strings.NewReader(tc.content), tc.size)
		var want []uint32
		for _, s := range tc.want {
			want = append(want, tri(s))
		}
		slices.Sort(want)
		got := slices.Sorted(slices.Values(r.trigrams))
		if r.err != nil || !slices.Equal(got, want) {
			t.Errorf("%.20q at size %d: %x, %v; want %x", tc.content, tc.size, got, r.err, want)
		}
	}
}

// A file is text to the index when it is UTF-8 without NUL, as replace
// takes it: known from its trigrams when all of it is ASCII, from its
// bytes when it was read whole (up to wholeLimit), and not known
// otherwise.
func TestExtractFlagsUTF8Text(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		text          bool
	}{
		{"empty", "", true},
		{"two bytes", "ab", true},
		{"two bytes, a NUL", "a\x00", false},
		{"one byte that is not UTF-8", "\xe9", false},
		{"two bytes of UTF-8", "é", true},
		{"three bytes", "abc", true},
		{"NUL first", "\x00bc", false},
		{"NUL in the middle", "a\x00c", false},
		{"NUL last", "ab\x00", false},
		{"a NUL past grep's sample", strings.Repeat("a", textfile.BinarySample) + "\x00", false},
		{"Latin-1", "caf\xe9 au lait", false},
		{"UTF-8", "café au lait", true},
		{"a byte-order mark", "\ufeffabc", true},
		{"a rune cut short at the end", "caf\xc3", false},
		{"every ASCII byte but NUL", asciiBytes(), true},
		{"ASCII past one read", strings.Repeat("a", readPiece+10), true},
		{"UTF-8 of one read exactly", strings.Repeat("a", readPiece-2) + "é", true},
		{"UTF-8 past one read, read whole", strings.Repeat("a", readPiece) + "é", true},
		{"Latin-1 past one read, read whole", strings.Repeat("a", readPiece) + "\xe9", false},
		{"UTF-8 at the whole limit: not known", strings.Repeat("a", wholeLimit-2) + "é", false},
		{"ASCII past the whole limit", strings.Repeat("a", wholeLimit+10), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newExtractor(make(chan []uint32, 1), nil)
			r := x.extract(strings.NewReader(tc.content), int64(len(tc.content)))
			if got := r.flags&flagText != 0; got != tc.text {
				t.Fatalf("flags %b: text %v, want %v", r.flags, got, tc.text)
			}
		})
	}
}

func asciiBytes() string {
	var b []byte
	for c := 1; c < 0x80; c++ {
		b = append(b, byte(c), byte(c), 'x')
	}
	return string(b)
}

// A build reads files of more than one piece whole into one of four
// shared buffers: with none free, a file is read in pieces, found all the
// same but not named by its content, so its copies are scanned again.
func TestWholeReadsShareFourBuffers(t *testing.T) {
	c := newClaims()
	x := newExtractor(make(chan []uint32, 1), c)
	content := strings.Repeat("a needle ", readPiece/9+1)
	var held [][]byte
	for range cap(c.whole) {
		held = append(held, <-c.whole)
	}
	r := x.extract(strings.NewReader(content), int64(len(content)))
	if r.claimed || r.repeated || len(r.trigrams) == 0 {
		t.Fatalf("with every buffer held: claimed %v, repeated %v, %d trigrams", r.claimed, r.repeated, len(r.trigrams))
	}
	c.whole <- held[0]
	if r := x.extract(strings.NewReader(content), int64(len(content))); !r.claimed {
		t.Fatal("with a buffer free, the file was not read whole")
	}
	if got := len(c.whole); got != 1 {
		t.Fatalf("%d buffers free after the whole read, want the one given back", got)
	}
}
