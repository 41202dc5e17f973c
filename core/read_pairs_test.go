package core

import (
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// TestReadEveryNextPairAccepted pages through small files of every shape
// a line count and a byte offset can disagree on (UTF-16 with and without
// a mark, CRLF, a UTF-8 mark, empty lines, lines longer than a window,
// lines cut by lineTruncation, a file of one newline), with every window
// size and a range of bounds, and checks that each nextOffset and
// nextByteOffset a read returns is accepted by the read after it.
func TestReadEveryNextPairAccepted(t *testing.T) {
	u16 := func(bom bool, s string) string {
		if bom {
			return "\xFF\xFE" + string(utf16Bytes(s, false))
		}
		return string(utf16Bytes(s, false))
	}
	long := strings.Repeat("é", 700)
	files := map[string]string{
		"lf":        "a\nbb\n\n\nccc\n",
		"crlf":      "a\r\n\r\n\r\nb\r\n",
		"bom":       "\xEF\xBB\xBF\n\n\nx\n",
		"bom nl":    "\xEF\xBB\xBF\n\n",
		"newlines":  "\n\n\n\n\n\n",
		"long":      "x\n" + long + "\n\n" + long + long + "\n\ny",
		"long crlf": long + "\r\n\r\n" + long + "\r\n",
		"u16 bom":   u16(true, "a\r\n\n\n"+long+"\nb"),
		"u16":       u16(false, "\n\n"+long+"\r\n\r\nz\n"),
		"u16 nl":    u16(true, "\n\n\n"),
	}
	pairs := map[string]int{}
	for name, file := range files {
		for _, mb := range []int{0, 400, 700, 1500, 3000} {
			tl := &Tools{FS: memfs.New(map[string]string{"f": file}), MaxBytes: mb}
			for limit := 0; limit <= 8; limit++ {
				for _, lt := range []LineTruncation{{}, {Chars: new(0)}, {Chars: new(3)}, {Bytes: new(5)}} {
					for _, from := range []int{0, -1, -2, -5} {
						req := ReadRequest{Path: "f", Offset: from, Limit: limit, LineTruncation: lt}
						if strings.HasPrefix(name, "u16") {
							req.Encoding = "utf-16le"
						}
						for calls := 0; calls < 10000; calls++ {
							res, err := readFitting(t, tl, req)
							if err != nil {
								if c := codeOf(err); c == fault.CodeTooLarge {
									break
								}
								t.Fatalf("%s maxBytes %d: read %+v: %v", name, mb, req, err)
							}
							if res.TextWindow == nil || !res.Truncated {
								break
							}
							req.Offset, req.ByteOffset = *res.NextOffset, *res.NextByteOffset
							pairs[name]++
						}
					}
				}
			}
		}
		if pairs[name] < 20 {
			t.Errorf("%s: %d continuations read, too few to tell", name, pairs[name])
		}
	}
}
