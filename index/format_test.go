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
