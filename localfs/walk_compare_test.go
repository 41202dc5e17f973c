package localfs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/localfs"
)

// writeTreeFile writes dir/rel, making its parents.
func writeTreeFile(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// genTree writes a deterministic tree with what makes search hard: ignore
// files at several depths with negations, hidden files, binaries, CRLF
// lines, Unicode names and text (ß, the Kelvin sign, long s).
func genTree(t testing.TB, dir string, files int) {
	t.Helper()
	rnd := rand.New(rand.NewSource(1))
	words := []string{"foo", "Foo", "FOO", "bar", "baz", "func", "main", "err", "error",
		"straße", "STRASSE", "STRAẞE", "Kelvin", "\u212Aelvin", "ſecret", "SECRET", "élan", "ÉLAN",
		"x := 1", "return nil", "\t", "(", ")", "//", "naïve", "日本語", "fooBar", "foo_bar"}
	write := func(rel, content string) { writeTreeFile(t, dir, rel, content) }
	write(".git/HEAD", "ref: refs/heads/main\n")
	write(".git/info/exclude", "*.excluded\n")
	write(".git/objects/foo", "foo inside .git\n")
	write(".gitignore", "*.log\nbuild/\n*.tmp\n/top-only.txt\n")
	write(".ignore", "!keep.tmp\n")
	write("d1/.gitignore", "!important.log\ngen_*.go\n")
	write("d2/sub/.gitignore", "*.txt\n!keep.txt\n")
	dirs := []string{"", "d1", "d1/a", "d1/a/b", "d2", "d2/sub", "d2/sub/deep", ".github", "build", "d3-é", "d3-é/x"}
	exts := []string{".go", ".txt", ".md", ".log", ".tmp", ".excluded", ""}
	names := []string{"main", "util", "gen_x", "keep", "important", "top-only", "Ünïcode", "file", ".env", "notes"}
	for i := 0; i < files; i++ {
		d := dirs[rnd.Intn(len(dirs))]
		name := fmt.Sprintf("%s%d%s", names[rnd.Intn(len(names))], i%7, exts[rnd.Intn(len(exts))])
		if rnd.Intn(10) == 0 {
			name = names[rnd.Intn(len(names))] + exts[rnd.Intn(len(exts))] // keep.tmp, important.log...
		}
		var b strings.Builder
		eol := "\n"
		if rnd.Intn(4) == 0 {
			eol = "\r\n"
		}
		for l := rnd.Intn(40); l >= 0; l-- {
			for w := rnd.Intn(8); w >= 0; w-- {
				b.WriteString(words[rnd.Intn(len(words))])
				b.WriteByte(" ,"[rnd.Intn(2)])
			}
			b.WriteString(eol)
		}
		content := b.String()
		switch rnd.Intn(12) {
		case 0:
			content = "foo bar\x00\x01binary" + content
		case 1:
			content = strings.TrimSuffix(content, eol) // no final newline
		case 2:
			content = "\uFEFF" + content // a UTF-8 byte-order mark, no part of line 1
		}
		write(filepath.Join(d, name), content)
	}
	write("top-only.txt", "foo at the top\n")
	write("d1/top-only.txt", "foo below\n")
	write(".env.example", "FOO=bar\n")
}

type line struct {
	Path    string
	Line    int
	Text    string
	IsMatch bool
}

func newTools(t testing.TB, dir string) *core.Tools {
	t.Helper()
	fsys, err := localfs.New(localfs.Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return &core.Tools{FS: fsys, MaxBytes: 64 << 20}
}

// agentfsLines runs a grep to the last page and flattens its matches.
func agentfsLines(t *testing.T, tl *core.Tools, req core.GrepRequest) []line {
	var out []line
	for {
		req.Limit = 1000
		res, err := tl.Grep(context.Background(), req)
		if err != nil {
			t.Fatalf("grep %+v: %v", req, err)
		}
		for _, f := range res.Files {
			end := 0 // the last line of the previous block
			for _, b := range f.Blocks {
				// Blocks are maximal: never adjacent within a page; matches
				// is given only when some line of the block does not match.
				if b.Start <= end+1 && end > 0 || len(b.Lines) == 0 || b.Matches != nil && (len(b.Matches) >= len(b.Lines) || !slices.IsSorted(b.Matches)) {
					t.Fatalf("grep %+v: bad block in %s after line %d: %+v", req, f.Path, end, b)
				}
				end = b.Start + len(b.Lines) - 1
				for i, text := range b.Lines {
					n := b.Start + i
					out = append(out, line{f.Path, n, text, b.Matches == nil || slices.Contains(b.Matches, n)})
				}
			}
		}
		if res.NextOffset == nil {
			return out
		}
		req.Offset = *res.NextOffset
	}
}

// rgLines runs ripgrep with the same query and reads its JSON messages.
func rgLines(t *testing.T, dir string, args ...string) []line {
	cmd := exec.Command("rg", append([]string{"--json", "--sort", "path", "--hidden", "--crlf",
		"--no-messages", "-g", "!.git"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	outb, err := cmd.Output()
	if err != nil && cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("rg %v: %v", args, err)
	}
	var out []line
	for _, msg := range bytes.Split(outb, []byte("\n")) {
		var m struct {
			Type string
			Data struct {
				Path       struct{ Text string }
				Lines      struct{ Text string }
				LineNumber int `json:"line_number"`
			}
		}
		if len(msg) == 0 || json.Unmarshal(msg, &m) != nil || (m.Type != "match" && m.Type != "context") {
			continue
		}
		text := strings.TrimSuffix(strings.TrimSuffix(m.Data.Lines.Text, "\n"), "\r")
		out = append(out, line{m.Data.Path.Text, m.Data.LineNumber, text, m.Type == "match"})
	}
	return out
}

func diffLines(t *testing.T, name string, got, want []line) {
	t.Helper()
	if slices.Equal(got, want) {
		if len(want) == 0 {
			t.Errorf("%s: no lines at all; the case tests nothing", name)
		}
		return
	}
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w line
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s: %d lines from agentfs, %d from rg; first difference at %d:\n agentfs %+v\n rg      %+v", name, len(got), len(want), i, g, w)
			return
		}
	}
}

// TestGrepMatchesRipgrep compares grep with rg --sort path on a generated
// tree: the same lines, in the same order.
func TestGrepMatchesRipgrep(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("rg (ripgrep) is not installed: the comparison with ripgrep is skipped")
	}
	dir := t.TempDir()
	genTree(t, dir, 400)
	tl := newTools(t, dir)
	cases := []struct {
		name string
		req  core.GrepRequest
		rg   []string
	}{
		{"literal", core.GrepRequest{Query: "foo"}, []string{"-F", "foo"}},
		{"literal unicode", core.GrepRequest{Query: "straße"}, []string{"-F", "straße"}},
		{"literal punctuation", core.GrepRequest{Query: "x := 1"}, []string{"-F", "x := 1"}},
		{"regex inner literal", core.GrepRequest{Query: `fo+\w*Bar`, Regex: new(true)}, []string{`fo+\w*Bar`}},
		{"regex anchored", core.GrepRequest{Query: `^Foo.*nil,?\s*$`, Regex: new(true)}, []string{`^Foo.*nil,?\s*$`}},
		{"regex no literal", core.GrepRequest{Query: `[A-Z]{3}[a-z]?\s[a-z]`, Regex: new(true)}, []string{`[A-Z]{3}[a-z]?\s[a-z]`}},
		{"regex alternation", core.GrepRequest{Query: `main|baz`, Regex: new(true)}, []string{`main|baz`}},
		{"ignore case", core.GrepRequest{Query: "foo", IgnoreCase: true}, []string{"-F", "-i", "foo"}},
		{"ignore case kelvin", core.GrepRequest{Query: "kelvin", IgnoreCase: true}, []string{"-F", "-i", "kelvin"}},
		{"ignore case long s", core.GrepRequest{Query: "secret", IgnoreCase: true}, []string{"-F", "-i", "secret"}},
		{"ignore case sharp s", core.GrepRequest{Query: "STRAẞE", IgnoreCase: true}, []string{"-F", "-i", "STRAẞE"}},
		{"ignore case regex", core.GrepRequest{Query: `é\w+`, Regex: new(true), IgnoreCase: true}, []string{"-i", `é\w+`}},
		// rg lets -g override ignore files; include only narrows, so the
		// globs here pick files that no ignore file names.
		{"include name", core.GrepRequest{Query: "bar", Include: core.Globs{"*.md"}}, []string{"-F", "-g", "*.md", "bar"}},
		{"include path", core.GrepRequest{Query: "bar", Include: core.Globs{"d1/**/*.txt"}}, []string{"-F", "-g", "d1/**/*.txt", "bar"}},
		{"includes", core.GrepRequest{Query: "bar", Include: core.Globs{"*.md", "d1/**/*.txt"}}, []string{"-F", "-g", "*.md", "-g", "d1/**/*.txt", "bar"}},
		{"context", core.GrepRequest{Query: "main", Context: 2}, []string{"-F", "-C", "2", "main"}},
		{"context regex", core.GrepRequest{Query: `^\(`, Regex: new(true), Context: 3}, []string{"-C", "3", `^\(`}},
		{"subdirectory", core.GrepRequest{Query: "foo", Path: "d1"}, []string{"-F", "foo", "d1"}},
	}
	for _, c := range cases {
		got := agentfsLines(t, tl, c.req)
		want := rgLines(t, dir, c.rg...)
		diffLines(t, c.name, got, want)
	}
}

// walkLess orders paths as the walk does: component by component.
func walkLess(a, b string) int {
	return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
}

// TestFindMatchesFd compares find with fdfind on the same tree: the same
// paths; fd does not sort, so its list is put in walk order.
func TestFindMatchesFd(t *testing.T) {
	fd, err := exec.LookPath("fdfind")
	if err != nil {
		if fd, err = exec.LookPath("fd"); err != nil {
			t.Skip("fdfind (fd-find) is not installed: the comparison with fd is skipped")
		}
	}
	dir := t.TempDir()
	genTree(t, dir, 400)
	tl := newTools(t, dir)
	cases := []struct {
		req core.FindRequest
		fd  []string
	}{
		{core.FindRequest{Pattern: "**/*.go"}, []string{"-t", "f", "-g", "*.go"}},
		{core.FindRequest{Pattern: "**", Type: "dir"}, []string{"-t", "d", "-g", "*"}},
		{core.FindRequest{Pattern: "**", Type: "file"}, []string{"-t", "f", "-g", "*"}},
		{core.FindRequest{Pattern: "**/keep*"}, []string{"-g", "keep*"}},
		// A pattern without a slash matches a name at any depth, as fd's -g.
		{core.FindRequest{Pattern: "*.go"}, []string{"-t", "f", "-g", "*.go"}},
		{core.FindRequest{Pattern: "keep*"}, []string{"-g", "keep*"}},
		{core.FindRequest{Pattern: "main?.*", Path: "d1"}, []string{"-g", "main?.*", "d1"}},
	}
	for _, c := range cases {
		var got []string
		for req := c.req; ; {
			req.Limit = 1000
			res, err := tl.Find(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Results {
				got = append(got, e.Path)
			}
			if res.NextOffset == nil {
				break
			}
			req.Offset = *res.NextOffset
		}
		cmd := exec.Command(fd, append([]string{"-H", "-E", ".git", "--color", "never"}, c.fd...)...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
		outb, err := cmd.Output()
		if err != nil {
			t.Fatalf("fd %v: %v", c.fd, err)
		}
		var want []string
		for _, p := range strings.Split(strings.TrimSpace(string(outb)), "\n") {
			want = append(want, strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/"))
		}
		slices.SortFunc(want, walkLess)
		if !slices.Equal(got, want) {
			t.Errorf("find %+v: %d paths, fd %d\n agentfs %q\n fd      %q", c.req, len(got), len(want), got, want)
		}
	}
}
