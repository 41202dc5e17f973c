package s3fs

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"path"
	"sync"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3client"
)

// wholeBytes is the size up to which Open fetches an object at once, with
// the GET that says its version (a larger one's first wholeBytes): the
// reader then holds its version whatever is written later.
const wholeBytes = 64 << 10

// Chunks of a larger object's stream: the first as large as the read asks
// (a continuation's sniff of the start costs a few KiB), then doubling.
const (
	minChunk = 4 << 10
	maxChunk = 8 << 20
)

// openTries bounds the opens of a small object whose bytes were not
// those of the ETag its GET answered.
const openTries = 4

// Open opens the object at path with one GET of its first wholeBytes,
// which answers its version, size and mark as a HEAD does: a small one is
// then held whole; the rest of a larger one is read by ranged GETs, each
// If-Match that ETag, so a window deep in it costs one GET more, never
// the bytes between, and a read never mixes versions: an object replaced
// meanwhile fails the read with STALE.
func (f *FS) Open(ctx context.Context, p string) (backend.FileReader, error) {
	c, err := f.place(ctx, p)
	if err != nil {
		return nil, err
	}
	// The tries that got bytes other than their ETag's, one ETag each time.
	mismatches, etag := 0, ""
	for range openTries {
		r, err := f.open(ctx, c)
		if m := (mismatch{}); errors.As(err, &m) && (mismatches == 0 || m.etag == etag) {
			mismatches, etag = mismatches+1, m.etag
		}
		if !errors.Is(err, errChanged) {
			return r, err
		}
	}
	if mismatches == openTries {
		// Every try got bytes that are not the one ETag's: no writer is
		// racing the read, the store holds an ETag its object does not
		// have (a file changed behind a gateway over a file system).
		// Read again, it is the same: STALE sent callers round in a loop.
		return nil, fault.Errorf(fault.CodeIOError, "the object's bytes do not match its ETag, which the store keeps for it: it was changed behind the store's back.").WithPath(c).
			WithHint("agentfs write cannot replace it, it reads it first: remove it with agentfs rm (its ETag allows that) and write it anew, its lines taken from agentfs grep, or put it again through the S3 API (a copy onto itself may keep the ETag)")
	}
	return nil, changed(c)
}

// OpenKnown implements backend.KnownOpener: a small file whose Stat just
// gave info, and its mark (the HEAD of that Stat keeps it), is fetched
// without a HEAD of its own, If-Match info's version, which the Stat's HEAD
// answered: an edit's write of the file it read sent that HEAD twice. A
// file changed since, a larger one, or one whose mark is not known, is
// opened as Open opens it.
func (f *FS) OpenKnown(ctx context.Context, p string, info backend.FileInfo) (backend.FileReader, error) {
	c, err := f.place(ctx, p)
	if err != nil {
		return nil, err
	}
	if c != "." && info.Type == backend.TypeFile && info.Version != "" && info.Size <= wholeBytes {
		if v, seen := f.marks.seen(f.key(c), info.Version); seen {
			r := &reader{f: f, ctx: ctx, c: c, info: info, mark: v.mark, hashed: contentHashed(info.Version, v.stored)}
			r.info.Name = path.Base(c)
			data, err := r.get(0, info.Size)
			if err == nil {
				r.whole = bytes.NewReader(data)
				return r, nil
			}
			if !errors.Is(err, errChanged) {
				return nil, err
			}
		}
	}
	return f.Open(ctx, p)
}

// mismatch is errChanged for bytes that are not those of the ETag etag,
// read whole.
type mismatch struct{ etag string }

func (m mismatch) Error() string { return errChanged.Error() }
func (m mismatch) Unwrap() error { return errChanged }

// errChanged is an object replaced between two requests of one read.
var errChanged = errors.New("the object changed during the read")

func changed(c string) error {
	return fault.Errorf(fault.CodeStale, "the file changed while it was read.").WithPath(c).
		WithHint("read it again from the start").WithCause(backend.ErrChangedDuringRead)
}

func (f *FS) open(ctx context.Context, c string) (backend.FileReader, error) {
	if c == "." {
		return nil, notAFile(c)
	}
	key := f.key(c)
	body, o, err := f.c.GetFirst(ctx, key, wholeBytes)
	if err != nil {
		if !missing(s3client.Code(err)) {
			return nil, f.mapErr(err, c)
		}
		dir, err := f.isDir(ctx, c)
		if err != nil {
			return nil, err
		}
		if dir {
			return nil, notAFile(c)
		}
		return nil, f.missing(ctx, c)
	}
	defer body.Close()
	f.marks.store(key, o)
	r := &reader{f: f, ctx: ctx, c: c, info: fileInfo(path.Base(c), o), mark: o.Meta[txnMeta], hashed: contentHashed(o.ETag, o.Stored)}
	first := make([]byte, min(o.Size, wholeBytes))
	if _, err := io.ReadFull(body, first); err != nil {
		if refused(err) {
			// Cut, and replaced or removed before the rest came.
			return nil, errChanged
		}
		return nil, f.mapErr(err, c)
	}
	if o.Size > wholeBytes {
		// The rest is read by ranged GETs If-Match the ETag this answer
		// gave with the first piece.
		r.first, r.chunk = first, wholeBytes
		return r, nil
	}
	// A whole object whose ETag is its MD5 (one PUT, as s3fs writes) is
	// checked against it: bytes of another version are never served as
	// this one.
	if r.hashed {
		if sum := md5.Sum(first); hex.EncodeToString(sum[:]) != o.ETag {
			return nil, mismatch{o.ETag}
		}
	}
	r.whole = bytes.NewReader(first)
	return r, nil
}

func notAFile(c string) error {
	return fault.Errorf(fault.CodeNotAFile, "the path is a directory, not a file.").WithPath(c).
		WithHint("use ls to list a directory, or find to search it")
}

// reader reads one version of an object: from memory when it was small
// enough to fetch whole, else by ranged GETs of that version.
type reader struct {
	f    *FS
	ctx  context.Context
	c    string
	info backend.FileInfo
	// mark is the transaction that wrote the version ("" for none).
	mark string
	// hashed says the version is the MD5 of the bytes (see
	// contentHashed), which a whole read is checked against.
	hashed bool
	whole  *bytes.Reader
	// first is the object's first bytes, which the GET that opened a
	// larger one answered with its version.
	first []byte
	// pos is the stream's offset; body serves it up to bodyEnd, and
	// chunk is the size of the next ranged GET.
	pos, bodyEnd int64
	body         io.ReadCloser
	chunk        int64
	// ahead is where the caller said it will read the stream on to (see
	// ReadAhead): the GET the stream starts before it reaches it there.
	ahead int64
	// last is the window of the latest ReadAt, at lastOff: a tail's
	// lines, found by ReadAt from the end, are then read by the stream
	// without a GET of them again. ReadAt may run in parallel: lastMu.
	lastMu  sync.Mutex
	last    []byte
	lastOff int64
}

// held is the window of the latest ReadAt and its offset.
func (r *reader) held() ([]byte, int64) {
	r.lastMu.Lock()
	defer r.lastMu.Unlock()
	return r.last, r.lastOff
}

// ReadAhead implements backend.ReadAheader: the stream's next GET reaches
// end (up to maxChunk), where it would be twice the last one.
func (r *reader) ReadAhead(end int64) { r.ahead = end }

func (r *reader) Info() backend.FileInfo { return r.info }

// Settled implements backend.SettledReader.
func (r *reader) Settled(ctx context.Context) error {
	return r.f.settledMark(ctx, r.c, r.info.Version, r.mark)
}

// get fetches [off, off+n) of the reader's version.
func (r *reader) get(off, n int64) ([]byte, error) {
	body, err := r.rangeBody(off, n)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	data := make([]byte, n)
	if _, err := io.ReadFull(body, data); err != nil {
		if refused(err) {
			// Cut, and replaced or removed before the rest came.
			return nil, errChanged
		}
		return nil, r.f.mapErr(err, r.c)
	}
	// A whole object whose ETag is its MD5 (one PUT, as s3fs writes) is
	// checked against it: bytes of another version are never served as
	// this one.
	if off == 0 && n == r.info.Size && r.hashed {
		if sum := md5.Sum(data); hex.EncodeToString(sum[:]) != r.info.Version {
			return nil, mismatch{r.info.Version}
		}
	}
	return data, nil
}

// contentHashed says whether etag, an object's with the headers stored
// (s3client.ObjectInfo.Stored), is the MD5 of its bytes: a plain MD5,
// of an object not encrypted under a KMS key, whose ETag AWS makes 32
// hex digits that are no MD5 of the bytes (an object under a key of its
// writer's, SSE-C, is not read at all).
func contentHashed(etag string, stored http.Header) bool {
	return isMD5(etag) && !s3client.UnderKMS(stored)
}

// isMD5 says whether an ETag is a plain MD5 (32 hex digits), not a
// multipart upload's.
func isMD5(etag string) bool {
	if len(etag) != 32 {
		return false
	}
	_, err := hex.DecodeString(etag)
	return err == nil
}

// rangeBody starts a GET of [off, off+n) of the reader's version; n is
// 0 only for an empty object, which is fetched without a range (a store
// refuses any range of it).
func (r *reader) rangeBody(off, n int64) (io.ReadCloser, error) {
	body, err := r.f.c.Get(r.ctx, r.f.key(r.c), r.info.Version, off, n)
	if err != nil {
		// A replaced object fails If-Match; a removed one is not found.
		if refused(err) {
			return nil, errChanged
		}
		return nil, r.f.mapErr(err, r.c)
	}
	return body, nil
}

func (r *reader) Read(p []byte) (int, error) {
	if r.whole != nil {
		return r.whole.Read(p)
	}
	if r.pos >= r.info.Size {
		return 0, io.EOF
	}
	if r.pos < int64(len(r.first)) {
		n := copy(p, r.first[r.pos:])
		r.pos += int64(n)
		return n, nil
	}
	if r.body == nil {
		last, lastOff := r.held()
		if lastOff <= r.pos && r.pos < lastOff+int64(len(last)) {
			n := copy(p, last[r.pos-lastOff:])
			r.pos += int64(n)
			return n, nil
		}
		r.chunk = min(max(r.chunk*2, int64(len(p)), minChunk, r.ahead-r.pos), maxChunk)
		n := min(r.chunk, r.info.Size-r.pos)
		if r.pos < r.ahead {
			// Up to where the caller reads, not past it.
			n = min(n, r.ahead-r.pos)
		}
		if len(last) > 0 && lastOff > r.pos {
			// Up to the bytes held, not through them.
			n = min(n, lastOff-r.pos)
		}
		body, err := r.rangeBody(r.pos, n)
		if err != nil {
			return 0, r.readErr(err)
		}
		r.body, r.bodyEnd = body, r.pos+n
	}
	n, err := r.body.Read(p[:min(int64(len(p)), r.bodyEnd-r.pos)])
	r.pos += int64(n)
	if r.pos == r.bodyEnd || err != nil {
		r.body.Close()
		r.body = nil
		if err == io.EOF && r.pos < r.bodyEnd {
			return n, r.readErr(io.ErrUnexpectedEOF)
		}
		if err != io.EOF && err != nil {
			return n, r.readErr(err)
		}
	}
	return n, nil
}

// ReadAt reads len(b) bytes at off with one ranged GET.
func (r *reader) ReadAt(b []byte, off int64) (int, error) {
	if r.whole != nil {
		return r.whole.ReadAt(b, off)
	}
	if off >= r.info.Size {
		return 0, io.EOF
	}
	n := min(int64(len(b)), r.info.Size-off)
	// The part of the first piece in the window is not fetched again.
	held := int64(0)
	if off < int64(len(r.first)) {
		held = int64(copy(b[:n], r.first[off:]))
	}
	if held < n {
		data, err := r.get(off+held, n-held)
		if err != nil {
			return 0, r.readErr(err)
		}
		copy(b[held:], data)
		r.lastMu.Lock()
		r.last, r.lastOff = data, off+held
		r.lastMu.Unlock()
	}
	if n < int64(len(b)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// readErr is the error of a read of the reader's version: a body cut,
// whose rest the store refused If-Match the version (s3client resumes a
// cut body), or a GET refused so, is the object replaced or removed.
func (r *reader) readErr(err error) error {
	if errors.Is(err, errChanged) || refused(err) {
		return changed(r.c)
	}
	return r.f.mapErr(err, r.c)
}

func (r *reader) Close() error {
	if r.body != nil {
		r.body.Close()
		r.body = nil
	}
	return nil
}
