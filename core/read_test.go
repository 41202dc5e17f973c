package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
	"github.com/agentfs/agentfs/textfile"
	"golang.org/x/text/encoding/htmlindex"
)

func codeOf(err error) fault.Code {
	var e *fault.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestReadTable(t *testing.T) {
	utf16le := func(s string, bom bool) string {
		if bom {
			return "\xFF\xFE" + string(utf16Bytes(s, false))
		}
		return string(utf16Bytes(s, false))
	}
	utf16be := func(s string) string { return "\xFE\xFF" + string(utf16Bytes(s, true)) }
	tests := []struct {
		name, file string
		req        ReadRequest
		content    string
		ending     string
		bom        bool
		encoding   string
		total      int // -1: null
		next       int // 0: none
		cut        int
		noSum      bool // the whole file was seen, but not from the start
		err        fault.Code
	}{
		{name: "empty", file: "", content: "", ending: "none", encoding: "utf-8"},
		{name: "lf", file: "a\nb\n", content: "a\nb\n", ending: "lf", encoding: "utf-8", total: 2},
		{name: "no final newline", file: "a\nb", content: "a\nb", ending: "lf", encoding: "utf-8", total: 2},
		{name: "crlf", file: "a\r\nb\r\n", content: "a\nb\n", ending: "crlf", encoding: "utf-8", total: 2},
		{name: "mixed keeps CR", file: "a\r\nb\n", content: "a\r\nb\n", ending: "mixed", encoding: "utf-8", total: 2},
		{name: "lone CR is content", file: "a\rb\n", content: "a\rb\n", ending: "lf", encoding: "utf-8", total: 1},
		// Without its endings' CR, the CR before them read as a CRLF,
		// and write dropped it.
		{name: "CR before CRLF keeps the endings", file: "a\r\r\nb\r\n", content: "a\r\r\nb\r\n", ending: "mixed", encoding: "utf-8", total: 2},
		{name: "one line no newline", file: "x", content: "x", ending: "none", encoding: "utf-8", total: 1},
		{name: "utf-8 bom", file: "\xEF\xBB\xBFhé\n", content: "hé\n", ending: "lf", bom: true, encoding: "utf-8", total: 1},
		{name: "utf-16le bom", file: utf16le("hé 😀\r\nx\r\n", true), content: "hé 😀\nx\n", ending: "crlf", bom: true, encoding: "utf-16le", total: 2},
		{name: "utf-16be bom", file: utf16be("a\nb"), content: "a\nb", ending: "lf", bom: true, encoding: "utf-16be", total: 2},
		{name: "utf-16le named", file: utf16le("a\nb\n", false), req: ReadRequest{Encoding: "utf-16le"}, content: "a\nb\n", ending: "lf", encoding: "utf-16le", total: 2},
		{name: "latin1", file: "caf\xe9\n", req: ReadRequest{Encoding: "latin1"}, content: "café\n", ending: "lf", encoding: "windows-1252", total: 1},
		{name: "shift_jis", file: "\x93\xfa\x96\x7b\n", req: ReadRequest{Encoding: "shift_jis"}, content: "日本\n", ending: "lf", encoding: "shift_jis", total: 1},
		{name: "offset", file: "a\nb\nc\n", req: ReadRequest{Offset: 2}, content: "b\nc\n", ending: "lf", encoding: "utf-8", total: 3},
		{name: "limit", file: "a\nb\nc\n", req: ReadRequest{Limit: 2}, content: "a\nb\n", ending: "lf", encoding: "utf-8", total: 3, next: 3},
		{name: "limit mid-line", file: "a\n" + strings.Repeat("b", 3000) + "\nc", req: ReadRequest{Limit: 2, LineTruncation: LineTruncation{Chars: new(0)}}, content: "a\n" + strings.Repeat("b", 3000) + "\n", ending: "lf", encoding: "utf-8", total: 3, next: 3},
		{name: "limit utf-16 counted", file: utf16le("a\r\n\u0a0a\u010a\r\nc", true), req: ReadRequest{Limit: 1}, content: "a\n", ending: "crlf", bom: true, encoding: "utf-16le", total: 3, next: 2},
		{name: "tail", file: "a\nb\nc\n", req: ReadRequest{Offset: -2}, content: "b\nc\n", ending: "lf", encoding: "utf-8", total: 3, noSum: true},
		{name: "tail whole", file: "a\nb\nc\n", req: ReadRequest{Offset: -3}, content: "a\nb\nc\n", ending: "lf", encoding: "utf-8", total: 3},
		{name: "tail more than the file", file: "a\nb", req: ReadRequest{Offset: -30}, content: "a\nb", ending: "lf", encoding: "utf-8", total: 2},
		{name: "tail no final newline", file: "a\nb\nc", req: ReadRequest{Offset: -1}, content: "c", ending: "none", encoding: "utf-8", total: 3, noSum: true},
		{name: "tail empty last line", file: "a\n\n", req: ReadRequest{Offset: -1}, content: "\n", ending: "lf", encoding: "utf-8", total: 2, noSum: true},
		{name: "tail lone newline", file: "\n", req: ReadRequest{Offset: -1}, content: "\n", ending: "lf", encoding: "utf-8", total: 1},
		{name: "tail empty", file: "", req: ReadRequest{Offset: -1}, content: "", ending: "none", encoding: "utf-8"},
		{name: "tail bom only", file: "\xEF\xBB\xBF", req: ReadRequest{Offset: -1}, content: "", ending: "none", bom: true, encoding: "utf-8"},
		{name: "tail crlf bom", file: "\xEF\xBB\xBFa\r\nb\r\n", req: ReadRequest{Offset: -1}, content: "b\n", ending: "crlf", bom: true, encoding: "utf-8", total: 2, noSum: true},
		{name: "tail bom reaches line 1", file: "\xEF\xBB\xBFa\r\nb\r\n", req: ReadRequest{Offset: -2}, content: "a\nb\n", ending: "crlf", bom: true, encoding: "utf-8", total: 2},
		{name: "tail limit", file: "a\nb\nc\nd\n", req: ReadRequest{Offset: -3, Limit: 1}, content: "b\n", ending: "lf", encoding: "utf-8", total: 4, next: 3},
		{name: "tail line numbers", file: "a\nb\nc\n", req: ReadRequest{Offset: -1, IncludeLineNumbers: true}, content: "3\tc\n", ending: "lf", encoding: "utf-8", total: 3, noSum: true},
		{name: "tail cut", file: "a\n" + strings.Repeat("é", 2001) + "\n", req: ReadRequest{Offset: -1}, content: strings.Repeat("é", 2000) + " …[line cut: 4002 bytes in all]\n", ending: "lf", encoding: "utf-8", total: 2, cut: 1, noSum: true},
		{name: "tail utf-16le", file: utf16le("a\r\n\u0a0a\u010a\r\nc\r\n", true), req: ReadRequest{Offset: -2}, content: "\u0a0a\u010a\nc\n", ending: "crlf", bom: true, encoding: "utf-16le", total: 3, noSum: true},
		{name: "tail utf-16le odd end", file: utf16le("a\nb", true) + "\n", req: ReadRequest{Offset: -1, Encoding: "utf-16le"}, content: "", ending: "", bom: true, encoding: "utf-16le", err: fault.CodeNotText},
		{name: "tail utf-16be", file: utf16be("a\n\u0a0a\nc"), req: ReadRequest{Offset: -2}, content: "\u0a0a\nc", ending: "lf", bom: true, encoding: "utf-16be", total: 3, noSum: true},
		{name: "tail shift_jis", file: "\x93\xfa\n\x96\x7b\n", req: ReadRequest{Offset: -1, Encoding: "shift_jis"}, content: "本\n", ending: "lf", encoding: "shift_jis", total: 2, noSum: true},
		{name: "limit at end", file: "a\nb\n", req: ReadRequest{Limit: 2}, content: "a\nb\n", ending: "lf", encoding: "utf-8", total: 2},
		{name: "line numbers", file: "a\nb\n", req: ReadRequest{IncludeLineNumbers: true, Offset: 2}, content: "2\tb\n", ending: "lf", encoding: "utf-8", total: 2},
		{name: "truncate bytes", file: "héllo\nok\n", req: ReadRequest{LineTruncation: LineTruncation{Bytes: new(2)}}, content: "h …[line cut: 6 bytes in all]\nok\n", ending: "lf", encoding: "utf-8", total: 2, cut: 1},
		{name: "truncate chars", file: "héllo\r\n", req: ReadRequest{LineTruncation: LineTruncation{Chars: new(2)}}, content: "hé …[line cut: 6 bytes in all]\n", ending: "crlf", encoding: "utf-8", total: 1, cut: 1},
		{name: "truncate chars:0 whole", file: strings.Repeat("é", 2500) + "\n", req: ReadRequest{LineTruncation: LineTruncation{Chars: new(0)}}, content: strings.Repeat("é", 2500) + "\n", ending: "lf", encoding: "utf-8", total: 1},
		{name: "truncate bytes:0 whole", file: strings.Repeat("x", 2500), req: ReadRequest{LineTruncation: LineTruncation{Bytes: new(0)}}, content: strings.Repeat("x", 2500), ending: "none", encoding: "utf-8", total: 1},
		{name: "default cut at 2000 chars", file: strings.Repeat("é", 2001) + "\r\nb\r\n", content: strings.Repeat("é", 2000) + " …[line cut: 4002 bytes in all]\nb\n", ending: "crlf", encoding: "utf-8", total: 2, cut: 1},
		{name: "default keeps 2000 chars", file: strings.Repeat("😀", 2000) + "\n", content: strings.Repeat("😀", 2000) + "\n", ending: "lf", encoding: "utf-8", total: 1},
		{name: "default cut utf-16", file: utf16le(strings.Repeat("😀", 2001)+"\n", true), content: strings.Repeat("😀", 2000) + " …[line cut: 8004 bytes in all]\n", ending: "lf", bom: true, encoding: "utf-16le", total: 1, cut: 1},
		{name: "default cut shift_jis", file: strings.Repeat("\x93\xfa", 2001), req: ReadRequest{Encoding: "shift_jis"}, content: strings.Repeat("日", 2000) + " …[line cut: 4002 bytes in all]", ending: "none", encoding: "shift_jis", total: 1, cut: 1},
		{name: "line numbers of each line", file: "a\nb\nc\n", req: ReadRequest{IncludeLineNumbers: true}, content: "1\ta\n2\tb\n3\tc\n", ending: "lf", encoding: "utf-8", total: 3},
		{name: "utf-16be empty line", file: utf16be("a\n\nb"), content: "a\n\nb", ending: "lf", bom: true, encoding: "utf-16be", total: 3},
		{name: "default cut utf-16 crlf", file: utf16le(strings.Repeat("😀", 2001)+"\r\n", true), content: strings.Repeat("😀", 2000) + " …[line cut: 8004 bytes in all]\n", ending: "crlf", bom: true, encoding: "utf-16le", total: 1, cut: 1},
		{name: "cut crlf line read in part", file: strings.Repeat("x", 100) + "\r\nb\r\n", req: ReadRequest{LineTruncation: LineTruncation{Chars: new(2)}}, content: "xx …[line cut: 100 bytes in all]\nb\n", ending: "crlf", encoding: "utf-8", total: 2, cut: 1},
		{name: "cut utf-16 crlf line read in part", file: utf16le(strings.Repeat("x", 100)+"\r\nb\r\n", true), req: ReadRequest{LineTruncation: LineTruncation{Chars: new(2)}}, content: "xx …[line cut: 200 bytes in all]\nb\n", ending: "crlf", bom: true, encoding: "utf-16le", total: 2, cut: 1},
		{name: "svg is text", file: "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n", content: "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n", ending: "lf", encoding: "utf-8", total: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "f.txt"
			if tc.name == "svg is text" {
				name = "f.svg"
			}
			tl := &Tools{FS: memfs.New(map[string]string{name: tc.file})}
			tc.req.Path = name
			res, err := tl.Read(context.Background(), tc.req)
			if codeOf(err) != tc.err {
				t.Fatalf("got %v, want %s", err, tc.err)
			}
			if err != nil {
				return
			}
			if res.TotalBytes != int64(len(tc.file)) {
				t.Errorf("totalBytes = %d, want %d", res.TotalBytes, len(tc.file))
			}
			if res.Kind != "text" || res.Content != tc.content || res.LineEnding != tc.ending || res.BOM != tc.bom || res.Encoding != tc.encoding {
				t.Errorf("got kind %s content %q ending %s bom %v encoding %s", res.Kind, res.Content, res.LineEnding, res.BOM, res.Encoding)
			}
			switch {
			case tc.total < 0 && res.TotalLines != nil:
				t.Errorf("totalLines = %d, want null", *res.TotalLines)
			case tc.total >= 0 && (res.TotalLines == nil || *res.TotalLines != tc.total):
				t.Errorf("totalLines = %v, want %d", res.TotalLines, tc.total)
			}
			if (tc.next == 0) != (res.NextOffset == nil) || tc.next != 0 && *res.NextOffset != tc.next {
				t.Errorf("nextOffset = %v, want %d", res.NextOffset, tc.next)
			}
			if res.LinesCut != tc.cut {
				t.Errorf("linesCut = %d, want %d", res.LinesCut, tc.cut)
			}
			if res.Version == "" {
				t.Error("no version")
			}
			wantSum := tc.next == 0 && !tc.noSum // every byte was seen, from the start
			if wantSum != (res.Sha256 != "") {
				t.Errorf("sha256 = %q, want it %v", res.Sha256, wantSum)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	long := strings.Repeat("x", 2000) + "\n"
	fsys := memfs.New(map[string]string{
		"a.txt":     "one\ntwo\nthree\n",
		"long.txt":  long + long,
		"latin.txt": "caf\xe9\n",
		"late.txt":  strings.Repeat("ok\n", 2000) + "caf\xe9\n",
		"dir/x":     "x",
		"crlf.txt":  "ab\r\ncd\r\n",
		"bom.txt":   "\xEF\xBB\xBFab\ncd\n",
		"utf8.txt":  "\u00e9\n\u00e9\u00e9\n",
		"u16.txt":   "\xFF\xFEa\x00\n\x00b\x00\n\x00",
		"big.png":   "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", ReadMaxMediaBytes),
	})
	tl := &Tools{FS: fsys}
	tests := []struct {
		req  ReadRequest
		code fault.Code
		msg  string
	}{
		{ReadRequest{Path: ""}, fault.CodeInvalidArgument, "path is required"},
		{ReadRequest{Path: "a.txt", Limit: -1}, fault.CodeInvalidArgument, "limit"},
		{ReadRequest{Path: "a.txt", ByteOffset: 4}, fault.CodeInvalidArgument, "without offset"},
		{ReadRequest{Path: "a.txt", Offset: 5}, fault.CodeInvalidArgument, "has 3 line(s)"},
		{ReadRequest{Path: "a.txt", Offset: 4}, fault.CodeInvalidArgument, "has 3 line(s)"},
		{ReadRequest{Path: "a.txt", Offset: 2, ByteOffset: 5}, fault.CodeInvalidArgument, "not the start of a line"},
		{ReadRequest{Path: "a.txt", Offset: 2, ByteOffset: 14}, fault.CodeInvalidArgument, "past the end"},
		{ReadRequest{Path: "a.txt", Offset: 2, ByteOffset: 99}, fault.CodeInvalidArgument, "past the end"},
		{ReadRequest{Path: "long.txt", Offset: 2, ByteOffset: 2101}, fault.CodeInvalidArgument, "line starts in the bytes before"},
		{ReadRequest{Path: "long.txt", Offset: 2, ByteOffset: 2003}, fault.CodeInvalidArgument, "line starts in the bytes before"},
		// A byteOffset that splits a CRLF, lands in the BOM, in a UTF-8
		// character or in a UTF-16 unit is refused, never read from.
		{ReadRequest{Path: "crlf.txt", Offset: 2, ByteOffset: 3}, fault.CodeInvalidArgument, "not the start of a line"},
		{ReadRequest{Path: "bom.txt", Offset: 1, ByteOffset: 1}, fault.CodeInvalidArgument, "byte-order mark"},
		{ReadRequest{Path: "bom.txt", Offset: 1, ByteOffset: 2}, fault.CodeInvalidArgument, "byte-order mark"},
		{ReadRequest{Path: "utf8.txt", Offset: 2, ByteOffset: 4}, fault.CodeInvalidArgument, "not the start of a line"},
		{ReadRequest{Path: "u16.txt", Offset: 2, ByteOffset: 7}, fault.CodeInvalidArgument, "inside a character"},
		// Lines numbered from the end are a file's over 64 MiB only: on a
		// smaller one the window was numbered -2 to -1 with nextOffset 0.
		{ReadRequest{Path: "a.txt", Offset: -2, ByteOffset: 4}, fault.CodeInvalidArgument, "numbered from the start"},
		{ReadRequest{Path: "a.txt", Encoding: "klingon"}, fault.CodeInvalidArgument, "unknown encoding"},
		{ReadRequest{Path: "latin.txt"}, fault.CodeNotText, "not UTF-8"},
		{ReadRequest{Path: "late.txt", Offset: 1990}, fault.CodeNotText, "line 2001"},
		{ReadRequest{Path: "a.txx"}, fault.CodeNotFound, ""},
		{ReadRequest{Path: "dir"}, fault.CodeNotAFile, ""},
		{ReadRequest{Path: "big.png"}, fault.CodeTooLarge, "3.5 MiB"},
	}
	for _, tc := range tests {
		_, err := tl.Read(context.Background(), tc.req)
		if codeOf(err) != tc.code || !strings.Contains(fmt.Sprint(err), tc.msg) {
			t.Errorf("%+v: got %v, want %s containing %q", tc.req, err, tc.code, tc.msg)
		}
	}
	_, err := tl.Read(context.Background(), ReadRequest{Path: "a.txx"})
	if e := fault.AsError(err); len(e.Suggestions) != 1 || e.Suggestions[0] != "a.txt" {
		t.Errorf("suggestions = %v, want [a.txt]", e.Suggestions)
	}
}

func TestReadMedia(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + strings.Repeat("\x00", 20)
	fsys := memfs.New(map[string]string{
		"a.png":   png,
		"noext":   png,
		"doc.pdf": "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n",
		"blob":    "\x7fELF\x02\x01\x01\x00\x00\x00\x00",
		"nul.dat": "abc\x00def",
		// A NUL past the magic's 3 KiB, within grep's 64 KiB: binary, as
		// grep, replace and edit take it (read called it text). Past 64
		// KiB it is text to all of them.
		"late.txt":  strings.Repeat("a", 5000) + "\x00\nneedle\n",
		"later.txt": strings.Repeat("a", 70000) + "\x00\nneedle\n",
	})
	tl := &Tools{FS: fsys}
	for _, tc := range []struct{ path, kind, mime string }{
		{"a.png", "image", "image/png"},
		{"noext", "image", "image/png"},
		{"doc.pdf", "pdf", "application/pdf"},
		{"blob", "binary", "application/x-elf"},
		{"nul.dat", "binary", "application/octet-stream"},
		{"late.txt", "binary", "application/octet-stream"},
	} {
		res, err := tl.Read(context.Background(), ReadRequest{Path: tc.path})
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if res.Kind != tc.kind || res.Media == nil || res.MimeType != tc.mime || res.TextWindow != nil {
			t.Fatalf("%s: got %+v", tc.path, res)
		}
		if res.Size != int64(len(fileText(fsys, tc.path))) {
			t.Errorf("%s: size %d", tc.path, res.Size)
		}
		if (tc.kind != "binary") != (res.Data != "" && res.Sha256 != "") {
			t.Errorf("%s: data %q sha256 %q", tc.path, res.Data, res.Sha256)
		}
	}
	for _, req := range []ReadRequest{{Path: "later.txt"}, {Path: "later.txt", Offset: -1}} {
		if res, err := tl.Read(context.Background(), req); err != nil || res.Kind != "text" {
			t.Errorf("%+v, a NUL past 64 KiB: %+v, %v; want text", req, res, err)
		}
	}
	if res, err := tl.Read(context.Background(), ReadRequest{Path: "late.txt", Offset: -1}); err != nil || res.Kind != "binary" {
		t.Errorf("the tail of late.txt: %+v, %v; want binary", res, err)
	}
	if _, err := tl.Read(context.Background(), ReadRequest{Path: "a.png", Offset: 2}); codeOf(err) != fault.CodeInvalidArgument {
		t.Errorf("offset on an image: %v", err)
	}
}

// pageToEnd reads path to its end, one window at a time, and rebuilds its bytes
// from the contents, line endings and byte-order mark.
func pageToEnd(t testing.TB, tl *Tools, p string, limit int, encoding string) ([]byte, int) {
	t.Helper()
	return pageFrom(t, tl, ReadRequest{Path: p, Limit: limit, Encoding: encoding})
}

// readFitting reads as tl.Read does and checks the promise of the bound: a
// text result fits it, and TOO_LARGE names a larger bound ("or more": the
// first item may be sized only once the fields around it fit) at which
// the read answers. It returns the answer at the bound that holds it.
func readFitting(t testing.TB, tl *Tools, req ReadRequest) (*ReadResult, error) {
	t.Helper()
	at := *tl
	for {
		res, err := at.Read(context.Background(), req)
		if err == nil {
			if n := jsonSize(res); n > at.maxBytes() && res.Media == nil {
				t.Fatalf("read %+v: %d bytes, over the bound %d", req, n, at.maxBytes())
			}
			return res, nil
		}
		e := fault.AsError(err)
		needed, ok := e.Details["needed"].(int)
		if e.Code != fault.CodeTooLarge || !ok {
			return nil, err
		}
		if needed <= at.maxBytes() || e.Details["maxBytes"] != at.maxBytes() {
			t.Fatalf("read %+v at %d: %v names the bound %d", req, at.maxBytes(), err, needed)
		}
		at.MaxBytes = needed
	}
}

// pageFrom reads from req's window to the end of the file, whole lines, and
// rebuilds the bytes from there.
func pageFrom(t testing.TB, tl *Tools, req ReadRequest) ([]byte, int) {
	t.Helper()
	req.LineTruncation = LineTruncation{Chars: new(0)}
	var out []byte
	total := 0
	for calls := 1; ; calls++ {
		res, err := readFitting(t, tl, req)
		if err != nil {
			t.Fatalf("read %+v: %v", req, err)
		}
		c := res.Content
		if res.LineEnding == "crlf" {
			c = strings.ReplaceAll(c, "\n", "\r\n")
		}
		switch res.Encoding {
		case "utf-8":
			if res.BOM && req.ByteOffset == 0 && res.StartLine == 1 {
				out = append(out, "\xEF\xBB\xBF"...)
			}
			out = append(out, c...)
		case "utf-16le":
			if res.BOM && req.ByteOffset == 0 && res.StartLine == 1 {
				out = append(out, "\xFF\xFE"...)
			}
			out = append(out, utf16Bytes(c, false)...)
		default:
			enc, err := htmlindex.Get(res.Encoding)
			if err != nil {
				t.Fatal(err)
			}
			if res.BOM && req.ByteOffset == 0 && res.StartLine == 1 {
				c = "\uFEFF" + c
			}
			b, err := enc.NewEncoder().Bytes([]byte(c))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b...)
		}
		// Every window of a file this small knows the same total.
		if res.TotalLines == nil || total != 0 && *res.TotalLines != total || res.TotalBytes != int64(len(fileText(tl.FS.(*memfs.FS), req.Path))) {
			t.Fatalf("window %+v: totalLines %v (earlier %d), totalBytes %d", req, res.TotalLines, total, res.TotalBytes)
		}
		total = *res.TotalLines
		if !res.Truncated {
			if total != res.EndLine {
				t.Fatalf("last window: totalLines %d, endLine %d", total, res.EndLine)
			}
			return out, calls
		}
		if *res.NextOffset < res.EndLine || *res.NextByteOffset <= req.ByteOffset {
			t.Fatalf("window %+v does not advance: %+v", req, res.TextWindow)
		}
		req.Offset, req.ByteOffset = *res.NextOffset, *res.NextByteOffset
		if calls > 100000 {
			t.Fatal("paging does not end")
		}
	}
}

// pageCut pages through a UTF-8 file with lineTruncation lt and checks
// every window against the file's own lines: a line is cut exactly when
// truncateLine cuts it, with the marker giving its length, every other line
// and a piece of a line too long for a window are the file's bytes, and
// each continuation points just after the last byte the window covers.
func pageCut(t testing.TB, tl *Tools, data []byte, lt LineTruncation, limit int) {
	t.Helper()
	n, chars := lt.limit()
	req := ReadRequest{Path: "f", Limit: limit, LineTruncation: lt}
	for calls := 1; ; calls++ {
		res, err := readFitting(t, tl, req)
		if err != nil {
			t.Fatalf("read %+v: %v", req, err)
		}
		p := int(req.ByteOffset)
		if p == 0 {
			bom, _ := textfile.CutUTF8BOM(data)
			p = len(bom)
		}
		piece := res.Truncated && *res.NextOffset == res.EndLine
		var want strings.Builder
		cut, lf, crlf, crBefore := 0, false, false, false
		type line struct {
			text string
			term string
		}
		var lines []line
		for i := range res.EndLine - res.StartLine + 1 {
			if piece && i == res.EndLine-res.StartLine {
				lines = append(lines, line{text: string(data[p:*res.NextByteOffset])})
				p = int(*res.NextByteOffset)
				break
			}
			end, next, term := len(data), len(data), ""
			if nl := bytes.IndexByte(data[p:], '\n'); nl >= 0 {
				end, next, term = p+nl, p+nl+1, "\n"
				if end > p && data[end-1] == '\r' {
					end, term = end-1, "\r\n"
				}
			}
			l := line{text: string(data[p:end]), term: term}
			if c, ok := truncateLine(l.text, n, chars); n > 0 && ok {
				l.text = c + fmt.Sprintf(" …[line cut: %d bytes in all]", end-p)
				cut++
			}
			lf, crlf = lf || term == "\n", crlf || term == "\r\n"
			crBefore = crBefore || term == "\r\n" && strings.HasSuffix(l.text, "\r")
			lines = append(lines, l)
			p = next
		}
		for _, l := range lines {
			want.WriteString(l.text)
			if l.term == "\r\n" && (lf || crBefore) {
				want.WriteString("\r\n")
			} else if l.term != "" {
				want.WriteByte('\n')
			}
		}
		ending := map[[2]bool]string{{false, false}: "none", {true, false}: "lf", {false, true}: "crlf", {true, true}: "mixed"}[[2]bool{lf || crBefore, crlf}]
		if res.Content != want.String() || res.LinesCut != cut || res.LineEnding != ending {
			t.Fatalf("window %+v:\ncontent %q linesCut %d lineEnding %s\nwant    %q linesCut %d lineEnding %s",
				req, res.Content, res.LinesCut, res.LineEnding, want.String(), cut, ending)
		}
		if !res.Truncated {
			if p != len(data) {
				t.Fatalf("window %+v ends at byte %d of %d without a continuation", req, p, len(data))
			}
			return
		}
		if int(*res.NextByteOffset) != p {
			t.Fatalf("window %+v: nextByteOffset %d, want %d", req, *res.NextByteOffset, p)
		}
		req.Offset, req.ByteOffset = *res.NextOffset, *res.NextByteOffset
		if calls > 100000 {
			t.Fatal("paging does not end")
		}
	}
}

func TestReadPagingRebuildsFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "héllo", "日本語", "😀", "\"q\"", "\\", "\t", "\x01", "\u2028", "x"}
	line := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	// -short (the mutation runs) keeps every case with a fifth of the
	// lines, and long lines still many windows long.
	lines, longest := 3000, 300000
	if testing.Short() {
		lines, longest = 600, 40000
	}
	for _, tc := range []struct {
		name  string
		eol   func() string
		long  bool
		bom   bool
		final bool
		u16   bool
		enc   string
	}{
		{name: "lf", eol: func() string { return "\n" }, final: true},
		{name: "crlf", eol: func() string { return "\r\n" }, final: true},
		{name: "mixed", eol: func() string { return []string{"\n", "\r\n"}[rng.IntN(2)] }},
		{name: "no final newline", eol: func() string { return "\n" }},
		{name: "long lines", eol: func() string { return "\n" }, long: true, final: true},
		{name: "long crlf lines", eol: func() string { return "\r\n" }, long: true},
		{name: "bom", eol: func() string { return "\n" }, bom: true, final: true},
		{name: "utf-16le long crlf lines", eol: func() string { return "\r\n" }, long: true, u16: true},
		{name: "shift_jis long lines", eol: func() string { return "\n" }, long: true, enc: "shift_jis"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if tc.bom {
				b.WriteString("\xEF\xBB\xBF")
			}
			for i := range lines {
				n := rng.IntN(80)
				if tc.long && i%(lines/6) == 7 {
					n = 10000 + rng.IntN(longest)
				}
				b.WriteString(line(n))
				if i < lines-1 || tc.final {
					b.WriteString(tc.eol())
				}
			}
			file := b.String()
			if tc.enc != "" {
				sj, _ := htmlindex.Get(tc.enc)
				b, err := sj.NewEncoder().Bytes([]byte(strings.NewReplacer("😀", "", "\u2028", "", "é", "e").Replace(file)))
				if err != nil {
					t.Fatal(err)
				}
				file = string(b)
			}
			if tc.u16 {
				file = "\xFF\xFE" + string(utf16Bytes(file, false))
			}
			for _, mb := range []int{0, 5000} {
				tl := &Tools{FS: memfs.New(map[string]string{"f": file}), MaxBytes: mb}
				for _, limit := range []int{0, 7} {
					got, calls := pageToEnd(t, tl, "f", limit, tc.enc)
					if !bytes.Equal(got, []byte(file)) {
						t.Fatalf("maxBytes %d limit %d: rebuilt %d bytes in %d calls, want %d", mb, limit, len(got), calls, len(file))
					}
				}
			}
		})
	}
}

func TestReadResultBounded(t *testing.T) {
	file := strings.Repeat(strings.Repeat("\x01\"", 100)+"\n", 5000)
	for _, mb := range []int{0, 5000, 50000} {
		tl := &Tools{FS: memfs.New(map[string]string{"f": file}), MaxBytes: mb}
		res, err := tl.Read(context.Background(), ReadRequest{Path: "f", IncludeLineNumbers: true})
		if err != nil {
			t.Fatal(err)
		}
		if n := jsonSize(res); mb != 0 && n > mb || n > ReadMaxBytes {
			t.Errorf("maxBytes %d: result is %d bytes", mb, n)
		}
		if !res.Truncated || strings.Count(res.Content, "\n") != res.EndLine {
			t.Errorf("maxBytes %d: truncated %v, %d lines", mb, res.Truncated, res.EndLine)
		}
	}
}

// TestReadWindowCost checks that a continuation near the end of a large
// file reads about a window, not the file.
func TestReadWindowCost(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 32<<20; i++ {
		fmt.Fprintf(&b, "line %d of a file that is large enough to need paging\n", i)
	}
	file := b.String()
	fsys := memfs.New(map[string]string{"big": file})
	tl := &Tools{FS: fsys}
	at := int64(strings.LastIndex(file[:len(file)-100000], "\n") + 1)
	res, err := tl.Read(context.Background(), ReadRequest{Path: "big", Offset: 42, ByteOffset: at})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(file[at:], res.Content) || res.StartLine != 42 || res.TotalLines == nil {
		t.Fatalf("window at %d: start %d, total %v", at, res.StartLine, res.TotalLines)
	}
	if fsys.Stats().BytesRead > int64(len(res.Content)+readBufSize+minPiece+textfile.SniffBytes+1) {
		t.Errorf("a window near the end read %d bytes of a %d-byte file", fsys.Stats().BytesRead, len(file))
	}
}

// TestReadTailCost checks that the last lines of a file over
// ReadCountMaxBytes cost what those lines cost, read backwards from the end
// in a few ranged reads, and that a smaller file is counted, not read twice.
func TestReadTailCost(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() <= ReadCountMaxBytes; i++ {
		fmt.Fprintf(&b, "2026-01-02T03:04:05Z INFO request %d done\n", i)
	}
	big := b.String()
	lines := strings.Count(big, "\n")
	small := big[len(big)-2<<20:]
	small = small[strings.IndexByte(small, '\n')+1:]
	fsys := memfs.New(map[string]string{"big": big, "small": small})
	tl := &Tools{FS: fsys}
	for _, tc := range []struct {
		path              string
		start, total      int
		maxRead, maxCalls int64
	}{
		// The first 64 KiB, grep's sample for a NUL (binary), then the end.
		{"big", -100, -1, textfile.BinarySample + 2*tailChunk, 3},
		{"small", strings.Count(small, "\n") - 99, strings.Count(small, "\n"), int64(len(small)) + tailChunk, 3},
	} {
		fsys.ResetStats()
		res, err := tl.Read(context.Background(), ReadRequest{Path: tc.path, Offset: -100})
		if err != nil {
			t.Fatal(err)
		}
		file := []byte(fileText(fsys, tc.path))
		want := string(file[bytes.LastIndex(file, []byte(fmt.Sprintf("request %d done", lines-100)))-len("2026-01-02T03:04:05Z INFO "):])
		if res.Content != want || res.StartLine != tc.start || res.EndLine != tc.start+99 || res.Truncated {
			t.Errorf("%s: lines %d-%d, truncated %v, content %d bytes, want %d", tc.path, res.StartLine, res.EndLine, res.Truncated, len(res.Content), len(want))
		}
		if tc.total < 0 && res.TotalLines != nil || tc.total >= 0 && (res.TotalLines == nil || *res.TotalLines != tc.total) {
			t.Errorf("%s: totalLines %v, want %d", tc.path, res.TotalLines, tc.total)
		}
		t.Logf("%s: the last 100 lines of %d bytes: %d bytes read, %d of them in %d ranged reads", tc.path, len(file), fsys.Stats().BytesRead, fsys.Stats().ReadAtBytes, fsys.Stats().ReadAts)
		if fsys.Stats().BytesRead > tc.maxRead || int64(fsys.Stats().ReadAts) > tc.maxCalls {
			t.Errorf("%s: the last 100 lines of %d bytes read %d bytes in %d ranged reads", tc.path, len(file), fsys.Stats().BytesRead, fsys.Stats().ReadAts)
		}
	}
}

// FuzzReadWindow checks the paging property on arbitrary bytes. Fuzz with
// -fuzzminimizetime 2s: minimizing an input pages it many times, and the
// default minute of it looks like a stall.
func FuzzReadWindow(f *testing.F) {
	f.Add([]byte("a\nb\r\nc"), uint8(1), uint16(0))
	f.Add([]byte("\xEF\xBB\xBFx\r\n\r\n"), uint8(2), uint16(100))
	f.Add([]byte(strings.Repeat("é", 3000)+"\n\n"), uint8(0), uint16(4000))
	f.Add([]byte("\xff\xfea\x00\n\x00"), uint8(3), uint16(0))
	f.Add([]byte(""), uint8(0), uint16(0))
	f.Add([]byte("\ufeff\n\xff"), uint8(1), uint16(124))
	f.Add([]byte(strings.Repeat("\x01é", 2100)+"\r\nab\r\n"), uint8(0), uint16(0))
	f.Add([]byte("a\r\r\nb\r\n"), uint8(1), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, limit uint8, maxBytes uint16) {
		if len(data) > 1<<14 {
			return // paging a large input line by line only slows the search
		}
		tl := &Tools{FS: memfs.New(map[string]string{"f": string(data)}), MaxBytes: int(maxBytes)}
		first, err := readFitting(t, tl, ReadRequest{Path: "f", Limit: int(limit)})
		if err != nil {
			if c := codeOf(err); c != fault.CodeNotText {
				t.Fatalf("read: %v", err)
			}
			return
		}
		if first.Kind != "text" || first.Encoding != "utf-8" || !utf8.Valid(bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))) {
			return // NOT_TEXT may come in a later window; that is read's answer
		}
		got, _ := pageToEnd(t, tl, "f", int(limit), "")
		if !bytes.Equal(got, data) {
			t.Fatalf("rebuilt %q, want %q", got, data)
		}
		// Cut lines: the default, and a bound in chars and in bytes
		// drawn from the other inputs.
		for _, lt := range []LineTruncation{{}, {Chars: new(int(maxBytes % 7))}, {Bytes: new(int(limit % 9))}} {
			pageCut(t, tl, data, lt, int(limit))
		}
		// The last n lines, and paging on from them, give the bytes of
		// the file from the start of line total-n+1 (or from line 1).
		body := bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
		var starts []int // where each line starts in data
		for i := 0; i < len(body); {
			starts = append(starts, len(data)-len(body)+i)
			nl := bytes.IndexByte(body[i:], '\n')
			if nl < 0 {
				break
			}
			i += nl + 1
		}
		for _, n := range []int{1, 2, int(limit) + 1, len(starts), len(starts) + 3} {
			from, line := len(data)-len(body), 1
			if n < len(starts) {
				from, line = starts[len(starts)-n], len(starts)-n+1
			}
			first, err := readFitting(t, tl, ReadRequest{Path: "f", Offset: -n, Limit: int(limit), LineTruncation: LineTruncation{Chars: new(0)}})
			if err != nil || first.StartLine != line || first.TotalLines == nil || *first.TotalLines != len(starts) {
				t.Fatalf("offset -%d: %+v, %v; want startLine %d, totalLines %d", n, first, err, line, len(starts))
			}
			got, _ := pageFrom(t, tl, ReadRequest{Path: "f", Offset: -n, Limit: int(limit)})
			if from == len(data)-len(body) {
				from = 0 // from line 1 the rebuilt bytes have the mark
			}
			if !bytes.Equal(got, data[from:]) {
				t.Fatalf("offset -%d: rebuilt %q, want %q", n, got, data[from:])
			}
		}
	})
}

func TestJSONLen(t *testing.T) {
	for _, s := range []string{"", "abc", "\"\\\n\r\t\b\f", "\x00\x1f", "é日😀", "<>&", "\u2028\u2029"} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if want := buf.Len() - 3; jsonLen(s) != want {
			t.Errorf("jsonLen(%q) = %d, want %d", s, jsonLen(s), want)
		}
	}
}

func TestTruncateLine(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		chars bool
		want  string
		cut   bool
	}{
		{"hello", 10, false, "hello", false},
		{"héllo", 2, false, "h", true},
		{"héllo", 3, false, "hé", true},
		{"日本語", 2, true, "日本", true},
		{"日本", 2, true, "日本", false},
	} {
		got, cut := truncateLine(tc.in, tc.limit, tc.chars)
		if got != tc.want || cut != tc.cut {
			t.Errorf("truncateLine(%q, %d, %v) = %q, %v", tc.in, tc.limit, tc.chars, got, cut)
		}
	}
}

func TestLineTruncationParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want LineTruncation
		ok   bool
	}{
		{"bytes:200", LineTruncation{Bytes: new(200)}, true},
		{"chars:5", LineTruncation{Chars: new(5)}, true},
		{"chars:0", LineTruncation{Chars: new(0)}, true},
		{"bytes:0", LineTruncation{Bytes: new(0)}, true},
		{"chars:-1", LineTruncation{}, false},
		{"lines:5", LineTruncation{}, false},
		{"200", LineTruncation{}, false},
		{"", LineTruncation{}, true}, // left out, as any string given as ""
		// The object form on the command line, as strictly as in a
		// JSON request: an unknown key, one in another case or one
		// given twice was the default cut, with exit 0.
		{`{"chars":3}`, LineTruncation{Chars: new(3)}, true},
		{`{"chars":null,"bytes":4}`, LineTruncation{Bytes: new(4)}, true},
		{`{"lines":3}`, LineTruncation{}, false},
		{`{"chars":3,"extra":1}`, LineTruncation{}, false},
		{`{"Chars":3}`, LineTruncation{}, false},
		{`{"chars":3,"chars":0}`, LineTruncation{}, false},
		{`{"chars":3}x`, LineTruncation{}, false},
	} {
		var l LineTruncation
		err := l.UnmarshalText([]byte(tc.in))
		if (err == nil) != tc.ok || tc.ok && !reflect.DeepEqual(l, tc.want) {
			t.Errorf("%q: %+v, %v", tc.in, l, err)
		}
	}
	for in, want := range map[string]LineTruncation{
		`{"path":"f","lineTruncation":{"chars":9}}`: {Chars: new(9)},
		`{"path":"f","lineTruncation":{"chars":0}}`: {Chars: new(0)},
		`{"path":"f","lineTruncation":"bytes:7"}`:   {Bytes: new(7)},
		`{"path":"f","lineTruncation":null}`:        {},
		`{"path":"f","lineTruncation":{}}`:          {},
		`{"path":"f"}`:                              {},
	} {
		var req ReadRequest
		if err := DecodeJSON([]byte(in), &req); err != nil || !reflect.DeepEqual(req.LineTruncation, want) {
			t.Errorf("%s: %+v %v", in, req.LineTruncation, err)
		}
	}
	var req ReadRequest
	for _, bad := range []string{`{"path":"f","lineTruncation":{"chars":1,"bytes":2}}`, `{"path":"f","lineTruncation":{"lines":2}}`,
		`{"path":"f","lineTruncation":7}`, `{"path":"f","lineTruncation":{"bytes":-3}}`, `{"path":"f","lineTruncation":"chars:x"}`} {
		if err := DecodeJSON([]byte(bad), &req); codeOf(err) != fault.CodeInvalidArgument {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestReadNoSha256WhenLastLineLeftOut(t *testing.T) {
	file := "short\n" + strings.Repeat("y", 5000) // read to EOF, not returned
	tl := &Tools{FS: memfs.New(map[string]string{"f": file}), MaxBytes: 1000}
	res, err := tl.Read(context.Background(), ReadRequest{Path: "f", LineTruncation: LineTruncation{Bytes: new(0)}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.EndLine != 1 || res.Sha256 != "" {
		t.Errorf("truncated %v endLine %d sha256 %q", res.Truncated, res.EndLine, res.Sha256)
	}
}

func TestReadSkipInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tl := &Tools{FS: memfs.New(map[string]string{"f": strings.Repeat("x\n", 10000)})}
	if _, err := tl.Read(ctx, ReadRequest{Path: "f", Offset: 9000}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// A continuation that names the version of its previous window reads on
// while the file keeps that version, and is STALE, naming the current one,
// once it changed: its offsets no longer name the same bytes. The window's
// sha256 in its place is INVALID_ARGUMENT: the file did not change.
func TestReadContinuationExpectedVersion(t *testing.T) {
	fs := memfs.New(map[string]string{"f": "one\ntwo\nthree\n"})
	tl := &Tools{FS: fs}
	current := versionOf(fs, "f")
	for _, tc := range []struct {
		expected string
		code     fault.Code
	}{{"", ""}, {current, ""}, {"0000", fault.CodeStale}, {sha256Hex([]byte("one\ntwo\nthree\n")), fault.CodeInvalidArgument}} {
		res, err := tl.Read(context.Background(), ReadRequest{Path: "f", Offset: 2, ExpectedVersion: tc.expected})
		e := fault.AsError(err)
		if tc.code != "" {
			if e == nil || e.Code != tc.code || tc.code == fault.CodeStale && e.Details["currentVersion"] != current {
				t.Errorf("expected %q: %v, want %s", tc.expected, err, tc.code)
			}
			continue
		}
		if err != nil || res.Content != "two\nthree\n" {
			t.Errorf("expected %q: %+v, %v", tc.expected, res, err)
		}
	}
}

// A byteOffset right after the byte-order mark is the start of line 1;
// one inside the mark, or at the end of the file, is INVALID_ARGUMENT.
func TestReadByteOffsetEdges(t *testing.T) {
	file := "\xEF\xBB\xBFa\nb\n"
	tl := &Tools{FS: memfs.New(map[string]string{"f": file})}
	for _, tc := range []struct {
		offset, byteOffset int
		want               string // content, or the start of the error message
		fails              bool
	}{
		{1, 3, "a\nb\n", false},
		{2, 5, "b\n", false},
		{1, 2, "byteOffset 2 is not the start of a line", true},
		{3, len(file), "byteOffset 7 is at or past the end", true},
		// A line cannot start after fewer bytes than the lines before
		// it end in: line 4 at byte 5 (3 lines in 2 bytes) was read as
		// line 4 of 4, and line 2^63-1 as endLine and totalLines -2^63.
		{4, 5, "offset 4 cannot start at byteOffset 5", true},
		{math.MaxInt, 5, fmt.Sprintf("offset %d cannot start at byteOffset 5", math.MaxInt), true},
	} {
		res, err := tl.Read(context.Background(), ReadRequest{Path: "f", Offset: tc.offset, ByteOffset: int64(tc.byteOffset)})
		if tc.fails {
			if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidArgument || !strings.HasPrefix(e.Message, tc.want) {
				t.Errorf("offset %d byteOffset %d: %v, want %q", tc.offset, tc.byteOffset, err, tc.want)
			}
			continue
		}
		if err != nil || res.Content != tc.want || res.StartLine != tc.offset {
			t.Errorf("offset %d byteOffset %d: %+v, %v", tc.offset, tc.byteOffset, res, err)
		}
	}
}

// FuzzJSONLen: jsonLen is the length of a string's JSON body as the
// results are written (without HTML escaping), bytes that are not UTF-8,
// control characters and U+2028 included: the bounds are sized by it.
func FuzzJSONLen(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "\x00\x1f\x7f", "a\xffb", "\ufffd", "\xef\xbf", "\u2028\u2029", "é\t\r\n<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := jsonLen(s), jsonSize(s)-len(`""`+"\n"); got != want {
			t.Fatalf("jsonLen(%q) = %d, the JSON body is %d bytes", s, got, want)
		}
	})
}
