package core

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// randomText is a file of a few lines of random lengths and characters
// that JSON escapes (a lone CR, characters of a surrogate pair in UTF-16),
// with random line endings, now and then one line of several bound's
// worth, in UTF-8 (with or without a byte-order mark) or UTF-16 of either
// byte order; kind names which.
func randomText(r *rand.Rand) (file, kind string) {
	pieces := []string{"x", "é", "日", "😀", "\t", "\"", "\\", "\x01", " ", "\u2028", "\r"}
	nl := []string{"\n", "\r\n", "\r\r\n"}
	var b strings.Builder
	lines := 1 + r.Intn(6)
	if r.Intn(8) == 0 {
		lines = 1
	}
	crlf := r.Intn(3) == 0
	for i := 0; i < lines; i++ {
		var n int
		switch r.Intn(4) {
		case 0:
			n = r.Intn(10)
		case 1:
			n = r.Intn(200)
		case 2:
			n = 100 + r.Intn(600)
		default:
			n = 400 + r.Intn(2000)
		}
		if r.Intn(12) == 0 {
			n = 3000 + r.Intn(6000)
		}
		for j := 0; j < n; j++ {
			if r.Intn(4) == 0 {
				b.WriteString(pieces[r.Intn(len(pieces))])
			} else {
				b.WriteByte('a')
			}
		}
		switch {
		case i == lines-1 && r.Intn(2) == 0:
		case crlf && r.Intn(5) != 0:
			b.WriteString("\r\n")
		default:
			b.WriteString(nl[r.Intn(len(nl))])
		}
	}
	s := b.String()
	kind = "utf8"
	switch r.Intn(6) {
	case 0:
		s = "\uFEFF" + s
		kind = "bom"
	case 1:
		s = "\xFF\xFE" + string(utf16Bytes(s, false))
		kind = "utf16"
	case 2:
		s = "\xFE\xFF" + string(utf16Bytes(s, true))
		kind = "utf16be"
	}
	return s, kind
}

// TestReadBoundProperty reads random files with random requests (line
// numbers, cuts, offsets from either end, byteOffset continuations,
// limits, long paths) at random bounds: every answer fits its bound; a
// TOO_LARGE names the exact size of the least answer, which one byte less
// refuses; a window that stops at a whole line before its limit could not
// hold the next; and paging rebuilds the file. READ_PROP_SEED and
// READ_PROP_ITERS explore further.
func TestReadBoundProperty(t *testing.T) {
	seed := int64(1)
	if s := os.Getenv("READ_PROP_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	iters := 300
	if s := os.Getenv("READ_PROP_ITERS"); s != "" {
		iters, _ = strconv.Atoi(s)
	}
	r := rand.New(rand.NewSource(seed))
	ctx := context.Background()
	for it := 0; it < iters; it++ {
		file, kind := randomText(r)
		name := strings.Repeat("d", r.Intn(3)*60) + "f"
		req := ReadRequest{Path: name}
		if r.Intn(2) == 0 {
			req.IncludeLineNumbers = true
		}
		switch r.Intn(6) {
		case 0:
			req.LineTruncation = LineTruncation{Chars: new(0)}
		case 1:
			req.LineTruncation = LineTruncation{Chars: new(1 + r.Intn(300))}
		case 2:
			req.LineTruncation = LineTruncation{Bytes: new(1 + r.Intn(300))}
		}
		changed := false
		switch r.Intn(7) {
		case 0:
			req.Offset = 1 + r.Intn(3)
		case 1:
			req.Offset = -1 - r.Intn(3)
		case 2:
			// Where a window of the file at a small bound stops.
			first := &Tools{FS: memfs.New(map[string]string{name: file}), MaxBytes: 512 + r.Intn(400)}
			if res, err := first.Read(ctx, ReadRequest{Path: name, LineTruncation: req.LineTruncation}); err == nil && res.Truncated {
				req.Offset, req.ByteOffset = *res.NextOffset, *res.NextByteOffset
				if r.Intn(4) == 0 {
					// The file changes before the next page: its
					// offsets may fall anywhere in the new one.
					other, _ := randomText(r)
					file, changed = other, true
				}
			}
		case 3:
			req.Offset = -1
		case 4:
			// The last line, from the start.
			big := &Tools{FS: memfs.New(map[string]string{name: file}), MaxBytes: 1 << 20}
			if res, err := big.Read(ctx, ReadRequest{Path: name, Offset: -1}); err == nil && res.TotalLines != nil {
				req.Offset = *res.TotalLines
			} else if err == nil {
				req.Offset = strings.Count(file, "\n") + 1
			}
		}
		if r.Intn(3) == 0 {
			req.Limit = 1 + r.Intn(3)
		}
		for mb := 400 + r.Intn(40); mb <= 3200; mb += 1 + r.Intn(90) {
			tl := &Tools{FS: memfs.New(map[string]string{name: file}), MaxBytes: mb}
			desc := fmt.Sprintf("it %d %s file %q req %+v mb %d", it, kind, file, req, mb)
			res, err := tl.Read(ctx, req)
			e := fault.AsError(err)
			switch {
			case err == nil:
				if n := jsonSize(res); n > mb {
					t.Fatalf("%s: answer %d bytes", desc, n)
				}
				// maximality: a window that ends at a whole line before the
				// limit, with one more line, is over the bound.
				if res.Truncated && *res.NextOffset == res.EndLine+1 && (req.Limit == 0 || res.EndLine-res.StartLine+1 < req.Limit) && req.ByteOffset == 0 && req.Offset >= 0 {
					more := req
					more.Limit = res.EndLine - res.StartLine + 2
					big := &Tools{FS: tl.FS, MaxBytes: 1 << 20}
					if m, err := big.Read(ctx, more); err == nil && m.EndLine == res.EndLine+1 && (!m.Truncated || *m.NextOffset == m.EndLine+1) && jsonSize(m)+8 <= mb {
						t.Fatalf("%s: window ends at line %d (%d bytes) but %d lines make %d bytes", desc, res.EndLine, jsonSize(res), more.Limit, jsonSize(m))
					}
				}
			case e != nil && e.Code == fault.CodeInvalidArgument:
			case e != nil && e.Code == fault.CodeNotText && changed:
			case e != nil && e.Code == fault.CodeTooLarge:
				needed, _ := e.Details["needed"].(int)
				if needed <= mb {
					t.Fatalf("%s: %v", desc, err)
				}
				tl.MaxBytes = needed
				at, err := tl.Read(ctx, req)
				if err != nil || jsonSize(at) != needed {
					sz := -1
					if at != nil {
						sz = jsonSize(at)
					}
					t.Fatalf("%s: needs %d, at it: %v size %d", desc, needed, err, sz)
				}
				tl.MaxBytes = needed - 1
				if _, err := tl.Read(ctx, req); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeTooLarge {
					t.Fatalf("%s: needs %d, at one less: %v", desc, needed, err)
				}
			default:
				t.Fatalf("%s: %v", desc, err)
			}
		}
		if !changed && req.Offset <= 1 && req.ByteOffset == 0 && !req.IncludeLineNumbers {
			for _, mb := range []int{512, 700, 1500} {
				tl := &Tools{FS: memfs.New(map[string]string{name: file}), MaxBytes: mb}
				if got, _ := pageToEnd(t, tl, name, req.Limit, ""); string(got) != file {
					t.Fatalf("it %d: %s at %d rebuilt %q want %q", it, kind, mb, got, file)
				}
			}
		}
	}
}
