package core

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// TestReadOneLineAnswerExact: a read is refused only when its least answer
// (the first line whole, or the least piece of a long one) is over the
// bound, and TOO_LARGE names that answer's real size: read at that bound,
// the answer is that size, and one byte under it is refused again. Each
// answer fits its bound, and paging at each bound rebuilds the file.
func TestReadOneLineAnswerExact(t *testing.T) {
	u16 := func(s string, bigEndian bool) string {
		if bigEndian {
			return "\xFE\xFF" + string(utf16Bytes(s, true))
		}
		return "\xFF\xFE" + string(utf16Bytes(s, false))
	}
	variants := []struct {
		name     string
		make     func(line string) string
		rebuilds bool // content (and its encoding) gives the bytes back
	}{
		{"lf", func(l string) string { return l + "\nb\n" }, true},
		{"only line", func(l string) string { return l + "\n" }, true},
		{"no final newline", func(l string) string { return l }, true},
		{"crlf", func(l string) string { return l + "\r\nb\r\n" }, true},
		{"cr cr lf", func(l string) string { return l + "\r\r\nb\r\n" }, true},
		{"mixed", func(l string) string { return l + "\r\nb\n" }, true},
		{"bom", func(l string) string { return "\uFEFF" + l + "\nb\n" }, true},
		{"utf-16le crlf", func(l string) string { return u16(l+"\r\nb\r\n", false) }, true},
		{"utf-16be", func(l string) string { return u16(l+"\nb\n", true) }, false}, // pageFrom writes no UTF-16BE mark
		{"control chars", func(l string) string { return strings.ReplaceAll(l, "x", "\x01") + "\nb\n" }, true},
		{"quotes and é", func(l string) string { return strings.ReplaceAll(l, "x", "é\"") + "\nb\n" }, true},
		{"u+2028 and tabs", func(l string) string { return strings.Replace(l, "x", "\u2028\t", 3) + "\nb\n" }, true},
		{"many lines", func(l string) string { return strings.Repeat(l+"\n", 30) }, true},
	}
	lengths := []int{1, 60, 140, 170, 200, 260, 330, 420, 505, 511, 512, 513, 530, 700, 1500, 3000}
	ctx := context.Background()
	for _, v := range variants {
		for _, n := range lengths {
			file := v.make(strings.Repeat("x", n))
			for _, req := range []ReadRequest{
				{Path: "f", LineTruncation: LineTruncation{Chars: new(0)}},
				{Path: "f", LineTruncation: LineTruncation{Chars: new(0)}, IncludeLineNumbers: true},
				{Path: "f", LineTruncation: LineTruncation{Chars: new(0)}, Offset: 2},
				{Path: "f", Limit: 1},
				{Path: "f", Offset: -1},
			} {
				name := fmt.Sprintf("%s, line of %d, %+v", v.name, n, req)
				var least *ReadResult
				for mb := 512; mb <= 1400; mb += 17 {
					tl := &Tools{FS: memfs.New(map[string]string{"f": file}), MaxBytes: mb}
					res, err := tl.Read(ctx, req)
					e := fault.AsError(err)
					switch {
					case err == nil:
						if size := jsonSize(res); size > mb {
							t.Fatalf("%s at %d: %d bytes", name, mb, size)
						}
						if least != nil && jsonSize(least) <= mb {
							continue
						}
						if least != nil {
							t.Fatalf("%s: answered at %d, under the %d bytes named", name, mb, jsonSize(least))
						}
					case e != nil && e.Code == fault.CodeInvalidArgument && req.Offset == 2 && strings.Count(file, "\n") < 2:
						// A file of one line has no line 2.
					case e != nil && e.Code == fault.CodeTooLarge:
						needed, _ := e.Details["needed"].(int)
						if _, line := e.Details["line"]; needed <= mb || !line {
							t.Fatalf("%s at %d: %v", name, mb, err)
						}
						tl.MaxBytes = needed
						at, err := tl.Read(ctx, req)
						if err != nil || jsonSize(at) != needed {
							t.Fatalf("%s at %d: needs %d, but at it: %v", name, mb, needed, err)
						}
						tl.MaxBytes = needed - 1
						if _, err := tl.Read(ctx, req); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeTooLarge {
							t.Fatalf("%s: needs %d, but at one byte less: %v", name, needed, err)
						}
						least = at
					default:
						t.Fatalf("%s at %d: %v", name, mb, err)
					}
				}
			}
			if !v.rebuilds {
				continue
			}
			for _, mb := range []int{512, 600, 777, 1024} {
				tl := &Tools{FS: memfs.New(map[string]string{"f": file}), MaxBytes: mb}
				if got, _ := pageToEnd(t, tl, "f", 0, ""); !bytes.Equal(got, []byte(file)) {
					t.Fatalf("%s, line of %d at %d: rebuilt %q", v.name, n, mb, got)
				}
			}
		}
	}
}

// readAtFS counts the bytes its files serve by ReadAt.
type readAtFS struct {
	*memfs.FS
	readAt *int64
}

func (f readAtFS) Open(ctx context.Context, p string) (backend.FileReader, error) {
	r, err := f.FS.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	return &readAtReader{r, f.readAt}, nil
}

type readAtReader struct {
	backend.FileReader
	readAt *int64
}

func (r *readAtReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.FileReader.ReadAt(p, off)
	*r.readAt += int64(n)
	return n, err
}

// TestReadWindowCountsInTheStream: a window from the file's start that the
// bound cuts counts the file's lines in the stream it reads the window
// from, once. Sizing its last line counted them again by ReadAt, on an
// object store a GET for each 256 KiB of the rest of the file.
func TestReadWindowCountsInTheStream(t *testing.T) {
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", i%90))
	}
	for _, mb := range []int{4096, 20000, 100000} {
		var readAt int64
		tl := &Tools{FS: readAtFS{memfs.New(map[string]string{"f": b.String()}), &readAt}, MaxBytes: mb}
		res, err := tl.Read(context.Background(), ReadRequest{Path: "f"})
		if err != nil || !res.Truncated || res.TotalLines == nil || *res.TotalLines != 20000 || jsonSize(res) > mb {
			t.Fatalf("at %d: %+v, %v", mb, res, err)
		}
		if readAt != 0 {
			t.Errorf("at %d: %d bytes read by ReadAt, want none", mb, readAt)
		}
	}
}

// TestReadWindowToTheEnd: a tail or byteOffset window gives no sha256, so
// through the end of the file, naming no nextOffset and nextByteOffset, it
// can be smaller than its first line alone with them. It is the answer at
// its size, and under it TOO_LARGE names that size, here the least answer
// (its first line is too short to come in parts, or its least part with
// a continuation is larger). It was TOO_LARGE up to the size of the first
// line with a continuation, and then gave the smaller window.
func TestReadWindowToTheEnd(t *testing.T) {
	x := strings.Repeat("x", 330)
	ctx := context.Background()
	for _, c := range []struct {
		name, file string
		req        ReadRequest
	}{
		{"tail", "a\n" + x + "\nb\n", ReadRequest{Offset: -2}},
		{"tail, no final newline", "a\n" + x + "\nb", ReadRequest{Offset: -2}},
		{"tail, crlf", "a\r\n" + x + "\r\nb\r\n", ReadRequest{Offset: -2}},
		{"tail, numbered", "a\n" + x + "\nb\n", ReadRequest{Offset: -2, IncludeLineNumbers: true}},
		{"tail of three lines", "a\n" + x + "\nb\nc\n", ReadRequest{Offset: -3}},
		{"byte offset", "a\n" + x + "\nb\n", ReadRequest{Offset: 2, ByteOffset: 2}},
		{"utf-16, under minPiece bytes", "\xff\xfea\x00\n\x00" + strings.Repeat("x\x00", 250) + "\n\x00b\x00", ReadRequest{Offset: -2}},
		// At --max-bytes 400 the line is read only in part.
		{"line over minPiece", "a\n" + strings.Repeat("x", 530) + "\nb\n", ReadRequest{Offset: -2, LineTruncation: LineTruncation{Chars: new(0)}}},
		// Read in part under the default cut of 2000 characters, it
		// was taken as cut there, a line with a marker, and sized so.
		{"last line over minPiece", "a\n" + strings.Repeat("x", 530), ReadRequest{Offset: -1}},
	} {
		c.req.Path = "f"
		tl := &Tools{FS: memfs.New(map[string]string{"f": c.file}), MaxBytes: 1 << 20}
		whole, err := tl.Read(ctx, c.req)
		if err != nil || whole.Truncated {
			t.Fatalf("%s: %+v, %v", c.name, whole, err)
		}
		size := jsonSize(whole)
		tl.MaxBytes = size
		if res, err := tl.Read(ctx, c.req); err != nil || res.Truncated || jsonSize(res) != size {
			t.Errorf("%s at %d: %+v, %v", c.name, size, res, err)
		}
		for _, mb := range []int{400, size - 1} {
			tl.MaxBytes = mb
			_, err := tl.Read(ctx, c.req)
			if e := fault.AsError(err); e == nil || e.Code != fault.CodeTooLarge || e.Details["needed"] != size {
				t.Errorf("%s at %d: %v, want TOO_LARGE needing %d", c.name, mb, err, size)
			}
		}
	}
}

// TestReadWindowToTheEndStopsBeforeACutLine: a byteOffset window whose
// first line fits only without a continuation sizes the window through
// the end of the file, and the line after it, which lineTruncation cuts,
// is read to its end for its marker only when its cut with the least
// marker may fit: a piece of the first line read the whole of a long last
// line (a 200 MB one: 200 MB, on an object store some 800 GETs) to find
// that the window through it was over the bound. This file is counted
// (it is under ReadCountMaxBytes), which reads its rest once; the sizing
// read it a second time, and the count read again, by ReadAt, the 64 KiB
// the stream held. Only the few bytes the window through the end reads
// past the stream's are read twice.
func TestReadWindowToTheEndStopsBeforeACutLine(t *testing.T) {
	file := "h\n" + strings.Repeat("a", 1500) + "\n" + strings.Repeat("x", 4<<20) + "\n"
	pieces := 0
	for mb := 1600; mb <= 1800; mb += 4 {
		var readAt int64
		tl := &Tools{FS: readAtFS{memfs.New(map[string]string{"f": file}), &readAt}, MaxBytes: mb}
		res, err := tl.Read(context.Background(), ReadRequest{Path: "f", Offset: 2, ByteOffset: 2})
		if err != nil || jsonSize(res) > mb {
			t.Fatalf("at %d: %+v, %v", mb, res, err)
		}
		if res.EndLine != 2 || !res.Truncated || *res.NextOffset != 2 {
			continue // not a piece of line 2
		}
		pieces++
		if readAt > int64(len(file))+4096 {
			t.Errorf("at %d: a piece of line 2 read %d bytes by ReadAt, the file is %d", mb, readAt, len(file))
		}
	}
	if pieces == 0 {
		t.Fatal("no bound gave a piece of line 2")
	}
}
