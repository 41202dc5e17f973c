package core

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/textfile"
)

// Read caps from the reference.
const (
	ReadMaxLines = 2000
	ReadMaxBytes = 256 << 10
	// ReadMaxMediaBytes is the largest image or PDF returned inline. It is
	// its own bound, not --max-bytes: a model needs the whole image or none.
	ReadMaxMediaBytes = 3584 << 10
)

const (
	// minPiece is the fewest bytes of a line that a window cut inside the
	// line holds from its start. A byteOffset inside a line is accepted
	// only with no newline in the minPiece bytes before it, so a guessed
	// offset into ordinary lines is refused while a continuation of a long
	// line is not. A bound too small for minPiece bytes of a long line
	// (up to 6 times as many in JSON) is TOO_LARGE at that line.
	minPiece = 512
	// readBufSize is the read-ahead of the line reader.
	readBufSize = 64 << 10
)

// ReadLineChars is the default lineTruncation: a line longer than this many
// characters is cut, with a marker, so that one minified line cannot fill
// a window.
const ReadLineChars = 2000

// LineTruncation shortens each line before the byte budget applies: by
// bytes or by characters, exactly one of them; 0 keeps whole lines. Neither
// set is the default, chars 2000.
type LineTruncation struct {
	Bytes *int `json:"bytes,omitempty"`
	Chars *int `json:"chars,omitempty"`
}

// limit is the cut in bytes or in characters; n 0 means whole lines.
func (l LineTruncation) limit() (n int, chars bool) {
	switch {
	case l.Bytes != nil:
		return *l.Bytes, false
	case l.Chars != nil:
		return *l.Chars, true
	}
	return ReadLineChars, true
}

// UnmarshalText parses the flag form: bytes:N or chars:N, or the object
// form its help names too. Its errors are plain: the flag parser names
// the flag.
func (l *LineTruncation) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*l = LineTruncation{} // "" counts as left out, as for any string
		return nil
	}
	if strings.HasPrefix(string(b), "{") {
		if !json.Valid(b) {
			return l.UnmarshalJSON(b) // its own words for what it takes
		}
		// As strictly as a JSON request's lineTruncation: decoded
		// alone, an unknown key ({"lines":3}), one in another case or
		// one given twice was dropped or won, the default cut with exit 0.
		var holder struct {
			LineTruncation LineTruncation `json:"lineTruncation"`
		}
		if err := DecodeJSON(append(append([]byte(`{"lineTruncation":`), b...), '}'), &holder); err != nil {
			return err
		}
		*l = holder.LineTruncation
		return nil
	}
	unit, n, _ := strings.Cut(string(b), ":")
	v, err := strconv.Atoi(n)
	switch {
	case err != nil || v < 0:
		return fmt.Errorf("want chars:N or bytes:N with N at least 0 (0 keeps whole lines), not %q", b)
	case unit == "bytes":
		*l = LineTruncation{Bytes: &v}
	case unit == "chars":
		*l = LineTruncation{Chars: &v}
	default:
		return fmt.Errorf("want chars:N or bytes:N with N at least 0 (0 keeps whole lines), not %q", b)
	}
	return nil
}

// UnmarshalJSON takes the object form {"bytes":N} or {"chars":N}, or the
// flag form as a string.
func (l *LineTruncation) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*l = LineTruncation{} // the default, as for a field left out
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		if err := l.UnmarshalText([]byte(s)); err != nil {
			// The decoder names the field (ownDecoding).
			return fault.InvalidArgument("%s.", err).WithHint(lineTruncationHint)
		}
		return nil
	}
	type plain LineTruncation
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return fault.InvalidArgument(`lineTruncation must be {"chars":N} or {"bytes":N}.`).WithHint(lineTruncationHint)
	}
	*l = LineTruncation(p)
	if !l.set() {
		// Both null, as OpenAI's strict form sends a field left out:
		// the default.
		return nil
	}
	return l.valid()
}

// set reports whether the request names a truncation (else the default).
func (l LineTruncation) set() bool { return l.Bytes != nil || l.Chars != nil }

const lineTruncationHint = "for example --line-truncation chars:200, or bytes:500; chars:0 keeps whole lines"

func (l LineTruncation) valid() error {
	if (l.Bytes == nil) == (l.Chars == nil) {
		return fault.InvalidArgument("lineTruncation takes exactly one of bytes or chars.").WithHint(lineTruncationHint)
	}
	if n, _ := l.limit(); n < 0 {
		return fault.InvalidArgument("lineTruncation must be at least 0, not %d.", n).WithHint(lineTruncationHint)
	}
	return nil
}

// ReadRequest reads one window of a text file, or an image, PDF or the
// description of a binary.
type ReadRequest struct {
	Path               string         `json:"path" arg:"0" alias:"file_path" required:"true" help:"file to read"`
	Offset             int            `json:"offset,omitempty" help:"1-based line to start at; -N starts N lines before the end, as tail -n does; with byteOffset, the number of the line at that byte"`
	ByteOffset         int64          `json:"byteOffset,omitempty" min:"0" help:"byte where the window starts: the previous window's nextByteOffset, given with its nextOffset as offset"`
	Limit              int            `json:"limit,omitempty" min:"1" default:"2000" help:"lines to return; more than 2000 are cut to 2000"`
	IncludeLineNumbers bool           `json:"lineNumbers,omitempty" alias:"includeLineNumbers" help:"prefix each line with its number and a tab"`
	LineTruncation     LineTruncation `json:"lineTruncation,omitzero" default:"chars:2000" help:"cut each line longer than N characters or bytes, with a marker: {\"chars\":N} or {\"bytes\":N}, or as text chars:N or bytes:N; N 0 keeps whole lines"`
	Encoding           string         `json:"encoding,omitempty" help:"decode text in this encoding (latin1, windows-1252, shift_jis, utf-16le...); left out, text is UTF-8, or UTF-16 with a byte-order mark"`
	// ExpectedVersion makes a continuation safe: offsets of a file that
	// changed since the previous window would name other bytes.
	ExpectedVersion string `json:"expectedVersion,omitempty" notEmpty:"true" help:"version of the previous window; STALE if the file changed since"`
}

// ReadResult is what read answers. Kind says which of the embedded parts is
// present: the text window, or the media (data only for image and pdf).
type ReadResult struct {
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
	Kind       string `json:"kind"`
	*TextWindow
	*Media
	Version string `json:"version"`
	// Sha256 is set when every byte of the file was seen.
	Sha256 string `json:"sha256,omitempty"`
}

// TextWindow is a run of whole lines (or, when one line alone exceeds the
// byte budget, a part of it: then nextOffset equals endLine). content ends
// with a newline when its last line had one. CRLF terminators are given as
// "\n" when lineEnding is crlf, and kept as they are when it is mixed, so
// that content plus lineEnding rebuilds the bytes, unless linesCut says
// that lineTruncation cut some lines.
type TextWindow struct {
	Content   string `json:"content"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	// TotalLines is known whenever the file is at most ReadCountMaxBytes
	// (StoreCountMaxBytes on an object store),
	// otherwise once a window numbered from the start reaches the end.
	TotalLines *int `json:"totalLines"`
	// TotalBytes is the file's size when it was opened.
	TotalBytes int64 `json:"totalBytes"`
	Truncated  bool  `json:"truncated"`
	// LinesCut counts the lines that lineTruncation cut: their text ends
	// with a marker, so content is not the file's bytes.
	LinesCut   int  `json:"linesCut,omitempty"`
	NextOffset *int `json:"nextOffset,omitempty"`
	// NextByteOffset is where line nextOffset (or its rest) starts in the file.
	NextByteOffset *int64 `json:"nextByteOffset,omitempty"`
	LineEnding     string `json:"lineEnding"`
	BOM            bool   `json:"bom"`
	// Lead is what the file holds before content that content leaves
	// out, for text output: a UTF-8 byte-order mark, when the window
	// starts the file and has no line numbers.
	Lead     string `json:"-"`
	Encoding string `json:"encoding"`
}

// Media describes an image, a PDF (with its bytes in base64) or a binary.
type Media struct {
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
	Data     string `json:"data,omitempty"`
}

// Read answers one read request. Text is streamed: a window costs what its
// lines cost, and a byteOffset continuation starts reading at that byte.
func (t *Tools) Read(ctx context.Context, req ReadRequest) (*ReadResult, error) {
	if err := req.check(); err != nil {
		return nil, err
	}
	f, err := t.FS.Open(ctx, req.Path)
	if err != nil {
		return nil, t.WithSuggestions(ctx, req.Path, err)
	}
	defer f.Close()
	info := f.Info()
	f = &sizedFile{FileReader: f, rest: info.Size}
	display := t.FS.Display(req.Path)
	if err := checkFinalSlash(req.Path, display, info.Type); err != nil {
		return nil, err
	}
	if req.ExpectedVersion != "" && req.ExpectedVersion != info.Version {
		if e := sha256AsVersion(display, req.ExpectedVersion, info.Version); e != nil {
			return nil, e.WithHint("give as --expected-version the version of the previous window, not its sha256")
		}
		return nil, fault.Errorf(fault.CodeStale, "the file changed since the previous window was read.").WithPath(display).
			WithDetail("currentVersion", info.Version).
			WithHint("its offsets no longer name the same bytes: read it again from the start")
	}
	h := sha256.New()
	br, cls, err := classifyFile(f, h, req, display)
	if err != nil {
		return nil, err
	}
	res := &ReadResult{Kind: string(cls.Kind), Version: info.Version}
	res.Path, res.PathBase64 = fault.PathText(display)
	switch cls.Kind {
	case textfile.KindImage, textfile.KindPDF:
		if req.Offset > 1 || req.Offset < 0 || req.ByteOffset > 0 {
			return nil, fault.InvalidArgument("offset and byteOffset apply to text; this file is %s.", cls.MIME).
				WithPath(display).WithHint("read it without --offset or --byte-offset")
		}
		data, err := readMedia(br, info.Size, display)
		if err != nil {
			return nil, err
		}
		res.Media = &Media{MimeType: cls.MIME, Size: int64(len(data)), Data: base64.StdEncoding.EncodeToString(data)}
		res.Sha256 = hex.EncodeToString(h.Sum(nil))
		return res, nil
	case textfile.KindBinary:
		res.Media = &Media{MimeType: cls.MIME, Size: info.Size}
		return fitted(t, res)
	}
	w := &window{
		t:        t,
		req:      req,
		codec:    cls.Codec,
		display:  display,
		limit:    req.Limit,
		f:        f,
		res:      res,
		countMax: t.countMax(req.Path),
	}
	if w.limit == 0 || w.limit > ReadMaxLines {
		w.limit = ReadMaxLines
	}
	if res.TextWindow, err = w.read(ctx, f, br, h, res); err != nil {
		return nil, err
	}
	return fitted(t, res)
}

// sizedFile is a file whose stream ends at the size its version stands
// for, Info's: every reader of a window goes through it, so that a file
// appended to during the read gives no line past totalBytes. A tail of
// such a file (its lines counted from the start, and so streamed past
// the window's start) gave the lines appended after the ones asked, and
// a window that stopped before the end counted them in totalLines.
type sizedFile struct {
	backend.FileReader
	rest int64
}

func (s *sizedFile) Read(p []byte) (int, error) {
	if s.rest <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > s.rest {
		p = p[:s.rest]
	}
	n, err := s.FileReader.Read(p)
	s.rest -= int64(n)
	return n, err
}

// ReadAhead passes the hint on: a store's reader fetches by it.
func (s *sizedFile) ReadAhead(end int64) { backend.ReadAhead(s.FileReader, end) }

// classifyFile says what f is from the prefix of its bytes, which it peeks
// through the buffered reader the read goes on with, hashing all it reads.
func classifyFile(f backend.FileReader, h hash.Hash, req ReadRequest, display string) (*bufio.Reader, textfile.Class, error) {
	size := bufSize(f.Info().Size)
	if req.ByteOffset > 0 {
		size = textfile.SniffBytes + 1 // only the prefix is read from here
	}
	// f is Read's sizedFile: it stops at the size the version stands for.
	src := io.TeeReader(f, h)
	br := bufio.NewReaderSize(src, size)
	prefix, err := br.Peek(textfile.SniffBytes)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, textfile.Class{}, ioError(err, display)
	}
	cls, err := textfile.Classify(req.Path, prefix, req.Encoding, req.ByteOffset == 0)
	if errors.Is(err, textfile.ErrNotText) {
		return nil, cls, notText(display, "the file is not UTF-8 text", 0, "utf-8")
	}
	if err == nil && req.ByteOffset == 0 && req.Encoding == "" && cls.Kind == textfile.KindText {
		// Binary as grep has it: a NUL in the first 64 KiB of text after
		// a byte-order mark, U+0000 there in UTF-16 (a UTF-8 or UTF-16
		// mark, or none). The magic's 3 KiB called a file with a NUL at
		// byte 5,000 text, which grep and replace then skipped and edit
		// refused.
		need := int(min(int64(cls.Codec.SampleLen()), f.Info().Size))
		if need > br.Size() {
			// The read-ahead (bufSize, at most readBufSize) holds the
			// sample of UTF-8 without a mark; a longer one is read into
			// a reader that holds it, after the bytes br holds.
			held, _ := br.Peek(br.Buffered())
			br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(held)), src), need)
		}
		sample, serr := br.Peek(need)
		if serr != nil && serr != io.EOF && !errors.Is(serr, bufio.ErrBufferFull) {
			return nil, textfile.Class{}, ioError(serr, display)
		}
		if cls.Codec.BinaryHead(sample) {
			cls = textfile.Class{Kind: textfile.KindBinary, MIME: "application/octet-stream"}
		}
	}
	return br, cls, err
}

// read reads the window of text lines from f, whose stream br (hashed by
// h) stands at the start, sized so that res (the result without it) fits
// the bound.
func (w *window) read(ctx context.Context, f backend.FileReader, br *bufio.Reader, h hash.Hash, res *ReadResult) (*TextWindow, error) {
	size := f.Info().Size
	w.size(size)
	lr, start, skip, err := w.start(ctx, f, br, h)
	if err != nil {
		return nil, err
	}
	tw, err := w.run(ctx, lr, start, skip)
	if err != nil {
		return nil, err
	}
	if lr.eof && lr.pos < size {
		// The end came before the size the version stands for: the
		// file was cut (truncated to be written anew) during the read.
		return nil, ioError(errChanged, w.display)
	}
	tw.TotalBytes = size
	if lr.wholeFile() && !tw.Truncated {
		res.Sha256 = lr.sum()
	}
	if tw.TotalLines == nil && start > 0 && size <= w.countMax {
		total, err := w.count(ctx, lr, rawStream(lr.br, lr.src))
		if err != nil {
			return nil, err
		}
		tw.TotalLines = &total
	}
	return tw, nil
}

// count is the number of the file's lines, for a window that stops
// before its end: remembered, or the lines lr has passed and a count of
// the rest, which rest reads from where lr stands. It is counted once per
// read: a window measured before it ends (measure) counts it then.
func (w *window) count(ctx context.Context, lr *lineReader, rest io.Reader) (int, error) {
	if w.total != nil {
		return *w.total, nil
	}
	total, ok := w.t.LineCounts.get(w.display, w.res.Version)
	if !ok {
		backend.ReadAhead(w.f, w.fileSize)
		n, read, err := countLines(ctx, rest, lr.c, lr.pos, w.fileSize-lr.pos)
		if err == nil && read < w.fileSize-lr.pos {
			err = errChanged
		}
		if err != nil {
			return 0, ioError(err, w.display)
		}
		total = w.passed(lr) + n
		if w.req.ByteOffset == 0 && settled(w.f.Info()) {
			// Counted from the file's start: a window placed by a
			// byte offset takes its line number as given, which
			// would be remembered for every read of the file.
			w.t.LineCounts.put(w.display, w.res.Version, total)
		}
	}
	w.total = &total
	return total, nil
}

// start places a line reader where the window starts: at req.ByteOffset,
// at the start of the last lines (a negative offset), or at line 1; start
// is the window's first line, and skip how many lines the reader is to
// skip to reach it.
func (w *window) start(ctx context.Context, f backend.FileReader, br *bufio.Reader, h hash.Hash) (lr *lineReader, start, skip int, err error) {
	req, c := w.req, w.codec
	switch {
	case req.ByteOffset > 0 && req.Offset < 0 && f.Info().Size <= w.countMax:
		return nil, 0, 0, fault.InvalidArgument("offset %d with byteOffset numbers lines from the end, as only a file over %s has them; this one's are numbered from the start.", req.Offset, sizeText(w.countMax)).
			WithPath(w.display).WithHint("pass nextOffset and nextByteOffset of one read together, or --offset -N alone for the last N lines")
	case req.ByteOffset > 0:
		lr, w.midLine, err = openAt(f, req, c, w.display)
		return lr, req.Offset, 0, err
	case req.Offset < 0:
		lr, start, err = w.tail(ctx, f, br, h)
		return lr, start, 0, err
	}
	if _, err := br.Discard(c.BOMLen()); err != nil {
		return nil, 0, 0, ioError(err, w.display)
	}
	lr = &lineReader{br: br, c: c, pos: int64(c.BOMLen()), hash: h, src: f}
	start = max(req.Offset, 1)
	return lr, start, start - 1, nil
}

func (req ReadRequest) check() error {
	if err := Validate(req); err != nil {
		return err
	}
	if req.ByteOffset > 0 && req.Offset == 0 {
		return fault.InvalidArgument("byteOffset is given without offset.").
			WithHint("pass nextOffset and nextByteOffset of the previous read as --offset and --byte-offset together, or --offset alone")
	}
	if req.LineTruncation.set() {
		return req.LineTruncation.valid()
	}
	return nil
}

// size sets the window's budget for content: the bound (at most
// ReadMaxBytes) less the result without content, with every other field at
// its largest (line numbers of either sign beyond the file's bytes and the
// offset asked, a sha256, a line ending of mixed). A line within the
// budget fits whatever the window's end; one over it is measured with the
// fields it would have (measure). room is the content that may fit at
// most, with every field at its least.
func (w *window) size(fileSize int64) {
	w.fileSize, w.bound = fileSize, min(ReadMaxBytes, w.t.maxBytes())
	big := -int(max(fileSize+1, int64(abs(w.req.Offset)+ReadMaxLines+1)))
	big64 := int64(big)
	sk := *w.res
	sk.Sha256 = unknownSha256
	sk.TextWindow = &TextWindow{StartLine: big, EndLine: big, TotalLines: &big, TotalBytes: fileSize,
		Truncated: true, LinesCut: w.limit, NextOffset: &big, NextByteOffset: &big64,
		LineEnding: "mixed", BOM: w.codec.BOMLen() > 0, Encoding: w.codec.Name()}
	// Below 0 when the other fields alone are over the bound (a path
	// longer than it): the first line is then TOO_LARGE, naming the bound
	// that holds it with them.
	w.budget = w.bound - jsonSize(&sk)
	zero := 0
	sk.Sha256 = ""
	sk.TextWindow = &TextWindow{TotalLines: &zero, TotalBytes: fileSize, Truncated: true,
		LineEnding: "lf", BOM: w.codec.BOMLen() > 0, Encoding: w.codec.Name()}
	w.room = w.bound - jsonSize(&sk)
}

// measure is the size of the result of the window with l added as line n
// and ending there, as it would be written: next is where the window
// after it would start (nil when none follows), inside l when continues.
func (w *window) measure(ctx context.Context, lr *lineReader, l winLine, n int, next *int64, continues bool) (int, error) {
	var total *int
	if next != nil && w.first > 0 && w.fileSize <= w.countMax {
		// The bytes the stream holds, then the rest by ReadAt: reading
		// those again was a GET more on an object store.
		held, _ := lr.br.Peek(lr.br.Buffered())
		past := lr.pos + int64(len(held))
		rest := io.MultiReader(bytes.NewReader(held), io.NewSectionReader(w.f, past, w.fileSize-past))
		t, err := w.count(ctx, lr, rest)
		if err != nil {
			return 0, err
		}
		total = &t
	}
	return w.sized(lr, l, n, next, continues, total), nil
}

// fits reports whether the window with l added as line n, a whole line
// (or one lineTruncation cut), and ending there is within the bound. A
// window that is to give a line count it has not counted is sized first
// with the least and the most the count can be: counted here, the rest of
// the file is read a second time, by ReadAt (an object store's GET for
// each 256 KiB), where the count after the window goes on in the stream.
// Between the two, a line after the first ends the window before it, as
// its digits may not fit; the first is measured, as a window of no line
// is none.
func (w *window) fits(ctx context.Context, lr *lineReader, l winLine, n int, next *int64) (bool, error) {
	if next != nil && w.first > 0 && w.fileSize <= w.countMax && w.total == nil {
		// Line n is read whole: one line at least follows, and at most
		// one a unit.
		least, most := n+1, n+1+int((w.fileSize-lr.pos)/int64(w.codec.Unit()))
		if w.sized(lr, l, n, next, false, &most) <= w.bound {
			return true, nil
		}
		if len(w.lines) > 0 || w.sized(lr, l, n, next, false, &least) > w.bound {
			return false, nil
		}
	}
	size, err := w.measure(ctx, lr, l, n, next, false)
	return size <= w.bound, err
}

// sized is measure with the file's line count total (nil when the window
// gives none).
func (w *window) sized(lr *lineReader, l winLine, n int, next *int64, continues bool, total *int) int {
	lines := append(w.lines[:len(w.lines):len(w.lines)], l)
	ending := lineEnding(lines)
	content := w.used + w.cost(l, n)
	tw := &TextWindow{StartLine: w.first, EndLine: n, TotalBytes: w.fileSize, Truncated: next != nil,
		LineEnding: ending, BOM: w.codec.BOMLen() > 0, Encoding: w.codec.Name()}
	for _, l := range lines {
		if l.cut {
			tw.LinesCut++
		}
		if l.term == termCRLF && ending == "crlf" {
			content -= 2 // cost counts the CR, which content leaves out
		}
	}
	sk := *w.res
	switch {
	case next != nil:
		nextLine := n + 1
		if continues {
			nextLine = n
		}
		tw.NextOffset, tw.NextByteOffset, tw.TotalLines = &nextLine, next, total
	case w.first > 0:
		tw.TotalLines = &n
		fallthrough
	default:
		if lr.hash != nil {
			sk.Sha256 = unknownSha256
		}
	}
	sk.TextWindow = tw
	return jsonSize(&sk) + content
}

// after is where the window after one ending with the line lr has just
// read would start, nil when the file ends there.
func (w *window) after(lr *lineReader) (*int64, error) {
	more, err := lr.more()
	if err != nil {
		return nil, ioError(err, w.display)
	}
	if !more {
		return nil, nil
	}
	at := lr.pos
	return &at, nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func readMedia(r io.Reader, size int64, display string) ([]byte, error) {
	tooLarge := func(n int64) error {
		return fault.Errorf(fault.CodeTooLarge, "the file is %d bytes, over the %d bytes (3.5 MiB) returned inline.", n, int64(ReadMaxMediaBytes)).
			WithPath(display).WithDetail("size", n).
			WithHint("use a smaller or downscaled copy of the file")
	}
	if size > ReadMaxMediaBytes {
		return nil, tooLarge(size)
	}
	data, err := io.ReadAll(io.LimitReader(r, ReadMaxMediaBytes+1))
	if err != nil {
		return nil, ioError(err, display)
	}
	if len(data) > ReadMaxMediaBytes {
		return nil, tooLarge(int64(len(data)))
	}
	return data, nil
}

// openAt starts a continuation at req.ByteOffset in f, the file the read
// opened: through ReadAt, so that the window comes from the very version
// the result reports, never from a file replaced since. It reads the few
// bytes before the offset, to check that it starts a line (or continues a
// line longer than a window: midLine), and never the rest of the file; in
// a multi-byte legacy encoding, a midLine offset also the bytes back to
// where a character is sure to start (textfile's StartsCharAt).
func openAt(f backend.FileReader, req ReadRequest, c textfile.Codec, display string) (lr *lineReader, midLine bool, err error) {
	off, bomLen := req.ByteOffset, int64(c.BOMLen())
	notStart := func(why string) error {
		return fault.InvalidArgument("byteOffset %d is not the start of a line: %s.", off, why).WithPath(display).
			WithHint("pass nextOffset and nextByteOffset of the previous read as --offset and --byte-offset together, or --offset alone")
	}
	if off < bomLen || off%int64(c.Unit()) != 0 {
		return nil, false, notStart("it is inside a character or the byte-order mark")
	}
	if nl := int64(len(c.Newline())); req.Offset > 0 && int64(req.Offset-1) > (off-bomLen)/nl {
		// Each line before it ends in a newline: taken as given, line
		// 9 at byte 5 was lines 9 and 10 of 10 in a file of 3, and line
		// 2^63-1 ended at line -2^63.
		return nil, false, fault.InvalidArgument("offset %d cannot start at byteOffset %d: the %d lines before it end in a newline each, more than the %d bytes before it hold.", req.Offset, off, req.Offset-1, off-bomLen).
			WithPath(display).WithHint("pass nextOffset and nextByteOffset of the same read together, or --offset alone (as --offset 1 once the file has changed)")
	}
	back := min(off-bomLen, minPiece)
	if back == 0 {
		back = off // right after the byte-order mark: line 1
	}
	size := f.Info().Size
	if off >= size {
		return nil, false, fault.InvalidArgument("byteOffset %d is at or past the end of the file (%d bytes).", off, size).
			WithPath(display).WithDetail("size", size).
			WithHint("the previous read was the last window; read from the start (--offset 1) if the file changed")
	}
	sec := io.NewSectionReader(f, off-back, size-off+back)
	br := bufio.NewReaderSize(sec, bufSize(size-off+back))
	before := make([]byte, back)
	if _, err := io.ReadFull(br, before); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = errChanged // shorter than its size at open
		}
		return nil, false, ioError(err, display)
	}
	lr = &lineReader{br: br, c: c, pos: off, src: sec}
	if off == bomLen || endsWith(before, c.Newline()) {
		return lr, false, nil
	}
	next, _ := br.Peek(c.Unit())
	switch {
	case back < minPiece:
		err = notStart("it is too near the start of its line")
	case indexUnit(before, c.Newline(), c.Unit()) >= 0:
		err = notStart("a line starts in the bytes before it")
	case endsWith(before, c.CR()) && string(next) == string(c.Newline()):
		err = notStart("it splits a CRLF")
	case c.IsUTF8() && len(next) > 0 && !utf8.RuneStart(next[0]):
		err = notStart("it is inside a UTF-8 character")
	case c.Stateful() && !asciiAt(f, off):
		// Decoded from here, the line's kanji came back as the ASCII of
		// their bytes, exit 0.
		err = fault.Errorf(fault.CodeNotSupported, "byteOffset %d is inside a line of %s text, whose bytes mean what the escapes before them in the line say: a part of the line cannot be decoded alone.", off, c.Name()).
			WithPath(display).WithHint("read the whole line: raise --max-bytes, or give --line-truncation chars:N to see it cut")
	}
	if err != nil {
		return nil, false, err
	}
	if ok, err := c.StartsCharAt(f, off); err != nil {
		return nil, false, ioError(err, display)
	} else if !ok {
		return nil, false, notStart("it is inside a " + c.Name() + " character")
	}
	return lr, true, nil
}

// asciiAt reports whether ISO-2022-JP text is in its initial state (ASCII
// or JIS-Roman, which decode alike from there) at byte off: the last
// escape before it in its line designates one of them, or the line has
// none. It reads back from off, a chunk at a time, to that escape or the
// line's start.
func asciiAt(f io.ReaderAt, off int64) bool {
	const chunk = 4096
	buf := make([]byte, chunk+2)
	for end := off; end > 0; {
		start := max(end-chunk, 0)
		// With the two bytes after the chunk, which an escape at its end
		// designates with (off ends the text: an escape cut there is
		// not whole, and decodes as nothing known).
		b := buf[:min(end+2, off)-start]
		if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
			return false
		}
		seen := b[:end-start]
		esc, nl := bytes.LastIndexByte(seen, 0x1b), bytes.LastIndexByte(seen, '\n')
		switch {
		case esc > nl:
			d := b[esc+1:]
			return len(d) >= 2 && d[0] == '(' && (d[1] == 'B' || d[1] == 'J')
		case nl >= 0:
			return true
		}
		end = start
	}
	return true
}

// bufSize fits the read-ahead to a small file: paging one with many tiny
// windows should not allocate a full buffer for each.
func bufSize(n int64) int {
	return int(min(max(n+1, textfile.SniffBytes+1), readBufSize))
}

func endsWith(b, unit []byte) bool {
	return len(b) >= len(unit) && string(b[len(b)-len(unit):]) == string(unit)
}

// indexUnit finds unit in b at a multiple of its width.
func indexUnit(b, unit []byte, width int) int {
	for i := 0; i+len(unit) <= len(b); i += width {
		if string(b[i:i+len(unit)]) == string(unit) {
			return i
		}
	}
	return -1
}

func ioError(err error, display string) error {
	if e := (*fault.Error)(nil); errors.As(err, &e) {
		return e
	}
	if errors.Is(err, errChanged) {
		// As an object replaced during a read is: no failing disk.
		return fault.Errorf(fault.CodeStale, "the file changed while it was read: it became shorter than when it was opened (another program truncated it, to write it anew).").WithPath(display).
			WithHint("read it again from the start").WithCause(backend.ErrChangedDuringRead)
	}
	return fault.Errorf(fault.CodeIOError, "the file could not be read.").WithPath(display).WithCause(err).
		WithHint("retry; if it persists, check the file system")
}

// badLine is the NOT_TEXT of line n, which the window's codec cannot
// decode. In UTF-16 (only an unpaired surrogate or an odd byte at the
// end fails it), another encoding is no way out: it would show the
// file's ASCII beside NULs.
func (w *window) badLine(n int) error {
	what := fmt.Sprintf("line %d is not valid %s", n, w.codec.Name())
	if w.codec.Unit() != 2 {
		return notText(w.display, what, n, w.codec.Name())
	}
	hint := "read the lines around it with --offset and --limit; the line can be changed only by writing the file whole with write"
	if w.req.Encoding != "" && w.codec.BOMLen() == 0 {
		// Named by the caller, on a file with no mark of it: the guess
		// may be what is wrong (a UTF-8 file of an odd size).
		hint += "; if the file is not UTF-16, read it without --encoding, or name the encoding it is in"
	}
	return fault.Errorf(fault.CodeNotText, "%s: it holds an unpaired surrogate, or the file ends in half a code unit.", what).
		WithPath(w.display).WithDetail("line", n).WithHint("%s", hint)
}

// notText is the NOT_TEXT of a file that is not valid in the encoding
// it was read in, whose hint names others, never that one: latin1 reads
// every byte.
func notText(display, what string, line int, encoding string) error {
	other := "shift_jis"
	if encoding == other {
		other = "euc-jp"
	}
	e := fault.Errorf(fault.CodeNotText, "%s.", what).WithPath(display).
		WithHint(`if it is text in another encoding, pass it: --encoding latin1 or {"encoding":%q}`, other)
	if line > 0 {
		e.WithDetail("line", line)
	}
	return e
}

// window collects the lines of one text result.
type window struct {
	t       *Tools
	req     ReadRequest
	codec   textfile.Codec
	display string
	limit   int
	f       backend.FileReader
	// res is the result without its window.
	res *ReadResult
	// bound is the most the result may take; budget and room the content
	// that fits it at least and at most (see size).
	bound, budget, room int
	fileSize            int64
	// countMax is the largest file whose lines are counted (countMax).
	countMax int64
	// first is the window's first line; total the file's line count once
	// counted (count).
	first int
	total *int
	// midLine is set when the window starts inside a line, after a part
	// of it that an earlier window held.
	midLine bool

	lines []winLine
	used  int
	// reading is the number of the line lr last began.
	reading int
}

type termKind uint8

const (
	termNone termKind = iota
	termLF
	termCRLF
)

type winLine struct {
	text string
	term termKind
	// cut is set when lineTruncation cut the line's text.
	cut bool
}

// run reads the window from lr: skips skip lines to the first, numbered
// start (negative when counted from the end), then takes whole lines until a
// cap.
func (w *window) run(ctx context.Context, lr *lineReader, start, skip int) (*TextWindow, error) {
	if err := w.skip(ctx, lr, start, skip); err != nil {
		return nil, err
	}
	w.first = start
	truncated, continues, next, err := w.fill(ctx, lr, start)
	if err != nil {
		return nil, err
	}
	count := len(w.lines)
	if count == 0 && (start > 1 || w.req.ByteOffset > 0) {
		return nil, pastEnd(start, start-1, w.display)
	}
	tw := &TextWindow{
		StartLine: start,
		EndLine:   start + count - 1,
		Truncated: truncated,
		BOM:       w.codec.BOMLen() > 0,
		Encoding:  w.codec.Name(),
	}
	tw.Content, tw.LineEnding = w.render(start)
	if tw.BOM && start == 1 && w.req.ByteOffset == 0 && !w.req.IncludeLineNumbers && w.codec.Name() == "utf-8" {
		tw.Lead = "\uFEFF"
	}
	for _, l := range w.lines {
		if l.cut {
			tw.LinesCut++
		}
	}
	if truncated {
		nextLine := tw.EndLine + 1
		if continues {
			nextLine = tw.EndLine
		}
		tw.NextOffset, tw.NextByteOffset = &nextLine, next
	} else if start > 0 {
		total := tw.EndLine
		tw.TotalLines = &total
	}
	return tw, nil
}

// skip passes the skip lines before line start.
func (w *window) skip(ctx context.Context, lr *lineReader, start, skip int) error {
	for n := 1; n <= skip; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err() // skipping to a far offset can take long
		}
		ok, err := lr.skipLine()
		if err != nil {
			return ioError(err, w.display)
		}
		if !ok {
			return pastEnd(start, n-1, w.display)
		}
	}
	return nil
}

// fill reads the window's lines from line start until the window is full,
// the bound cuts it (truncated, with next the byte offset to go on from;
// continues when that is inside a line), or the file ends.
func (w *window) fill(ctx context.Context, lr *lineReader, start int) (truncated, continues bool, next *int64, err error) {
	for len(w.lines) < w.limit {
		lineStart := lr.pos
		n := start + len(w.lines)
		w.reading = n
		raw, err := lr.next(w.rawLimit())
		if err != nil {
			return false, false, nil, ioError(err, w.display)
		}
		if lr.atEnd() {
			break
		}
		line, fits, err := w.take(ctx, raw, lr, n)
		if err != nil {
			return false, false, nil, err
		}
		if fits {
			w.lines = append(w.lines, *line)
			continue
		}
		if len(w.lines) > 0 {
			return true, false, &lineStart, nil
		}
		next, err := w.piece(ctx, lr, w.body(raw, lr), n, line, lineStart)
		return next != nil, next != nil, next, err
	}
	if len(w.lines) == w.limit {
		more, err := lr.more()
		if err != nil {
			return false, false, nil, ioError(err, w.display)
		}
		if more {
			at := lr.pos
			return true, false, &at, nil
		}
	}
	return false, false, nil, nil
}

// passed is how many lines end before where lr stands after run: those up
// to the last it began, less that one when lr stopped inside it.
func (w *window) passed(lr *lineReader) int {
	if lr.lineDone() {
		return w.reading
	}
	return w.reading - 1
}

func pastEnd(offset, lines int, display string) error {
	return fault.InvalidArgument("offset %d is past the end of the file, which has %d line(s).", offset, lines).
		WithPath(display).WithDetail("totalLines", lines).
		WithHint("pass an --offset up to %d, or --offset -N for the last N lines", max(lines, 1))
}

// rawLimit is how many raw bytes of a line may still fit: decoded text is
// at least half its raw size (UTF-16) and JSON never shrinks it.
func (w *window) rawLimit() int {
	room := 2*(w.room-w.used) + 8
	if len(w.lines) == 0 {
		// Enough for the least piece of a first line, or to size it.
		room = max(room, minPiece+8)
	}
	if n, _ := w.req.LineTruncation.limit(); n > 0 {
		// A character takes at most 4 bytes in every supported encoding.
		room = min(room, 4*min(n, ReadMaxBytes)+8)
	}
	return max(room, 0)
}

// take decodes one raw line (all of it, or its first rawLimit bytes) and
// reports whether it fits the bound whole, after any lineTruncation; the
// line is returned either way when it was read whole or cut, else nil.
func (w *window) take(ctx context.Context, raw []byte, lr *lineReader, n int) (*winLine, bool, error) {
	line, err := w.decode(raw, lr, n)
	if line == nil || err != nil {
		return nil, false, err
	}
	cost := w.cost(*line, n)
	if w.used+cost > w.budget {
		next, err := w.after(lr)
		if err != nil {
			return nil, false, err
		}
		if fits, err := w.fits(ctx, lr, *line, n, next); err != nil || !fits {
			return line, false, err
		}
	}
	w.used += cost
	return line, true, nil
}

// decode is line n, of which lr has read raw, as a window holds it: its
// text, after any lineTruncation, and its terminator; nil when the line
// was read neither whole nor to be cut. lr is past a line it cuts.
func (w *window) decode(raw []byte, lr *lineReader, n int) (*winLine, error) {
	full := lr.lineDone() && len(raw) == lr.lineLen
	cutAt, chars := w.req.LineTruncation.limit()
	if !full && cutAt == 0 {
		return nil, nil
	}
	body, term := raw, termNone
	if full {
		body, term = w.splitTerm(raw)
	} else {
		body = body[:w.codec.Boundary(body, len(body))]
	}
	text, err := w.codec.Decode(body)
	if err != nil {
		return nil, w.badLine(n)
	}
	line := winLine{text: text, term: term}
	if cutAt > 0 {
		if !full {
			if err := lr.skipRest(); err != nil {
				return nil, ioError(err, w.display)
			}
			line.term = lr.lastTerm
		}
		cut, ok := truncateLine(text, cutAt, chars)
		if !ok && !full {
			// Its cut lies past what was read: neither is known.
			return nil, nil
		}
		if ok {
			size := lr.lineLen - termLen(line.term, w.codec.Unit())
			line.text, line.cut = cut+lineCutMarker(int64(size)), true
		}
	}
	return &line, nil
}

// body is a line without its terminator when the whole line was read.
func (w *window) body(raw []byte, lr *lineReader) []byte {
	if lr.lineDone() && len(raw) == lr.lineLen {
		raw, _ = w.splitTerm(raw)
	}
	return raw
}

// piece fills a window whose first line, n, does not fit whole with a
// continuation after it: with the lines through the end of the file when
// they fit (toEnd), returning nil, else with the largest start of line n
// that fits, cut at a character boundary and never between CR and LF,
// returning where its rest starts. The piece holds at least minPiece
// bytes of a line it starts, so that its continuation is accepted, and a
// character of one it continues; when neither answer fits, the line is
// TOO_LARGE, naming the size of the least. whole is the line when all of
// it was read or lineTruncation cut it (else nil), lr the reader past what
// was read of it, lineStart its offset.
func (w *window) piece(ctx context.Context, lr *lineReader, raw []byte, n int, whole *winLine, lineStart int64) (*int64, error) {
	c := w.codec
	bad := w.badLine(n)
	head, err := c.Decode(raw[:c.Boundary(raw, len(raw))])
	if err != nil {
		return nil, bad
	}
	// cut is the piece up to k, at a boundary: without a CR it ends on,
	// which may be half a CRLF.
	cut := func(k int) int {
		if endsWith(raw[:k], c.CR()) {
			k -= c.Unit()
		}
		return k
	}
	// size measures the window of the piece cut at k.
	size := func(k int) (int, error) {
		k = cut(k)
		text, err := c.Decode(raw[:k])
		if err != nil {
			return 0, bad
		}
		at := lineStart + int64(k)
		return w.measure(ctx, lr, winLine{text: text}, n, &at, true)
	}
	// A piece leaves its continuation at least a character: all of the
	// last line, without a newline, is no piece but the line whole.
	most := len(raw)
	if lr.lineDone() && len(raw) == lr.lineLen {
		most -= c.Unit()
	}
	// The least piece ends at the first boundary one unit past least, so
	// that it still holds least bytes if it must not end on a CR.
	least := c.Unit()
	if !w.midLine {
		least = minPiece
	}
	kLeast, found := 0, false
	for k := least + c.Unit(); k <= min(most, least+c.Unit()+utf8.UTFMax); k++ {
		if b := c.Boundary(raw, k); b >= least+c.Unit() {
			kLeast, found = b, true
			break
		}
	}
	// The least answer: the least piece, or the line whole (or cut)
	// when that is smaller (a last line has no continuation to name).
	needed := math.MaxInt
	if whole != nil {
		next, err := w.after(lr)
		if err == nil {
			needed, err = w.measure(ctx, lr, *whole, n, next, false)
		}
		if err != nil {
			return nil, err
		}
	}
	if found {
		m, err := size(kLeast)
		if err != nil {
			return nil, err
		}
		needed = min(needed, m)
	}
	// The window through the end counts when it fits, or as the least
	// answer (none over ReadMaxBytes is given).
	end, err := w.toEnd(ctx, lr, whole, head, len(raw), n, lineStart, min(max(w.bound, needed-1), ReadMaxBytes))
	if err != nil || end <= w.bound {
		return nil, err
	}
	needed = min(needed, end)
	if needed > w.bound {
		what := fmt.Sprintf("line %d does not fit, whole or in a part of %d bytes", n, least)
		switch {
		case w.midLine:
			what = fmt.Sprintf("the next character of line %d does not fit", n)
		case !found:
			what = fmt.Sprintf("line %d does not fit; only a line over %d bytes comes in parts", n, least)
		}
		hint := "raise --max-bytes to %d or more, or cut long lines with --line-truncation chars:N"
		at := lineStart
		if bare, _ := w.measure(ctx, lr, winLine{}, n, &at, true); bare > w.bound {
			// No cut helps: the fields around the text (a long path) are
			// over the bound.
			what = fmt.Sprintf("line %d does not fit, even with none of its text", n)
			hint = "raise --max-bytes to %d or more"
		}
		e := w.t.tooLarge(needed, what)
		return nil, e.WithPath(w.display).WithDetail("line", n).WithHint(hint, w.t.raiseTo(needed))
	}
	// Measured once past the least piece, a window's line count is
	// known: size fails no more.
	lo, hi := kLeast, most
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if m, err := size(c.Boundary(raw, mid)); err == nil && m <= w.bound {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	k := cut(c.Boundary(raw, lo))
	text, err := c.Decode(raw[:k])
	if err != nil || k == 0 {
		return nil, bad
	}
	w.used += w.cost(winLine{text: text}, n)
	w.lines = append(w.lines, winLine{text: text})
	at := lineStart + int64(k)
	return &at, nil
}

// toEnd is the size of the window of the first line n, which starts at
// lineStart, through the end of the file, when that is at most most, else
// math.MaxInt; a window that fits the bound is w's. Without a sha256 (a
// tail or a byteOffset window), a window that runs to the end names no
// continuation, and a short rest may cost less than nextOffset and
// nextByteOffset. line is line n as take read it (nil when it was read
// neither whole nor cut), head the text of the first read bytes of it, lr
// the reader past them. It reads on in a reader of its own, from what lr
// holds: at most the bytes that may fit most, and the rest of the lines
// lineTruncation cuts.
func (w *window) toEnd(ctx context.Context, lr *lineReader, line *winLine, head string, read, n int, lineStart int64, most int) (int, error) {
	if lr.hash != nil {
		// Its sha256 makes it longer than the continuation.
		return math.MaxInt, nil
	}
	from, first, rest := lineStart, winLine{text: head}, w.fileSize-lineStart-int64(read)
	if line != nil {
		from, first, rest = lr.pos, *line, w.fileSize-lr.pos
	}
	// Its least: first, which the window holds all of, and the rest at
	// half a JSON byte a raw byte (UTF-16), or a cut line's marker. Sized
	// without its terminator, first has line ending none, as long as lf
	// and the \n it leaves out.
	least := int(min(rest/2, int64(len(lineCutMarker(0)))))
	if cutAt, _ := w.req.LineTruncation.limit(); cutAt == 0 {
		least = int(min(rest/2, math.MaxInt32))
	}
	if rest <= 0 || w.sized(lr, first, n, nil, false, nil)+least > most {
		return math.MaxInt, nil
	}
	e := *w
	var held []byte
	if line != nil {
		held, _ = lr.br.Peek(lr.br.Buffered())
	}
	past := from + int64(len(held))
	la := &lineReader{c: w.codec, pos: from, br: bufio.NewReaderSize(io.MultiReader(bytes.NewReader(held),
		io.NewSectionReader(w.f, past, w.fileSize-past)), bufSize(w.fileSize-from))}
	m := n
	if line == nil {
		m--
	}
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		size := 0
		if line != nil {
			// The window as if the file ended after line: it ends in
			// a newline unless it does, and more lines only add to it.
			if size = e.sized(lr, *line, m, nil, false, nil); size > most {
				return math.MaxInt, nil
			}
		}
		limit := 2*(most-size) + 8
		if k, _ := w.req.LineTruncation.limit(); k > 0 {
			limit = min(limit, 4*min(k, ReadMaxBytes)+8)
		}
		raw, err := la.next(limit)
		if err != nil {
			return 0, ioError(err, w.display)
		}
		if la.atEnd() {
			if line == nil {
				return math.MaxInt, nil // the file became shorter
			}
			if size <= w.bound {
				e.used += e.cost(*line, m)
				w.lines, w.used = append(e.lines, *line), e.used
			}
			return size, nil
		}
		if line != nil {
			if len(e.lines)+1 >= w.limit {
				return math.MaxInt, nil
			}
			e.used += e.cost(*line, m)
			e.lines = append(e.lines, *line)
		}
		m++
		if cutAt, chars := w.req.LineTruncation.limit(); cutAt > 0 && !la.lineDone() {
			// decode reads a line read in part to its end (a long last
			// line: all of it, by ReadAt) before it finds that its cut
			// lies past what was read, or for the marker of a cut that
			// may not fit: the cut is to be in what was read, and to fit
			// with the least marker and no terminator (which costs no
			// less than line ending none).
			text, err := w.codec.Decode(raw[:w.codec.Boundary(raw, len(raw))])
			if err != nil {
				return math.MaxInt, nil // a later window says so
			}
			cut, ok := truncateLine(text, cutAt, chars)
			if !ok {
				return math.MaxInt, nil // longer than most leaves room for
			}
			least := winLine{text: cut + lineCutMarker(int64(len(raw))), cut: true}
			if e.sized(la, least, m, nil, false, nil) > most {
				return math.MaxInt, nil
			}
		}
		line, err = e.decode(raw, la, m)
		if fe := fault.AsError(err); fe != nil && fe.Code == fault.CodeNotText {
			return math.MaxInt, nil // a later window says so
		}
		if err != nil {
			return 0, err
		}
		if line == nil {
			return math.MaxInt, nil // longer than most leaves room for
		}
	}
}

func (w *window) splitTerm(raw []byte) ([]byte, termKind) {
	c := w.codec
	if !endsWith(raw, c.Newline()) {
		return raw, termNone
	}
	body := raw[:len(raw)-c.Unit()]
	if endsWith(body, c.CR()) {
		return body[:len(body)-c.Unit()], termCRLF
	}
	return body, termLF
}

func termLen(t termKind, unit int) int {
	switch t {
	case termLF:
		return unit
	case termCRLF:
		return 2 * unit
	}
	return 0
}

// cost is a line's size in the JSON result, CRLF counted as kept.
func (w *window) cost(l winLine, n int) int {
	c := jsonLen(l.text) + 2*int(l.term)
	if w.numbered(len(w.lines) == 0) {
		c += len(strconv.Itoa(n)) + 2
	}
	return c
}

// numbered reports whether a line of the window, the first or another,
// is prefixed with its number: not the rest of a line an earlier window
// began, which joined to it would hold its number mid-line (--all).
func (w *window) numbered(first bool) bool {
	return w.req.IncludeLineNumbers && !(first && w.midLine)
}

// render joins the lines and names their line ending. A window of CRLF
// lines one of which ends in a CR (CR CR LF: unix2dos run twice) is mixed
// too, its endings kept: in content without the CR of its endings, that
// CR before LF read as a CRLF, and write, given the content back, dropped
// it.
func (w *window) render(start int) (string, string) {
	ending := lineEnding(w.lines)
	var b strings.Builder
	for i, l := range w.lines {
		if w.numbered(i == 0) {
			b.WriteString(strconv.Itoa(start + i))
			b.WriteByte('\t')
		}
		b.WriteString(l.text)
		switch {
		case l.term == termCRLF && ending == "mixed":
			b.WriteString("\r\n")
		case l.term != termNone:
			b.WriteByte('\n')
		}
	}
	return b.String(), ending
}

// lineEnding names the line ending of a window of lines.
func lineEnding(lines []winLine) string {
	var lf, crlf, crBefore bool
	for _, l := range lines {
		lf = lf || l.term == termLF
		crlf = crlf || l.term == termCRLF
		crBefore = crBefore || l.term == termCRLF && strings.HasSuffix(l.text, "\r")
	}
	switch {
	case crlf && (lf || crBefore):
		return "mixed"
	case crlf:
		return "crlf"
	case lf:
		return "lf"
	}
	return "none"
}

// truncateLine cuts a line's text to limit bytes or characters, at a
// character boundary; ok reports a cut.
func truncateLine(s string, limit int, chars bool) (string, bool) {
	if !chars {
		if len(s) <= limit {
			return s, false
		}
		k := limit
		for k > 0 && !utf8.RuneStart(s[k]) {
			k--
		}
		return s[:k], true
	}
	i, n := 0, 0
	for i < len(s) && n < limit {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return s[:i], i < len(s)
}

// jsonLen is the length of s as a JSON string body, as encoding/json
// writes it without HTML escaping.
func jsonLen(s string) int {
	n := 0
	for i, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
			n += 2
		case r < 0x20 || r == '\u2028' || r == '\u2029':
			n += 6
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			n += 6 // a byte that is not UTF-8, written \ufffd
		default:
			n += utf8.RuneLen(r)
		}
	}
	return n
}

// lineReader splits a raw byte stream into lines on the codec's newline
// unit, tracking the file offset, without ever holding more of a line than
// asked for.
type lineReader struct {
	br *bufio.Reader
	c  textfile.Codec
	// pos is the file offset of the next unread byte.
	pos int64
	// hash, when set, has seen every byte from offset 0.
	hash hash.Hash
	// src is the reader under br, without the hash: what follows br's
	// buffer in the file.
	src io.Reader

	buf []byte
	// lineLen is the raw length of the current line read so far.
	lineLen int
	// inLine is set while the current line's end has not been read.
	inLine   bool
	eof      bool
	lastTerm termKind
	// tail holds the last bytes consumed, for a terminator split across
	// reads of a long line.
	tail []byte
}

// next reads one line, terminator included, keeping its first limit bytes.
func (r *lineReader) next(limit int) ([]byte, error) {
	r.buf, r.tail, r.lineLen, r.inLine = r.buf[:0], r.tail[:0], 0, true
	for r.inLine {
		if len(r.buf) >= limit {
			return r.buf, nil
		}
		chunk, err := r.consume()
		r.buf = append(r.buf, chunk[:min(limit-len(r.buf), len(chunk))]...)
		if err != nil {
			return r.buf, err
		}
	}
	return r.buf, nil
}

// consume reads the next run of the current line, up to and including a
// newline, and records whether the line ended.
func (r *lineReader) consume() ([]byte, error) {
	chunk, err := r.br.ReadSlice('\n')
	r.pos += int64(len(chunk))
	r.lineLen += len(chunk)
	switch {
	case err == io.EOF:
		r.inLine, r.eof = false, true
		r.lastTerm = termNone
		return chunk, nil
	case errors.Is(err, bufio.ErrBufferFull):
		r.remember(chunk)
		return chunk, nil
	case err != nil:
		return chunk, err
	}
	r.remember(chunk)
	switch {
	case r.c.Unit() == 1:
		r.inLine = false
	case r.c.BigEndian():
		// 00 0A ends a line when the 0A is at an odd offset.
		r.inLine = !(r.pos%2 == 0 && len(r.tail) >= 2 && r.tail[len(r.tail)-2] == 0)
	case r.pos%2 == 1:
		// 0A 00 at an even offset; Peek may move the buffer, so copy first.
		chunk = append([]byte(nil), chunk...)
		if b, _ := r.br.Peek(1); len(b) == 1 && b[0] == 0 {
			r.br.Discard(1)
			r.pos++
			r.lineLen++
			chunk = append(chunk, 0)
			r.remember(chunk[len(chunk)-1:])
			r.inLine = false
		}
	}
	if !r.inLine {
		r.lastTerm = termLF
		// tail holds only this line's bytes.
		if u := r.c.Unit(); len(r.tail) >= 2*u &&
			string(r.tail[len(r.tail)-2*u:len(r.tail)-u]) == string(r.c.CR()) {
			r.lastTerm = termCRLF
		}
	}
	return chunk, nil
}

// remember keeps the last four bytes consumed in the current line.
func (r *lineReader) remember(chunk []byte) {
	r.tail = append(r.tail, chunk[max(0, len(chunk)-4):]...)
	if len(r.tail) > 4 {
		r.tail = append(r.tail[:0], r.tail[len(r.tail)-4:]...)
	}
}

// skipRest consumes the rest of the current line.
func (r *lineReader) skipRest() error {
	for r.inLine {
		if _, err := r.consume(); err != nil {
			return err
		}
	}
	return nil
}

// skipLine consumes one whole line; ok is false at the end of the file.
func (r *lineReader) skipLine() (bool, error) {
	if _, err := r.next(0); err != nil {
		return false, err
	}
	if err := r.skipRest(); err != nil {
		return false, err
	}
	return !r.atEnd(), nil
}

// atEnd reports that the last next found no line at all.
func (r *lineReader) atEnd() bool { return r.eof && r.lineLen == 0 }

// lineDone reports that the current line's end has been read.
func (r *lineReader) lineDone() bool { return !r.inLine }

// more reports whether any byte follows the current position.
func (r *lineReader) more() (bool, error) {
	_, err := r.br.Peek(1)
	if err == io.EOF {
		r.eof = true
		return false, nil
	}
	return err == nil, err
}

func (r *lineReader) wholeFile() bool { return r.hash != nil && r.eof }

func (r *lineReader) sum() string { return hex.EncodeToString(r.hash.Sum(nil)) }
