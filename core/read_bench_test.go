package core

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/memfs"
)

// BenchmarkRead compares the first window of a file just over 64 MiB (too
// large for its lines to be counted) with a window near its end reached by
// byteOffset and with its last 2000 lines (offset -2000): all three should
// cost about the same.
func BenchmarkRead(b *testing.B) {
	var sb strings.Builder
	lines := 0
	for sb.Len() < 64<<20 {
		fmt.Fprintf(&sb, "%08d\tfunc read(ctx context.Context, path string) ([]byte, error) // %d\n", lines, lines%97)
		lines++
	}
	file := sb.String()
	start := lines - 3000
	at := 0
	for range start - 1 {
		at += strings.IndexByte(file[at:], '\n') + 1
	}
	tl := &Tools{FS: memfs.New(map[string]string{"big": file})}
	for _, bc := range []struct {
		name string
		req  ReadRequest
	}{
		{"FirstWindow", ReadRequest{Path: "big"}},
		{"NearEndByteOffset", ReadRequest{Path: "big", Offset: start, ByteOffset: int64(at)}},
		{"LastLines", ReadRequest{Path: "big", Offset: -ReadMaxLines}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				res, err := tl.Read(context.Background(), bc.req)
				if err != nil || res.EndLine-res.StartLine+1 != ReadMaxLines {
					b.Fatalf("%+v: %v", res, err)
				}
			}
		})
	}
}
