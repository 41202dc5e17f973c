package core

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/assets"
	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/memfs"
)

// memStore is a target that keeps what it is given, as a real one does:
// a Put whose content fails keeps nothing.
type memStore struct {
	objects map[string][]byte
	last    assets.Object
	// stored is when the last Put stored its content, which the link's
	// lifetime counts from.
	stored time.Time
}

func (m *memStore) link(obj assets.Object) string {
	return "https://assets.test/" + obj.SHA256 + "/" + obj.Name
}

func (m *memStore) Open() (assets.Store, error) { return m, nil }

func (m *memStore) SampleLink(obj assets.Object) (string, error) { return m.link(obj), nil }

func (m *memStore) Put(_ context.Context, obj assets.Object, content io.Reader) (assets.Link, error) {
	data, err := io.ReadAll(content)
	if err != nil {
		return assets.Link{}, err
	}
	if m.objects == nil {
		m.objects = map[string][]byte{}
	}
	m.objects[obj.SHA256] = data
	m.last, m.stored = obj, time.Now()
	return assets.Link{URL: m.link(obj), Expires: m.stored.Add(obj.Lifetime).Truncate(time.Second)}, nil
}

// pngHeader is the start of a PNG: its type comes from its magic.
const pngHeader = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

func TestPublish(t *testing.T) {
	files := map[string]string{
		"report.md":    "# Report\n\nAll good.\n",
		"plot":         pngHeader + "rest",
		"data/out.csv": "a,b\n1,2\n",
		"big.bin":      strings.Repeat("x", 2000),
		"dir/x.txt":    "x",
		`q"\.md`:       "quoted\n",
	}
	for _, tc := range []struct {
		name     string
		req      PublishRequest
		readOnly bool
		noAssets bool
		maxSize  int64
		maxBytes int
		code     fault.Code
		mime     string
		lifetime time.Duration
	}{
		{name: "text, default expiry", req: PublishRequest{Path: "report.md"}, mime: "text/plain; charset=utf-8", lifetime: time.Hour},
		{name: "type from magic", req: PublishRequest{Path: "plot"}, mime: "image/png", lifetime: time.Hour},
		{name: "csv, a day", req: PublishRequest{Path: "data/out.csv", ExpiresIn: Lifetime(24 * time.Hour)}, mime: "text/csv", lifetime: 24 * time.Hour},
		{name: "at the size cap", req: PublishRequest{Path: "big.bin"}, maxSize: 2000, mime: "text/plain; charset=utf-8", lifetime: time.Hour},
		{name: "over the size cap", req: PublishRequest{Path: "big.bin"}, maxSize: 1999, code: fault.CodeTooLarge},
		{name: "missing", req: PublishRequest{Path: "nope.md"}, code: fault.CodeNotFound},
		{name: "a directory", req: PublishRequest{Path: "dir"}, code: fault.CodeNotAFile},
		{name: "no path", req: PublishRequest{}, code: fault.CodeInvalidArgument},
		{name: "read-only", req: PublishRequest{Path: "report.md"}, readOnly: true, code: fault.CodeReadOnly},
		{name: "read-only before validation", req: PublishRequest{}, readOnly: true, code: fault.CodeReadOnly},
		{name: "no target", req: PublishRequest{Path: "report.md"}, noAssets: true, code: fault.CodeNotConfigured},
		// The answer with the link is 265 bytes (an expiry in whole
		// seconds, as every target gives); refused before anything is
		// stored, as a mutation's that cannot be told. The bound assumed
		// nanoseconds and refused an answer 10 bytes under it.
		{name: "link over max-bytes", req: PublishRequest{Path: "report.md"}, maxBytes: 264, code: fault.CodeTooLarge},
		// The link's quote and backslash take two bytes each in JSON.
		{name: "escaped link over max-bytes", req: PublishRequest{Path: `q"\.md`}, maxBytes: 262, code: fault.CodeTooLarge},
		{name: "escaped link at max-bytes", req: PublishRequest{Path: `q"\.md`}, maxBytes: 263, mime: "text/plain; charset=utf-8", lifetime: time.Hour},
		{name: "link at max-bytes", req: PublishRequest{Path: "report.md"}, maxBytes: 265, mime: "text/plain; charset=utf-8", lifetime: time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &memStore{}
			tl := &Tools{FS: memfs.New(files), ReadOnly: tc.readOnly, PublishMaxSize: tc.maxSize, Assets: store, MaxBytes: tc.maxBytes}
			if tc.noAssets {
				tl.Assets = nil
			}
			before := time.Now()
			res, err := tl.Publish(context.Background(), tc.req)
			if tc.code != "" {
				if e := fault.AsError(err); e == nil || e.Code != tc.code {
					t.Fatalf("err %v, want %s", err, tc.code)
				}
				if e := fault.AsError(err); e.Hint == "" {
					t.Errorf("%s without a hint", e.Code)
				}
				if len(store.objects) != 0 {
					t.Errorf("a refused publish stored %d objects", len(store.objects))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := files[tc.req.Path]
			if res.SHA256 != sum(want) || res.Size != int64(len(want)) || res.MIMEType != tc.mime {
				t.Errorf("result %+v, want sha256 %s, size %d, %s", res, sum(want), len(want), tc.mime)
			}
			if string(store.objects[res.SHA256]) != want {
				t.Errorf("stored %q, want %q", store.objects[res.SHA256], want)
			}
			if !strings.HasSuffix(res.URL, "/"+res.SHA256+"/"+store.last.Name) || store.last.Name != tc.req.Path[strings.LastIndex(tc.req.Path, "/")+1:] {
				t.Errorf("url %s, name %q", res.URL, store.last.Name)
			}
			if store.last.Lifetime != tc.lifetime || !res.ExpiresAt.Equal(store.stored.Add(tc.lifetime).Truncate(time.Second)) || res.ExpiresAt.Before(before.Add(tc.lifetime).Truncate(time.Second)) {
				t.Errorf("expiresAt %s, lifetime %v: want the target's link's, %v after it stored the content (%s)", res.ExpiresAt, store.last.Lifetime, tc.lifetime, store.stored)
			}
		})
	}
}

// changingFS serves a file whose bytes change after they were first read
// in full, as a file rewritten in place during a publish.
type changingFS struct{ *memfs.FS }

func (c changingFS) Open(ctx context.Context, p string) (backend.FileReader, error) {
	f, err := c.FS.Open(ctx, p)
	return &changingReader{FileReader: f}, err
}

type changingReader struct {
	backend.FileReader
	read int64
}

func (r *changingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.FileReader.ReadAt(p, off)
	if r.read >= r.Info().Size {
		for i := range p[:n] {
			p[i] = 'Z'
		}
	}
	r.read += int64(n)
	return n, err
}

// TestPublishChangedFile: content that is not what was hashed fails the
// upload with STALE, and the target keeps nothing.
func TestPublishChangedFile(t *testing.T) {
	store := &memStore{}
	tl := &Tools{FS: changingFS{memfs.New(map[string]string{"f.txt": "original\n"})}, Assets: store}
	_, err := tl.Publish(context.Background(), PublishRequest{Path: "f.txt"})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeStale {
		t.Fatalf("err %v, want STALE", err)
	}
	if len(store.objects) != 0 {
		t.Errorf("stored %d objects", len(store.objects))
	}
}

// TestPublishProgress: the progress callback sees every byte go out, ending
// at the total.
func TestPublishProgress(t *testing.T) {
	content := strings.Repeat("p", 100<<10)
	var last, total int64
	calls := 0
	tl := &Tools{FS: memfs.New(map[string]string{"f": content}), Assets: &memStore{},
		Progress: func(done, all int64) { last, total = done, all; calls++ }}
	if _, err := tl.Publish(context.Background(), PublishRequest{Path: "f"}); err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last != int64(len(content)) || total != int64(len(content)) {
		t.Errorf("progress ended at %d of %d after %d calls, want %d", last, total, calls, len(content))
	}
}

func TestCheckedReader(t *testing.T) {
	content := []byte("exactly these bytes")
	for _, tc := range []struct {
		name   string
		source string
		size   int64
		ok     bool
	}{
		{"same", string(content), int64(len(content)), true},
		// Grown past the size taken: a file still being written, which
		// was published cut.
		{"same, more behind", string(content) + "tail", int64(len(content)), false},
		{"changed", "exactly those bytes!", int64(len(content)), false},
		{"shorter", "exactly", int64(len(content)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			grown := func() bool { return int64(len(tc.source)) > tc.size }
			r := &checkedReader{r: strings.NewReader(tc.source), h: sha256.New(), want: sum(string(content)), left: tc.size, grown: grown}
			got, err := io.ReadAll(r)
			if tc.ok != (err == nil) {
				t.Fatalf("err %v, want ok %v", err, tc.ok)
			}
			if tc.ok && !bytes.Equal(got, content) {
				t.Errorf("read %q", got)
			}
		})
	}
}

// copyingStore is a target whose copy goes on until its context ends,
// then drops what it copied, as a real one removes its temporary file.
type copyingStore struct {
	memStore
	copying chan struct{}
	dropped bool
}

func (s *copyingStore) Open() (assets.Store, error) { return s, nil }

func (s *copyingStore) Put(ctx context.Context, _ assets.Object, _ io.Reader) (assets.Link, error) {
	close(s.copying)
	<-ctx.Done()
	s.dropped = true
	return assets.Link{}, ctx.Err()
}

// TestPublishCopyIsInsideTheGate: a signal during a publish's copy waits
// for the copy to stop and drop its temporary file. Outside the gate, the
// process answered INTERRUPTED at once, "nothing was left half-done", and
// exited with the temporary file of up to 100 MiB left in the folder.
func TestPublishCopyIsInsideTheGate(t *testing.T) {
	store := &copyingStore{copying: make(chan struct{})}
	tl := &Tools{FS: memfs.New(map[string]string{"a.txt": "a\n"}), Assets: store, Commits: &CommitGate{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := tl.Publish(ctx, PublishRequest{Path: "a.txt"})
		done <- err
	}()
	<-store.copying
	cancel()
	if !tl.Commits.Close() {
		t.Fatal("the copy did not hold the gate: the process would exit with its temporary file left")
	}
	if err := <-done; fault.AsError(err).Code != fault.CodeInterrupted || !store.dropped {
		t.Errorf("publish: %v, copy dropped: %v; want INTERRUPTED once the copy is dropped", err, store.dropped)
	}
}

// utf8Stream judges the bytes whatever the pieces they come in.
func TestUTF8Stream(t *testing.T) {
	for _, tc := range []struct {
		text  string
		valid bool
	}{
		{"", true}, {"abc", true}, {"café ✓ 𝄞", true},
		{"caf\xe9", false}, {"\xe2\x9c", false}, {"a\xf0\x9d\x84", false}, {"\xe2A\x9c", false},
	} {
		for cut := 1; cut <= max(1, len(tc.text)); cut++ {
			u := &utf8Stream{}
			for s := tc.text; len(s) > 0; {
				n := min(cut, len(s))
				u.Write([]byte(s[:n]))
				s = s[n:]
			}
			if u.valid() != tc.valid {
				t.Errorf("%q in pieces of %d: valid %v, want %v", tc.text, cut, u.valid(), tc.valid)
			}
		}
	}
}

// A text file whose first 3 KiB are UTF-8 and the rest not is published
// without the charset its start suggested: it was served as UTF-8, and a
// browser showed U+FFFD for each of its other bytes.
func TestPublishTextNotUTF8HasNoCharset(t *testing.T) {
	store := &memStore{}
	late := strings.Repeat("a", 4000) + "\ncaf\xe9\n"
	tl := &Tools{FS: memfs.New(map[string]string{"late.txt": late, "good.txt": strings.Repeat("a", 4000) + "\ncafé\n"}), Assets: store}
	for name, want := range map[string]string{"late.txt": "text/plain", "good.txt": "text/plain; charset=utf-8"} {
		res, err := tl.Publish(context.Background(), PublishRequest{Path: name})
		if err != nil {
			t.Fatal(err)
		}
		if res.MIMEType != want || store.last.NotUTF8 != (name == "late.txt") {
			t.Errorf("%s: %q (not UTF-8: %v), want %q", name, res.MIMEType, store.last.NotUTF8, want)
		}
	}
}

// growingStore appends to the file before it reads the content, as a log
// or a build's output still being written grows during a publish.
type growingStore struct {
	memStore
	file string
}

func (s *growingStore) Open() (assets.Store, error) { return s, nil }

func (s *growingStore) Put(ctx context.Context, obj assets.Object, content io.Reader) (assets.Link, error) {
	f, err := os.OpenFile(s.file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return assets.Link{}, err
	}
	f.WriteString("more\n")
	f.Close()
	return s.memStore.Put(ctx, obj, content)
}

// A file that grows while it is published is STALE, nothing stored: the
// bytes up to its first size were published, exit 0, cut (an empty one,
// just made, was published empty).
func TestPublishGrowingFile(t *testing.T) {
	for _, first := range []string{"line 1\n", ""} {
		publishGrowing(t, first)
	}
}

func publishGrowing(t *testing.T, first string) {
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	dir := t.TempDir()
	lfs, err := localfs.New(localfs.Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer lfs.Close()
	p := filepath.Join(dir, "grow.log")
	if err := os.WriteFile(p, []byte(first), 0o644); err != nil {
		t.Fatal(err)
	}
	store := &growingStore{file: p}
	_, err = (&Tools{FS: lfs, Assets: store}).Publish(context.Background(), PublishRequest{Path: "grow.log"})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeStale || len(store.objects) != 0 {
		t.Fatalf("%q grown: err %v, %d objects stored; want STALE and none", first, err, len(store.objects))
	}
}

// leftStore fails once ctx is done, having left data it says how to
// remove.
type leftStore struct{ putting chan struct{} }

func (s *leftStore) Open() (assets.Store, error) { return s, nil }

func (s *leftStore) SampleLink(obj assets.Object) (string, error) { return "https://x.test/a", nil }

func (s *leftStore) Put(ctx context.Context, _ assets.Object, _ io.Reader) (assets.Link, error) {
	close(s.putting)
	<-ctx.Done()
	return assets.Link{}, fault.Errorf(fault.CodeIOError, "the upload failed, and its parts are left.").WithCause(assets.ErrLeft)
}

// An interrupted publish whose target left data answers the target's
// error, which says how to remove it: INTERRUPTED said nothing was left.
func TestPublishInterruptedLeavingDataSaysSo(t *testing.T) {
	store := &leftStore{putting: make(chan struct{})}
	tl := &Tools{FS: memfs.New(map[string]string{"a.txt": "a\n"}), Assets: store}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := tl.Publish(ctx, PublishRequest{Path: "a.txt"})
		done <- err
	}()
	<-store.putting
	cancel()
	if err := <-done; fault.AsError(err).Code != fault.CodeIOError {
		t.Errorf("publish: %v, want the target's IO_ERROR saying what is left", err)
	}
}

// A file read takes for binary (a NUL in the first 64 KiB of text after
// its mark, U+0000 in the first 64 KiB of UTF-16's decoded text) is
// published as application/octet-stream, and one it takes for text as
// text: publish sniffed 3 KiB, and served a NUL at byte 10,000 as
// text/plain; charset=utf-8.
func TestPublishBinaryAsReadHasIt(t *testing.T) {
	utf16le := func(s string) string {
		b := []byte{0xff, 0xfe}
		for _, r := range s {
			b = append(b, byte(r), byte(r>>8))
		}
		return string(b)
	}
	a := func(n int) string { return strings.Repeat("a", n) }
	files := map[string]string{
		"nul-10000.txt":      a(10000) + "\x00b\n",
		"nul-64k.txt":        a(64<<10-1) + "\x00b\n",
		"nul-past.txt":       a(64<<10) + "\x00b\n",
		"bom-nul-64k.txt":    "\ufeff" + a(64<<10-1) + "\x00b\n",
		"bom-nul-past.txt":   "\ufeff" + a(64<<10) + "\x00b\n",
		"utf16-nul.txt":      utf16le(a(4000) + "\x00b\n"),
		"utf16-nul-past.txt": utf16le(a(64<<10) + "\x00b\n"),
		"plain.txt":          a(10000) + "\n",
	}
	store := &memStore{}
	tl := &Tools{FS: memfs.New(files), Assets: store}
	for name := range files {
		r, err := tl.Read(context.Background(), ReadRequest{Path: name})
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		res, err := tl.Publish(context.Background(), PublishRequest{Path: name})
		if err != nil {
			t.Fatalf("publish %s: %v", name, err)
		}
		if binary := res.MIMEType == "application/octet-stream"; binary != (r.Kind == "binary") || !binary && !strings.HasPrefix(res.MIMEType, "text/plain") {
			t.Errorf("%s: published as %q, read as %s", name, res.MIMEType, r.Kind)
		}
	}
}
