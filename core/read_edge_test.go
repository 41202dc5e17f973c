package core

import (
	"context"
	"encoding/base64"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
	"github.com/agentfs/agentfs/textfile"
	"golang.org/x/text/encoding/htmlindex"
)

// TestReadMediaAtItsLimit reads an image of exactly ReadMaxMediaBytes whole,
// and refuses one byte more.
func TestReadMediaAtItsLimit(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	at := png + strings.Repeat("\x00", ReadMaxMediaBytes-len(png))
	tl := &Tools{FS: memfs.New(map[string]string{"at.png": at, "over.png": at + "\x00"})}
	// offset 1 is where any read starts: accepted on an image.
	res, err := tl.Read(context.Background(), ReadRequest{Path: "at.png", Offset: 1})
	if err != nil {
		t.Fatal(err)
	}
	data, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil || string(data) != at || res.Size != ReadMaxMediaBytes {
		t.Errorf("an image of %d bytes: size %d, %d bytes of data (%v)", len(at), res.Size, len(data), err)
	}
	_, err = tl.Read(context.Background(), ReadRequest{Path: "over.png"})
	if codeOf(err) != fault.CodeTooLarge {
		t.Errorf("an image of %d bytes: %v, want TOO_LARGE", len(at)+1, err)
	}
}

// TestReadFromTheStartReadsForward checks that a first window streams the
// file in large reads and never reads backwards, as a tail does.
func TestReadFromTheStartReadsForward(t *testing.T) {
	file := strings.Repeat(strings.Repeat("x", 99)+"\n", 10000)
	fsys := memfs.New(map[string]string{"f": file})
	tl := &Tools{FS: fsys}
	res, err := tl.Read(context.Background(), ReadRequest{Path: "f", LineTruncation: LineTruncation{Chars: new(0)}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || !strings.HasPrefix(file, res.Content) || res.TotalLines == nil || *res.TotalLines != 10000 {
		t.Fatalf("lines %d-%d of %v, truncated %v", res.StartLine, res.EndLine, res.TotalLines, res.Truncated)
	}
	st := fsys.Stats()
	// The window in readBufSize reads, the count in countChunk reads, and
	// the reads that find each end.
	most := len(res.Content)/readBufSize + len(file)/countChunk + 4
	t.Logf("%d bytes of content: %d reads, %d ranged", len(res.Content), st.Reads, st.ReadAts)
	if st.ReadAts != 0 || st.Reads > most {
		t.Errorf("a first window of %d bytes took %d reads and %d ranged reads, want at most %d and 0", len(res.Content), st.Reads, st.ReadAts, most)
	}
}

// TestReadContinuationReadsItsWindow checks that a continuation near the end
// reads the start of the file only to classify it, and nothing else before
// its offset.
func TestReadContinuationReadsItsWindow(t *testing.T) {
	file := strings.Repeat(strings.Repeat("y", 99)+"\n", 10000)
	fsys := memfs.New(map[string]string{"f": file})
	tl := &Tools{FS: fsys}
	at := len(file) - 1000
	res, err := tl.Read(context.Background(), ReadRequest{Path: "f", Offset: 9991, ByteOffset: int64(at), Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != file[at:at+100] || res.TotalLines == nil || *res.TotalLines != 10000 {
		t.Fatalf("window at %d: %q, total %v", at, res.Content, res.TotalLines)
	}
	if got, most := fsys.Stats().BytesRead, int64(textfile.SniffBytes+1+minPiece+len(file)-at); got > most {
		t.Errorf("a window %d bytes from the end read %d bytes, want at most %d", len(file)-at, got, most)
	}
}

// TestReadCountsLinesUpToTheLimit: a truncated window of a file of
// ReadCountMaxBytes still gives totalLines; one byte more does not.
func TestReadCountsLinesUpToTheLimit(t *testing.T) {
	for _, size := range []int{ReadCountMaxBytes, ReadCountMaxBytes + 1} {
		file := strings.Repeat("z\n", size/2) + strings.Repeat("z", size%2)
		tl := &Tools{FS: memfs.New(map[string]string{"f": file})}
		res, err := tl.Read(context.Background(), ReadRequest{Path: "f", Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if counted := res.TotalLines != nil; counted != (size <= ReadCountMaxBytes) || counted && *res.TotalLines != size/2 {
			t.Errorf("a file of %d bytes: totalLines %v", size, res.TotalLines)
		}
	}
}

// TestReadLongLineCost: a window of a file over ReadCountMaxBytes that is
// one line reads about a window of it, not the line to its end.
func TestReadLongLineCost(t *testing.T) {
	file := strings.Repeat("w", ReadCountMaxBytes+1)
	fsys := memfs.New(map[string]string{"f": file})
	tl := &Tools{FS: fsys}
	res, err := tl.Read(context.Background(), ReadRequest{Path: "f", LineTruncation: LineTruncation{Chars: new(0)}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.NextOffset == nil || *res.NextOffset != 1 || !strings.HasPrefix(file, res.Content) {
		t.Fatalf("truncated %v, nextOffset %v, %d bytes", res.Truncated, res.NextOffset, len(res.Content))
	}
	if got, most := fsys.Stats().BytesRead, int64(2*ReadMaxBytes+2*readBufSize); got > most {
		t.Errorf("a window of a %d-byte line read %d bytes, want at most %d", len(file), got, most)
	}
}

// TestReadByteOffsetInLongLines checks a continuation inside a line, far
// enough from its start that only the bytes before it can refuse it.
func TestReadByteOffsetInLongLines(t *testing.T) {
	x600 := strings.Repeat("x", 600)
	tl := &Tools{FS: memfs.New(map[string]string{
		"nl":   "a\n" + strings.Repeat("x", 1000) + "\n",
		"crlf": x600 + "\r\nb\r\n",
		"utf8": strings.Repeat("é", 400) + "\n",
		// Line 1 is its mark and "x\n" (6 bytes), then each 😀 is a
		// surrogate pair of 4 bytes.
		"utf16": "\xff\xfe" + string(utf16Bytes("x\n"+strings.Repeat("😀", 400)+"\n", false)),
	})}
	for _, tc := range []struct {
		path       string
		byteOffset int
		want       string // content, or the end of the error message
		fails      bool
	}{
		{"nl", 2 + minPiece - 1, "a line starts in the bytes before it.", true},
		{"nl", 2 + minPiece, strings.Repeat("x", 1000-minPiece) + "\n", false},
		{"crlf", 601, "it splits a CRLF.", true},
		{"crlf", 600, "\r\nb\r\n", false},
		{"utf8", 601, "it is inside a UTF-8 character.", true},
		{"utf8", 600, strings.Repeat("é", 100) + "\n", false},
		{"utf16", 6 + 602, "it is inside a utf-16le character.", true},
		{"utf16", 6 + 600, strings.Repeat("😀", 250) + "\n", false},
	} {
		res, err := tl.Read(context.Background(), ReadRequest{Path: tc.path, Offset: 7, ByteOffset: int64(tc.byteOffset)})
		if tc.fails {
			if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidArgument || !strings.HasSuffix(e.Message, tc.want) {
				t.Errorf("%s at %d: %v, want %q", tc.path, tc.byteOffset, err, tc.want)
			}
			continue
		}
		if err != nil || res.StartLine != 7 || !strings.HasPrefix(res.Content, strings.ReplaceAll(tc.want, "\r\n", "\n")) && res.Content != tc.want {
			t.Errorf("%s at %d: %+v, %v", tc.path, tc.byteOffset, res, err)
		}
	}
}

// TestReadNotTextNamesTheLine: a line that does not decode is named; a
// file that is not text at all names none.
func TestReadNotTextNamesTheLine(t *testing.T) {
	tl := &Tools{FS: memfs.New(map[string]string{
		"line": "ok\n" + strings.Repeat("fine\n", 1000) + "bad \xff\n",
		"file": "caf\xe9 au lait\n",
	})}
	for _, tc := range []struct {
		path string
		line any
	}{{"line", 1002}, {"file", nil}} {
		_, err := tl.Read(context.Background(), ReadRequest{Path: tc.path})
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodeNotText || e.Details["line"] != tc.line {
			t.Errorf("%s: %v (details %v), want NOT_TEXT with line %v", tc.path, err, e.Details, tc.line)
		}
	}
}

// TestReadTotalAfterAPiece: a window that stops before a line too long for
// it, and the window holding a piece of that line, count the file's lines.
func TestReadTotalAfterAPiece(t *testing.T) {
	// Longer than the read buffer: the window stops inside it.
	file := "a\n" + strings.Repeat("x", 2*readBufSize) + "\nb\n"
	tl := &Tools{FS: memfs.New(map[string]string{"f": file}), MaxBytes: 2000}
	req := ReadRequest{Path: "f", LineTruncation: LineTruncation{Chars: new(0)}}
	for _, want := range []struct{ content string }{{"a\n"}, {strings.Repeat("x", 1)}} {
		res, err := tl.Read(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(res.Content, want.content) || !res.Truncated || res.TotalLines == nil || *res.TotalLines != 3 {
			t.Fatalf("window %+v: %q, total %v", req, res.Content, res.TotalLines)
		}
		req.Offset, req.ByteOffset = *res.NextOffset, *res.NextByteOffset
	}
}

// TestReadSmallBudgetNamesThePiece: when not even the least piece of a long
// first line fits, TOO_LARGE names the bound that holds that piece, not the
// whole line.
func TestReadSmallBudgetNamesThePiece(t *testing.T) {
	file := strings.Repeat("x", 3000) + "\n"
	tl := &Tools{FS: memfs.New(map[string]string{"f": file}), MaxBytes: 400}
	req := ReadRequest{Path: "f", LineTruncation: LineTruncation{Chars: new(0)}}
	_, err := tl.Read(context.Background(), req)
	e := fault.AsError(err)
	if e == nil || e.Code != fault.CodeTooLarge {
		t.Fatalf("%v, want TOO_LARGE", err)
	}
	needed, _ := e.Details["needed"].(int)
	if needed <= 400 || needed > 400+minPiece+16 {
		t.Errorf("needed %d, want the bound of a piece of %d bytes", needed, minPiece)
	}
	res, err := readFitting(t, tl, req)
	if err != nil || len(res.Content) < minPiece || len(res.Content) > 2*minPiece || !res.Truncated {
		t.Errorf("at the bound named: %d bytes, truncated %v, %v", len(res.Content), res.Truncated, err)
	}
}

// TestReadPastAVeryLongLine skips and cuts a line longer than the read
// buffer, and the lines after it start where they should.
func TestReadPastAVeryLongLine(t *testing.T) {
	file := "a\n" + strings.Repeat("x", 3*readBufSize) + "\nb\n"
	tl := &Tools{FS: memfs.New(map[string]string{"f": file})}
	for _, tc := range []struct {
		req  ReadRequest
		want string
	}{
		{ReadRequest{Path: "f", Offset: 3}, "b\n"},
		{ReadRequest{Path: "f", Offset: 2}, strings.Repeat("x", 2000) + " …[line cut: 196608 bytes in all]\nb\n"},
		{ReadRequest{Path: "f", Offset: 2, LineTruncation: LineTruncation{Bytes: new(1)}}, "x …[line cut: 196608 bytes in all]\nb\n"},
	} {
		res, err := tl.Read(context.Background(), tc.req)
		if err != nil || res.Content != tc.want || *res.TotalLines != 3 {
			t.Errorf("%+v: %v", tc.req, err)
		}
	}
}

// TestReadContinuationNearTheEnd: a continuation whose rest of the file fits
// the read buffer fetches it in one ranged read, and allocates about its
// window, not buffers sized to the whole file.
func TestReadContinuationNearTheEnd(t *testing.T) {
	file := strings.Repeat(strings.Repeat("v", 99)+"\n", 2000)
	fsys := memfs.New(map[string]string{"f": file})
	tl := &Tools{FS: fsys}
	at := len(file) - 5000
	req := ReadRequest{Path: "f", Offset: 1951, ByteOffset: int64(at), Limit: 1}
	least := uint64(1 << 62)
	for range 5 {
		fsys.ResetStats()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := tl.Read(context.Background(), req)
		runtime.ReadMemStats(&after)
		if err != nil || res.Content != file[at:at+100] || *res.TotalLines != 2000 {
			t.Fatalf("window at %d: %+v, %v", at, res, err)
		}
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	t.Logf("a window 5,000 bytes from the end: %d ranged reads, %d bytes allocated", fsys.Stats().ReadAts, least)
	if n := fsys.Stats().ReadAts; n != 1 {
		t.Errorf("%d ranged reads, want 1", n)
	}
	if least > 48<<10 {
		t.Errorf("a window of 100 bytes allocated %d bytes", least)
	}
}

// TestRawLimitHoldsEveryLineThatFits: the raw bytes read of a line are
// enough for any line whose text fits the room left, in UTF-8 and UTF-16.
func TestRawLimitHoldsEveryLineThatFits(t *testing.T) {
	utf16le := func(s string) []byte { return utf16Bytes(s, false) }
	u16, _ := textfile.ByBOM([]byte{0xFF, 0xFE})
	u8 := utf8Codec(t)
	for _, enc := range []struct {
		codec  textfile.Codec
		encode func(string) []byte
	}{{u8, func(s string) []byte { return []byte(s) }}, {u16, utf16le}} {
		for _, term := range []termKind{termLF, termCRLF} {
			for room := 2 * int(term); room < 64; room++ {
				w := &window{codec: enc.codec, room: 100 + room, used: 100, lines: make([]winLine, 1)}
				text := strings.Repeat("a", room-2*int(term))
				if cost := w.cost(winLine{text: text, term: term}, 2); cost != room {
					t.Fatalf("cost %d, want %d", cost, room)
				}
				raw := enc.encode(text + map[termKind]string{termLF: "\n", termCRLF: "\r\n"}[term])
				if got := w.rawLimit(); got < len(raw) {
					t.Errorf("%s, room %d: rawLimit %d, under the %d bytes of a line that fits", enc.codec.Name(), room, got, len(raw))
				}
			}
		}
	}
}

// TestPieceLeast: the least piece of a line a window starts is minPiece
// bytes and the rest of the character that reaches past them; a bound
// under its window is TOO_LARGE naming that window's size, a bound of it
// holds it.
func TestPieceLeast(t *testing.T) {
	least := minPiece + 1
	for _, tc := range []struct {
		name  string
		raw   string
		piece int // bytes; the line's length: the line whole, with its newline
	}{
		{"ascii", strings.Repeat("x", 1000), least},
		{"a line of the least", strings.Repeat("x", least), least},
		{"a character across the least", strings.Repeat("x", minPiece-1) + "日" + strings.Repeat("x", 500), least + 1},
	} {
		want := tc.raw[:tc.piece]
		if tc.piece == len(tc.raw) {
			want += "\n"
		}
		tl := &Tools{FS: memfs.New(map[string]string{"f": tc.raw + "\nb\n"}), MaxBytes: 512}
		req := ReadRequest{Path: "f", LineTruncation: LineTruncation{Chars: new(0)}}
		_, err := tl.Read(context.Background(), req)
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodeTooLarge {
			t.Fatalf("%s: %v, want TOO_LARGE", tc.name, err)
		}
		tl.MaxBytes = e.Details["needed"].(int)
		res, err := tl.Read(context.Background(), req)
		if err != nil || res.Content != want || jsonSize(res) != tl.MaxBytes {
			t.Errorf("%s: at the %d bytes named: %d bytes of the line, %v; want %d", tc.name, tl.MaxBytes, len(res.Content), err, tc.piece)
		}
	}
}

func utf8Codec(t *testing.T) textfile.Codec {
	cls, err := textfile.Classify("f.txt", []byte("x"), "", true)
	if err != nil || !cls.Codec.IsUTF8() || cls.Codec.Unit() != 1 {
		t.Fatalf("utf-8 codec: %+v, %v", cls, err)
	}
	return cls.Codec
}

// TestGrepContextAfterALineFillingTheBuffer: a match after a line that
// fills the largest buffer, with context, is found at once. The context
// kept before the search position once left no room to read on, and the
// search went round until its timeout (exit 0, nothing found).
func TestGrepContextAfterALineFillingTheBuffer(t *testing.T) {
	file := strings.Repeat("a", maxLineBuffer-1) + "\nzzz\nafter\n"
	tl := &Tools{FS: memfs.New(map[string]string{"l.txt": file})}
	res, err := tl.Grep(context.Background(), GrepRequest{Path: ".", Query: "zzz", Context: 1, Timeout: Duration(time.Minute)})
	if err != nil || res.TimedOut || res.Count != 1 || len(res.Files) != 1 {
		t.Fatalf("count %d, timed out %v, %v", res.Count, res.TimedOut, err)
	}
	b := res.Files[0].Blocks[0]
	if last := b.Lines[len(b.Lines)-1]; b.Start > 2 || last != "after" {
		t.Fatalf("block from line %d, last line %q", b.Start, last)
	}
}

// TestReadLineNumbersOncePerLine: a line read in parts has its number
// before its first part only, so the parts joined are the numbered line
// (--format text --all put "1\t" inside it at each part).
func TestReadLineNumbersOncePerLine(t *testing.T) {
	long := strings.Repeat("x", 3000)
	tl := &Tools{FS: memfs.New(map[string]string{"f": long + "\nshort\n"}), MaxBytes: 1500}
	req := ReadRequest{Path: "f", IncludeLineNumbers: true, LineTruncation: LineTruncation{Chars: new(0)}}
	var got strings.Builder
	for parts := 0; ; parts++ {
		if parts > 10 {
			t.Fatalf("no end after %d parts: %q", parts, got.String())
		}
		res, err := readFitting(t, tl, req)
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString(res.Content)
		if !res.Truncated {
			break
		}
		req.Offset, req.ByteOffset = *res.NextOffset, *res.NextByteOffset
	}
	if want := "1\t" + long + "\n2\tshort\n"; got.String() != want {
		t.Errorf("joined parts %q, want %q", got.String(), want)
	}
}

// A line of ISO-2022-JP paged in parts: the first part decodes, the
// next cannot be decoded apart from the line's start (its shift state),
// and is NOT_SUPPORTED; it came back as the ASCII of the kanji's bytes,
// exit 0. A window from a line's start decodes.
func TestReadStatefulEncodingMidLine(t *testing.T) {
	kanji := "\x1b$BF|K\\8l\x1b(B" // 日本語, shifted in and out
	file := "ab\n" + strings.Repeat(kanji, 400) + "\n"
	tl := &Tools{FS: memfs.New(map[string]string{"f": file}), MaxBytes: 2000}
	var chars LineTruncation
	if err := chars.UnmarshalText([]byte("chars:0")); err != nil {
		t.Fatal(err)
	}
	first, err := tl.Read(context.Background(), ReadRequest{Path: "f", Encoding: "iso-2022-jp", LineTruncation: chars, Offset: 2, ByteOffset: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.Content, "日本語日本語") || first.NextByteOffset == nil || *first.NextByteOffset <= 3 {
		t.Fatalf("first part %.40q, next %v", first.Content, first.NextByteOffset)
	}
	_, err = tl.Read(context.Background(), ReadRequest{Path: "f", Encoding: "iso-2022-jp", LineTruncation: chars, Offset: 2, ByteOffset: *first.NextByteOffset})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeNotSupported {
		t.Fatalf("the next part: %v; want NOT_SUPPORTED", err)
	}
}

// grownFS opens each file as it was, its info that of its first bytes:
// a file appended to between the open's stat and the read.
type grownFS struct {
	*memfs.FS
	was int64
}

func (g grownFS) Open(ctx context.Context, p string) (backend.FileReader, error) {
	f, err := g.FS.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	return grownFile{f, g.was}, nil
}

type grownFile struct {
	backend.FileReader
	was int64
}

func (f grownFile) Info() backend.FileInfo {
	fi := f.FileReader.Info()
	fi.Size = f.was
	return fi
}

// A read stops at the size its version stands for: a file appended to
// during the read gave content and sha256 past totalBytes.
func TestReadStopsAtTheSizeItStands(t *testing.T) {
	tl := &Tools{FS: grownFS{memfs.New(map[string]string{"g": "1\n2\n3\n4\n5\n6\n7\n8\n"}), 10}}
	res, err := tl.Read(context.Background(), ReadRequest{Path: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "1\n2\n3\n4\n5\n" || res.TotalBytes != 10 || res.Sha256 != sha256Hex([]byte("1\n2\n3\n4\n5\n")) {
		t.Fatalf("%q, totalBytes %d, sha256 %s", res.Content, res.TotalBytes, res.Sha256)
	}
}

// Inside a line of ISO-2022-JP whose state there is ASCII (its last
// escape before the window designates ASCII, or it has none), a window
// decodes as any other: only one inside kanji is NOT_SUPPORTED.
func TestReadStatefulEncodingASCIIMidLine(t *testing.T) {
	kanji := "\x1b$BF|K\\8l\x1b(B"
	for _, line := range []string{strings.Repeat("A", 5000), kanji + strings.Repeat("A", 5000)} {
		file := "ab\n" + line + "\n"
		tl := &Tools{FS: memfs.New(map[string]string{"f": file}), MaxBytes: 2000}
		var chars LineTruncation
		if err := chars.UnmarshalText([]byte("chars:0")); err != nil {
			t.Fatal(err)
		}
		first, err := tl.Read(context.Background(), ReadRequest{Path: "f", Encoding: "iso-2022-jp", LineTruncation: chars, Offset: 2, ByteOffset: 3})
		if err != nil || first.NextByteOffset == nil {
			t.Fatalf("first part: %v", err)
		}
		next, err := tl.Read(context.Background(), ReadRequest{Path: "f", Encoding: "iso-2022-jp", LineTruncation: chars, Offset: 2, ByteOffset: *first.NextByteOffset})
		if err != nil || !strings.HasPrefix(next.Content, "AAAA") {
			t.Fatalf("%.20q...: the next part %+v, %v; want A's", line, next, err)
		}
	}
}

// TestReadByteOffsetInLegacyCharacter: in a multi-byte legacy encoding a
// trail byte can also be a lead or ASCII byte, so a window started inside
// a character decoded garbage (Shift_JIS ソ is 83 5C: "\ソソ…", exit 0) or
// was NOT_TEXT; it is refused as a mid-character byteOffset is in UTF-8.
// The second line follows one of odd length, so that only decoding from
// its own line tells its characters apart.
func TestReadByteOffsetInLegacyCharacter(t *testing.T) {
	for _, tc := range []struct{ enc, char string }{
		{"shift_jis", "ソ"}, {"euc-jp", "あ"}, {"gbk", "中"}, {"gb18030", "中"},
		{"gb18030", "Þ"}, {"big5", "中"}, {"euc-kr", "한"},
	} {
		enc, err := htmlindex.Get(tc.enc)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := enc.NewEncoder().String(tc.char)
		if err != nil {
			t.Fatal(err)
		}
		w := len(ch)
		line1 := "head " + strings.Repeat(ch, 700)
		file := line1 + "\n" + strings.Repeat(ch, 700) + "\n"
		tl := &Tools{FS: memfs.New(map[string]string{"f": file})}
		line2 := len(line1) + 1
		for _, at := range []struct {
			line, off int
			ok        bool
		}{
			{1, 5 + 300*w, true},
			{2, line2, true},
			{2, line2 + 300*w, true},
			{1, 5 + 300*w + 1, false},
			{1, 5 + 300*w + w - 1, false},
			{2, line2 + 300*w + 1, false},
			{2, line2 + 300*w + w - 1, false},
		} {
			res, err := tl.Read(context.Background(), ReadRequest{Path: "f", Encoding: tc.enc, Offset: at.line, ByteOffset: int64(at.off), Limit: 1})
			if !at.ok {
				e := fault.AsError(err)
				if want := "it is inside a " + tc.enc + " character."; e == nil || e.Code != fault.CodeInvalidArgument || !strings.HasSuffix(e.Message, want) {
					t.Errorf("%s %q at %d: %v, want %q", tc.enc, tc.char, at.off, err, want)
				}
				continue
			}
			if err != nil || !strings.HasPrefix(res.Content, tc.char+tc.char) {
				t.Errorf("%s %q at %d: %.20q, %v", tc.enc, tc.char, at.off, res.Content, err)
			}
		}
	}
}

// remoteFS is a memfs that says its reads wait on the network, as an
// object store's do (backend.RemoteReader).
type remoteFS struct{ *memfs.FS }

func (remoteFS) ReadsInFlight() int { return 16 }

// On an object store the lines are counted up to StoreCountMaxBytes, not
// ReadCountMaxBytes: the count downloads what it counts, and a window of
// the first line of a 40 MiB object cost 41.9 MB of GETs. Past it, a
// tail's lines are numbered from the end, as over ReadCountMaxBytes
// locally.
func TestReadCountsLessOnAStore(t *testing.T) {
	for _, size := range []int{StoreCountMaxBytes, StoreCountMaxBytes + 2} {
		file := strings.Repeat("z\n", size/2)
		for _, tc := range []struct {
			name string
			fs   backend.FS
			want bool
		}{
			{"local", memfs.New(map[string]string{"f": file}), true},
			{"store", remoteFS{memfs.New(map[string]string{"f": file})}, size <= StoreCountMaxBytes},
		} {
			tl := &Tools{FS: tc.fs}
			res, err := tl.Read(context.Background(), ReadRequest{Path: "f", Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if counted := res.TotalLines != nil; counted != tc.want {
				t.Errorf("%s, %d bytes: totalLines %v, want counted %v", tc.name, size, res.TotalLines, tc.want)
			}
			tail, err := tl.Read(context.Background(), ReadRequest{Path: "f", Offset: -2})
			if err != nil {
				t.Fatal(err)
			}
			if fromStart := tail.StartLine > 0; fromStart != tc.want {
				t.Errorf("%s, %d bytes: a tail starts at line %d, want numbered from the start %v", tc.name, size, tail.StartLine, tc.want)
			}
		}
	}
}

// A file that became shorter between the open's stat and the read (a
// shell's > or gofmt -w truncating it to write anew) is STALE, as an
// object replaced during a read is: a window to the file's end gave the
// bytes left with exit 0 under the version and totalBytes of the longer
// file, its sha256 that of no version, and a continuation or a tail
// failed IO_ERROR, "check the file system".
func TestReadOfAFileThatShrankIsStale(t *testing.T) {
	tl := &Tools{FS: grownFS{memfs.New(map[string]string{"g": "1\n2\n3\n4\n5\n"}), 40}}
	for _, req := range []ReadRequest{
		{Path: "g"},
		{Path: "g", Offset: 2},
		{Path: "g", Offset: 3, ByteOffset: 4},
		{Path: "g", Offset: 11, ByteOffset: 20},
		{Path: "g", Offset: -2},
	} {
		res, err := tl.Read(context.Background(), req)
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeStale || !errors.Is(err, backend.ErrChangedDuringRead) {
			t.Errorf("offset %d, byteOffset %d: %+v, %v; want STALE", req.Offset, req.ByteOffset, res, err)
		}
	}
}
