package index

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/internal/deeptree"
	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// words make the files' lines: some share trigrams, some differ in case
// only, some are not ASCII (ß, the Kelvin sign that folds to k), one is
// not UTF-8 (café in Latin-1).
var words = []string{"alpha", "beta", "gamma", "Delta", "DELTA", "delta", "func", "main", "Straße", "STRASSE",
	"\u212Aelvin", "kelvin", "foo_bar", "fooBar", "x1", "y22", "z333", "hello", "world", "needle", "haystack", "café", "CAFÉ", "caf\xe9"}

// queries are the greps of the differential test: literals present and
// absent, regexes with and without literals, each also folded.
var queries = []struct {
	q     string
	regex bool
}{
	{"alpha", false}, {"delta", false}, {"needle", false}, {"nothing-here", false}, {"kelvin", false},
	{"straße", false}, {"café", false}, {"lo wo", false}, {"ga", false}, {"foo_bar", false},
	{`needle\s+\w+`, true}, {`(alpha|beta) gamma`, true}, {`fo+_?[bB]ar`, true}, {`z3{3}`, true},
	{`\w+ing`, true}, {`^hello`, true}, {`world$`, true}, {`[xyz]\d+`, true}, {`DEL?TA`, true},
	{`caf.`, true}, {`h.y`, true}, {`(?:kel|Kel)vin`, true}, {"caf\uFFFD", false},
}

// fixture is a tree, its backend and tools that consult the index, and a
// count of the files the index let grep skip.
type fixture struct {
	t       *testing.T
	dir     string
	fsys    *localfs.FS
	tl      *core.Tools
	skipped int
	// skippedText counts the files skipped that the index holds for UTF-8
	// text.
	skippedText int
	// listed and walked count the searches answered from the index's
	// list and by a walk that consults it.
	listed, walked int
	rng            *rand.Rand
	// narrowed, when set, is called once the index has narrowed a
	// search, before grep reads a file.
	narrowed func()
}

// counting wraps a Finder to count the files it lets grep skip: the test
// must prove the index was used, not only that the answers agree.
type counting struct {
	f *fixture
	Finder
}

func (c counting) Narrow(ctx context.Context, q core.IndexQuery) (*core.Narrowing, error) {
	n, err := c.Finder.Narrow(ctx, q)
	if c.f.narrowed != nil {
		c.f.narrowed()
	}
	switch {
	case n == nil:
	case n.Files != nil:
		c.f.listed++
		for _, f := range n.Files {
			c.f.count(f.Verdict)
		}
	default:
		c.f.walked++
		judge := n.Judge
		n.Judge = func(rel string, info backend.FileInfo) core.Verdict {
			v := judge(rel, info)
			c.f.count(v)
			return v
		}
	}
	return n, err
}

func (f *fixture) count(v core.Verdict) {
	if v.Skip {
		f.skipped++
	}
	if v.Skip && v.Text {
		f.skippedText++
	}
}

func newFixture(t *testing.T) *fixture { return newSeededFixture(t, 1) }

func newSeededFixture(t *testing.T, seed uint64) *fixture {
	t.Helper()
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	dir := t.TempDir()
	fsys, err := localfs.New(localfs.Config{Roots: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, dir: dir, fsys: fsys, rng: rand.New(rand.NewPCG(seed, 2))}
	f.tl = &core.Tools{FS: fsys, Index: counting{f: f, Finder: Local(fsys)}}
	return f
}

// location is where the fixture's index is kept.
func (f *fixture) location() location {
	f.t.Helper()
	loc, err := locate(localfs.ExistingStateDir(), f.dir)
	if err != nil {
		f.t.Fatal(err)
	}
	return loc
}

// openIndex opens the index of f's tree now in place.
func (f *fixture) openIndex() *Index {
	f.t.Helper()
	loc := f.location()
	ix, err := open(loc.file, loc.root)
	if err != nil {
		f.t.Fatal(err)
	}
	return ix
}

// text is a few random lines of words.
func (f *fixture) text() string {
	var b strings.Builder
	for range 1 + f.rng.IntN(6) {
		for i := range 1 + f.rng.IntN(5) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[f.rng.IntN(len(words))])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// put writes a file directly and dates it an hour back, as a tree that
// was not just written.
func (f *fixture) put(rel, content string) {
	p := filepath.Join(f.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		f.t.Fatal(err)
	}
}

// fresh dates rel to now by the racy rule's clock (now): changed too
// recently for a build to trust.
func (f *fixture) fresh(rel string) {
	t := now()
	if err := os.Chtimes(filepath.Join(f.dir, rel), t, t); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) seed() {
	for i := range 60 {
		f.put(fmt.Sprintf("d%d/sub%d/f%d.txt", i%4, i%3, i), f.text())
	}
	f.put("bin.dat", "needle\x00binary")
	f.put("utf16.txt", "\xff\xfen\x00e\x00e\x00d\x00l\x00e\x00\n\x00")
	f.put(".gitignore", "ignored.txt\n")
	f.put("ignored.txt", "needle in an ignored file\n")
	f.put("d0/empty.txt", "")
	for i := range 8 {
		f.copyFile(fmt.Sprintf("d%d/sub%d/f%d.txt", i%4, i%3, i), fmt.Sprintf("d%d/copy%d.txt", (i+1)%4, i))
	}
}

// copyFile puts the content of the file at from at to, dated back: a
// file the build indexes as the other's content.
func (f *fixture) copyFile(from, to string) {
	b, err := os.ReadFile(filepath.Join(f.dir, from))
	if err != nil {
		return
	}
	f.put(to, string(b))
}

// build dates the directories back and builds or updates the index.
func (f *fixture) build() Status {
	f.t.Helper()
	f.ageDirs()
	return f.update(f.fsys)
}

// update builds or updates the index of the tree as walked by w, the tree
// left as it is.
func (f *fixture) update(w backend.Walker) Status {
	f.t.Helper()
	st, err := Build(context.Background(), w, f.dir, f.dir, BuildOptions{LockTimeout: time.Second, Config: f.fsys.Fingerprint(), Roots: f.fsys.Roots()})
	if err != nil {
		f.t.Fatalf("build: %v", err)
	}
	return st
}

// ageDirs dates the tree's directories an hour back, as its files: a
// directory modified within 2 s of a build is always listed again, and
// only an older one's files are proven by the stat pass alone.
func (f *fixture) ageDirs() {
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(f.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chtimes(p, old, old)
		}
		return err
	})
}

// grep answers a request as JSON, or its error's text.
func (f *fixture) grep(req core.GrepRequest) string {
	res, err := f.tl.Grep(context.Background(), req)
	if err != nil {
		return "error: " + err.Error()
	}
	b, _ := json.Marshal(res)
	return string(b)
}

// same checks that req answers the same with the index as without, and
// so do the next two pages its nextCursor leads to.
func (f *fixture) same(req core.GrepRequest) {
	f.t.Helper()
	for range 3 {
		indexed := f.grep(req)
		req.NoIndex = true
		scanned := f.grep(req)
		req.NoIndex = false
		if indexed != scanned {
			f.t.Fatalf("%+v:\nindexed: %s\nscanned: %s\nthe index's list against the walk: %s", req, indexed, scanned, f.listDiff(req.Path))
		}
		var page struct {
			NextCursor string `json:"nextCursor"`
		}
		if json.Unmarshal([]byte(scanned), &page) != nil || page.NextCursor == "" {
			return
		}
		req.Cursor = page.NextCursor
	}
}

// listDiff names the files the walk visits and the index's list leaves
// out, and those it lists that the walk does not visit.
func (f *fixture) listDiff(path string) string {
	n, _ := f.tl.Index.Narrow(context.Background(), core.IndexQuery{Path: path, Query: "needle"})
	if n == nil || n.Files == nil {
		return "no list"
	}
	listed := map[string]bool{}
	for _, x := range n.Files {
		listed[x.Rel] = true
	}
	var diff []string
	f.fsys.Walk(context.Background(), path, backend.WalkOptions{}, func(e backend.WalkEntry) error {
		if e.Type == backend.TypeFile {
			if !listed[e.Rel] {
				diff = append(diff, "-"+e.Rel)
			}
			delete(listed, e.Rel)
		}
		return nil
	})
	for rel := range listed {
		diff = append(diff, "+"+rel)
	}
	return strings.Join(diff, " ")
}

// mutate changes the tree as agents and people do: through agentfs and
// directly, adding, editing (also in place, keeping the size and the
// mtime) and deleting files.
func (f *fixture) mutate() {
	ctx := context.Background()
	n := f.rng.IntN(70)
	rel := fmt.Sprintf("d%d/sub%d/f%d.txt", n%4, n%3, n)
	p := filepath.Join(f.dir, rel)
	switch f.rng.IntN(9) {
	case 0:
		content := f.text()
		if _, err := f.tl.Write(ctx, core.WriteRequest{Path: p, Content: &content}); err != nil {
			f.t.Fatal(err)
		}
	case 1:
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.text()), 0o644); err != nil {
			f.t.Fatal(err)
		}
	case 2:
		f.tl.Rm(ctx, core.RmRequest{Path: p}) // gone already is fine
	case 3:
		os.Remove(p)
	case 4:
		// In place, same size, mtime set back: only the ctime tells.
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			return
		}
		fi, _ := os.Stat(p)
		for i := range b {
			if b[i] >= 'a' && b[i] <= 'z' {
				b[i] = 'a' + (b[i]-'a'+1)%26
			}
		}
		// A needle where there was none: trusting the old trigrams
		// would miss it.
		copy(b, "needle\n")
		fd, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			f.t.Fatal(err)
		}
		fd.WriteAt(b, 0)
		fd.Close()
		os.Chtimes(p, fi.ModTime(), fi.ModTime())
	case 5:
		f.put(rel, f.text()) // dated back: the next build may trust it
	case 6:
		// An ignore file appears, changes or goes: the rules change.
		ig := filepath.Join(f.dir, fmt.Sprintf("d%d/.gitignore", n%4))
		switch f.rng.IntN(3) {
		case 0:
			os.Remove(ig)
		default:
			os.WriteFile(ig, fmt.Appendf(nil, "f%d*.txt\n", f.rng.IntN(6)), 0o644)
		}
	case 7:
		f.put(fmt.Sprintf("d%d/new%d/deeper/g.txt", n%4, n), f.text()) // a new directory, dated back
	case 8:
		// Another file's content: indexed as a copy, its original
		// perhaps changed or gone later.
		m := f.rng.IntN(70)
		f.copyFile(fmt.Sprintf("d%d/sub%d/f%d.txt", m%4, m%3, m), rel)
	}
}

// randomGrep is a search of the whole tree for one of the queries, in a
// random mode, case and page size.
func (f *fixture) randomGrep() core.GrepRequest {
	modes := []string{"content", "files", "count"}
	q := queries[f.rng.IntN(len(queries))]
	regex := q.regex
	return core.GrepRequest{Query: q.q, Regex: &regex, IgnoreCase: f.rng.IntN(2) == 0,
		Mode: modes[f.rng.IntN(3)], Limit: 1 + f.rng.IntN(40), Path: f.dir, Word: f.rng.IntN(4) == 0}
}

// The differential test: indexed greps answer exactly as scans, over many
// queries and a tree that changes between them, rebuilt now and then. The
// test must prove the index was used: files skipped, in searches answered
// from the index's list (a tree unchanged since the build) and by walks.
func TestIndexedGrepEqualsScan(t *testing.T) {
	var skipped, listed, walked int
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			f := differential(t, seed)
			skipped, listed, walked = skipped+f.skipped, listed+f.listed, walked+f.walked
		})
	}
	if skipped == 0 || listed == 0 || walked == 0 {
		t.Fatalf("the index let grep skip %d files, in %d listed and %d walked searches: the test proves too little", skipped, listed, walked)
	}
	t.Logf("files skipped through the index: %d, in %d listed and %d walked searches", skipped, listed, walked)
}

// A --word search is narrowed by its query's trigrams, as the query's
// own: the index skips files, and the answers are a scan's, "ga" found
// as a word nowhere though gamma holds it.
func TestIndexedWordGrepEqualsScan(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.put("words.txt", "ga\nfoo ga_x gaé\n")
	f.build()
	for _, q := range []string{"ga", "gamma", "foo", "needle", "café", "Kelvin"} {
		for _, ignoreCase := range []bool{false, true} {
			for _, mode := range []string{"content", "files", "count"} {
				f.same(core.GrepRequest{Query: q, Word: true, IgnoreCase: ignoreCase, Mode: mode, Path: f.dir})
			}
		}
	}
	if f.skipped == 0 {
		t.Fatal("the index let no --word search skip a file: the test proves too little")
	}
	res, err := f.tl.Grep(context.Background(), core.GrepRequest{Query: "ga", Word: true, Mode: "count", Path: f.dir})
	if err != nil || res.Count != 1 || len(res.Files) != 1 || res.Files[0].Path != "words.txt" {
		t.Fatalf("ga as a word: %+v, %v; want the one line of words.txt", res, err)
	}
}

func differential(t *testing.T, seed uint64) *fixture {
	f := newSeededFixture(t, seed)
	f.seed()
	f.build()
	for i := range 400 {
		if i%3 == 0 {
			f.mutate()
		}
		if i%50 == 49 {
			f.build()
		}
		req := f.randomGrep()
		switch f.rng.IntN(6) {
		case 0:
			req.Path = filepath.Join(f.dir, "d1")
		case 3:
			req.Include = core.Globs{"*1*.txt"}
		case 1:
			req.NoIgnore = true
		case 2:
			req.Context = 1
		}
		f.same(req)
	}
	return f
}

// Replace through the index answers exactly as a scan (a dry run's
// counts and diffs), over many queries and a tree that changes between
// them, replaces among the changes. A file the index proves cannot match
// is counted without being read only when the index holds it for UTF-8
// text: one with a byte that is not UTF-8 or a NUL past grep's sample is
// text to grep but binary to replace.
func TestIndexedReplaceEqualsScan(t *testing.T) {
	var skipped, text int
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			f := newSeededFixture(t, seed)
			f.seed()
			f.put("latin1.txt", "caf\xe9 alpha\n")
			f.put("large-latin1.txt", "caf\xe9\n"+strings.Repeat("alpha beta\n", 30000))
			f.put("latin1-needle.txt", "needle caf\xe9\n")
			f.put("late-nul.txt", strings.Repeat("alpha beta\n", 7000)+"\x00")
			f.put("crlf.txt", "alpha beta\r\nneedle gamma\r\n")
			f.put("bom.txt", "\ufeffneedle delta\n")
			f.build()
			for i := range 150 {
				if i%3 == 0 {
					f.mutate()
				}
				if i%40 == 39 {
					f.build()
				}
				q := queries[f.rng.IntN(len(queries))]
				req := core.ReplaceRequest{Query: q.q, Replacement: new("X"), Regex: q.regex, IgnoreCase: f.rng.IntN(2) == 0,
					Word: f.rng.IntN(4) == 0, Path: f.dir, DryRun: true}
				switch f.rng.IntN(4) {
				case 0:
					req.Path = filepath.Join(f.dir, "d1")
				case 1:
					req.Include = core.Globs{"*1*.txt"}
				case 2:
					req.NoIgnore = true
				}
				indexed := f.replace(req)
				req.NoIndex = true
				if scanned := f.replace(req); indexed != scanned {
					t.Fatalf("%+v:\nindexed: %s\nscanned: %s", req, indexed, scanned)
				}
				if i%10 == 5 {
					// Through agentfs: the next searches see the change.
					req.DryRun, req.NoIndex = false, false
					if _, err := f.tl.Replace(context.Background(), req); err != nil {
						t.Fatalf("%+v: %v", req, err)
					}
				}
			}
			skipped, text = skipped+f.skipped, text+f.skippedText
		})
	}
	if text == 0 || text == skipped {
		t.Fatalf("of %d files the index let replace skip, %d were counted unread as text: the test proves too little", skipped, text)
	}
	t.Logf("files skipped through the index: %d, %d of them unread as text", skipped, text)
}

// replace answers a replace as JSON, or its error's text.
func (f *fixture) replace(req core.ReplaceRequest) string {
	res, err := f.tl.Replace(context.Background(), req)
	if err != nil {
		return "error: " + err.Error()
	}
	b, _ := json.Marshal(res)
	return string(b)
}

// The index watches the rules files of the tree that are not indexed
// files (an ignore file that ignores itself, a .git directory and its
// info), stat'ed relative to their directories, and nothing for a
// directory without one.
func TestWatchedRulesFiles(t *testing.T) {
	f := newFixture(t)
	f.put("a/b/c/.ignore", ".ignore\n")
	f.put("a/b/c/x.txt", "x\n")
	f.put("repo/.git/info/exclude", "x\n")
	f.put("repo/.gitignore", "y\n")
	f.put(".gitignore", "z\n")
	f.put("plain/d/e.txt", "e\n")
	f.build()
	ix := f.openIndex()
	defer ix.Close()
	got := map[string]string{}
	for _, r := range ix.watched {
		got[strings.TrimPrefix(r.path, f.dir+"/")] = r.version
	}
	want := []string{"a/b/c/.ignore", "repo/.git", "repo/.git/info", "repo/.git/info/exclude"}
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, want) {
		t.Fatalf("watched %q, want %q", keys, want)
	}
	for name, v := range got {
		if v == "" || v == unprovenVersion {
			t.Errorf("%s watched at version %q", name, v)
		}
	}
}

// A file past one read is read whole up to wholeLimit, so that its copies
// are indexed once too; a larger one is read in pieces, and each copy is
// scanned.
func TestLargeCopiesAreIndexedOnce(t *testing.T) {
	for _, tc := range []struct{ size, copies int }{{readPiece + 1, 1}, {wholeLimit - 1, 1}, {wholeLimit + 1, 0}} {
		f := newFixture(t)
		body := strings.Repeat("a needle in a large copy\n", tc.size/25+1)[:tc.size]
		f.put("a/big.txt", body)
		f.put("b/big.txt", body)
		if st := f.build(); st.Copies != tc.copies || st.Read != 2 {
			t.Fatalf("two copies of %d bytes: %+v, want %d copies of 2 files read", tc.size, st, tc.copies)
		}
		if got := f.grepFiles("large copy"); !slices.Equal(got, []string{"a/big.txt", "b/big.txt"}) {
			t.Fatalf("two copies of %d bytes: found %q", tc.size, got)
		}
	}
}

// Files of one content are indexed once, and found as a scan finds them
// whichever of them changes, before and after the next build (which
// reuses the others' trigrams).
func TestCopiesAreIndexedOnce(t *testing.T) {
	names := []string{"a/x.txt", "b/x.txt", "c/d/x.txt"}
	for _, changed := range names {
		t.Run(changed, func(t *testing.T) {
			f := newFixture(t)
			for _, n := range names {
				f.put(n, "a needle in a copy\n")
			}
			f.put("other.txt", "a needle alone\n")
			if st := f.build(); st.Copies != 2 || st.Read != 4 {
				t.Fatalf("build: %+v, want 2 copies of 4 files read", st)
			}
			want := []string{"a/x.txt", "b/x.txt", "c/d/x.txt"}
			if got := f.grepFiles("in a copy"); !slices.Equal(got, want) {
				t.Fatalf("found %q, want %q", got, want)
			}
			f.put(changed, "a haystack now\n")
			for _, when := range []string{"before", "after"} {
				if when == "after" {
					if st := f.build(); st.Read != 1 || st.Copies != 1 {
						t.Fatalf("update: %+v, want 1 file read and 1 copy", st)
					}
				}
				rest := slices.DeleteFunc(slices.Clone(want), func(n string) bool { return n == changed })
				if got := f.grepFiles("in a copy"); !slices.Equal(got, rest) {
					t.Fatalf("%s the update: found %q, want %q", when, got, rest)
				}
				if got := f.grepFiles("haystack"); !slices.Equal(got, []string{changed}) {
					t.Fatalf("%s the update: found %q, want %q", when, got, changed)
				}
				if f.skipped == 0 {
					t.Fatalf("%s the update: no file skipped, the index was not used", when)
				}
				f.same(core.GrepRequest{Query: "needle", Path: f.dir})
			}
		})
	}
}

// A search reads once the copies the index proves unchanged, and on its
// own a copy it cannot vouch for: one changed since the build, or one
// written within 2 s of it (racy), which a change may leave with its
// identity.
func TestOnlyProvenCopiesShareARead(t *testing.T) {
	f := newFixture(t)
	names := []string{"a/x.txt", "b/x.txt", "c/x.txt", "d/x.txt"}
	for _, n := range names {
		f.put(n, "a needle in a copy\n")
	}
	f.ageDirs()
	if err := os.WriteFile(filepath.Join(f.dir, "c/x.txt"), []byte("a needle in a copy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.fresh("c/x.txt")
	if st := f.update(f.fsys); st.Copies != 3 {
		t.Fatalf("build: %+v, want 3 copies", st)
	}
	f.put("d/x.txt", "a needle in a copy, changed\n")
	n, err := f.tl.Index.Narrow(context.Background(), core.IndexQuery{Path: f.dir, Query: "needle"})
	if err != nil || n == nil || n.Files == nil {
		t.Fatalf("narrowing %+v, %v: want the index's list", n, err)
	}
	same := map[string]int{}
	for _, file := range n.Files {
		same[file.Rel] = file.Same
	}
	if same["a/x.txt"] == 0 || same["a/x.txt"] != same["b/x.txt"] || same["c/x.txt"] != 0 || same["d/x.txt"] != 0 {
		t.Fatalf("copies read together: %v; want a and b alone", same)
	}
	f.same(core.GrepRequest{Query: "needle", Path: f.dir, Context: 1})
}

// A copy changed or removed after the index proved it, before grep reads
// it, is answered as it is: the first copy read gives its lines to the
// others only if it is still the file indexed once read, and a copy takes
// them only if it still is. (A review found b/x.txt answered with
// a/x.txt's new lines.)
func TestCopiesChangedAfterTheProofAnswerAsTheyAre(t *testing.T) {
	// One searcher: a/x.txt is read first.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, tc := range []struct {
		name   string
		change func(dir string) error
	}{
		{"the first rewritten", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "a/x.txt"), []byte("a needle, rewritten\n"), 0o644)
		}},
		{"the second rewritten", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "b/x.txt"), []byte("a needle, rewritten\n"), 0o644)
		}},
		{"the second removed", func(dir string) error { return os.Remove(filepath.Join(dir, "b/x.txt")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			for _, n := range []string{"a/x.txt", "b/x.txt", "c/x.txt"} {
				f.put(n, "a needle in a copy\n")
			}
			f.build()
			f.narrowed = func() {
				if err := tc.change(f.dir); err != nil {
					t.Error(err)
				}
				f.narrowed = nil
			}
			indexed := f.grep(core.GrepRequest{Query: "needle", Path: f.dir})
			if f.listed != 1 {
				t.Fatal("the index's list was not used")
			}
			if scanned := f.grep(core.GrepRequest{Query: "needle", Path: f.dir, NoIndex: true}); indexed != scanned {
				t.Fatalf("indexed: %s\nscanned: %s", indexed, scanned)
			}
		})
	}
}

// A rebuild reads only the files that changed.
func TestBuildIsIncremental(t *testing.T) {
	f := newFixture(t)
	f.seed()
	first := f.build()
	if first.Read != first.Files || first.Reused != 0 {
		t.Fatalf("first build: %+v", first)
	}
	f.put("d0/sub0/f0.txt", "changed\n")
	f.put("new.txt", "new\n")
	second := f.build()
	if second.Read != 2 || second.Reused != first.Files-1 || second.Files != first.Files+1 {
		t.Fatalf("second build: read %d reused %d files %d (first had %d)", second.Read, second.Reused, second.Files, first.Files)
	}
}

// A corrupt, truncated or foreign index is never trusted: grep reads every
// file, status reports it, and the next build starts afresh.
func TestCorruptIndexIsNotTrusted(t *testing.T) {
	// What status says of some of them.
	says := map[string]string{"truncated": "truncated", "bytes appended": "8 bytes past its end"}
	for _, tc := range []struct {
		name    string
		corrupt func(t *testing.T, name string, data []byte) []byte
	}{
		{"truncated", func(_ *testing.T, _ string, d []byte) []byte { return d[:len(d)/2] }},
		{"bytes appended", func(_ *testing.T, _ string, d []byte) []byte { return append(d, "garbage\n"...) }},
		{"empty", func(_ *testing.T, _ string, d []byte) []byte { return nil }},
		{"wrong magic", func(_ *testing.T, _ string, d []byte) []byte { d[0] ^= 0xFF; return d }},
		{"header byte", func(_ *testing.T, _ string, d []byte) []byte { d[20] ^= 1; return d }},
		{"meta byte", func(_ *testing.T, _ string, d []byte) []byte { d[len(d)-10] ^= 1; return d }},
		{"table byte", func(t *testing.T, _ string, d []byte) []byte {
			h, err := decodeHeader(d, len(d))
			if err != nil {
				t.Fatal(err)
			}
			d[h.tableOff+5] ^= 1
			return d
		}},
		{"table trigram", func(t *testing.T, _ string, d []byte) []byte {
			// Past 2^24: the build once indexed its set of trigrams with it
			// and panicked, on every build until --drop.
			h, err := decodeHeader(d, len(d))
			if err != nil {
				t.Fatal(err)
			}
			d[h.tableOff+3] ^= 1
			return d
		}},
		{"posting byte", func(t *testing.T, name string, d []byte) []byte {
			ix, err := open(name, "")
			if err != nil {
				t.Fatal(err)
			}
			e, ok, err := findEntry(ix.table, ix.blocks, ix.checked, trigramOf("eed"))
			ix.Close()
			if err != nil || !ok {
				t.Fatal("no list for eed", err)
			}
			h, _ := decodeHeader(d, len(d))
			d[h.postOff+uint64(e.off)] ^= 0x40
			return d
		}},
		{"meta length wrapping", func(t *testing.T, _ string, d []byte) []byte {
			// Off plus length past 2^64, the header's checksum made to
			// hold: every search, status and build panicked.
			h, err := decodeHeader(d, len(d))
			if err != nil {
				t.Fatal(err)
			}
			binary.LittleEndian.PutUint64(d[40:], -h.metaOff+10)
			binary.LittleEndian.PutUint32(d[92:], checksum(d[:92]))
			return d
		}},
		{"foreign", func(t *testing.T, _ string, _ []byte) []byte {
			// The index of another tree, copied over this one's.
			other := t.TempDir()
			os.WriteFile(filepath.Join(other, "a.txt"), []byte("needle\n"), 0o644)
			ofs, err := localfs.New(localfs.Config{Roots: []string{other}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Build(context.Background(), ofs, other, other, BuildOptions{LockTimeout: time.Second}); err != nil {
				t.Fatal(err)
			}
			loc, _ := locate(localfs.ExistingStateDir(), other)
			d, err := os.ReadFile(loc.file)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.seed()
			f.build()
			loc := f.location()
			data, err := os.ReadFile(loc.file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(loc.file, tc.corrupt(t, loc.file, data), 0o600); err != nil {
				t.Fatal(err)
			}
			f.put("d0/late.txt", "a needle\n") // only a scan finds it if the index is trusted blindly... it is new anyway
			n, err := f.tl.Index.Narrow(context.Background(), core.IndexQuery{Path: f.dir, Query: "needle"})
			if err != nil || n != nil {
				t.Fatalf("a %s index narrows the search", tc.name)
			}
			f.same(core.GrepRequest{Query: "needle", Path: f.dir})
			// Every checksum: a posting byte flipped was once described
			// as a usable index.
			if _, err := StatusOf(f.dir, []string{f.dir}); err == nil || !strings.Contains(err.Error(), says[tc.name]) {
				t.Fatalf("status of a %s index: %v", tc.name, err)
			}
			st := f.build()
			if st.Reused != 0 {
				t.Fatalf("the build after a %s index reused %d files", tc.name, st.Reused)
			}
			if n, _ := f.tl.Index.Narrow(context.Background(), core.IndexQuery{Path: f.dir, Query: "needle"}); n == nil {
				t.Fatal("the rebuilt index is not used")
			}
		})
	}
}

// A build stopped part way (killed, cancelled) leaves the old index, whole
// and used, and no temporary file.
func TestStoppedBuildLeavesOldIndex(t *testing.T) {
	f := newFixture(t)
	f.seed()
	before := f.build()
	for i := range 40 {
		f.put(fmt.Sprintf("more/m%d.txt", i), f.text())
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Build(ctx, f.fsys, f.dir, f.dir, BuildOptions{LockTimeout: time.Second, Progress: func(int, int64) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled build: %v", err)
	}
	after, err := StatusOf(f.dir, []string{f.dir})
	if err != nil || after.Files != before.Files || !after.Built.Equal(before.Built) {
		t.Fatalf("the old index after a stopped build: %+v, %v", after, err)
	}
	entries, _ := os.ReadDir(filepath.Join(localfs.ExistingStateDir(), "index"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".build") {
			t.Fatalf("a stopped build left %s", e.Name())
		}
	}
	f.same(core.GrepRequest{Query: "needle", Path: f.dir})
}

// A build killed (SIGKILL, in a process of its own) leaves the old index,
// whole and used, and the next build takes the lock it held; a temporary
// file a build killed while writing leaves is truncated by the next build
// and removed by --drop.
func TestKilledBuildLeavesOldIndex(t *testing.T) {
	f := newFixture(t)
	f.seed()
	before := f.build()
	for i := range 40 {
		f.put(fmt.Sprintf("more/m%d.txt", i), "needle "+f.text())
	}
	cmd := startChild(t, "walking\n", builderDir+"="+f.dir)
	cmd.Process.Kill()
	cmd.Wait()
	after, err := StatusOf(f.dir, []string{f.dir})
	if err != nil || after.Files != before.Files || !after.Built.Equal(before.Built) {
		t.Fatalf("the old index after a killed build: %+v, %v", after, err)
	}
	f.same(core.GrepRequest{Query: "needle", Path: f.dir})

	loc := f.location()
	for _, name := range []string{loc.building, loc.runs} {
		if err := os.WriteFile(name, []byte("half an index"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if st := f.build(); st.Files != before.Files+40 {
		t.Fatalf("the build after a killed one: %+v", st)
	}
	for _, name := range []string{loc.building, loc.runs} {
		if _, err := os.Lstat(name); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the build left %s: %v", name, err)
		}
	}
	f.same(core.GrepRequest{Query: "needle", Path: f.dir})
	for _, name := range []string{loc.building, loc.runs} {
		if err := os.WriteFile(name, []byte("half an index"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Drop(context.Background(), f.dir, []string{f.dir}, time.Second); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(loc.file))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), filepath.Base(loc.file)) {
			t.Fatalf("--drop left %s", e.Name())
		}
	}
}

// Builders of one tree take turns: one that cannot take the lock in time
// says so.
func TestConcurrentBuildersLock(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.build()
	loc := f.location()
	unlock, err := lock(context.Background(), loc.lock, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(context.Background(), f.fsys, f.dir, f.dir, BuildOptions{LockTimeout: 20 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("a build while another holds the lock: %v", err)
	}
	unlock()
	f.build()
}

// Posting lists built in many runs, merged at the end in many segments,
// are those built in one; and an index built so answers as a scan.
// Compared as the files each trigram makes candidates, copies and all:
// which of a content's files holds its lists depends on which was read
// first.
func TestRunsMergeAsOne(t *testing.T) {
	lists := func(f *fixture) map[uint32]bitset {
		ix := f.openIndex()
		defer ix.Close()
		out := map[uint32]bitset{}
		for i := range len(ix.table) / entrySize {
			tg := entryAt(ix.table, i).trigram
			c, err := ix.candidates(&Query{op: opAnd, trigrams: []uint32{tg}})
			if err != nil {
				t.Fatal(err)
			}
			out[tg] = c
		}
		return out
	}
	f := newFixture(t)
	f.seed()
	f.build()
	one := lists(f)
	defer func(n, m int) { runPairs, segmentTrigrams = n, m }(runPairs, segmentTrigrams)
	runPairs, segmentTrigrams = 7, 5
	if _, err := Drop(context.Background(), f.dir, []string{f.dir}, time.Second); err != nil {
		t.Fatal(err)
	}
	f.build()
	many := lists(f)
	if len(one) < 100 || !reflect.DeepEqual(one, many) {
		t.Fatalf("%d trigrams from one run, %d from runs of 7 pairs, or their lists differ", len(one), len(many))
	}
	if _, err := os.Lstat(f.location().runs); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the build left its spill file: %v", err)
	}
	differential(t, 7)
}

// A build whose runs cannot be spilled (a full disk: here a file size
// limit, in a process of its own, since it fails any write of the
// process) fails with the cause at once, reading no more of the tree,
// and leaves the old index.
func TestSpillFailureStopsTheBuild(t *testing.T) {
	f := newFixture(t)
	f.seed()
	before := f.build()
	for i := range 2000 {
		f.put(fmt.Sprintf("more/m%d.txt", i), fmt.Sprintf("%d %s", i, f.text()))
	}
	f.ageDirs()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), spillFailDir+"="+f.dir)
	out, err := cmd.CombinedOutput()
	var read int
	if _, scanErr := fmt.Sscanf(string(out), "EFBIG after %d files", &read); err != nil || scanErr != nil || read > 1000 {
		t.Fatalf("a build whose first spill fails (%v): %s (of %d files)", err, out, before.Files+2000)
	}
	after, err := StatusOf(f.dir, []string{f.dir})
	if err != nil || !after.Built.Equal(before.Built) {
		t.Fatalf("the old index after a failed build: %+v, %v", after, err)
	}
	if _, err := os.Lstat(f.location().runs); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the failed build left its spill file: %v", err)
	}
}

// A file rewritten in place, its size and mtime kept, is read again: only
// its ctime tells, and the stat pass compares it.
func TestInPlaceEditIsFound(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.put("d2/kept.txt", "alpha beta gamma\n")
	f.build()
	p := filepath.Join(f.dir, "d2/kept.txt")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("zebra beta gamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{f.dir, filepath.Join(f.dir, "d2")} {
		got := f.grep(core.GrepRequest{Query: "zebra", Path: path, Mode: "files"})
		if !strings.Contains(got, "kept.txt") {
			t.Errorf("grep of %s: %s", path, got)
		}
		f.same(core.GrepRequest{Query: "zebra", Path: path})
	}
	if f.listed == 0 || f.walked == 0 {
		t.Fatalf("%d listed and %d walked searches: both ways must be tested", f.listed, f.walked)
	}
}

// The root directory falls under the racy rule as every other does: one
// changed within 2 s of the build is recorded with no version, so that
// every search lists it again (a file made in the same timestamp tick
// after the walk listed it would leave its mtime as it was).
func TestRecentRootIsAlwaysListed(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.put("late.txt", "needle\n") // the root changes now; the file is dated back
	f.fresh(".")
	if _, err := Build(context.Background(), f.fsys, f.dir, f.dir, BuildOptions{LockTimeout: time.Second}); err != nil {
		t.Fatal(err)
	}
	loc := f.location()
	ix := f.openIndex()
	defer ix.Close()
	if ix.dirs[0].path != "" || ix.dirs[0].version != "" {
		t.Fatalf("the root, changed just now, is recorded as %+v", ix.dirs[0])
	}
	if f.build(); !rootRecorded(t, loc) {
		t.Fatal("a root older than the racy slack is recorded with no version")
	}
}

// rootRecorded reports whether the index at loc holds a version of its root.
func rootRecorded(t *testing.T, loc location) bool {
	ix, err := open(loc.file, loc.root)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	return ix.dirs[0].version != ""
}

// hooked is a walker that hands each entry to edit before its visit: a
// test's way to change what an entry does, or the tree, at a chosen point
// of a walk.
type hooked struct {
	backend.Walker
	edit func(e *backend.WalkEntry)
}

func (w hooked) Walk(ctx context.Context, path string, opts backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	return w.Walker.Walk(ctx, path, opts, func(e backend.WalkEntry) error {
		w.edit(&e)
		return visit(e)
	})
}

// errInjected is the error of a file gone as it was opened.
var errInjected = fault.Errorf(fault.CodeNotFound, "no such file.")

// failing is w with its entry at rel failing as a file changed during a
// build does: its Info (gone since the listing) or its open.
func failing(w backend.Walker, rel string, atInfo bool) hooked {
	return failingWith(w, rel, atInfo, errInjected)
}

// failingWith is failing with err.
func failingWith(w backend.Walker, rel string, atInfo bool, errInjected error) hooked {
	return hooked{w, func(e *backend.WalkEntry) {
		if e.Rel != rel {
			return
		}
		switch {
		case atInfo:
			e.Info = func() (backend.FileInfo, error) { return backend.FileInfo{}, errInjected }
		case e.Later != nil:
			later := e.Later
			e.Later = func() func() (io.ReadCloser, error) {
				open := later()
				return func() (io.ReadCloser, error) {
					if r, err := open(); err == nil {
						r.Close()
					}
					return nil, errInjected
				}
			}
		default:
			e.Open = func() (io.ReadCloser, error) { return nil, errInjected }
		}
	}}
}

// A file the build could not index (gone at its stat, changed as it was
// opened, unreadable) is recorded unindexed: every search reads it, even
// in a directory unchanged since, where the index's list stands for the
// walk; and the next build tries it again.
func TestUnindexedFileIsStillSearched(t *testing.T) {
	for _, atInfo := range []bool{false, true} {
		t.Run(fmt.Sprint("atInfo=", atInfo), func(t *testing.T) {
			f := newFixture(t)
			f.seed()
			f.put("d1/sub1/late.txt", "qqqzzz\n")
			f.ageDirs()
			f.update(failing(f.fsys, "d1/sub1/late.txt", atInfo))
			f.same(core.GrepRequest{Query: "qqqzzz", Path: f.dir})
			if got := f.grepFiles("qqqzzz"); !slices.Equal(got, []string{"d1/sub1/late.txt"}) {
				t.Fatalf("grep finds %q", got)
			}
			if f.listed == 0 {
				t.Fatal("the search did not take the index's list: the test proves nothing")
			}
			if st := f.build(); st.Read == 0 {
				t.Fatalf("the next build did not read the file again: %+v", st)
			}
		})
	}
}

// A file the build cannot open for a reason not its own (EMFILE, EIO)
// fails the build: recorded unindexed, it said success with files
// missing from the index, another count of them at each run.
func TestBuildFailsOnAProcessError(t *testing.T) {
	for _, errno := range []unix.Errno{unix.EMFILE, unix.EIO} {
		t.Run(errno.Error(), func(t *testing.T) {
			f := newFixture(t)
			f.seed()
			f.put("d1/sub1/late.txt", "qqqzzz\n")
			_, err := Build(context.Background(), failingWith(f.fsys, "d1/sub1/late.txt", false, &os.PathError{Op: "open", Path: "late.txt", Err: errno}), f.dir, f.dir,
				BuildOptions{LockTimeout: time.Second, Config: f.fsys.Fingerprint(), Roots: f.fsys.Roots()})
			if !errors.Is(err, errno) {
				t.Fatalf("build: %v, want %v", err, errno)
			}
		})
	}
}

// grepFiles are the files grep finds holding q.
func (f *fixture) grepFiles(q string) []string {
	res, err := f.tl.Grep(context.Background(), core.GrepRequest{Query: q, Path: f.dir, Mode: "files"})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, file := range res.Files {
		out = append(out, file.Path)
	}
	return out
}

// An update that finds the tree as the index holds it keeps that index
// (not rewritten: the same build), once every list of it checks; a corrupt
// one is rebuilt from the files.
func TestUnchangedTreeKeepsIndex(t *testing.T) {
	f := newFixture(t)
	f.seed()
	first := f.build()
	// Not f.build, which dates the directories back again (a change).
	again := f.update(f.fsys)
	if !again.Built.Equal(first.Built) || again.Read != 0 || again.Reused != first.Files {
		t.Fatalf("an update with nothing changed: %+v, after %+v", again, first)
	}
	f.put("d0/sub0/new.txt", "needle anew\n")
	changed := f.build()
	if changed.Built.Equal(first.Built) || changed.Read != 1 {
		t.Fatalf("an update after a file was made: %+v", changed)
	}
	f.same(core.GrepRequest{Query: "needle anew", Path: f.dir})

	loc := f.location()
	ix, err := open(loc.file, "")
	if err != nil {
		t.Fatal(err)
	}
	e, ok, err := findEntry(ix.table, ix.blocks, ix.checked, trigramOf("eed"))
	postOff := ix.h.postOff
	ix.Close()
	if err != nil || !ok {
		t.Fatal("no list for eed", err)
	}
	data, err := os.ReadFile(loc.file)
	if err != nil {
		t.Fatal(err)
	}
	data[postOff+uint64(e.off)] ^= 0x40
	if err := os.WriteFile(loc.file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if st := f.update(f.fsys); st.Reused != 0 || st.Read != changed.Files {
		t.Fatalf("an update over a corrupt list with nothing changed: %+v", st)
	}
	f.same(core.GrepRequest{Query: "needle", Path: f.dir})
	if n, err := f.tl.Index.Narrow(context.Background(), core.IndexQuery{Path: f.dir, Query: "needle"}); err != nil || n == nil {
		t.Fatalf("the rebuilt index does not narrow: %v %v", n, err)
	}
}

// plainReaders is w with readers that cannot say what they opened: a
// build from nothing stats each file by name during the walk, as an
// update does.
func plainReaders(w backend.Walker) hooked {
	return hooked{w, func(e *backend.WalkEntry) {
		if e.Type != backend.TypeFile {
			return
		}
		open := opener(*e)
		e.Later = func() func() (io.ReadCloser, error) {
			return func() (io.ReadCloser, error) {
				r, err := open()
				return struct{ io.ReadCloser }{r}, err
			}
		}
	}}
}

// A build from nothing records each file's identity whether its reader
// stats it by descriptor (localfs's) or the walk by name (e.Info, valid
// only during the visit): the next update reuses every file.
func TestBuildStatsWhatItOpened(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprint("plain=", plain), func(t *testing.T) {
			f := newFixture(t)
			f.seed()
			f.ageDirs()
			var w backend.Walker = f.fsys
			if plain {
				w = plainReaders(f.fsys)
			}
			first := f.update(w)
			again := f.update(f.fsys)
			if first.Read != first.Files || first.Opaque != 1 || again.Read != 0 || again.Reused != first.Files {
				t.Fatalf("a build, then an update: %+v, %+v", first, again)
			}
			f.same(core.GrepRequest{Query: "needle", Path: f.dir})
		})
	}
}

// changing is w calling change just before it visits the entry at rel:
// after the walk has read the rules of the directories above it.
func changing(w backend.Walker, rel string, change func()) hooked {
	return hooked{w, func(e *backend.WalkEntry) {
		if e.Rel == rel {
			change()
		}
	}}
}

// rulesChangeCases are where a rules file is rewritten during a build: an
// indexed ignore file as the walk visits it, and an unindexed one (read
// only by the walk) as the walk goes on below.
var rulesChangeCases = []struct{ name, rules, changeAt string }{
	{"indexed", "d/.gitignore", "d/.gitignore"},
	{"unindexed", ".git/info/exclude", "d"},
}

// rulesChangedDuringBuild seeds d/sub/f3.txt and f5.txt and the rules
// file at rules ("f5*.txt"), and builds the index while the rules become
// "f3*.txt", just before the walk visits changeAt.
func (f *fixture) rulesChangedDuringBuild(rules, changeAt string) {
	f.t.Helper()
	f.put("d/sub/f3.txt", "needle three\n")
	f.put("d/sub/f5.txt", "needle five\n")
	f.put(rules, "f5*.txt\n")
	f.ageDirs()
	rewrite := func() {
		if err := os.WriteFile(filepath.Join(f.dir, rules), []byte("f3*.txt\n"), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	f.update(changing(f.fsys, changeAt, rewrite))
}

// An ignore file rewritten during a build, after the walk read its rules
// and before the build stat'ed it, must not vouch for the rules the
// index's list obeys: the list holds d/sub/f3.txt and not f5.txt, the
// rules now say the opposite, and the identity recorded is the new one.
func TestIgnoreFileChangedDuringBuild(t *testing.T) {
	for _, tc := range rulesChangeCases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.rulesChangedDuringBuild(tc.rules, tc.changeAt)
			req := core.GrepRequest{Query: "needle", Mode: "files", Path: f.dir}
			f.same(req)
			if got := f.grepFiles("needle"); !slices.Contains(got, "d/sub/f5.txt") || slices.Contains(got, "d/sub/f3.txt") {
				t.Fatalf("the rules were not rewritten during the build: %q", got)
			}
			// The next build reads the rules as they are (dated back, or
			// the file is racy): the list is taken again.
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(filepath.Join(f.dir, tc.rules), old, old); err != nil {
				t.Fatal(err)
			}
			f.update(f.fsys)
			if !f.tookList(req) {
				t.Fatal("after a quiet build, the search did not take the index's list")
			}
		})
	}
}

// A candidate whose directory changes after the stat pass (a file made
// beside it while the search runs) is still read, by its path as a walk
// reads it: it was there all along, and skipping it answered less.
func TestCandidateInChangedDirIsRead(t *testing.T) {
	f := newFixture(t)
	f.put("d/a.txt", "needle\n")
	f.put("d/b.txt", "no match\n")
	f.build()
	f.narrowed = func() {
		if err := os.WriteFile(filepath.Join(f.dir, "d/new.txt"), []byte("made during the search"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.grepFiles("needle"); !slices.Equal(got, []string{"d/a.txt"}) || f.listed != 1 {
		t.Fatalf("the index's list (taken: %v) gave %q, want d/a.txt", f.listed == 1, got)
	}
}

// A directory the stat pass cannot open is gone when nothing (or no
// directory) is there, listed again when it may not be entered, and any
// other error fails the search rather than leave its files out.
func TestFailedDir(t *testing.T) {
	for _, tc := range []struct {
		err     error
		state   uint8
		failing bool
	}{
		{unix.ENOENT, dirGone, false},
		{unix.ENOTDIR, dirGone, false},
		{unix.ELOOP, dirGone, false},
		{unix.EMLINK, dirGone, false}, // a link, on FreeBSD (O_NOFOLLOW)
		{unix.EACCES, dirChanged, false},
		{unix.EMFILE, dirGone, true},
		{unix.EIO, dirGone, true},
	} {
		state, err := failedDir(tc.err)
		if state != tc.state || (err != nil) != tc.failing {
			t.Errorf("%v: state %d, error %v; want state %d, failing %v", tc.err, state, err, tc.state, tc.failing)
		}
	}
}

// tookList runs req indexed and as a scan, which must agree, and reports
// whether the indexed search took the index's list instead of walking.
func (f *fixture) tookList(req core.GrepRequest) bool {
	f.t.Helper()
	before := f.listed
	f.same(req)
	return f.listed > before
}

// Git writes below .git all the time (its index, objects, refs), which
// changes nothing of the rules: a search still takes the index's list.
// A .git directory that goes, or another in its place, changes them.
func TestGitActivityKeepsTheList(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.put(".git/info/exclude", "f1*.txt\n")
	f.put(".git/HEAD", "ref: refs/heads/main\n")
	f.build()
	listed := func(step string, want bool) {
		t.Helper()
		if got := f.tookList(core.GrepRequest{Query: "needle", Mode: "files", Path: f.dir}); got != want {
			t.Fatalf("%s: the search took the index's list: %v, want %v", step, got, want)
		}
	}
	listed("built", true)
	if err := os.WriteFile(filepath.Join(f.dir, ".git/index"), []byte("DIRC"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(f.dir, ".git/HEAD"), filepath.Join(f.dir, ".git/ORIG_HEAD")); err != nil {
		t.Fatal(err)
	}
	listed("git wrote below .git", true)
	if err := os.Rename(filepath.Join(f.dir, ".git"), filepath.Join(f.dir, "old.git")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(f.dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	listed("another .git", false)
}

// A walk the index narrows, stopped once its page is full, runs every
// file opener it took: a file to search handed over after a run of
// skipped files was dropped when the walk had stopped, and its
// directory's descriptor with it (81 of 100 greps leaked one).
func TestStoppedWalkLeavesNoDescriptor(t *testing.T) {
	f := newFixture(t)
	for i := range 3000 {
		content := "needle\n"
		if i%3 == 0 {
			content = "nothing here\n"
		}
		f.put(fmt.Sprintf("d/f%05d.txt", i), content)
	}
	f.build()
	// An exclusion makes grep walk (with the stat pass) instead of
	// taking the index's list.
	req := core.GrepRequest{Query: "needle", Path: f.dir, Mode: "files", Limit: 1, Exclude: []string{"zzz"}}
	open := func() int {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd to count descriptors: ", err)
		}
		return len(fds)
	}
	f.grep(req)
	before, walked := open(), f.walked
	for range 100 {
		if _, err := f.tl.Grep(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if after := open(); after > before+2 || f.walked-walked != 100 || f.skipped == 0 {
		t.Fatalf("%d descriptors before 100 walked greps, %d after (%d walked, %d files skipped)", before, after, f.walked-walked, f.skipped)
	}
}

// A tree removed and made again at its path while the backend holds the
// removed one (a watcher started inside it, its working directory) is not
// indexed: the walk would read the removed, empty directory and stamp it
// as the new one's index, and every search of the new tree found nothing,
// with exit 0.
func TestBuildRefusesATreeReplacedUnderIt(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.build()
	old := f.dir + ".old"
	if err := os.Rename(f.dir, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(f.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f.put("b/g.txt", "a new needle\n")
	_, err := Build(context.Background(), f.fsys, ".", f.dir, BuildOptions{LockTimeout: time.Second})
	if !errors.Is(err, ErrTreeReplaced) {
		t.Fatalf("a build of a replaced tree: %v, want ErrTreeReplaced", err)
	}
	if _, err := StatusOf(f.dir, []string{f.dir}); !IsNoIndex(err) {
		t.Fatalf("the new tree has an index: %v", err)
	}
}

// A FIFO, a link or a directory at an index's name is no index: searches
// scan, status is NOT_FOUND, and the next build replaces it, never
// waiting on the FIFO.
func TestIndexNameHoldsSomethingElse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(string) error
	}{
		{"fifo", func(p string) error { return unix.Mkfifo(p, 0o600) }},
		{"link to a fifo", func(p string) error {
			if err := unix.Mkfifo(p+".fifo", 0o600); err != nil {
				return err
			}
			return os.Symlink(p+".fifo", p)
		}},
		{"directory", func(p string) error { return os.MkdirAll(filepath.Join(p, "x"), 0o700) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.seed()
			f.build()
			loc := f.location()
			if err := os.Remove(loc.file); err != nil {
				t.Fatal(err)
			}
			if err := tc.plant(loc.file); err != nil {
				t.Fatal(err)
			}
			if n, err := f.tl.Index.Narrow(context.Background(), core.IndexQuery{Path: f.dir, Query: "needle"}); err != nil || n != nil {
				t.Fatalf("a %s at the index's name narrows the search (%v)", tc.name, err)
			}
			f.same(core.GrepRequest{Query: "needle", Path: f.dir})
			if _, err := StatusOf(f.dir, []string{f.dir}); err == nil {
				t.Fatalf("status describes a %s", tc.name)
			}
			if st := f.build(); st.Files == 0 {
				t.Fatal("the build after it indexed nothing")
			}
			if n, _ := f.tl.Index.Narrow(context.Background(), core.IndexQuery{Path: f.dir, Query: "needle"}); n == nil {
				t.Fatal("the rebuilt index is not used")
			}
		})
	}
}

// An index whose tree reaches outside the backend's roots is not used,
// as index --status does not tell of it: a search under --root sub of a
// tree indexed above it walks.
func TestIndexOutsideTheRootsIsNotUsed(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.build()
	sub := filepath.Join(f.dir, "d0")
	inner, err := localfs.New(localfs.Config{Roots: []string{sub}})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	if n, err := Local(inner).Narrow(context.Background(), core.IndexQuery{Path: sub, Query: "needle"}); err != nil || n != nil {
		t.Fatalf("an index of %s narrowed a search under --root %s (%v)", f.dir, sub, err)
	}
	if n, _ := Local(f.fsys).Narrow(context.Background(), core.IndexQuery{Path: sub, Query: "needle"}); n == nil {
		t.Fatal("under its own root, the index is not used for a subdirectory")
	}
}

// The first build makes the state directory (~/.local/state/agentfs here,
// beside an existing $TMPDIR/agentfs-UID) before the backend opens, as the
// index command does: the searches after it use its list (they once walked,
// their fingerprint being another than the build's).
func TestFirstBuildListIsUsed(t *testing.T) {
	home, tmp, dir := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv(localfs.StateDirEnv, "")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", tmp)
	if err := os.Mkdir(filepath.Join(tmp, fmt.Sprintf("agentfs-%d", os.Getuid())), 0o700); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, dir: dir}
	for i := range 20 {
		f.put(fmt.Sprintf("f%d.txt", i), "a needle\n")
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := localfs.StateDir(); err != nil {
		t.Fatal(err)
	}
	build, err := localfs.New(localfs.Config{Roots: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer build.Close()
	if _, err := Build(context.Background(), build, dir, dir, BuildOptions{LockTimeout: time.Second, Config: build.Fingerprint(), Roots: build.Roots(), View: build.WalkView}); err != nil {
		t.Fatal(err)
	}
	search, err := localfs.New(localfs.Config{Roots: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer search.Close()
	n, err := Local(search).Narrow(context.Background(), core.IndexQuery{Path: dir, Query: "needle"})
	if err != nil || n == nil || n.Files == nil {
		t.Fatalf("the search after the first build does not take its list (%v)", err)
	}
}

// A tree deeper than a path can name (PATH_MAX) is searched as the scan
// searches it: the stat pass, which opens each directory by its path,
// failed there with IO_ERROR on every search, and the walk, which goes by
// descriptors, decides instead.
func TestTreeDeeperThanAPath(t *testing.T) {
	f := newFixture(t)
	f.put("top.txt", "needle top\n")
	// 17 x 256 bytes: past 4096.
	deeptree.File(t, f.dir, strings.Repeat("d", 255), 17, "deep.txt", "needle deep\n")
	f.build()
	req := core.GrepRequest{Query: "needle", Path: ".", Mode: core.ModeCount}
	f.same(req)
	if got := f.grep(req); !strings.Contains(got, `"filesWithMatches":2`) {
		t.Fatalf("the deep file is not found: %s", got)
	}
}

// A file whose mtime a tool set back (tar x, cp -p, rsync -a) just now
// changed when its ctime says: the build must not trust it, nor its
// directory's listing, by the mtime alone. On a file system of 1 s
// timestamps a second same-size change in that second, its mtime set back
// again, keeps its identity, and the index would vouch for the old
// trigrams (a hunt found grep and replace answer 0 with exit 0 on ext2).
func TestMtimeSetBackIsNotTrusted(t *testing.T) {
	defer func(clock func() time.Time) { now = clock }(now)
	now = time.Now
	f := newFixture(t)
	f.put("d/x.txt", "alpha OLDTOKEN\n") // mtime an hour back, ctime now
	f.ageDirs()
	// A first build reads by what it opened, an update by what it walked.
	for _, build := range []string{"build", "update"} {
		f.update(f.fsys)
		ix := f.openIndex()
		for _, file := range ix.files {
			if file.rel == "d/x.txt" && file.flags&flagRacy == 0 {
				t.Fatalf("%s: a file changed now, its mtime set back, is trusted: %+v", build, file)
			}
		}
		for _, d := range ix.dirs {
			if d.version != "" {
				t.Fatalf("%s: a directory changed now, its mtime set back, is recorded with a version: %+v", build, d)
			}
		}
		ix.Close()
	}
}

// A rules file the index records outside its files (.git/info/exclude)
// falls under the racy rule as an indexed ignore file does: changed within
// 2 s of the build, a same-size change in the same tick (its mtime set
// back, on a file system of 1 s timestamps) keeps its identity, and the
// index's list would obey the rules the walk read, not those in force.
func TestRecentUnindexedRulesAreNotTrusted(t *testing.T) {
	f := newFixture(t)
	f.put("d/sub/f3.txt", "needle three\n")
	f.put("d/sub/f5.txt", "needle five\n")
	f.put(".git/HEAD", "ref: refs/heads/main\n")
	f.put(".git/info/exclude", "f5*.txt\n")
	f.fresh(".git/info/exclude")
	f.build()
	if f.tookList(core.GrepRequest{Query: "needle", Mode: "files", Path: f.dir}) {
		t.Fatal("a rules file changed within 2 s of the build vouched for the index's list")
	}
	// Dated back, the next build trusts it.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(f.dir, ".git/info/exclude"), old, old); err != nil {
		t.Fatal(err)
	}
	f.update(f.fsys)
	if !f.tookList(core.GrepRequest{Query: "needle", Mode: "files", Path: f.dir}) {
		t.Fatal("after a quiet build, the search did not take the index's list")
	}
}

// An index built with other credentials (root before it dropped
// CAP_DAC_OVERRIDE, a user with a group it has left) narrows no search:
// the files it ruled out or found binary may be ones this caller cannot
// open, which a scan counts unreadable (exit 4 with --exit-status) where
// the indexed search counted them searched (hunt30). Built with this
// process's credentials it narrows (a build through a link records the credentials alone).
func TestIndexOfOtherCredentialsIsNotUsed(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.ageDirs()
	for _, tc := range []struct {
		name, config string
		narrows      bool
	}{
		{"this caller's", f.fsys.Fingerprint(), true},
		{"this caller's, through a link", localfs.Credentials(), true},
		{"another user's", strings.Replace(f.fsys.Fingerprint(), "uid=", "uid=9", 1), false},
		{"before credentials were recorded", f.fsys.Fingerprint()[len(localfs.Credentials())+1:], false},
	} {
		if _, err := Build(context.Background(), f.fsys, f.dir, f.dir, BuildOptions{LockTimeout: time.Second, Config: tc.config, Roots: f.fsys.Roots()}); err != nil {
			t.Fatalf("%s: build: %v", tc.name, err)
		}
		n, err := f.tl.Index.Narrow(context.Background(), core.IndexQuery{Path: f.dir, Query: "needle"})
		if err != nil || (n != nil) != tc.narrows {
			t.Errorf("%s: narrowing %v, %v; want one: %v", tc.name, n, err, tc.narrows)
		}
	}
}

// An index file of another user's is never used: one planted while the
// state directory was not private (chmod 700 since, as its refusal's hint
// says), whose files' identities and trigrams another user chose, narrowed
// a search to leave out the files it said hold no match: grep answered no
// match, exit 0.
func TestIndexOfAnotherUserIsNotUsed(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chowns an index to another user: run the tests as root")
	}
	f := newFixture(t)
	f.seed()
	f.build()
	loc := f.location()
	if err := os.Chown(loc.file, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if n, err := f.tl.Index.Narrow(context.Background(), core.IndexQuery{Path: f.dir, Query: "needle"}); err != nil || n != nil {
		t.Fatalf("an index of another user narrows the search (%v)", err)
	}
	if _, err := StatusOf(f.dir, []string{f.dir}); err == nil || !strings.Contains(err.Error(), "user 65534") {
		t.Fatalf("status of an index of another user: %v, want it refused naming the user", err)
	}
	if st := f.build(); st.Reused != 0 {
		t.Fatalf("the build after an index of another user reused %d files", st.Reused)
	}
	if n, _ := f.tl.Index.Narrow(context.Background(), core.IndexQuery{Path: f.dir, Query: "needle"}); n == nil {
		t.Fatal("the rebuilt index is not used")
	}
}
