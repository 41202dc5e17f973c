// Package localdir is the local-folder target of publish, and the server of
// its links (agentfs serve). A published file is kept under its SHA-256,
// so that publishing the same content again stores it once, beside a
// metadata file (<sha256>.json) with its name, MIME type, size, hash and
// the latest expiry of its links. A link is BASE_URL/<sha256>/<name>?exp=
// <unix seconds>&sig=<HMAC-SHA256 of the three>, signed with a key of the
// user's state directory: only someone with the key makes a link, and
// nobody can lengthen one.
package localdir

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentfs/agentfs/assets"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// DefaultBaseURL is where agentfs serve listens unless told otherwise.
const DefaultBaseURL = "http://127.0.0.1:8080"

// tempPrefix starts the name of a file being written; the server never
// serves one, and prunes those left by a process that died.
const tempPrefix = ".tmp-"

// lockName is the file whose flock orders a publish and a prune: a prune
// never removes content that a publish has just linked again.
const lockName = ".lock"

// Store publishes into a folder.
type Store struct {
	dir     string
	baseURL string
	key     []byte
	// lockTimeout bounds the wait for the folder's lock (held by another
	// publish, or by a server's prune).
	lockTimeout time.Duration
	// Now is the store's clock, which a link's lifetime counts from; tests
	// set it.
	Now func() time.Time
}

// New is the store of the folder dir (created when missing), whose links
// start with baseURL and are signed with key; a publish waits up to
// lockTimeout for the folder's lock.
func New(dir, baseURL string, key []byte, lockTimeout time.Duration) (*Store, error) {
	if err := BaseURLError("--base-url", baseURL); err != nil {
		return nil, err
	}
	if err := makeFolder(dir); err != nil {
		return nil, err
	}
	return &Store{dir: dir, baseURL: strings.TrimRight(baseURL, "/"), key: key, lockTimeout: lockTimeout, Now: time.Now}, nil
}

// privateMode is the mode of a stored content and its metadata: only
// agentfs serve reads them, as the user that publishes (it reads the
// user's 0600 key), and a link, which expires, is the only way others
// have to them. 0644, a file of mode 0600 was stored for every local user
// to read, its link or not, until a prune.
const privateMode = 0o600

// makeFolder makes the assets folder dir when missing, for publish and
// serve alike.
func makeFolder(dir string) error {
	// Private, as what it holds (privateMode).
	if err := os.MkdirAll(dir, 0o700); err != nil {
		// For want of permission or room as a write says (assetsIOError);
		// else the folder named is no place for one (a file in the way).
		if errors.Is(err, os.ErrPermission) || errors.Is(err, unix.ENOSPC) {
			return assetsIOError(err, dir)
		}
		return fault.Errorf(fault.CodeNotConfigured, "the assets folder cannot be created: %s.", localfs.ErrText(err)).WithPath(dir).
			WithHint("give --assets a folder you can write to").WithCause(err)
	}
	// This user's alone: another user who may write there could put
	// their own bytes under the SHA-256 of a file published, before
	// (Put keeps content already there) or after, and its link served
	// them, as the file's.
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return assetsIOError(err, dir)
	}
	why, chmod := localfs.NotOursAlone(&st)
	if why == "" {
		return nil
	}
	hint := "give --assets a folder of this user's that nobody else can write to"
	if chmod {
		hint = fmt.Sprintf("chmod 700 %s, or %s", dir, hint)
	}
	return fault.Errorf(fault.CodeNotConfigured, "the assets folder is not this user's alone: %s, and another user could put other bytes behind a link.", why).
		WithPath(dir).WithHint("%s", hint)
}

// BaseURLError refuses a base URL, u, that links cannot start with
// (validBaseURL), naming the setting that gave it (name: --base-url or
// its variable); nil when u is valid.
func BaseURLError(name, u string) *fault.Error {
	if validBaseURL(u) {
		return nil
	}
	return fault.InvalidArgument("%s must be an http or https URL such as %s, not %q.", name, DefaultBaseURL, u).
		WithHint("give the address agentfs serve listens on, as people reach it: a scheme, a host, a port from 1 to 65535 and a path, without a query, a fragment or spaces")
}

// validBaseURL reports whether links can start with u: an http or https
// URL with a host, a valid port if any, and nothing that would end the
// path early (a query, a fragment) or break it (a space, a control, a
// character RFC 3986 leaves out of URLs).
func validBaseURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Hostname() == "" || p.User != nil ||
		strings.ContainsAny(u, "?# \t\r\n\"<>\\^`{|}") || strings.ContainsFunc(u, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return false
	}
	if port := p.Port(); port != "" {
		n, err := strconv.Atoi(port)
		return err == nil && n >= 1 && n <= 65535
	}
	return !strings.HasSuffix(p.Host, ":")
}

// record is the metadata of a content: what it is, and the latest expiry
// of its links, which a prune waits for.
type record struct {
	assets.Object
	Expires time.Time `json:"expiresAt"`
}

// SampleLink is a link Put could make for obj: an expiry within a link's
// lifetime has as many digits as one now.
func (s *Store) SampleLink(obj assets.Object) (string, error) {
	return Link(s.baseURL, s.key, obj.SHA256, obj.Name, expiry(s.Now(), obj.Lifetime+time.Hour)), nil
}

// expiry is when a link made at now for lifetime stops working, in whole
// seconds: rounded up, so that it works for all of lifetime.
func expiry(now time.Time, lifetime time.Duration) time.Time {
	t := now.Add(lifetime)
	if s := t.Truncate(time.Second); !s.Equal(t) {
		return s.Add(time.Second).UTC()
	}
	return t.UTC()
}

// Put copies content into the folder under obj.SHA256 (once: the same
// content published again is only linked again), records its metadata and
// returns a signed link, whose lifetime counts from when the content is in
// place. The content is written to a temporary file and renamed into
// place, so a reader of the folder never sees part of it.
func (s *Store) Put(ctx context.Context, obj assets.Object, content io.Reader) (assets.Link, error) {
	if !validID(obj.SHA256) {
		return assets.Link{}, fault.InvalidArgument("the sha256 %q is not 64 hex digits.", obj.SHA256)
	}
	unlock, err := lockDir(ctx, s.dir, s.lockTimeout)
	if err != nil {
		return assets.Link{}, err
	}
	defer unlock()
	removeDeadTemps(s.dir)
	blob := filepath.Join(s.dir, obj.SHA256)
	wrote := false
	if !reusable(blob, obj.Size) {
		if err := writeAtomic(s.dir, blob, privateMode, func(f *os.File) error {
			_, err := io.Copy(f, contextReader{ctx, content})
			return err
		}); err != nil {
			return assets.Link{}, err
		}
		wrote = true
	}
	root, err := localfs.OpenRoot(s.dir)
	if err != nil {
		return assets.Link{}, assetsIOError(err, s.dir)
	}
	defer root.Close()
	meta := record{Object: obj, Expires: expiry(s.Now(), obj.Lifetime)}
	old, oldErr := readMeta(root, obj.SHA256)
	if oldErr == nil && old.Expires.After(meta.Expires) {
		meta.Expires = old.Expires
	}
	published := false
	defer func() {
		if wrote && oldErr != nil && !published {
			// Content no link names (its metadata could not be written:
			// a full disk) is not left to hold the space, nor metadata
			// an earlier round wrote, of no content.
			os.Remove(blob)
			os.Remove(blob + ".json")
		}
	}()
	for round := 1; ; round++ {
		data, err := json.Marshal(meta)
		if err != nil {
			return assets.Link{}, err
		}
		if err := writeAtomic(s.dir, filepath.Join(s.dir, obj.SHA256+".json"), privateMode, func(f *os.File) error {
			_, err := f.Write(data)
			return err
		}); err != nil {
			return assets.Link{}, err
		}
		// The link's lifetime counts from now, its metadata durable, so
		// that it works for all of it after Put returns; counted before
		// the syncs, it fell short by their time. Past the expiry
		// written (a second turned meanwhile), the metadata is written
		// again: it must outlast every link.
		exp := expiry(s.Now(), obj.Lifetime)
		if round == maxExpiryRounds || !exp.After(meta.Expires) {
			// A disk so slow that each write takes a second gets the
			// expiry written: the link never outlives its metadata.
			if meta.Expires.Before(exp) {
				exp = meta.Expires
			}
			published = true
			return assets.Link{URL: Link(s.baseURL, s.key, obj.SHA256, obj.Name, exp), Expires: exp}, nil
		}
		// A second ahead: the next write is done within it.
		meta.Expires = exp.Add(time.Second)
	}
}

// reusable reports whether the content at blob, of size bytes, is kept
// rather than written again: a regular file of this user's (content
// another user put at a content's name, while the folder was open to
// others, is written over, never linked), made privateMode if it is not.
// Content an older agentfs stored 0644 stayed so, for every local user to
// read without a link, when it was published again.
func reusable(blob string, size int64) bool {
	fd, err := unix.Open(blob, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != size || int(st.Uid) != os.Getuid() {
		return false
	}
	// A mode that cannot be mended has the content written again.
	return st.Mode&0o7777 == privateMode || unix.Fchmod(fd, privateMode) == nil
}

// maxExpiryRounds bounds the writes of a link's metadata that a slow
// disk makes Put do again (see Put).
const maxExpiryRounds = 3

// Link is the signed link to the content id, named name, that works until
// exp (in whole seconds).
func Link(baseURL string, key []byte, id, name string, exp time.Time) string {
	e := exp.Unix()
	return fmt.Sprintf("%s/%s/%s?exp=%d&sig=%s", strings.TrimRight(baseURL, "/"), id, url.PathEscape(name), e, sign(key, id, name, e))
}

// sign is the HMAC-SHA256 of a link's id, name and expiry, base64url.
func sign(key []byte, id, name string, exp int64) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "/" + name + "\n" + strconv.FormatInt(exp, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// validID is a lowercase hex SHA-256: the only names a link can reach.
func validID(id string) bool {
	if len(id) != sha256.Size*2 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// deadTemp reports whether name, in the assets folder whose lock the
// caller holds, is a temporary file of a process that died: a publish
// writes its temporary files holding that lock. A signing key's (a state
// directory that is the folder too) is LoadKey's, which takes no lock.
func deadTemp(name string) bool {
	return strings.HasPrefix(name, tempPrefix) && !strings.HasPrefix(name, tempPrefix+"key-")
}

// removeDeadTemps removes the dead temporary files of the folder dir, whose
// lock the caller holds: a publish killed while writing a large file left
// it whole until a server's prune, which a folder no server runs on never
// had. Housekeeping: a failure is left to the next publish.
func removeDeadTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if deadTemp(e.Name()) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// writeAtomic writes a new file at dst through a temporary file in dir:
// written, synced and renamed, so that dst is the old file or the whole new
// one.
func writeAtomic(dir, dst string, mode os.FileMode, write func(*os.File) error) (err error) {
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return assetsIOError(err, dir)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err // the content's own verdict (STALE), or a stop
		}
		return assetsIOError(err, dir)
	}
	if err := f.Chmod(mode); err != nil {
		return assetsIOError(err, dir)
	}
	if err := f.Sync(); err != nil {
		return assetsIOError(err, dir)
	}
	if err := f.Close(); err != nil {
		return assetsIOError(err, dir)
	}
	if err := os.Rename(f.Name(), dst); err != nil {
		return assetsIOError(err, dir)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return assetsIOError(err, dir)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return assetsIOError(err, dir)
	}
	return nil
}

// lockDir takes the folder's exclusive lock, waiting up to timeout (0: as
// long as ctx lasts), and returns its release.
func lockDir(ctx context.Context, dir string, timeout time.Duration) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, assetsIOError(err, dir)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fault.Errorf(fault.CodeIOError, "the assets folder's %s is not a regular file.", lockName).WithPath(dir).
			WithHint("remove %s from the assets folder; agentfs makes it again", filepath.Join(dir, lockName))
	}
	// 0 tries once, as --lock-timeout 0 does everywhere.
	switch err := localfs.FlockWait(ctx, int(f.Fd()), unix.LOCK_EX, time.Now().Add(timeout)); {
	case err == nil:
		return func() { f.Close() }, nil
	case errors.Is(err, localfs.ErrLockTimeout):
		f.Close()
		return nil, fault.Errorf(fault.CodeLockTimeout, "the assets folder stayed locked for %v.", localfs.LockWaited(timeout)).WithPath(dir).
			WithHint("another publish, or agentfs serve's prune, holds it; retry, or raise --lock-timeout")
	case ctx.Err() != nil:
		f.Close()
		return nil, err
	default:
		f.Close()
		return nil, assetsIOError(err, dir)
	}
}

func assetsIOError(err error, dir string) error {
	return fault.Errorf(assetsCode(err), "the assets folder cannot be written.").WithPath(dir).
		WithHint("check that the assets folder is writable and has room; nothing was published").WithCause(err)
}

// assetsCode is the code of err, a failure to write the assets folder.
func assetsCode(err error) fault.Code {
	switch {
	case errors.Is(err, unix.ENOSPC):
		return fault.CodeNoSpace
	case errors.Is(err, os.ErrPermission):
		return fault.CodePermissionDenied
	}
	return fault.CodeIOError
}

// contextReader stops a copy when ctx is done.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
