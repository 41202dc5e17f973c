package index

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
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

// A meta section encodes and decodes to itself; any other bytes decode to
// an error or to a meta that encodes and decodes to itself, never a panic.
func FuzzDecodeMeta(f *testing.F) {
	m := &meta{root: "/r", config: "c", racy: -5,
		copies:  []copyOf{{file: 2, of: 0}},
		dirs:    []record{{path: "", version: "v0"}, {path: "d", version: ""}},
		watched: []record{{path: "/r/.git", version: "g"}}, blocks: []uint32{1, 0xdeadbeef}}
	for i := range 100 {
		m.files = append(m.files, fileEntry{rel: fmt.Sprintf("d/f%d", i), size: int64(i), modTime: -int64(i) << 20, version: "v", flags: uint8(i)})
	}
	m.files = append(m.files, fileEntry{rel: "big", size: math.MaxInt64, modTime: math.MinInt64, version: "v"})
	enc := m.encode()
	got, err := decodeMeta(enc)
	if err != nil || !reflect.DeepEqual(got, m) {
		f.Fatalf("a meta of %d files decodes to %d files, %v", len(m.files), len(got.files), err)
	}
	if len(enc) != m.size() || cap(enc) != len(enc) {
		f.Fatalf("a meta of %d bytes (room for %d), size %d", len(enc), cap(enc), m.size())
	}
	small := &meta{root: "/r", files: m.files[:2]}
	f.Add(small.encode())
	f.Add((&meta{}).encode())
	f.Add(enc[:len(enc)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := decodeMeta(b); err == nil {
			enc := m.encode()
			if again, err := decodeMeta(enc); err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("decoded %+v, which re-encoded decodes to %+v, %v", m, again, err)
			}
			if len(enc) != m.size() {
				t.Fatalf("re-encoded in %d bytes, size %d", len(enc), m.size())
			}
		}
	})
}

// A header decodes as it was encoded, the root's device recorded or not.
func TestHeaderRoundTrip(t *testing.T) {
	for _, h := range []header{
		{length: 4096, built: 1, trigrams: 3, metaOff: headerSize, metaLen: 10, tableOff: 200, postOff: 300, postLen: 40, metaCRC: 7, rootDev: 0x0803, hasRootDev: true},
		{length: 4096, built: 2, trigrams: 3, metaOff: headerSize, metaLen: 10, tableOff: 200, postOff: 300, postLen: 40, metaCRC: 7},
		{length: 4096, metaOff: headerSize, rootDev: 0, hasRootDev: true},
	} {
		got, err := decodeHeader(h.encode(), int(h.length))
		if err != nil || got != h {
			t.Errorf("decode(encode(%+v)) = %+v, %v", h, got, err)
		}
	}
}
