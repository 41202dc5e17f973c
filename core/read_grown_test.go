package core

import (
	"context"
	"testing"

	"github.com/agentfs/agentfs/memfs"
)

// Every window stops at the size its version stands for, and counts the
// lines up to it: a tail of a file appended to during the read gave the
// lines appended after the ones asked, and a window that stopped before
// the end counted them in totalLines, under the version and totalBytes
// of the shorter file.
func TestReadWindowsStopAtTheSizeTheyStand(t *testing.T) {
	tl := &Tools{FS: grownFS{memfs.New(map[string]string{"g": "1\n2\n3\n4\n5\n6\n7\n8\n"}), 10}}
	for _, tc := range []struct {
		req                    ReadRequest
		content                string
		start, end, totalLines int
	}{
		{ReadRequest{Path: "g", Offset: -2}, "4\n5\n", 4, 5, 5},
		{ReadRequest{Path: "g", Offset: 2, Limit: 2}, "2\n3\n", 2, 3, 5},
		{ReadRequest{Path: "g", Offset: 3, ByteOffset: 4, Limit: 1}, "3\n", 3, 3, 5},
	} {
		res, err := tl.Read(context.Background(), tc.req)
		if err != nil {
			t.Fatal(err)
		}
		total := -1
		if res.TotalLines != nil {
			total = *res.TotalLines
		}
		if res.Content != tc.content || res.StartLine != tc.start || res.EndLine != tc.end || total != tc.totalLines || res.TotalBytes != 10 {
			t.Errorf("%+v: %q, lines %d-%d of %d, totalBytes %d; want %q, lines %d-%d of %d",
				tc.req, res.Content, res.StartLine, res.EndLine, total, res.TotalBytes, tc.content, tc.start, tc.end, tc.totalLines)
		}
	}
}
