package index

import (
	"slices"
	"strings"
	"testing"
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
	} {
		x := newExtractor(make(chan []uint32, 1), nil)
		r := x.extract(strings.NewReader(tc.content), tc.size)
		var want []uint32
		for _, s := range tc.want {
			want = append(want, tri(s))
		}
		got := slices.Sorted(slices.Values(r.trigrams))
		if r.err != nil || !slices.Equal(got, want) {
			t.Errorf("%q at size %d: %x, %v; want %x", tc.content, tc.size, got, r.err, want)
		}
	}
}
