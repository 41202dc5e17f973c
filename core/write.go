package core

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/textfile"
)

// MaxWriteBytes caps the content of one write; larger files change by edit.
const MaxWriteBytes = 2 << 20

// WriteRequest replaces (or creates) one file with the given content.
type WriteRequest struct {
	Path string `json:"path" arg:"0" alias:"file_path" required:"true" help:"file to write; missing parent directories are created"`
	// The content comes from exactly one of Content, ContentFile and
	// ContentBase64; none is INVALID_ARGUMENT, so that a forgotten content
	// (or an empty stdin) never empties a file. Content is a pointer for that:
	// "" is given explicitly.
	Content     *string `json:"content,omitempty" help:"the whole new content; \"\" empties the file"`
	ContentFile string  `json:"contentFile,omitempty" help:"a file inside the roots whose bytes are the content (on the command line, - reads standard input)"`
	// ContentBase64 carries bytes that are not UTF-8.
	ContentBase64 string `json:"contentBase64,omitempty" help:"the content as base64, for bytes that are not UTF-8"`
	// LineEnding and BOM override the style an existing file keeps (see
	// textfile.Styled); they apply to text content only.
	LineEnding string `json:"lineEnding,omitempty" enum:"lf,crlf" help:"the line endings to write; left out, an existing file keeps its own and a new one takes the content's"`
	BOM        *bool  `json:"bom,omitempty" help:"true writes a byte-order mark and false none; left out, an existing file keeps its own"`
	// Encoding names the encoding as read's --encoding does, so that
	// what read gave in it goes back as the same bytes.
	Encoding   string `json:"encoding,omitempty" help:"write the text in this encoding (latin1, windows-1252, shift_jis, utf-16le..., as read's encoding); left out, UTF-8, or UTF-16 for a file with a UTF-16 byte-order mark"`
	Create     bool   `json:"create,omitempty" help:"only create: EXISTS when the file is already there"`
	Executable bool   `json:"executable,omitempty" help:"a new file gets mode 0777 instead of 0666, less the umask"`
	InPlace    bool   `json:"inPlace,omitempty" help:"rewrite a file with other hard links, or one a replace would give this user as owner, through its inode (not atomic)"`
	Append     bool   `json:"append,omitempty" help:"add the content at the end of the file (created when missing), all or nothing, under the lock"`
	Precondition
}

// WriteResult says what a write did. NoChange is set when the file already
// had this content: nothing was written and its mtime is kept. For text
// content, LineEnding and BOM describe the file as written (as read reports
// them), and Encoding names a UTF-16 file's encoding, or the one the
// request named.
type WriteResult struct {
	Path         string `json:"path"`
	PathBase64   string `json:"pathBase64,omitempty"`
	BytesWritten int    `json:"bytesWritten"`
	Created      bool   `json:"created"`
	NoChange     bool   `json:"noChange"`
	LineEnding   string `json:"lineEnding,omitempty"`
	BOM          *bool  `json:"bom,omitempty"`
	Encoding     string `json:"encoding,omitempty"`
	Version      string `json:"version"`
	Sha256       string `json:"sha256"`
	// Appended is set by an append, for text output: BytesWritten is
	// then what it added, not the file.
	Appended bool `json:"-"`
}

// legacyAppendHint is the hint of an append of content that is not ASCII
// to a file in an encoding agentfs cannot tell: --encoding, which appends
// in the encoding named, first with latin1 when that holds the content.
func legacyAppendHint(content string) string {
	const rest = "; or append the bytes in the file's encoding with --content-base64, or rewrite the file whole with write; nothing was changed"
	if c, err := textfile.NamedEncoding("latin1", nil); err == nil && c.CheckEncodable(content) == nil {
		return "if the file is Latin-1, append with --encoding latin1, or name the encoding it is in (--encoding shift_jis...)" + rest
	}
	return "name the encoding the file is in with --encoding (shift_jis, euc-jp...) to append the content in it: Latin-1 cannot hold it" + rest
}

// readOnlyLeft is what --readonly leaves: the tools that change no file,
// and the index command, which writes only the state directory.
const readOnlyLeft = "only read, ls, find and grep, and the index command, are available"

// readOnlyFix is how to leave t's read-only mode, as READ_ONLY's hint
// says it.
func (t *Tools) readOnlyFix() string { return cmp.Or(t.ReadOnlyFix, "run without --readonly") }

// mutableFS returns the backend's write side, refusing every mutation in
// read-only mode (READ_ONLY) or on a backend that cannot write.
func (t *Tools) mutableFS(op string) (backend.MutableFS, error) {
	if t.ReadOnly {
		return nil, fault.Errorf(fault.CodeReadOnly, "%s is refused: agentfs runs read-only.", op).
			WithHint("%s; %s to change files", readOnlyLeft, t.readOnlyFix())
	}
	m, ok := t.FS.(backend.MutableFS)
	if !ok {
		return nil, fault.Errorf(fault.CodeNotSupported, "%s is not available: this backend cannot change files.", op).
			WithHint("use read, ls, find and grep")
	}
	return m, nil
}

// current is the file at path as a mutation finds it under its lock.
type current struct {
	info   backend.FileInfo
	exists bool
}

// currentOf turns a Stat or Lstat answer into a current: NOT_FOUND is a
// missing file, not an error.
func currentOf(info backend.FileInfo, err error) (current, error) {
	if fault.MissingPath(err) {
		return current{}, nil
	}
	if err != nil {
		return current{}, err
	}
	return current{info: info, exists: true}, nil
}

// Write replaces the content of req.Path atomically, under the path's lock:
// readers see the old or the new content, and no other agentfs mutation of
// the path, of a directory above it or of a file below it runs meanwhile.
func (t *Tools) Write(ctx context.Context, req WriteRequest) (*WriteResult, error) {
	m, err := t.mutableFS("write")
	if err != nil {
		return nil, err
	}
	if err := Validate(req); err != nil {
		return nil, err
	}
	if backend.NamesDirectory(req.Path) {
		return nil, fault.InvalidArgument("the path names a directory (a final slash, . or ..).").WithPath(req.Path).
			WithHint("write to a file path, without the final slash")
	}
	data, text, err := t.content(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := req.checkStyle(text); err != nil {
		return nil, err
	}
	// Content with read's cut marker is checked against the file under
	// the lock (held); an append's against none: it adds lines.
	// Matched in data: lineCuts of string(data) copied a content of any
	// size, refused as too large or not.
	cuts := text && lineCutPattern().Match(data)
	if cuts && req.Append {
		if err := checkNoLineCut("the content", string(data), ""); err != nil {
			return nil, err
		}
	}
	if len(data) > MaxWriteBytes {
		return nil, tooLargeToWrite(t.FS.Display(req.Path), int64(len(data)))
	}
	if req.Append && (req.Create || req.InPlace || req.BOM != nil) {
		return nil, fault.InvalidArgument("--append adds to a file as it is: it takes no --create, --in-place or --bom.").
			WithHint("drop those flags; a missing file is created")
	}
	encoding := "utf-16le" // the longest a file's mark names
	if req.Encoding != "" {
		c, err := textfile.NamedEncoding(req.Encoding, nil)
		if err == nil {
			err = c.CheckEncodable(string(data))
		}
		if err != nil {
			return nil, withPath(err, t.FS.Display(req.Path))
		}
		if len(c.Name()) > len(encoding) {
			encoding = c.Name()
		}
	}
	// The result, with every field at its largest, must fit the bound
	// before anything is written.
	sk := &WriteResult{BytesWritten: math.MaxInt, LineEnding: "mixed", BOM: new(false), Encoding: encoding,
		Version: t.unknownVersion(), Sha256: unknownSha256}
	sk.Path, sk.PathBase64 = fault.PathText(t.FS.Display(req.Path))
	if n := jsonSize(sk); n > t.maxBytes() {
		return nil, t.tooLarge(n, "the path of the file does not fit").WithPath(sk.Path).
			WithHint("raise --max-bytes to %d or more; nothing was written", t.raiseTo(n))
	}
	return mutate(ctx, t, m, []string{req.Path}, func() (*WriteResult, error) {
		cur, dangling, err := statForWrite(ctx, m, req)
		if err != nil {
			return nil, err
		}
		if req.Append {
			return t.appendTo(ctx, m, req, cur, data, text)
		}
		if cuts {
			if err := t.checkCutsHeld(ctx, req.Path, cur, string(data)); err != nil {
				return nil, err
			}
		}
		if dangling {
			// A link to nothing yet is there all the same: O_EXCL refuses
			// it, where following it made its target.
			return nil, fault.Errorf(fault.CodeExists, "the path is a link, to a file not there yet: create writes only where nothing is.").WithPath(t.FS.Display(req.Path)).
				WithHint("write the link's target path, or drop --create to write through the link")
		}
		return t.replaceWith(ctx, m, req, cur, data, text)
	})
}

// statForWrite is the file at req.Path as a write's attempt finds it,
// following a final link; dangling says, for create only, that the path
// is a link to nothing yet. create's Lstat comes first and is its Stat
// when the path is no link: an object store's Stat then Lstat of a new
// file asked the same HEAD and listings twice.
func statForWrite(ctx context.Context, m backend.MutableFS, req WriteRequest) (cur current, dangling bool, err error) {
	if !req.Create {
		cur, err = currentOf(m.Stat(ctx, req.Path))
		return cur, false, err
	}
	if cur, err = currentOf(m.Lstat(ctx, req.Path)); err != nil || !cur.exists || cur.info.Type != backend.TypeSymlink {
		return cur, false, err
	}
	cur, err = currentOf(m.Stat(ctx, req.Path))
	return cur, err == nil && !cur.exists, err
}

// checkCutsHeld refuses content with more of read's cut markers than the
// file cur at path holds (checkNoLineCut), reading at most MaxWriteBytes
// of it: a marker past that is not counted, and the write refused.
func (t *Tools) checkCutsHeld(ctx context.Context, path string, cur current, content string) error {
	var held []byte
	if cur.exists && cur.info.Type == backend.TypeFile {
		r, err := t.openStated(ctx, path, cur)
		if err != nil {
			return err
		}
		held, err = readUpTo(r, nil, MaxWriteBytes)
		r.Close()
		if err != nil {
			return fault.AsError(err).WithPath(t.FS.Display(path))
		}
	}
	return checkNoLineCut("the content", content, string(held))
}

// replaceWith is one attempt of a write that replaces the file cur with
// data, in the file's style when it is text.
func (t *Tools) replaceWith(ctx context.Context, m backend.MutableFS, req WriteRequest, cur current, data []byte, text bool) (*WriteResult, error) {
	display := t.FS.Display(req.Path)
	if req.Create && cur.exists {
		// EXISTS rests on the file found, which a transaction not yet
		// committed may yet undo.
		if err := t.settledRead(ctx, req.Path, cur.info.Version); err != nil {
			return nil, err
		}
		if cur.info.Type != backend.TypeFile {
			// Without create it is refused all the same: the hint to drop
			// create led to NOT_A_FILE or NOT_REGULAR.
			return nil, fault.Errorf(fault.CodeExists, "the path already exists, a %s, which no write replaces.", cur.info.Type.Noun()).WithPath(display).
				WithHint("choose another path; nothing was written")
		}
		return nil, fault.Errorf(fault.CodeExists, "the file already exists.").WithPath(display).
			WithHint("drop --create to replace it, or choose another path")
	}
	if err := refuseNotFile(cur, display, "write to"); err != nil {
		return nil, err
	}
	res := &WriteResult{}
	// old is the file's bytes when the read of its style got them all, at
	// cur's version (openStated): the comparisons below then need not
	// read it again (on an object store, the same GET twice).
	var old []byte
	if text {
		var (
			file *textfile.Style
			ws   textfile.Written
			err  error
		)
		var head []byte
		if cur.exists && cur.info.Type == backend.TypeFile && cur.info.Size > 0 {
			if file, head, err = t.styleOfFile(ctx, req.Path, cur, req.Encoding); err != nil {
				return nil, err
			}
			if int64(len(head)) == cur.info.Size {
				old = head
			}
		}
		if req.Encoding != "" {
			// Validated before the lock: the name is known.
			c, _ := textfile.NamedEncoding(req.Encoding, head)
			data, ws, err = textfile.StyledIn(c, string(data), file, req.LineEnding, req.BOM)
		} else {
			data, ws, err = textfile.Styled(string(data), file, req.LineEnding, req.BOM)
		}
		if err != nil {
			return nil, withPath(err, display)
		}
		if len(data) > MaxWriteBytes {
			// CRLF endings or UTF-16 made the content larger: the file
			// would be over what edit, replace and apply-patch change.
			return nil, tooLargeWritten(display, int64(len(data)), ws)
		}
		res.LineEnding, res.BOM, res.Encoding = ws.LineEnding, &ws.BOM, ws.Encoding
	}
	// The result's sha256 (about 4 ms for 2 MiB) is computed while the
	// write compares, writes and syncs.
	dataSum := make(chan string, 1)
	go func() { dataSum <- sha256Hex(data) }()
	same, compared := false, false
	digest := func(hash bool) (string, bool, error) {
		if old == nil {
			return t.digest(ctx, req.Path, cur, data, hash)
		}
		if hash {
			return sha256Hex(old), bytes.Equal(old, data), nil
		}
		return "", bytes.Equal(old, data), nil
	}
	sum := func() (string, error) {
		s, eq, err := digest(true)
		same, compared = eq, true
		return s, err
	}
	if err := req.Check(req.Path, cur.info, cur.exists, sum); err != nil {
		return nil, err
	}
	res.Path, res.PathBase64 = fault.PathText(display)
	if cur.exists && cur.info.Type == backend.TypeFile && cur.info.Size == int64(len(data)) {
		if !compared {
			var err error
			if _, same, err = digest(false); err != nil {
				return nil, err
			}
		}
		if same {
			if err := t.settledRead(ctx, req.Path, cur.info.Version); err != nil {
				return nil, err
			}
			res.NoChange, res.Version, res.Sha256 = true, cur.info.Version, <-dataSum
			return res, nil
		}
	}
	fi, err := t.commitWrite(ctx, m, req.Path, data, cur, backend.WriteOptions{IfAbsent: req.Create, Executable: req.Executable, InPlace: req.InPlace})
	if err != nil {
		return nil, err
	}
	res.BytesWritten, res.Created, res.Version, res.Sha256 = len(data), !cur.exists, fi.Version, <-dataSum
	return res, nil
}

// refuseNotFile refuses cur when it is there but is no regular file,
// before any expectation of it is compared: STALE would send the caller
// to read again, with a version no retry can pass, what is no file.
func refuseNotFile(cur current, display, verb string) error {
	if !cur.exists || cur.info.Type == backend.TypeFile {
		return nil
	}
	if cur.info.Type == backend.TypeDir {
		return fault.Errorf(fault.CodeNotAFile, "the path is a directory, not a file.").WithPath(display).
			WithHint("%s a file path inside the directory", verb)
	}
	return fault.Errorf(fault.CodeNotRegular, "the path is not a regular file (a FIFO, socket or device).").WithPath(display).
		WithHint("%s a regular file", verb)
}

// MaxAppendBytes bounds the file an append makes: the whole file is
// replaced, all or nothing, so its size is the cost of each append.
const MaxAppendBytes = 16 << 20

// appendTo adds data at the end of the file under the lock already held:
// the old bytes and the new are written as one atomic replace, so a reader
// sees the file before or after, and a crash or a signal adds nothing.
// Text follows the file's line endings and encoding.
func (t *Tools) appendTo(ctx context.Context, m backend.MutableFS, req WriteRequest, cur current, data []byte, text bool) (*WriteResult, error) {
	display := t.FS.Display(req.Path)
	var old []byte
	if err := refuseNotFile(cur, display, "append to"); err != nil {
		return nil, err
	}
	if cur.exists {
		if cur.info.Size+int64(len(data)) > MaxAppendBytes {
			return nil, fault.Errorf(fault.CodeTooLarge, "appending would make a file of %d bytes, over --append's limit of %d.", cur.info.Size+int64(len(data)), MaxAppendBytes).
				WithPath(display).WithHint("put the rest in a new file: write its first part, then --append to it")
		}
		r, err := t.openStated(ctx, req.Path, cur)
		if err != nil {
			return nil, err
		}
		old, err = io.ReadAll(io.LimitReader(r, MaxAppendBytes+1))
		r.Close()
		if err != nil {
			return nil, fault.AsError(err).WithPath(display)
		}
	}
	var err error
	switch {
	case text && req.Encoding != "":
		var file *textfile.Style
		c, _ := textfile.NamedEncoding(req.Encoding, old)
		if m, marked := textfile.ByBOM(old); marked && c.BOMLen() == 0 {
			// The mark names the file's encoding (UTF-8, UTF-16), and
			// bytes of any other would follow it: Latin-1 decodes every
			// byte, so the file passed for Latin-1 text.
			return nil, fault.Errorf(fault.CodeNotText, "the file begins with a byte-order mark for %s: appended in %s, the content would follow bytes of another encoding.", m.Name(), c.Name()).
				WithPath(display).WithHint("append in %s, the file's encoding; nothing was changed", m.Name())
		}
		if len(old) > 0 {
			f, ok := textfile.StyleIn(c, old, true)
			if !ok {
				return nil, fault.Errorf(fault.CodeNotText, "the file is not %s text: appended in %s, the content would follow bytes of another encoding.", c.Name(), c.Name()).
					WithPath(display).WithHint("read the file with the encoding it is in, and append in that one; nothing was changed")
			}
			file = &f
		}
		if file == nil {
			data, _, err = textfile.StyledIn(c, string(data), nil, req.LineEnding, nil)
		} else {
			data, err = textfile.Appended(string(data), file, req.LineEnding)
			if last := old[bytes.LastIndexByte(old, '\n')+1:]; err == nil && len(data) > 0 && data[0] != 0x1b && c.Stateful() && bytes.IndexByte(last, 0x1b) >= 0 {
				// The file's last line may end shifted (ISO-2022-JP's
				// JIS X 0208): the content, encoded from ASCII, would be
				// read in that shift. An escape to ASCII goes first, but
				// for content that begins with its own (two escapes in a
				// row are an error to WHATWG's decoder).
				data = append([]byte("\x1b(B"), data...)
			}
		}
	case text && len(old) == 0:
		// A new or empty file takes the content as write takes it: a
		// leading U+FEFF is its mark.
		data, _, err = textfile.Styled(string(data), nil, req.LineEnding, nil)
	case text:
		var file *textfile.Style
		if f, ok := textfile.StyleOf(old, true); ok {
			file = &f
		} else if name, at, bad := textfile.InvalidAfterMark(old); bad {
			// The mark names an encoding the bytes do not keep to: text
			// appended in it would follow bytes of another, as would
			// UTF-8 (the content as given) after a UTF-16 mark.
			return nil, fault.Errorf(fault.CodeNotText, "the file begins with a byte-order mark for %s, but its byte %d is not valid %s: its encoding is unknown, and text appended would mix two encodings.", name, at, name).
				WithPath(display).WithHint("append the bytes in the file's encoding with --content-base64, or rewrite the file whole with write; nothing was changed")
		} else if f, ok := textfile.LegacyStyleOf(old); ok {
			// Text in an encoding agentfs cannot tell (Latin-1...): its
			// line endings are followed, and only ASCII, which such an
			// encoding spells as UTF-8 does, is added, never a mix.
			if i := slices.IndexFunc(data, func(b byte) bool { return b >= 0x80 }); i >= 0 {
				return nil, fault.Errorf(fault.CodeNotText, "the file is not UTF-8 or UTF-16 text, so its encoding is unknown, and the content is not ASCII (byte %d): appended, it would mix two encodings.", i).
					WithPath(display).WithHint("%s", legacyAppendHint(string(data)))
			}
			file = &f
		} else {
			// Not text in any encoding agentfs can follow (a NUL byte:
			// binary, or UTF-16 without its mark, as write --encoding
			// utf-16le makes it): the content as given, UTF-8, was
			// appended to it.
			return nil, fault.Errorf(fault.CodeNotText, "the file is not text (a NUL byte, or bytes no encoding agentfs knows), so text appended would be in no encoding the file has.").
				WithPath(display).WithHint("if it is UTF-16 without a byte-order mark, append with --encoding utf-16le or utf-16be; to add bytes, use --content-base64; nothing was changed")
		}
		data, err = textfile.Appended(string(data), file, req.LineEnding)
	}
	if err != nil {
		return nil, withPath(err, display)
	}
	if err := req.Check(req.Path, cur.info, cur.exists, func() (string, error) { return sha256Hex(old), nil }); err != nil {
		return nil, err
	}
	if size := len(old) + len(data); size > MaxAppendBytes {
		// The file's CRLF endings or encoding made the content larger.
		return nil, fault.Errorf(fault.CodeTooLarge, "appending would make a file of %d bytes as written, over --append's limit of %d.", size, MaxAppendBytes).
			WithPath(display).WithDetail("size", size).WithDetail("limit", MaxAppendBytes).
			WithHint("put the rest in a new file: write its first part, then --append to it")
	}
	res := &WriteResult{Appended: true}
	res.Path, res.PathBase64 = fault.PathText(display)
	whole := append(old, data...)
	if text && req.Encoding != "" {
		c, _ := textfile.NamedEncoding(req.Encoding, whole)
		if st, ok := textfile.StyleIn(c, whole, true); ok {
			w := st.Written()
			res.LineEnding, res.BOM = w.LineEnding, &w.BOM
			if !c.IsUTF8() {
				res.Encoding = c.Name() // as write names it: never utf-8
			}
		}
	} else if text {
		st, ok := textfile.StyleOf(whole, true)
		if !ok {
			// Text in an encoding agentfs cannot tell (Latin-1...),
			// whose line endings the content followed: named as a UTF-8
			// file's are, its encoding left out, as it is not known.
			st, ok = textfile.LegacyStyleOf(whole)
		}
		if ok {
			// The file as written, as read names it.
			w := st.Written()
			res.LineEnding, res.BOM, res.Encoding = w.LineEnding, &w.BOM, w.Encoding
		}
	}
	if len(data) == 0 && cur.exists {
		if err := t.settledRead(ctx, req.Path, cur.info.Version); err != nil {
			return nil, err
		}
		res.NoChange, res.Version, res.Sha256 = true, cur.info.Version, sha256Hex(whole)
		return res, nil
	}
	fi, err := t.commitWrite(ctx, m, req.Path, whole, cur, backend.WriteOptions{})
	if err != nil {
		return nil, withoutInPlace(err, "write --append")
	}
	res.BytesWritten, res.Created, res.Version, res.Sha256 = len(data), !cur.exists, fi.Version, sha256Hex(whole)
	return res, nil
}

// content is the request's bytes, from exactly one of content, contentFile
// and contentBase64, and whether they are text (UTF-8 without NUL, whose
// style write keeps) rather than bytes written as given. A content file is
// read through the backend, inside the roots and outside the deny paths like
// any other path, so that a write cannot copy a file the caller may not read.
func (t *Tools) content(ctx context.Context, r WriteRequest) (data []byte, text bool, err error) {
	given := 0
	for _, set := range []bool{r.Content != nil, r.ContentFile != "", r.ContentBase64 != ""} {
		if set {
			given++
		}
	}
	switch {
	case given == 0:
		return nil, false, fault.InvalidArgument("write needs its content, and none is given.").WithPath(t.FS.Display(r.Path)).
			WithHint("pass --content TEXT or --content-file FILE (on the command line, - reads stdin); --content '' empties the file on purpose (an empty --content-base64 is no content)")
	case given > 1:
		return nil, false, fault.InvalidArgument("give only one of --content, --content-file and --content-base64.").WithPath(t.FS.Display(r.Path)).
			WithHint("use --content for text, --content-file for a file's bytes, --content-base64 for bytes that are not UTF-8")
	case r.ContentBase64 != "":
		data, err := base64.StdEncoding.DecodeString(r.ContentBase64)
		if err != nil {
			return nil, false, fault.InvalidArgument("contentBase64 is not valid base64.").
				WithHint("encode the bytes with standard base64 (RFC 4648, with padding)")
		}
		return data, false, nil
	case r.ContentFile == "-":
		return nil, false, fault.InvalidArgument("--content-file - (standard input) is only for a request given as flags.").WithPath(t.FS.Display(r.Path)).
			WithHint("give the content itself with --content, or name a file with --content-file FILE")
	case r.ContentFile != "":
		data, err = t.readContentFile(ctx, r.ContentFile)
		if err == nil && len(data) == 0 {
			// As an empty standard input: a file left empty by a step that
			// failed would empty the target with exit 0.
			return nil, false, fault.InvalidArgument("--content-file %s is empty: no content is given.", t.FS.Display(r.ContentFile)).
				WithPath(t.FS.Display(r.Path)).WithHint("--content '' empties a file on purpose")
		}
	default:
		// Text, a NUL in it or not: read gives a NUL past a file's
		// binary sample as text (CRLF and the mark left out), which
		// taken for bytes was written as it came, the file's line
		// endings, mark and encoding lost.
		data = []byte(*r.Content)
		return data, utf8.Valid(data), nil
	}
	return data, err == nil && utf8.Valid(data) && bytes.IndexByte(data, 0) < 0, err
}

// checkStyle refuses lineEnding, bom and encoding for content that is not
// text.
func (r WriteRequest) checkStyle(text bool) error {
	if !text && (r.LineEnding != "" || r.BOM != nil || r.Encoding != "") {
		return fault.InvalidArgument("--line-ending, --bom and --encoding apply to text, and this content is bytes (--content-base64, or a content file that is not UTF-8 text).").
			WithHint("leave --line-ending, --bom and --encoding out: bytes are written as given")
	}
	return nil
}

// TooLargeToWriteHint is what to do with a content over MaxWriteBytes:
// edit refuses a file over 2 MiB too, an append takes it in parts.
const TooLargeToWriteHint = "write the first 2 MiB, then add the rest in parts of up to 2 MiB with --append (up to 16 MiB in all)"

// tooLargeToWrite is the TOO_LARGE of a content over MaxWriteBytes.
func tooLargeToWrite(path string, size int64) *fault.Error {
	return fault.Errorf(fault.CodeTooLarge, "the content is %d bytes; write takes at most %d (2 MiB).", size, MaxWriteBytes).
		WithPath(path).WithDetail("size", size).WithDetail("limit", MaxWriteBytes).
		WithHint(TooLargeToWriteHint)
}

// tooLargeWritten is the TOO_LARGE of a content within MaxWriteBytes that
// the file's style ws (CRLF endings, UTF-16, an encoding) makes size
// bytes, over it: the file would be one edit refuses.
func tooLargeWritten(path string, size int64, ws textfile.Written) *fault.Error {
	as := "in the file's style"
	switch {
	case ws.Encoding != "":
		as = "in " + ws.Encoding
	case ws.LineEnding == "crlf" || ws.LineEnding == "mixed":
		as = "with CRLF line endings"
	}
	return fault.Errorf(fault.CodeTooLarge, "the content would be %d bytes as written %s; write takes at most %d (2 MiB) as written, the limit of the files edit changes.", size, as, MaxWriteBytes).
		WithPath(path).WithDetail("size", size).WithDetail("limit", MaxWriteBytes).
		WithHint("nothing was written; write a first part that is within 2 MiB as written, then add the rest in parts with --append (up to 16 MiB in all)")
}

// readContentFile reads the whole content file, up to MaxWriteBytes + 1
// bytes so that a larger one is TOO_LARGE.
func (t *Tools) readContentFile(ctx context.Context, p string) ([]byte, error) {
	named := func(err error) error {
		e := fault.AsError(t.WithSuggestions(ctx, p, err))
		e.Message = "--content-file: " + e.Message
		return stdinElsewhere(e, "--content-file", p)
	}
	r, err := t.FS.Open(ctx, p)
	if err != nil {
		return nil, named(err)
	}
	defer r.Close()
	if size := r.Info().Size; size > MaxWriteBytes {
		return nil, named(tooLargeToWrite(t.FS.Display(p), size))
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxWriteBytes+1))
	if err != nil {
		return nil, named(fault.Errorf(fault.CodeIOError, "the file could not be read: %s.", err).WithPath(t.FS.Display(p)).WithCause(err))
	}
	return data, nil
}

// digest reads the file at path once and says whether it holds exactly
// want; with hash it also returns the file's sha256, else it stops at the
// first difference. The file read must be the one cur, the caller's
// check, found (openStated): another is errConflict, and the attempt runs
// again. Two writers of the same bytes with one --expected-version both
// said noChange, of the old version, where the second must be STALE.
func (t *Tools) digest(ctx context.Context, path string, cur current, want []byte, hash bool) (string, bool, error) {
	r, err := t.openStated(ctx, path, cur)
	if err != nil {
		return "", false, err
	}
	defer r.Close()
	h := sha256.New()
	buf := make([]byte, 64<<10)
	same, n := true, 0
	for {
		if err := ctx.Err(); err != nil {
			return "", false, err
		}
		k, err := r.Read(buf)
		if k > 0 {
			if hash {
				h.Write(buf[:k])
			}
			same = same && n+k <= len(want) && bytes.Equal(buf[:k], want[n:n+k])
			n += k
			if !same && !hash {
				return "", false, nil
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", false, fault.Errorf(fault.CodeIOError, "the file could not be read: %s.", err).WithPath(path).WithCause(err)
		}
	}
	same = same && n == len(want)
	if !hash {
		return "", same, nil
	}
	return hex.EncodeToString(h.Sum(nil)), same, nil
}

// maxStyleBytes is how much of an existing file write reads to learn its
// style: all of any file write itself can produce from 2 MiB of content with
// CRLF endings.
const maxStyleBytes = 2 * MaxWriteBytes

// openStated opens the file at path that cur, an attempt's Stat, found.
// One removed or replaced since, by a writer that takes no lock (anyone on
// an object store, any other program on a disk), is the attempt's lost
// race (errConflict): it runs again on the file as it is now. A plain
// write of a file removed meanwhile was NOT_FOUND, where it creates it.
// An object store reads the file at the version cur holds without asking
// again what the Stat asked (backend.OpenKnown).
func (t *Tools) openStated(ctx context.Context, path string, cur current) (backend.FileReader, error) {
	r, err := backend.OpenKnown(ctx, t.FS, path, cur.info)
	if fault.MissingPath(err) {
		return nil, errConflict
	}
	if err != nil {
		return nil, err
	}
	if r.Info().Version != cur.info.Version {
		r.Close()
		return nil, errConflict
	}
	return r, nil
}

// styleOfFile reads the style of the existing file at path, in the
// encoding enc names ("" for none: UTF-8, or UTF-16 by its mark); nil when
// it is not text in it. head is what it read of the file.
func (t *Tools) styleOfFile(ctx context.Context, path string, cur current, enc string) (st *textfile.Style, head []byte, err error) {
	r, err := t.openStated(ctx, path, cur)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	head, err = io.ReadAll(io.LimitReader(r, maxStyleBytes+1))
	if err != nil {
		return nil, nil, fault.Errorf(fault.CodeIOError, "the file could not be read: %s.", err).WithPath(t.FS.Display(path)).WithCause(err)
	}
	whole := len(head) <= maxStyleBytes
	head = head[:min(len(head), maxStyleBytes)]
	var (
		s  textfile.Style
		ok bool
	)
	if enc == "" {
		s, ok = textfile.StyleOf(head, whole)
	} else {
		c, _ := textfile.NamedEncoding(enc, head)
		s, ok = textfile.StyleIn(c, head, whole)
	}
	if !ok {
		return nil, head, nil
	}
	return &s, head, nil
}
