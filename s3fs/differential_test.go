package s3fs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/registry"
	"github.com/agentfs/agentfs/s3fs"
	"github.com/agentfs/agentfs/s3fs/s3test"
	"github.com/minio/minio-go/v7"
)

// diffTree is the tree both backends hold: files by path, and empty
// directories (a marker object in the store). It has no links, modes nor
// special files, which a store cannot hold.
func diffTree() (files map[string][]byte, emptyDirs []string) {
	files = map[string][]byte{
		".gitignore":            []byte("*.log\nbuild/\n/top-only.txt\n"),
		"src/.agentfsignore":    []byte("secret*\n!secret-keep.txt\n"),
		"app.log":               []byte("TODO in a log\n"),
		"top-only.txt":          []byte("TODO ignored at the top\n"),
		"src/top-only.txt":      []byte("TODO kept below the top\n"),
		"src/build/out.go":      []byte("package build // TODO\n"),
		"src/secret.txt":        []byte("TODO secret\n"),
		"src/secret-keep.txt":   []byte("TODO kept secret\n"),
		"src/deep/a/b/c.go":     []byte("package c\n\nfunc Deep() {} // TODO\n"),
		"docs/lf.txt":           []byte("alpha\nbeta\ngamma\n"),
		"docs/crlf.txt":         []byte("alpha\r\nbeta\r\nTODO gamma\r\ndelta\r\n"),
		"docs/mixed.txt":        []byte("one\r\ntwo\nTODO three\r\nfour\n"),
		"docs/bom.txt":          append([]byte("\xef\xbb\xbf"), "TODO with a bom\nsecond\n"...),
		"docs/utf16.txt":        utf16LE("TODO in utf-16\r\nline two\r\n"),
		"docs/no-newline.txt":   []byte("last line without newline TODO"),
		"bin/blob.bin":          {0, 1, 2, 'T', 'O', 'D', 'O', 0, 255, 254, '\n', 0},
		"img/pixel.png":         pngBytes(),
		"empty.txt":             {},
		"docs/empty.md":         {},
		"long/lines.txt":        []byte(strings.Repeat("x", 5000) + " TODO\nshort\n" + strings.Repeat("é", 3000) + "\n"),
		"names/with space.txt":  []byte("spaced TODO\n"),
		"names/ünïcödé.txt":     []byte("unicode TODO\n"),
		"names/-dash.txt":       []byte("dashed TODO\n"),
		"names/日本語.md":          []byte("日本語 TODO\n"),
		"names/a+b.txt":         []byte("plus TODO\n"),
		"names/100%.txt":        []byte("percent TODO\n"),
		"names/q?.txt":          []byte("question TODO\n"),
		"names/hash#&=.txt":     []byte("hash TODO\n"),
		"names/tilde~'\".txt":   []byte("quotes TODO\n"),
		"names/.hidden":         []byte("hidden TODO\n"),
		"names/Upper.txt":       []byte("upper TODO\n"),
		"names/back\\slash.txt": []byte("backslash TODO\n"),
		"names/new\nline.txt":   []byte("newline TODO\n"),
		"names/tab\there.txt":   []byte("tab TODO\n"),
		"names/ends in space ":  []byte("trailing TODO\n"),
		"sort/a/inner.txt":      []byte("inner TODO\n"),
		"sort/a b.txt":          []byte("space TODO\n"),
		"sort/a-b.txt":          []byte("dash TODO\n"),
		"sort/a.txt":            []byte("dot TODO\n"),
		"sort/a0.txt":           []byte("zero TODO\n"),
		"sort/a~.txt":           []byte("tilde TODO\n"),
		"sort/a-dir/x.txt":      []byte("x TODO\n"),
		".agentfsignore":        []byte("*.tmp\n"),
		"scratch.tmp":           []byte("TODO tmp\n"),
		"pkg/05/.gitignore":     []byte("file_1*.go\n!file_10.go\n"),
		".git/config":           []byte("[core] TODO\n"),
		".git/HEAD":             []byte("ref: refs/heads/main\n"),
	}
	var big strings.Builder
	for i := 1; i <= 4500; i++ {
		fmt.Fprintf(&big, "line %d of the big file%s\n", i, map[bool]string{true: " TODO"}[i%500 == 0])
	}
	files["big/many.txt"] = []byte(big.String())
	// Large enough that reads go by ranges and chunks, whose edges may
	// split a CRLF or a UTF-16 unit.
	var crlf strings.Builder
	for i := 1; crlf.Len() < 1500<<10; i++ {
		fmt.Fprintf(&crlf, "%d %s%s\r\n", i, strings.Repeat("ab", i%40), map[bool]string{true: " TODO"}[i%997 == 0])
	}
	files["big/crlf.txt"] = []byte(crlf.String())
	var wide strings.Builder
	for i := 1; wide.Len() < 300<<10; i++ {
		fmt.Fprintf(&wide, "ligne %d é%s\n", i, strings.Repeat("ü", i%13))
	}
	files["big/utf16.txt"] = utf16LE(wide.String())
	for d := range 12 {
		for f := range 22 {
			var b strings.Builder
			fmt.Fprintf(&b, "package p%02d\n\n", d)
			for l := range 4 + (d*f)%9 {
				fmt.Fprintf(&b, "func F%02d_%02d_%d() int { return %d }\n", d, f, l, d+f+l)
				if (d+f+l)%7 == 0 {
					b.WriteString("// TODO: fix Widget handling\n")
				}
			}
			text := b.String()
			if f%5 == 0 {
				text = strings.ReplaceAll(text, "\n", "\r\n")
			}
			files[fmt.Sprintf("pkg/%02d/file_%02d.go", d, f)] = []byte(text)
		}
		files[fmt.Sprintf("pkg/%02d/notes.md", d)] = []byte("# Notes\nwidget notes\n")
	}
	return files, []string{"void", "pkg/03/emptydir", "src/deep/hollow"}
}

func utf16LE(s string) []byte {
	out := []byte{0xff, 0xfe}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}

func pngBytes() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

// diffSide is one backend of the comparison, with what normalising its
// answers needs.
type diffSide struct {
	name  string
	tools *core.Tools
	// root is the workspace as the backend spells it in messages.
	root string
	// seqs numbers each path's distinct versions in the order seen.
	seqs map[string]map[string]int
	// saved are version tokens saved by name for a later request.
	saved map[string]string
}

var diffTools = func() map[string]registry.Tool {
	m := map[string]registry.Tool{}
	for _, tl := range registry.All() {
		m[tl.Info().Name] = tl
	}
	return m
}()

// call runs one request and returns its answer as decoded JSON: the result,
// or {"error": ...}.
func (s *diffSide) call(t *testing.T, tool, req string) map[string]any {
	t.Helper()
	for name, v := range s.saved {
		req = strings.ReplaceAll(req, "{{"+name+"}}", v)
	}
	res, err := diffTools[tool].Call(context.Background(), s.tools, []byte(req))
	var answer any = res
	if err != nil {
		e := fault.AsError(err)
		if e == nil {
			t.Fatalf("%s: %s %s: an error without a code: %v", s.name, tool, req, err)
		}
		answer = map[string]any{"error": e}
	}
	b, err := json.Marshal(answer)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// normalise replaces what legitimately differs between the backends.
func (s *diffSide) normalise(v any, path string) any {
	switch x := v.(type) {
	case map[string]any:
		if p, ok := x["path"].(string); ok {
			path = p
		}
		out := map[string]any{}
		for k, e := range x {
			switch {
			case k == "mtime": // the store's clock, not the disk's
			case k == "mode" && x["name"] != nil: // ls --long: objects have no modes
			case k == "size" && x["type"] == "dir": // a disk's block, 0 for a prefix
			case (k == "message" || k == "hint") && x["code"] != nil: // prose each backend words for its own kind of root; codes are compared
			case k == "path" && x["code"] == string(fault.CodeOutsideRoot): // no workspace spelling: a disk names it absolute, a store as given
			case k == "nextCursor": // opaque: its presence is compared, then each is followed
				out[k] = "<cursor>"
			case k == "version" || strings.HasSuffix(k, "Version"): // ETag or inode-based: compared as the path's n-th version
				out[k] = s.versionSeq(path, e)
			case k == "plan": // a digest of versions: compared as the n-th plan
				out[k] = s.versionSeq("<plan>", e)
			default:
				out[k] = s.normalise(e, path)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.normalise(e, path)
		}
		return out
	case string:
		return strings.ReplaceAll(x, s.root, "<root>") // the workspace's spelling in messages
	}
	return v
}

func (s *diffSide) versionSeq(path string, v any) any {
	token, ok := v.(string)
	if !ok || token == "" {
		return v
	}
	m := s.seqs[path]
	if m == nil {
		m = map[string]int{}
		s.seqs[path] = m
	}
	if _, ok := m[token]; !ok {
		m[token] = len(m) + 1
	}
	return "v" + strconv.Itoa(m[token])
}

// differ runs the same requests on a local folder and on a prefix of a
// bucket holding the same tree, and compares the answers.
type differ struct {
	t            *testing.T
	local, store *diffSide
	compared     int
}

// same runs req on both sides, fails t when the normalised answers differ,
// and returns the raw answers. save, when set, names the version of each
// answer for a later {{save}} in a request.
func (d *differ) same(step, tool, req, save string) (local, store map[string]any) {
	d.t.Helper()
	local, store = d.local.call(d.t, tool, req), d.store.call(d.t, tool, req)
	nl, _ := json.Marshal(d.local.normalise(local, ""))
	ns, _ := json.Marshal(d.store.normalise(store, ""))
	d.compared++
	if !bytes.Equal(nl, ns) {
		d.t.Errorf("%s: %s %s\nlocal: %s\ns3:    %s", step, tool, req, nl, ns)
	}
	if save != "" {
		d.local.saved[save], _ = local["version"].(string)
		d.store.saved[save], _ = store["version"].(string)
	}
	return local, store
}

// paged runs a request, then follows each side's own nextCursor to the
// end, comparing every page.
func (d *differ) paged(step, tool, req string) {
	d.t.Helper()
	var base map[string]any
	if err := json.Unmarshal([]byte(req), &base); err != nil {
		d.t.Fatal(err)
	}
	lreq, sreq := req, req
	for page := 0; ; page++ {
		if page > 500 {
			d.t.Fatalf("%s: more than 500 pages", step)
		}
		l, s := d.local.call(d.t, tool, lreq), d.store.call(d.t, tool, sreq)
		nl, _ := json.Marshal(d.local.normalise(l, ""))
		ns, _ := json.Marshal(d.store.normalise(s, ""))
		d.compared++
		if !bytes.Equal(nl, ns) {
			d.t.Errorf("%s page %d: %s %s\nlocal: %s\ns3:    %s", step, page, tool, req, nl, ns)
			return
		}
		lc, _ := l["nextCursor"].(string)
		sc, _ := s["nextCursor"].(string)
		if lc == "" {
			return
		}
		lreq, sreq = withField(d.t, base, "cursor", lc), withField(d.t, base, "cursor", sc)
	}
}

// pagedWhole follows each side's cursor to the end and compares the items
// of field over all the pages (each fits the bound, as any result): under a tight
// bound a side whose items take more bytes (a disk's directory sizes,
// 4096 where an object store says 0) cuts its pages elsewhere.
func (d *differ) pagedWhole(step, tool, req, field string) {
	d.t.Helper()
	var base map[string]any
	if err := json.Unmarshal([]byte(req), &base); err != nil {
		d.t.Fatal(err)
	}
	whole := func(side *diffSide) []byte {
		var items []any
		r := req
		for page := 0; ; page++ {
			if page > 500 {
				d.t.Fatalf("%s: more than 500 pages", step)
			}
			res := side.call(d.t, tool, r)
			items = append(items, side.normalise(map[string]any{field: res[field]}, "").(map[string]any)[field].([]any)...)
			c, _ := res["nextCursor"].(string)
			if c == "" {
				break
			}
			r = withField(d.t, base, "cursor", c)
		}
		b, _ := json.Marshal(items)
		return b
	}
	l, s := whole(d.local), whole(d.store)
	d.compared++
	if !bytes.Equal(l, s) {
		d.t.Errorf("%s: %s %s, all pages\nlocal: %s\ns3:    %s", step, tool, req, l, s)
	}
}

// resumed takes the first page of a listing, makes a change on both
// sides, then follows each side's cursor to the end.
func (d *differ) resumed(step, tool, req, changeTool, change string) {
	d.t.Helper()
	var base map[string]any
	if err := json.Unmarshal([]byte(req), &base); err != nil {
		d.t.Fatal(err)
	}
	l, s := d.same(step+": first page", tool, req, "")
	d.same(step+": change", changeTool, change, "")
	lc, _ := l["nextCursor"].(string)
	sc, _ := s["nextCursor"].(string)
	if lc == "" || sc == "" {
		d.t.Fatalf("%s: the first page has no cursor", step)
	}
	d.local.saved["cursor"], d.store.saved["cursor"] = lc, sc
	d.paged(step+": the rest", tool, withField(d.t, base, "cursor", "{{cursor}}"))
}

// reads reads path to its end by windows of limit lines, each continuing
// at the previous one's nextOffset and nextByteOffset.
func (d *differ) reads(step, path string, limit int) {
	d.t.Helper()
	req := fmt.Sprintf(`{"path":%q,"limit":%d}`, path, limit)
	for page := 0; ; page++ {
		if page > 500 {
			d.t.Fatalf("%s: more than 500 windows", step)
		}
		l, _ := d.same(fmt.Sprintf("%s window %d", step, page), "read", req, "")
		if l["truncated"] != true || l["nextOffset"] == nil {
			return
		}
		req = fmt.Sprintf(`{"path":%q,"limit":%d,"offset":%s,"byteOffset":%s}`, path, limit, l["nextOffset"], l["nextByteOffset"])
	}
}

// readBack compares each path read whole, and the whole tree's listing.
func (d *differ) readBack(step string, paths ...string) {
	d.t.Helper()
	for _, p := range paths {
		d.same(step+": read back "+p, "read", fmt.Sprintf(`{"path":%q}`, p), "")
	}
	d.paged(step+": find", "find", `{"pattern":"**","noIgnore":true,"limit":1000}`)
}

func withField(t *testing.T, base map[string]any, k string, v any) string {
	m := maps.Clone(base)
	if m == nil {
		m = map[string]any{}
	}
	m[k] = v
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newDiffer puts the tree in a temporary directory and at a fresh prefix
// of a fresh bucket.
func newDiffer(t *testing.T) *differ {
	endpoint := s3test.Endpoint(t)
	bucket := s3test.Bucket(t)
	files, emptyDirs := diffTree()

	dir := t.TempDir()
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range emptyDirs {
		if err := os.MkdirAll(filepath.Join(dir, e), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	lfs, err := localfs.New(localfs.Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}

	b := make([]byte, 4)
	_, _ = rand.Read(b)
	prefix := "diff-" + hex.EncodeToString(b) + "/"
	c, err := s3test.Client(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	// An empty directory is its marker object, as s3fs leaves one.
	objects := map[string][]byte{}
	for p, data := range files {
		objects[prefix+p] = data
	}
	for _, e := range emptyDirs {
		objects[prefix+e+"/"] = nil
	}
	putAll(t, c, bucket, objects)
	access, secret := s3test.Keys()
	root := "s3://" + bucket + "/" + strings.TrimSuffix(prefix, "/")
	sfs, err := s3fs.New(s3fs.Config{Root: root, Endpoint: endpoint, AccessKey: access, SecretKey: secret})
	if err != nil {
		t.Fatal(err)
	}
	side := func(name string, tools *core.Tools, root string) *diffSide {
		return &diffSide{name: name, tools: tools, root: root, seqs: map[string]map[string]int{}, saved: map[string]string{"root": root}}
	}
	return &differ{t: t,
		local: side("local", &core.Tools{FS: lfs}, dir),
		store: side("s3", &core.Tools{FS: sfs}, root)}
}

// putAll puts the objects, a few at a time.
func putAll(t *testing.T, c *minio.Client, bucket string, objects map[string][]byte) {
	var wg sync.WaitGroup
	errs := make(chan error, len(objects))
	slots := make(chan struct{}, 8)
	for k, data := range objects {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			_, err := c.PutObject(context.Background(), bucket, k, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestDifferential: every tool answers on an s3 root as on a local folder
// holding the same tree, byte for byte once versions, mtimes, modes,
// directory sizes, cursors and the root's spelling are set aside.
func TestDifferential(t *testing.T) {
	d := newDiffer(t)

	t.Run("read", func(t *testing.T) {
		d.t = t
		for _, p := range []string{"docs/lf.txt", "docs/crlf.txt", "docs/mixed.txt", "docs/bom.txt", "docs/utf16.txt",
			"docs/no-newline.txt", "bin/blob.bin", "img/pixel.png", "empty.txt", "docs/empty.md", "long/lines.txt",
			"names/with space.txt", "names/ünïcödé.txt", "names/-dash.txt", "names/日本語.md", "app.log", "src/secret.txt",
			"pkg/05/file_05.go"} {
			d.same("whole", "read", fmt.Sprintf(`{"path":%q}`, p), "")
		}
		for _, req := range []string{
			`{"path":"big/many.txt","offset":100,"limit":10}`,
			`{"path":"big/many.txt","offset":4490,"limit":50}`,
			`{"path":"big/many.txt","offset":-5}`,
			`{"path":"big/many.txt","offset":-1,"limit":1}`,
			`{"path":"docs/crlf.txt","offset":-2}`,
			`{"path":"docs/utf16.txt","offset":2,"limit":1}`,
			`{"path":"big/many.txt","offset":5000}`,
			`{"path":"long/lines.txt","lineTruncation":{"chars":100}}`,
			`{"path":"long/lines.txt","lineTruncation":{"bytes":50}}`,
			`{"path":"long/lines.txt","lineTruncation":{"chars":0}}`,
			`{"path":"docs/crlf.txt","lineNumbers":true,"offset":2,"limit":2}`,
			`{"path":"docs/bom.txt","encoding":"latin1"}`,
			`{"path":"{{root}}/docs/lf.txt"}`,
			`{"path":"docs/./../docs/lf.txt","lineNumbers":true}`,
		} {
			d.same("window", "read", req, "")
		}
		d.reads("paged big", "big/many.txt", 700)
		d.reads("paged large crlf", "big/crlf.txt", 2000)
		d.reads("paged large utf16", "big/utf16.txt", 2000)
		for _, req := range []string{
			`{"path":"big/crlf.txt","offset":-3}`, `{"path":"big/crlf.txt","offset":-2500,"limit":7}`,
			`{"path":"big/crlf.txt","offset":30001,"limit":3}`, `{"path":"big/utf16.txt","offset":-4}`,
			`{"path":"big/utf16.txt","offset":20000,"limit":2}`, `{"path":"big/crlf.txt","offset":-1,"lineTruncation":{"bytes":5}}`,
		} {
			d.same("large window", "read", req, "")
		}
		d.reads("paged crlf", "docs/crlf.txt", 1)
		d.reads("paged utf16", "docs/utf16.txt", 1)
		d.reads("paged long", "long/lines.txt", 1)
		for _, req := range []string{
			`{"path":"missing.txt"}`, `{"path":"docs"}`, `{"path":"docs/lf.txt/x"}`,
			`{"path":"../outside.txt"}`, `{"path":"/etc/passwd"}`, `{"path":"void"}`,
			`{"path":"big/many.txt","offset":2,"byteOffset":3}`,
			`{"path":"docs/lf.txt/"}`, `{"path":"DOCS/lf.txt"}`, `{"path":"docs/lf.tx"}`, `{"path":"docs//lf.txt"}`,
			`{"path":""}`, `{"path":"big/many.txt","expectedVersion":"0123456789abcdef0123456789abcdef"}`,
		} {
			d.same("bad read", "read", req, "")
		}
	})

	t.Run("ls", func(t *testing.T) {
		d.t = t
		for _, req := range []string{
			`{}`, `{"path":"docs"}`, `{"path":"names","long":true}`, `{"path":".","long":true}`,
			`{"path":"void"}`, `{"path":"src","depth":4}`, `{"path":"sort","depth":2}`, `{"path":"names"}`, `{"path":"pkg/05"}`, `{"path":"src","depth":2,"long":true}`,
			`{"path":"missing"}`, `{"path":"docs/lf.txt"}`, `{"path":"../x"}`,
			`{"path":"src/build"}`, `{"path":"docs/"}`, `{"path":"pkg/05/"}`, `{"path":".git"}`,
		} {
			d.same("ls", "ls", req, "")
		}
		d.paged("ls paged", "ls", `{"path":"pkg/07","limit":5}`)
		d.paged("ls paged sort", "ls", `{"path":"sort","depth":2,"limit":1}`)
		d.same("ls offset", "ls", `{"path":"pkg/07","limit":5,"offset":10}`, "")
		d.same("ls offset past the end", "ls", `{"path":"pkg/07","offset":100}`, "")
		d.paged("ls paged deep", "ls", `{"path":".","depth":3,"limit":17}`)
		d.paged("ls paged long", "ls", `{"path":"pkg","depth":2,"limit":40,"long":true}`)
	})

	t.Run("find", func(t *testing.T) {
		d.t = t
		for _, req := range []string{
			`{"pattern":"*.txt"}`, `{"pattern":"pkg/*/notes.md"}`, `{"pattern":"**/c.go"}`,
			`{"pattern":"*","type":"dir"}`, `{"pattern":"**","type":"file","path":"names"}`,
			`{"pattern":"*.log","noIgnore":true}`, `{"pattern":"secret*"}`, `{"pattern":"*.go","exclude":["pkg"]}`,
			`{"pattern":"*","path":"void"}`, `{"pattern":"*","path":"missing"}`, `{"pattern":"*","path":"docs/lf.txt"}`,
			`{"pattern":"["}`, `{"pattern":"*","path":"src/build"}`, `{"pattern":"*","path":".git"}`, `{"pattern":"**/.*"}`, `{"pattern":"*","path":"../up"}`, `{"pattern":"{lf,crlf}.txt"}`,
			`{"pattern":"**/b/*.go","path":"src"}`, `{"pattern":"0[0-2]/file_1?.go","path":"pkg"}`, `{"pattern":"*space*"}`,
			`{"pattern":"*.txt","exclude":["names/*","docs"]}`, `{"pattern":"**","type":"dir","path":"src"}`,
		} {
			d.same("find", "find", req, "")
		}
		d.paged("find paged", "find", `{"pattern":"*.go","limit":23}`)
		d.paged("find paged sort", "find", `{"pattern":"**","path":"sort","limit":2}`)
		d.paged("find paged all", "find", `{"pattern":"**","limit":50}`)
		d.paged("find paged noIgnore", "find", `{"pattern":"**","noIgnore":true,"limit":61}`)
	})

	t.Run("grep", func(t *testing.T) {
		d.t = t
		for _, req := range []string{
			`{"query":"TODO"}`, `{"query":"TODO","mode":"files"}`, `{"query":"TODO","mode":"count"}`,
			`{"query":"todo","ignoreCase":true,"mode":"count"}`, `{"query":"F0[0-3]_1\\d_2","regex":true}`,
			`{"query":"widget","ignoreCase":true,"context":2,"include":"*.go","limit":1000}`,
			`{"query":"TODO","include":["*.txt","*.md"],"exclude":["names"]}`, `{"query":"Widget","include":"pkg/0*/*.go","exclude":["pkg/01/*"],"mode":"count"}`, `{"query":"TODO","noIgnore":true,"mode":"files"}`,
			`{"query":"gamma","path":"docs","context":1}`, `{"query":"TODO","path":"docs/utf16.txt"}`,
			`{"query":"é","path":"long"}`, `{"query":"TODO","path":"missing"}`, `{"query":"(","regex":true}`,
			`{"query":"TODO","path":"../x"}`, `{"query":"TODO","path":"void"}`,
			`{"pattern":"F1[01]_0[0-2]_1","path":"{{root}}/pkg"}`, `{"query":"TODO","path":"app.log"}`, `{"query":"TODO","path":"src/build"}`, `{"query":"TODO","mode":"files","offset":5,"limit":3}`,
		} {
			d.same("grep", "grep", req, "")
		}
		d.paged("grep paged content", "grep", `{"query":"TODO","context":1,"limit":25}`)
		d.paged("grep paged sort", "grep", `{"query":"TODO","path":"sort","limit":1}`)
		d.paged("grep paged files", "grep", `{"query":"return","mode":"files","limit":60}`)
		d.paged("grep paged large", "grep", `{"query":"TODO","path":"big","context":2,"limit":9}`)
		d.same("grep large utf16", "grep", `{"query":"ligne 9999 ","path":"big/utf16.txt"}`, "")
		d.paged("grep paged count", "grep", `{"query":"func","mode":"count","limit":70}`)
	})

	t.Run("bounded", func(t *testing.T) {
		// A tight byte bound cuts pages and windows where their JSON fills
		// it, versions and cursors included.
		d.t = t
		defer func() { d.local.tools.MaxBytes, d.store.tools.MaxBytes = 0, 0 }()
		l, s := d.same("bounded: version", "read", `{"path":"big/many.txt","limit":1}`, "")
		longer := len(s["version"].(string)) - len(l["version"].(string))
		d.local.tools.MaxBytes, d.store.tools.MaxBytes = 3000, 3000+longer // a window's bound counts its version, an ETag longer than a disk's
		d.reads("bounded read", "big/many.txt", 2000)
		d.same("bounded tail", "read", `{"path":"big/many.txt","offset":-500}`, "")
		d.same("bounded crlf", "read", `{"path":"big/crlf.txt","offset":1000}`, "")
		d.same("bounded long line", "read", `{"path":"long/lines.txt","lineTruncation":{"chars":0}}`, "")
		d.local.tools.MaxBytes, d.store.tools.MaxBytes = 8000, 8000
		d.pagedWhole("bounded ls", "ls", `{"path":".","depth":3}`, "entries")
		d.paged("bounded find", "find", `{"pattern":"*.go"}`)
		d.paged("bounded grep", "grep", `{"query":"TODO","context":3,"path":"pkg"}`)
		d.same("bounded replace dry", "replace", `{"query":"Widget","replacement":"Gadget","path":"pkg","dryRun":true}`, "")
	})

	t.Run("mutations", func(t *testing.T) {
		d.t = t
		// A page's cursor resumes after its last entry even once that entry
		// is gone, and a window's version goes stale when the file changes.
		l, s := d.same("ls page", "ls", `{"path":"sort","limit":3}`, "")
		d.same("rm the page's last entry", "rm", `{"path":"sort/a-b.txt"}`, "")
		d.local.saved["cursor"], _ = l["nextCursor"].(string)
		d.store.saved["cursor"], _ = s["nextCursor"].(string)
		d.same("ls next page", "ls", `{"path":"sort","limit":3,"cursor":"{{cursor}}"}`, "")
		d.resumed("find, then the dir its cursor is in goes", "find", `{"pattern":"**","path":"sort","limit":2}`,
			"rm", `{"path":"sort/a","recursive":true}`)
		d.resumed("grep, then its file grows", "grep", `{"query":"TODO","path":"pkg/09","limit":2}`,
			"edit", `{"path":"pkg/09/file_00.go","oldText":"package p09\n","newText":"package p09\n// TODO one\n// TODO two\n"}`)
		d.resumed("grep files, then a file before its cursor goes", "grep", `{"query":"TODO","path":"pkg/10","mode":"files","limit":3}`,
			"rm", `{"path":"pkg/10/file_00.go"}`)
		d.same("read first window", "read", `{"path":"sort/a.txt","limit":1}`, "window")
		d.same("change it", "write", `{"path":"sort/a.txt","content":"changed\n"}`, "")
		d.same("read next window", "read", `{"path":"sort/a.txt","offset":2,"byteOffset":10,"expectedVersion":"{{window}}"}`, "")
		d.same("write trailing slash", "write", `{"path":"new/dir/","content":"x"}`, "")
		d.same("write create", "write", `{"path":"new/dir/file.txt","content":"first\nsecond\n","create":true}`, "created")
		d.same("write create again", "write", `{"path":"new/dir/file.txt","content":"x","create":true}`, "")
		d.same("write overwrite", "write", `{"path":"new/dir/file.txt","content":"third\n","expectedVersion":"{{created}}"}`, "overwritten")
		d.same("write stale", "write", `{"path":"new/dir/file.txt","content":"lost\n","expectedVersion":"{{created}}"}`, "")
		d.same("write same", "write", `{"path":"new/dir/file.txt","content":"third\n"}`, "")
		d.same("write crlf kept", "write", `{"path":"docs/crlf.txt","content":"a\nb\n"}`, "")
		d.same("write into a file", "write", `{"path":"docs/lf.txt/under","content":"x"}`, "")
		d.same("write outside", "write", `{"path":"../escape.txt","content":"x"}`, "")
		d.same("write over a dir", "write", `{"path":"docs","content":"x"}`, "")
		d.same("write append", "write", `{"path":"new/dir/file.txt","content":"fourth\n","append":true}`, "")
		d.same("write crlf bom", "write", `{"path":"new/styled.txt","content":"a\nb\n","lineEnding":"crlf","bom":true}`, "")
		d.same("write base64", "write", `{"path":"new/bytes.bin","contentBase64":"AAECAwT/"}`, "")
		d.same("write empty", "write", `{"path":"new/empty","content":""}`, "")
		d.same("write content file", "write", `{"path":"new/copy.txt","contentFile":"docs/mixed.txt"}`, "")
		d.same("write sha stale", "write", `{"path":"new/copy.txt","content":"x","expectedSha256":"0000000000000000000000000000000000000000000000000000000000000000"}`, "")
		d.same("write unicode name", "write", `{"path":"names/ünïcödé.txt","content":"changed\n"}`, "")
		// What an object cannot be is refused on the store alone.
		for _, p := range []string{`"path":"new/run.sh","executable":true`, `"path":"new/in-place.txt","inPlace":true`} {
			req := `{"content":"x",` + p + `}`
			if l := d.local.call(t, "write", req); l["error"] != nil {
				t.Errorf("local write %s: %v", req, l["error"])
			}
			if e, _ := d.store.call(t, "write", req)["error"].(map[string]any); e == nil || e["code"] != string(fault.CodeNotSupported) {
				t.Errorf("s3 write %s: %v, want NOT_SUPPORTED", req, e)
			}
		}
		d.local.call(t, "rm", `{"path":"new/run.sh"}`)
		d.local.call(t, "rm", `{"path":"new/in-place.txt"}`)
		d.readBack("write", "new/copy.txt", "new/dir/file.txt", "docs/crlf.txt", "new/styled.txt", "new/bytes.bin", "new/empty", "names/ünïcödé.txt")

		d.same("edit single", "edit", `{"path":"docs/lf.txt","oldText":"beta","newText":"BETA"}`, "")
		d.same("edit multiple", "edit", `{"path":"pkg/00/file_00.go","edits":[{"oldText":"func F00_00_0","newText":"func G00_00_0"},{"oldText":"func F00_00_1","newText":"func G00_00_1"}]}`, "")
		d.same("edit crlf", "edit", `{"path":"docs/mixed.txt","oldText":"two\n","newText":"TWO\nand a half\n"}`, "")
		d.same("edit bom", "edit", `{"path":"docs/bom.txt","oldText":"second","newText":"SECOND"}`, "")
		d.same("edit utf16", "edit", `{"path":"docs/utf16.txt","oldText":"line two","newText":"LINE TWO"}`, "")
		d.same("edit crlf file", "edit", `{"path":"docs/crlf.txt","oldText":"a\nb","newText":"a\nb\nc"}`, "")
		d.same("edit replaceAll", "edit", `{"path":"pkg/03/file_04.go","oldText":"return","newText":"return 1 +","replaceAll":true}`, "")
		d.same("edit dry", "edit", `{"path":"docs/lf.txt","oldText":"gamma","newText":"GAMMA","dryRun":true}`, "")
		d.same("edit large crlf", "edit", `{"path":"big/crlf.txt","oldText":"\n997 ab","newText":"\n997 edited\nand added\nab"}`, "")
		d.same("edit sha stale", "edit", `{"path":"docs/lf.txt","oldText":"alpha","newText":"x","expectedSha256":"0000000000000000000000000000000000000000000000000000000000000000"}`, "")
		d.same("edit odd names", "edit", "{\"path\":\"names/new\\nline.txt\",\"oldText\":\"newline\",\"newText\":\"NEWLINE\"}", "")
		d.same("edit no match", "edit", `{"path":"docs/lf.txt","oldText":"nowhere","newText":"x"}`, "")
		d.same("edit ambiguous", "edit", `{"path":"pkg/01/notes.md","oldText":"otes","newText":"x"}`, "")
		d.same("edit stale", "edit", `{"path":"new/dir/file.txt","oldText":"third","newText":"x","expectedVersion":"{{created}}"}`, "")
		d.same("edit missing", "edit", `{"path":"nope.txt","oldText":"a","newText":"b"}`, "")
		d.same("edit binary", "edit", `{"path":"bin/blob.bin","oldText":"TODO","newText":"DONE"}`, "")
		d.reads("edit: read back large", "big/crlf.txt", 2000)
		d.readBack("edit", "docs/crlf.txt", "pkg/03/file_04.go", "docs/lf.txt", "pkg/00/file_00.go", "docs/mixed.txt", "docs/bom.txt", "docs/utf16.txt")

		d.same("replace dry", "replace", `{"query":"Widget","replacement":"Gadget","dryRun":true}`, "")
		d.same("replace count stale", "replace", `{"query":"Widget","replacement":"Gadget","expectedCount":1}`, "")
		d.same("replace", "replace", `{"query":"Widget","replacement":"Gadget","path":"pkg"}`, "")
		d.same("replace regex", "replace", `{"query":"return (\\d+) }","replacement":"return -$1 }","regex":true,"path":"pkg/02"}`, "")
		d.same("replace crlf", "replace", `{"query":"alpha","replacement":"ALPHA","path":"docs"}`, "")
		d.same("replace word", "replace", `{"query":"notes","replacement":"NOTES","word":true,"ignoreCase":true,"include":"*.md","exclude":["pkg/1*"]}`, "")
		d.same("replace everywhere dry", "replace", `{"query":"TODO","replacement":"DONE","dryRun":true}`, "")
		d.same("replace none", "replace", `{"query":"no such text anywhere","replacement":"x"}`, "")
		d.paged("replace: grep", "grep", `{"query":"Gadget|-\\d+ }|ALPHA","regex":true,"limit":1000}`)
		d.readBack("replace", "pkg/02/file_07.go", "docs/crlf.txt", "pkg/00/notes.md", "pkg/10/notes.md")

		patch := `*** Begin Patch
*** Add File: patched/added.txt
+added one
+added two
*** Update File: docs/no-newline.txt
@@
-last line without newline TODO
+last line, patched
*** Delete File: pkg/04/notes.md
*** Update File: names/with space.txt
*** Move to: names/moved space.txt
@@
-spaced TODO
+spaced and moved
*** End Patch`
		d.same("apply-patch dry", "apply-patch", withField(t, map[string]any{"dryRun": true}, "patch", patch), "")
		d.same("apply-patch", "apply-patch", withField(t, map[string]any{}, "patch", patch), "")
		d.same("apply-patch again", "apply-patch", withField(t, map[string]any{}, "patch", patch), "")
		d.same("apply-patch onto a file", "apply-patch", `{"patch":"*** Begin Patch\n*** Add File: docs/lf.txt\n+x\n*** End Patch"}`, "")
		d.same("apply-patch move onto a file", "apply-patch", `{"patch":"*** Begin Patch\n*** Update File: docs/mixed.txt\n*** Move to: docs/bom.txt\n@@\n-one\n+ONE\n*** End Patch"}`, "")
		d.same("write a patch file", "write", `{"path":"patches/p.txt","content":"*** Begin Patch\n*** Update File: names/q?.txt\n@@\n-question TODO\n+question patched\n*** Add File: names/back\\slash 2.txt\n+added\n*** End Patch\n"}`, "")
		d.same("apply-patch file", "apply-patch", `{"patchFile":"patches/p.txt"}`, "")
		d.same("apply-patch bad", "apply-patch", `{"patch":"*** Begin Patch\n*** Update File: docs/lf.txt\n@@\n-nowhere\n+x\n*** End Patch"}`, "")
		d.readBack("apply-patch", "patched/added.txt", "docs/no-newline.txt", "pkg/04/notes.md", "names/with space.txt", "names/moved space.txt")

		d.same("rm file", "rm", `{"path":"pkg/05/file_01.go"}`, "")
		d.same("rm missing", "rm", `{"path":"pkg/05/file_01.go"}`, "")
		d.same("rm dir", "rm", `{"path":"pkg/06"}`, "")
		d.same("rm -r dir", "rm", `{"path":"pkg/06","recursive":true}`, "")
		d.same("rm empty dir", "rm", `{"path":"void"}`, "")
		d.same("rm stale", "rm", `{"path":"new/dir/file.txt","expectedVersion":"{{created}}"}`, "")
		d.same("rm last file", "rm", `{"path":"src/deep/a/b/c.go"}`, "")
		d.same("ls its parent", "ls", `{"path":"src/deep","depth":3}`, "")
		d.same("rm empty dir below", "rm", `{"path":"pkg/03/emptydir"}`, "")
		d.same("write in an empty dir", "write", `{"path":"void/x","content":"x"}`, "")
		d.same("rm it", "rm", `{"path":"void/x"}`, "")
		d.same("ls what is left", "ls", `{"path":"void"}`, "")
		d.same("mv a dir holding ignored files", "mv", `{"from":"pkg/05","to":"names/dir with space/ü"}`, "")
		d.paged("mv: find", "find", `{"pattern":"**","path":"names","noIgnore":true}`)
		d.same("rm -r a dir holding ignored files", "rm", `{"path":"names/dir with space","recursive":true}`, "")
		d.same("rm root", "rm", `{"path":".","recursive":true}`, "")
		d.same("rm outside", "rm", `{"path":"../x"}`, "")
		d.readBack("rm", "pkg/05/file_01.go", "pkg/06/file_00.go", "void")
		d.same("ls after rm", "ls", `{"path":"pkg"}`, "")

		d.same("mv file", "mv", `{"from":"docs/lf.txt","to":"moved/lf.txt"}`, "")
		d.same("mv onto a file", "mv", `{"from":"docs/crlf.txt","to":"docs/mixed.txt"}`, "")
		d.same("mv overwrite", "mv", `{"from":"docs/crlf.txt","to":"docs/mixed.txt","overwrite":true}`, "")
		d.same("mv dir", "mv", `{"from":"pkg/07","to":"renamed/seven"}`, "")
		d.same("mv dir onto a dir", "mv", `{"from":"pkg/08","to":"pkg/09"}`, "")
		d.same("mv dir onto an empty dir", "mv", `{"from":"pkg/08","to":"src/deep/hollow","overwrite":true}`, "")
		d.same("mv file onto a dir", "mv", `{"from":"docs/bom.txt","to":"pkg/09","overwrite":true}`, "")
		d.same("mv name needing care", "mv", `{"from":"names/-dash.txt","to":"names/ünïcödé 2.txt"}`, "")
		d.same("mv an empty dir", "mv", `{"from":"void","to":"names/void moved"}`, "")
		d.same("mv: ls", "ls", `{"path":"names","depth":2}`, "")
		d.same("mv missing", "mv", `{"from":"nothing","to":"x"}`, "")
		d.same("mv into itself", "mv", `{"from":"src","to":"src/inner"}`, "")
		d.same("mv outside", "mv", `{"from":"docs/bom.txt","to":"../bom.txt"}`, "")
		d.same("rm -r through a file's ..", "rm", `{"path":"docs/lf.txt/../pkg","recursive":true}`, "")
		d.same("rm -r through a missing name's ..", "rm", `{"path":"nothing/../pkg","recursive":true}`, "")
		d.same("write through a file's ..", "write", `{"path":"docs/lf.txt/../new.txt","content":"x"}`, "")
		d.same("mv through a file's ..", "mv", `{"from":"docs/lf.txt/../crlf.txt","to":"docs/moved.txt"}`, "")
		d.same("read through a directory's ..", "read", `{"path":"pkg/../docs/lf.txt"}`, "")
		d.same("mv outside, as a directory", "mv", `{"from":"docs/bom.txt","to":"/"}`, "")
		d.same("mv onto the root", "mv", `{"from":"docs/bom.txt","to":"."}`, "")
		d.same("mv a dir onto the root", "mv", `{"from":"pkg","to":"./","overwrite":true}`, "")
		d.same("mv the root", "mv", `{"from":"src/..","to":"docs"}`, "")
		d.readBack("mv", "names/ünïcödé 2.txt", "src/deep/hollow/file_02.go", "pkg/08/file_02.go", "moved/lf.txt", "docs/lf.txt", "docs/mixed.txt", "docs/crlf.txt", "renamed/seven/file_03.go")
		d.paged("mv: ls", "ls", `{"path":".","depth":10,"limit":100}`)
		d.paged("mv: grep", "grep", `{"query":"F07_","mode":"count"}`)
	})
	t.Logf("%d answers compared", d.compared)
}

// TestDiffNormalise: normalising sets aside only what legitimately
// differs, so that the comparison still fails on what must be equal.
func TestDiffNormalise(t *testing.T) {
	norm := func(answers ...string) string {
		s := &diffSide{root: "/tmp/ws", seqs: map[string]map[string]int{}}
		var out []string
		for _, a := range answers {
			var v map[string]any
			if err := json.Unmarshal([]byte(a), &v); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(s.normalise(v, ""))
			out = append(out, string(b))
		}
		return strings.Join(out, "\n")
	}
	for _, tc := range []struct {
		name  string
		a, b  []string
		equal bool
	}{
		{"versions are numbered per path",
			[]string{`{"path":"f","version":"aa"}`, `{"path":"f","version":"bb"}`, `{"path":"g","version":"cc"}`},
			[]string{`{"path":"f","version":"11"}`, `{"path":"f","version":"22"}`, `{"path":"g","version":"33"}`}, true},
		{"a version that changed on one side only",
			[]string{`{"path":"f","version":"aa"}`, `{"path":"f","version":"bb"}`},
			[]string{`{"path":"f","version":"11"}`, `{"path":"f","version":"11"}`}, false},
		{"a stale version in an error's details",
			[]string{`{"error":{"code":"STALE","path":"f","message":"aa","details":{"currentVersion":"aa"}}}`},
			[]string{`{"error":{"code":"STALE","path":"f","message":"11","details":{"currentVersion":"11"}}}`}, true},
		{"plans are numbered as versions",
			[]string{`{"plan":"plan-aa"}`, `{"plan":"plan-aa"}`, `{"plan":"plan-bb"}`},
			[]string{`{"plan":"plan-11"}`, `{"plan":"plan-11"}`, `{"plan":"plan-22"}`}, true},
		{"a plan that changed on one side only",
			[]string{`{"plan":"plan-aa"}`, `{"plan":"plan-bb"}`},
			[]string{`{"plan":"plan-11"}`, `{"plan":"plan-11"}`}, false},
		{"error codes",
			[]string{`{"error":{"code":"NOT_FOUND","path":"f"}}`}, []string{`{"error":{"code":"NOT_A_FILE","path":"f"}}`}, false},
		{"mtimes, modes and directory sizes",
			[]string{`{"entries":[{"name":"d","type":"dir","size":4096,"mtime":"x","mode":"0755"},{"name":"f","size":3,"mode":"0644"}]}`},
			[]string{`{"entries":[{"name":"d","type":"dir","size":0,"mtime":"y"},{"name":"f","size":3}]}`}, true},
		{"a file's size",
			[]string{`{"entries":[{"name":"f","size":3}]}`}, []string{`{"entries":[{"name":"f","size":4}]}`}, false},
		{"grep's mode is not a file mode",
			[]string{`{"mode":"files"}`}, []string{`{"mode":"count"}`}, false},
		{"cursors compare by presence",
			[]string{`{"nextCursor":"abc"}`}, []string{`{"nextCursor":"xyz"}`}, true},
		{"a cursor on one side only",
			[]string{`{"nextCursor":"abc"}`}, []string{`{}`}, false},
		{"the root's spelling",
			[]string{`{"error":{"code":"NOT_FOUND","path":"/tmp/ws/f"}}`}, []string{`{"error":{"code":"NOT_FOUND","path":"<root>/f"}}`}, true},
		{"content",
			[]string{`{"content":"a\r\n"}`}, []string{`{"content":"a\n"}`}, false},
	} {
		if got := norm(tc.a...) == norm(tc.b...); got != tc.equal {
			t.Errorf("%s: equal = %v, want %v", tc.name, got, tc.equal)
		}
	}
}
