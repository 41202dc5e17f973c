package core

import (
	"context"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/memfs"
	"github.com/agentfs/agentfs/textfile"
)

// TestReadBinaryAgreesWithGrep: read gives kind binary exactly for the
// files grep skips as binary, as the man page promises (a NUL in the first
// 64 KiB of text after a byte-order mark, U+0000 there in UTF-16). read
// looked at 64 KiB of bytes mark included, three short after a UTF-8 one,
// and at the magic's 3 KiB only of a UTF-16 file.
func TestReadBinaryAgreesWithGrep(t *testing.T) {
	const bom8, bom16 = "\xEF\xBB\xBF", "\xFF\xFE"
	nulAt := func(n int) string { return strings.Repeat("a", n) + "\x00\nneedle\n" }
	u16 := func(s string) string { return bom16 + string(utf16Bytes(s, false)) }
	files := map[string]string{
		// A NUL in the last bytes of the UTF-8 sample after the mark.
		"bom_in.txt":   bom8 + nulAt(textfile.BinarySample-1),
		"bom_past.txt": bom8 + nulAt(textfile.BinarySample),
		// U+0000 past the magic's 3 KiB, and past 64 KiB of the file's
		// bytes though within 64 KiB of its text.
		"u16_near.txt": u16(nulAt(5000)),
		"u16_far.txt":  u16(nulAt(40000)),
		"u16_past.txt": u16(nulAt(textfile.BinarySample)),
		// Within 64 KiB of bytes, past 64 KiB of text (three bytes of
		// UTF-8 for each unit).
		"u16_cjk.txt": u16(strings.Repeat("語", 30000) + "\x00\nneedle\n"),
	}
	ctx := context.Background()
	tl := &Tools{FS: memfs.New(files)}
	for name := range files {
		res, err := tl.Read(ctx, ReadRequest{Path: name})
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		g, err := tl.Grep(ctx, GrepRequest{Query: "needle", Path: name})
		if err != nil {
			t.Fatalf("grep %s: %v", name, err)
		}
		if grepBinary := g.BinarySkipped == 1; (res.Kind == "binary") != grepBinary {
			t.Errorf("%s: read gives kind %s, grep skips it as binary: %v", name, res.Kind, grepBinary)
		}
	}
}
