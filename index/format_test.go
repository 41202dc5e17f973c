package index

import (
	"encoding/binary"
	"testing"
)

// The meta section's reader decodes varints as encoding/binary does, and
// fails on a truncated or overlong one.
func TestMetaReaderVarints(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, 127, 128, 300, -300, 1 << 40, -1 << 40, 1<<63 - 1, -1 << 63} {
		u := binary.AppendUvarint(nil, uint64(v))
		s := binary.AppendVarint(nil, v)
		r := &metaReader{s: string(u) + string(s)}
		if gu, gs := r.uvarint(), r.varint(); r.err != nil || gu != uint64(v) || gs != v || r.s != "" {
			t.Errorf("%d: read %d and %d, %v", v, gu, gs, r.err)
		}
		r = &metaReader{s: string(u[:len(u)-1])}
		if r.uvarint(); r.err == nil {
			t.Errorf("%d: a truncated varint read", v)
		}
	}
	r := &metaReader{s: "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02"}
	if r.uvarint(); r.err == nil {
		t.Error("a varint past 64 bits read")
	}
}

// The copies are read only when each names two files of the index,
// ascending, of a file that is no copy itself.
func TestMetaReaderCopies(t *testing.T) {
	enc := func(pairs ...uint64) string {
		b := binary.AppendUvarint(nil, uint64(len(pairs)/2))
		for _, p := range pairs {
			b = binary.AppendUvarint(b, p)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name string
		s    string
		ok   bool
	}{
		{"none", enc(), true},
		{"two of one", enc(1, 0, 3, 0), true},
		{"of a later file", enc(0, 3), true},
		{"past the files", enc(1, 4), false},
		{"a file past them", enc(4, 1), false},
		{"of itself", enc(2, 2), false},
		{"not ascending", enc(3, 0, 1, 0), false},
		{"twice", enc(1, 0, 1, 2), false},
		{"of a copy", enc(1, 0, 2, 1), false},
		{"truncated", enc(1, 0)[:2], false},
	} {
		r := &metaReader{s: tc.s}
		cs := r.copies(4)
		if (r.err == nil) != tc.ok {
			t.Errorf("%s: read %v, error %v", tc.name, cs, r.err)
		}
	}
}
