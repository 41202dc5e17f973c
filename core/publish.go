package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentfs/agentfs/assets"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/textfile"
)

// DefaultPublishMaxSize is the largest file publish takes unless
// --publish-max-size says otherwise.
const DefaultPublishMaxSize = 100 << 20

// MaxLinkLifetime is the longest a published link works: S3's presigned
// URLs stop at 7 days, and every target keeps the same bound so that a
// request valid for one is valid for all.
const MaxLinkLifetime = 7 * 24 * time.Hour

// DefaultLinkLifetime is how long a link works when expiresIn is left out.
const DefaultLinkLifetime = time.Hour

// PublishRequest publishes one workspace file as an expiring link.
type PublishRequest struct {
	Path      string   `json:"path" arg:"0" alias:"file_path" required:"true" help:"file to publish"`
	ExpiresIn Lifetime `json:"expiresIn,omitempty" default:"1h" help:"how long the link works: a duration such as 1h or 30m (whole seconds, up to 168h), or a number of seconds"`
}

// PublishResult is the link and what it serves.
type PublishResult struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
	SHA256    string    `json:"sha256"`
	Size      int64     `json:"size"`
	MIMEType  string    `json:"mimeType"`
}

// Lifetime is how long a link works, given as a Duration is: from a second
// to MaxLinkLifetime, in whole seconds (an S3 presigned URL counts seconds).
type Lifetime time.Duration

// UnmarshalText parses "1h"-style text or a plain number of seconds; "" is
// the field left out.
func (l *Lifetime) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b), time.Second, MaxLinkLifetime)
	switch {
	case errors.Is(err, errDurationRange):
		err = fault.InvalidArgument("a link's lifetime must be from 1s to 168h (7 days, the longest an S3 presigned URL works), not %s.", string(b)).
			WithHint("give a duration such as 1h or 24h, or leave it out for the default 1h; publish again when the link expires")
	case err != nil:
		err = fault.AsError(err).WithHint("%s", lifetimeHint(string(b)))
	case v%time.Second != 0:
		// Cut silently, 1.5s would be a link of 1s.
		err = fault.InvalidArgument("a link's lifetime is whole seconds, not %s.", string(b)).
			WithHint("give a duration such as 90s or 1m30s")
	}
	*l = Lifetime(v)
	return err
}

// lifetimeHint is the hint of a lifetime that is no duration: Go's have
// no unit of days, and a link's longest is counted in hours.
func lifetimeHint(s string) string {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days > 0 && days <= 1000 {
			return fmt.Sprintf("give days in hours: %dd is %dh (at most 168h, 7 days)", days, 24*days)
		}
	}
	return "give a duration such as 1h or 24h, at most 168h (7 days)"
}

// UnmarshalJSON takes a string ("1h") or a number of seconds; null is the
// field left out, as a strict tool schema sends it.
func (l *Lifetime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if err := durationToken(b, reflect.TypeFor[Lifetime]()); err != nil {
		return err
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		return l.UnmarshalText([]byte(s))
	}
	return l.UnmarshalText(b)
}

// MarshalText writes the Go spelling, 1h0m0s.
func (l Lifetime) MarshalText() ([]byte, error) { return []byte(time.Duration(l).String()), nil }

func (Lifetime) jsonSchema() *Schema {
	// Whole seconds as a number; a string's range is the description's.
	least, most := int64(1), int64(MaxLinkLifetime/time.Second)
	return &Schema{Type: []string{"string", "integer"}, Minimum: &least, Maximum: &most}
}

// Publish puts a workspace file on the configured assets target and
// returns a link to it that expires. The file is read through the backend,
// with read's confinement; it is hashed first, since a local target names
// it by its hash, and its bytes are hashed again on the way out, so that a
// file changed in between fails the upload instead of publishing content
// the result does not describe.
func (t *Tools) Publish(ctx context.Context, req PublishRequest) (*PublishResult, error) {
	if t.ReadOnly {
		return nil, fault.Errorf(fault.CodeReadOnly, "publish is refused: agentfs runs read-only.").
			WithHint("%s; %s to publish", readOnlyLeft, t.readOnlyFix())
	}
	if err := Validate(req); err != nil {
		return nil, err
	}
	if t.Assets == nil {
		return nil, fault.Errorf(fault.CodeNotConfigured, "publish has no assets target.").
			WithHint("give --assets DIR (served by agentfs serve --assets DIR) or --assets s3://bucket/prefix, or set AGENTFS_ASSETS")
	}
	if c, ok := t.Assets.(assets.Checker); ok {
		if err := c.Check(); err != nil {
			return nil, err
		}
	}
	lifetime := cmpDuration(time.Duration(req.ExpiresIn), DefaultLinkLifetime)
	f, err := t.FS.Open(ctx, req.Path)
	if err != nil {
		return nil, t.WithSuggestions(ctx, req.Path, err)
	}
	defer f.Close()
	info := f.Info()
	display := t.FS.Display(req.Path)
	if err := checkFinalSlash(req.Path, display, info.Type); err != nil {
		return nil, err
	}
	if limit := t.publishMaxSize(); info.Size > limit {
		return nil, fault.Errorf(fault.CodeTooLarge, "the file is %d bytes, over the publish limit of %d.", info.Size, limit).
			WithPath(display).WithDetail("size", info.Size).WithDetail("limit", limit).
			WithHint("raise --publish-max-size to %d or more, or publish a smaller file", info.Size)
	}
	// The hash pass keeps the file's head: what read sniffs and the
	// sample in which it takes a text file for binary, so that publish
	// types the file as read has it without reading it again.
	h, utf8Check, head := sha256.New(), &utf8Stream{}, &headWriter{max: textfile.ServedHead}
	if _, err := io.Copy(io.MultiWriter(h, utf8Check, head), io.NewSectionReader(f, 0, info.Size)); err != nil {
		return nil, ioError(err, display)
	}
	obj := assets.Object{
		Name:     path.Base(display),
		MIMEType: textfile.ServedHeadType(path.Base(display), head.b, !utf8Check.valid()),
		NotUTF8:  !utf8Check.valid(),
		Size:     info.Size,
		SHA256:   hex.EncodeToString(h.Sum(nil)),
		Lifetime: lifetime,
	}
	// The answer's size is known but for the link, whose length the
	// target tells: one that cannot fit is refused before anything is
	// stored, as any mutation's.
	store, err := t.Assets.Open()
	if err != nil {
		return nil, err
	}
	sample, err := store.SampleLink(obj)
	if err != nil {
		return nil, err
	}
	sized := PublishResult{URL: sample, ExpiresAt: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), SHA256: obj.SHA256, Size: obj.Size, MIMEType: obj.MIMEType}
	if n := jsonSize(&sized); n > t.maxBytes() {
		return nil, t.tooLarge(n, "the link does not fit").WithPath(display).
			WithHint("raise --max-bytes to %d or more, or give the file a shorter name, or shorten --base-url; nothing was published", t.raiseTo(n))
	}
	grown := func() bool {
		var b [1]byte
		n, _ := f.ReadAt(b[:], info.Size)
		return n > 0
	}
	var content io.Reader = &checkedReader{r: io.NewSectionReader(f, 0, info.Size), h: sha256.New(), want: obj.SHA256, left: info.Size, grown: grown, display: display}
	if t.Progress != nil {
		content = &progressReader{r: content, total: info.Size, report: t.Progress}
	}
	// The whole copy is inside the gate: a signal cancels ctx, the copy
	// stops and its temporary file goes before the process answers. Not
	// waited for, the process exited with the file left, and said
	// nothing was.
	// Put gets ctx, which a signal ends: a target stops between its
	// requests and waits for one it sent (a store makes a request cut
	// off all the same), so that a Put that succeeds, interrupted or
	// not, is answered with its link.
	_, done, err := t.beginCommit(ctx)
	if err != nil {
		return nil, err
	}
	link, err := store.Put(ctx, obj, content)
	done()
	if err != nil {
		if e := fault.Interrupted(ctx); e != nil && !errors.Is(err, assets.ErrLeft) {
			return nil, e
		}
		return nil, err
	}
	return fitted(t, &PublishResult{URL: link.URL, ExpiresAt: link.Expires, SHA256: obj.SHA256, Size: obj.Size, MIMEType: obj.MIMEType})
}

// headWriter keeps the first max bytes written to it.
type headWriter struct {
	b   []byte
	max int
}

func (w *headWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p[:min(len(p), w.max-len(w.b))]...)
	return len(p), nil
}

// utf8Stream reports whether the bytes written to it, in pieces cut
// anywhere, are UTF-8.
type utf8Stream struct {
	tail []byte // the start of a character the last piece cut
	bad  bool
}

func (u *utf8Stream) Write(p []byte) (int, error) {
	n := len(p)
	if u.bad {
		return n, nil
	}
	if len(u.tail) > 0 {
		k := 0
		for ; !utf8.FullRune(u.tail) && k < len(p); k++ {
			u.tail = append(u.tail, p[k])
		}
		if !utf8.FullRune(u.tail) {
			return n, nil
		}
		if r, size := utf8.DecodeRune(u.tail); r == utf8.RuneError && size <= 1 {
			u.bad = true
			return n, nil
		}
		p, u.tail = p[k:], u.tail[:0]
	}
	// The zero Codec is UTF-8's: cut before a character p ends inside.
	cut := textfile.Codec{}.Boundary(p, len(p))
	u.bad = !utf8.Valid(p[:cut])
	u.tail = append(u.tail, p[cut:]...)
	return n, nil
}

// valid reports whether every byte written was UTF-8, none cut short.
func (u *utf8Stream) valid() bool { return !u.bad && len(u.tail) == 0 }

func (t *Tools) publishMaxSize() int64 {
	if t.PublishMaxSize <= 0 {
		return DefaultPublishMaxSize
	}
	return t.PublishMaxSize
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// checkedReader passes on exactly left bytes and, on the last of them,
// fails instead when they are not the bytes that were hashed before, or
// when the file has grown past them (it changed on the way; a log or a
// build's output still being written was published cut): a target then
// drops the upload.
type checkedReader struct {
	r       io.Reader
	h       hash.Hash
	want    string
	left    int64
	grown   func() bool
	display string
}

func (c *checkedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		if c.grown != nil && c.grown() {
			// An empty file (nothing to read, so no last read) too: a log
			// just made was published empty.
			return 0, c.stale()
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.left -= int64(n)
	if errors.Is(err, io.EOF) && c.left > 0 || c.left == 0 && (hex.EncodeToString(c.h.Sum(nil)) != c.want || c.grown()) {
		return 0, c.stale()
	}
	if c.left == 0 {
		err = io.EOF
	}
	return n, err
}

func (c *checkedReader) stale() error {
	return fault.Errorf(fault.CodeStale, "the file changed while it was published.").WithPath(c.display).
		WithHint("publish it again once it no longer changes; nothing was published")
}

// progressReader reports how many of total bytes have gone out.
type progressReader struct {
	r      io.Reader
	done   int64
	total  int64
	report func(done, total int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	p.report(p.done, p.total)
	return n, err
}
