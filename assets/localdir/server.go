package localdir

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/textfile"
	"golang.org/x/sys/unix"
)

// Server serves the links of a folder: the content of a link whose
// signature holds and that has not expired, with its Content-Type, range
// requests and its SHA-256 as ETag. It opens files through an os.Root of
// the folder, so that nothing outside it (a link planted in it included)
// is ever served.
type Server struct {
	dir string
	// key reads the signing key at each request: a key removed (every
	// link revoked) or made again by a publish holds at once.
	key func() ([]byte, error)
	// Now is the server's clock; tests set it to reach an expiry.
	Now func() time.Time
	// KeyFault, when set, is told of a key that is there but cannot be
	// used (others may read it, its size, an error reading it): once,
	// until a request finds the key usable or removed again.
	KeyFault func(error)

	mu   sync.Mutex
	root *os.Root
	// dev and ino are the folder's identity when root was opened: a
	// folder removed and made again (by a publish) is opened again.
	dev, ino uint64
	// keyFaulted is the key's fault KeyFault was last told of, "" once
	// the key served or was found removed.
	keyFaulted string
}

// NewServer serves the folder dir (created when missing), with the key
// that key reads.
func NewServer(dir string, key func() ([]byte, error)) (*Server, error) {
	if err := makeFolder(dir); err != nil {
		return nil, err
	}
	s := &Server{dir: dir, key: key, Now: time.Now}
	if _, err := s.folder(); err != nil {
		return nil, err
	}
	return s, nil
}

// folder is the os.Root of the folder that dir names now. One no longer
// there (removed, renamed away to take its links down, or another thing
// in its place that cannot be opened) is let go: the descriptor held
// would still read a folder renamed.
func (s *Server) folder() (*os.Root, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st unix.Stat_t
	if err := unix.Stat(s.dir, &st); err != nil {
		s.letGo()
		return nil, assetsIOError(err, s.dir)
	}
	if s.root != nil && uint64(st.Dev) == s.dev && st.Ino == s.ino {
		return s.root, nil
	}
	s.letGo()
	root, err := localfs.OpenRoot(s.dir)
	if err != nil {
		return nil, assetsIOError(err, s.dir)
	}
	s.root, s.dev, s.ino = root, uint64(st.Dev), st.Ino
	return root, nil
}

// letGo closes the folder held, if any; mu is held. A request that took
// it before finds its files gone (404); the files it opened stay open.
func (s *Server) letGo() {
	if s.root != nil {
		s.root.Close()
		s.root = nil
	}
}

// Close releases the folder.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.root == nil {
		return nil
	}
	return s.root.Close()
}

// rangeAsRFC makes the request's Range what RFC 9110 has a server act
// on, where http.ServeContent answered 416 to one it must ignore and 206
// with no bytes to one it cannot satisfy: a unit other than bytes, or a
// range set it cannot parse, is dropped (the whole content is served),
// where "BYTES" is bytes (unit names are case-insensitive, 14.1);
// empty elements of the list are skipped; a suffix of 0 bytes, or a
// start past any size, is unsatisfiable, and a set of nothing else is
// made one ServeContent refuses with 416 (of a file of size bytes), once
// it has weighed the conditional headers, which come first; an end past
// any size is the end of the file. An empty file has no byte to send or
// to name: any Range of it is dropped, as ServeContent drops one it
// cannot satisfy, where a suffix got 206 with "bytes 0--1/0".
func rangeAsRFC(r *http.Request, size int64) {
	v := r.Header.Get("Range")
	if v == "" {
		return
	}
	if size == 0 {
		r.Header.Del("Range")
		return
	}
	unit, set, _ := strings.Cut(v, "=")
	if !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		r.Header.Del("Range")
		return
	}
	var kept []string
	specs := 0
	for spec := range strings.SplitSeq(set, ",") {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		specs++
		first, last, dash := strings.Cut(spec, "-")
		if !dash || !digits(first) || !digits(last) || first == "" && last == "" {
			r.Header.Del("Range")
			return
		}
		a, aerr := strconv.ParseInt(first, 10, 64)
		b, berr := strconv.ParseInt(last, 10, 64)
		switch {
		case first == "" && (berr == nil && b == 0):
			continue // -0: no byte
		case first == "" && berr != nil:
			spec = "0-" // a suffix longer than any file: all of it
		case first != "" && aerr != nil:
			continue // a start past any file
		case last != "" && berr != nil:
			spec = first + "-"
		case last != "" && b < a:
			r.Header.Del("Range")
			return
		}
		kept = append(kept, spec)
	}
	switch {
	case specs == 0:
		r.Header.Del("Range") // bytes= with no range: not one to parse
		return
	case len(kept) == 0:
		kept = []string{strconv.FormatInt(size, 10) + "-"}
	}
	r.Header.Set("Range", "bytes="+strings.Join(kept, ","))
}

// digits reports whether s is decimal digits only ("" too).
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	id, name, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if !ok || !validID(id) || name == "" || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	// One exp and one sig: a second exp must not be read where the
	// signature checked the first.
	q := r.URL.Query()
	exp, err := strconv.ParseInt(q.Get("exp"), 10, 64)
	if err != nil || len(q["exp"]) != 1 || len(q["sig"]) != 1 {
		http.Error(w, "the link's signature does not hold", http.StatusForbidden)
		return
	}
	// A key removed revokes every link (403); one that is there but
	// cannot be used is the server's fault, not the link's.
	key, err := s.key()
	removed := errors.Is(err, fs.ErrNotExist)
	s.noteKey(err, removed)
	switch {
	case err != nil && !removed && fault.AsError(err).Code == fault.CodeNotConfigured:
		http.Error(w, "the server cannot check links: its signing key cannot be used", http.StatusServiceUnavailable)
		return
	case err != nil && !removed:
		// No descriptor left, a failing disk: the key is sound.
		http.Error(w, "the server cannot read its signing key now; retry", http.StatusServiceUnavailable)
		return
	case err != nil || !hmac.Equal([]byte(q.Get("sig")), []byte(sign(key, id, name, exp))):
		http.Error(w, "the link's signature does not hold", http.StatusForbidden)
		return
	}
	now := s.Now()
	if now.Unix() >= exp {
		http.Error(w, "the link has expired", http.StatusGone)
		return
	}
	root, err := s.folder()
	if err != nil {
		http.NotFound(w, r)
		return
	}
	meta, err := readMeta(root, id)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	f, fi, err := openRegular(root, id)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	// The type is the link's own: its signed name and the content, as
	// publish reported it, whatever name the same bytes were published
	// under since.
	// Text is read as far as the sample in which publish takes it for
	// binary: served by its first 3 KiB, a NUL past them was served as
	// text/plain where publish said application/octet-stream.
	head := make([]byte, min(fi.Size(), textfile.SniffBytes))
	if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		http.Error(w, "the content cannot be read", http.StatusInternalServerError)
		return
	}
	if n := min(fi.Size(), int64(textfile.ServedHeadLen(name, head))); n > int64(len(head)) {
		head = make([]byte, n)
		if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
			http.Error(w, "the content cannot be read", http.StatusInternalServerError)
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", textfile.ServedHeadType(name, head, meta.NotUTF8))
	h.Set("ETag", `"`+id+`"`)
	h.Set("Cache-Control", "private, max-age="+strconv.FormatInt(exp-now.Unix(), 10))
	h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": name}))
	// Published content is the agent's, not this origin's: it is never
	// sniffed into another type, and HTML runs sandboxed.
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox")
	rangeAsRFC(r, fi.Size())
	http.ServeContent(w, r, name, fi.ModTime(), f)
}

// noteKey tells KeyFault of err, a fault of the key that is not its
// removal, unless it was the last told: a server under load would write
// it at every request.
func (s *Server) noteKey(err error, removed bool) {
	if s.KeyFault == nil {
		return
	}
	faulted := ""
	if err != nil && !removed {
		faulted = err.Error()
	}
	s.mu.Lock()
	told := faulted == s.keyFaulted
	s.keyFaulted = faulted
	s.mu.Unlock()
	if faulted != "" && !told {
		s.KeyFault(err)
	}
}

// openRegular opens name in root for reading if it is a regular file, and
// never waits on a FIFO planted there.
func openRegular(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fs.ErrNotExist
	}
	return f, fi, nil
}

// readMeta reads the metadata of the content id.
func readMeta(root *os.Root, id string) (record, error) {
	var meta record
	f, _, err := openRegular(root, id+".json")
	if err != nil {
		return meta, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return meta, err
	}
	err = json.Unmarshal(data, &meta)
	return meta, err
}

// pruneLockWait bounds how long a prune waits for the folder's lock: a
// publish holding it that long is left alone until the next prune.
const pruneLockWait = 10 * time.Second

// Prune removes the content whose every link has expired, content that no
// metadata describes (a publish that failed between the two), and
// temporary files left by a process that died (deadTemp). It returns how many
// contents it removed.
func (s *Server) Prune(ctx context.Context) (int, error) {
	root, err := s.folder()
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
		// No folder by that name (moved away to take the links down):
		// nothing to prune, as every link is 404.
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	unlock, err := lockDir(ctx, s.dir, pruneLockWait)
	if err != nil {
		return 0, err
	}
	defer unlock()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return 0, pruneError(err, s.dir)
	}
	described := map[string]bool{}
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && validID(id) {
			described[id] = true
		}
	}
	now := s.Now()
	removed := 0
	var errs []error
	for _, e := range entries {
		name := e.Name()
		switch id, isMeta := strings.CutSuffix(name, ".json"); {
		case deadTemp(name):
			errs = append(errs, ignoreMissing(root.Remove(name)))
		case !isMeta && validID(name) && !described[name]:
			// Under the lock no publish is between its two renames.
			if err := ignoreMissing(root.Remove(name)); err != nil {
				errs = append(errs, err)
			} else {
				removed++
			}
		case isMeta && validID(id):
			meta, err := readMeta(root, id)
			if err != nil || now.Before(meta.Expires) {
				continue
			}
			// The content goes first: metadata without content is a link
			// that answers 404, never content that no metadata describes.
			if err := ignoreMissing(root.Remove(id)); err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, ignoreMissing(root.Remove(name)))
			removed++
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, pruneError(err, s.dir)
	}
	return removed, nil
}

// pruneError is the error of a prune of the folder dir that failed on err
// (one error, or the errors.Join of several): what stood in the way, the
// first when there are several.
func pruneError(err error, dir string) error {
	first, more := err, 0
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs := j.Unwrap()
		first, more = errs[0], len(errs)-1
	}
	what := first.Error()
	if pe := (*fs.PathError)(nil); errors.As(first, &pe) {
		what = pe.Path + ": " + pe.Err.Error() // os.Root's op, removeat, says nothing
	}
	if more > 0 {
		what += fmt.Sprintf(" (and %d more)", more)
	}
	return fault.Errorf(assetsCode(err), "the assets folder cannot be pruned: %s.", what).WithPath(dir).
		WithHint("check that agentfs serve can write the assets folder; it serves on and prunes again in a minute").WithCause(err)
}

func ignoreMissing(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
