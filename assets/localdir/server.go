package localdir

import (
	"crypto/hmac"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentfs/agentfs/assets"
)

// Server serves the links of a folder: the content of a link whose
// signature holds and that has not expired, with its Content-Type, range
// requests and its SHA-256 as ETag. It opens files through an os.Root of
// the folder, so that nothing outside it (a link planted in it included)
// is ever served.
type Server struct {
	dir  string
	root *os.Root
	key  []byte
	// Now is the server's clock; tests set it to reach an expiry.
	Now func() time.Time
}

// NewServer serves the folder dir (created when missing) with key.
func NewServer(dir string, key []byte) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, assetsIOError(err, dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, assetsIOError(err, dir)
	}
	return &Server{dir: dir, root: root, key: key, Now: time.Now}, nil
}

// Close releases the folder.
func (s *Server) Close() error { return s.root.Close() }

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
	if err != nil || len(q["exp"]) != 1 || len(q["sig"]) != 1 || !hmac.Equal([]byte(q.Get("sig")), []byte(sign(s.key, id, name, exp))) {
		http.Error(w, "the link's signature does not hold", http.StatusForbidden)
		return
	}
	now := s.Now()
	if now.Unix() >= exp {
		http.Error(w, "the link has expired", http.StatusGone)
		return
	}
	meta, err := readMeta(s.root.FS(), id)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	f, err := s.root.Open(id)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", meta.MIMEType)
	h.Set("ETag", `"`+id+`"`)
	h.Set("Cache-Control", "private, max-age="+strconv.FormatInt(exp-now.Unix(), 10))
	h.Set("Content-Disposition", "inline; filename*=UTF-8''"+url.PathEscape(name))
	// Published content is the agent's, not this origin's: it is never
	// sniffed into another type, and HTML runs sandboxed.
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox")
	http.ServeContent(w, r, name, fi.ModTime(), f)
}

// readMeta reads the metadata of the content id.
func readMeta(fsys fs.FS, id string) (assets.Object, error) {
	var meta assets.Object
	data, err := fs.ReadFile(fsys, id+".json")
	if err != nil {
		return meta, err
	}
	err = json.Unmarshal(data, &meta)
	return meta, err
}

// staleTemp is how old a temporary file must be for a prune to remove it:
// far older than any publish takes.
const staleTemp = time.Hour

// Prune removes the content whose every link has expired, and temporary
// files left by a process that died. It returns how many contents it
// removed.
func (s *Server) Prune() (int, error) {
	unlock, err := lockDir(s.dir)
	if err != nil {
		return 0, err
	}
	defer unlock()
	entries, err := fs.ReadDir(s.root.FS(), ".")
	if err != nil {
		return 0, assetsIOError(err, s.dir)
	}
	now := s.Now()
	removed := 0
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, tempPrefix) {
			if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > staleTemp {
				errs = append(errs, ignoreMissing(s.root.Remove(name)))
			}
			continue
		}
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || !validID(id) {
			continue
		}
		meta, err := readMeta(s.root.FS(), id)
		if err != nil || now.Before(meta.Expires) {
			continue
		}
		// The content goes first: metadata without content is a link that
		// answers 404, never content that no metadata describes.
		if err := ignoreMissing(s.root.Remove(id)); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, ignoreMissing(s.root.Remove(name)))
		removed++
	}
	if err := errors.Join(errs...); err != nil {
		return removed, assetsIOError(err, s.dir)
	}
	return removed, nil
}

func ignoreMissing(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
