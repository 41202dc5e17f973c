package ignore_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/localfs"
)

// TestIgnorePatternsMatchGit lists, through the local backend, the files of
// a tree whose ignore files hold the forms go-git's matcher gets wrong on
// its own, and compares the list with git's (git ls-files --others
// --exclude-standard): ? and classes on bytes, rules with a slash followed by a negation of a
// directory they name or hold, escaped !, negated classes, a trailing /** with a
// re-included file or directory, a directory-only /**/, ** inside a
// segment, escaped stars and brackets, "*" with "!*/", a BOM, and a nested
// repository, which keeps neither the outer .gitignore nor the outer
// info/exclude, and bracket forms git takes that filepath.Match refuses.
func TestIgnorePatternsMatchGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed: the comparison with git is skipped")
	}
	dir := t.TempDir()
	run := func(d string, args ...string) string {
		cmd := exec.Command(git, args...)
		cmd.Dir = d
		cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(dir, "init", "-q", ".")
	for _, f := range []string{"!bang.txt", "#hash.txt", "trail/x/y.txt", "trail/y.txt", "cls/a1.txt", "cls/b1.txt",
		"dd/q/r.txt", "dd/s.txt", "logs/a.log", "logs/keep.txt", "bom/first.txt", "bom/second.txt",
		"inner/x.dat", "inner/x.gen", "top.dat", "anch/top.txt", "anch/sub/top.txt",
		"dsub/e/h", "dsub/i", "*star", "[!x]", "star/a.txt", "star/sub/b.txt", "star/sub/c.keep",
		"re/x.txt", "foo/bar/x.txt", "foo/baz/y.txt", "top2.txt", "va/b/f", "va/g", "wa/b/f", "wa/g",
		"qm/a", "qm/ü", "qm/ab", "qm/éx",
		"br/1", "br/a", "br/]", "br/-", "br/b", "br/c2", "br/x", "br/y", "br/^", "br/z9", "br/Q",
		"d1/c/b/b", "d2/b/b/f", "d2/b/g", "d3/a/b/x/b/g", "d3/a/b/f", "d4/x/b/y/b/g", "d4/x/b/f", "d5/a/b", "d5/a/x/b", "d5/a/c"} {
		write(f, "hello\n")
	}
	write(".gitignore", "\\!bang.txt\n\\#hash.txt\ntrail/**\n!trail/y.txt\ncls/[!a]*.txt\ndd/**/\nlogs/**.log\n*.gen\n/anch/top.txt\n"+
		"dsub/**\n!dsub/e/\n\\**\n\\[!x]\n"+
		// A rule with a slash speaks of the path it names, not of what is
		// below it: a later negation of the directory keeps its files (the
		// walk matched "/re" on re/x.txt and "/foo/*" on foo/bar/x.txt).
		"/re\n!re\n/foo/*\n!/foo/bar/\nva/*\n!b\nwa/**\n!wa/b\n")
	write("star/.gitignore", "*\n!*/\n!*.keep\n")
	// git matches bytes: ? is one byte, not ü (two), and [é]x is é's first
	// or second byte before x.
	write("qm/.gitignore", "?\n[é]x\n")
	// ** goes back: go-git's takes the first name that fits, and "**/b"
	// matched c/b of c/b/b, "a/**/b" a/b of a/b/x/b.
	// Bracket forms filepath.Match refuses, which hid nothing: a POSIX
	// class, ] first, - last, [!]] and ^ negating, a class among others.
	write("br/.gitignore", "[[:digit:]]\n[]a]\n[b-]\n[!]abcxyz1-^Qz29]\nc[[:digit:][:upper:]]\n[x^]\n")
	// One rule each, as git's wildmatch reads it: an escaped range start,
	// a class git aborts on (which matches nothing), punctuation without
	// /, a reversed range (its start alone).
	for i, rule := range []string{`[\\a-c]`, `[\\]-a]`, `[!]`, `[[:digit:]`, `[[:foo:]]`, `[[:punct:]]`, `[z-a]`, `[[:alpha:][:digit:]_]`} {
		d := fmt.Sprintf("wm%d/", i)
		write(d+".gitignore", rule+"\n")
		for _, f := range []string{"-", "b", "^", "_", "`", "!", ":", "f]", "z", "a", "c", "1", "]", "~", ".x", "Q"} {
			write(d+f, "hello\n")
		}
	}
	write("d1/.gitignore", "b\n!**/b\n")
	write("d2/.gitignore", "b/*\n!**/b\n")
	write("d3/.gitignore", "a/**/b\n!a/b/\n")
	write("d4/.gitignore", "**/b\n!x/b/\n")
	write("d5/.gitignore", "a/**/b  \n")
	// An empty segment (a stray //, or / at both ends) matches no path in
	// git; go-git dropped it, and foo//bar hid foo/bar.
	write("es/.gitignore", "foo//bar\n//a\nb//\nc/d//\n")
	for _, f := range []string{"es/foo/bar/x.txt", "es/a", "es/b/x", "es/c/d/x", "es/e"} {
		write(f, "hello\n")
	}
	// A slash in a class: the class never matches it (git matches paths),
	// but it anchors the rule, as any slash does ([ab/] matched nothing,
	// cut at its slash).
	write("sl/.gitignore", "[ab/]\n")
	write("sl2/.gitignore", "x[/]y\n")
	write("sl3/.gitignore", "[!/]\n")
	for _, f := range []string{"sl/a", "sl/b", "sl/c", "sl/sub/a", "sl2/x/y", "sl2/xy", "sl3/q", "sl3/qq", "sl3/d/q"} {
		write(f, "hello\n")
	}
	// A trailing space is kept only when a backslash escapes it, which an
	// escaped backslash does not: f\\<space> names f\ (it named "f\ ").
	write("bs/.gitignore", "f\\\\ \ng\\ \n")
	for _, f := range []string{`bs/f\`, `bs/f\ `, "bs/g", "bs/g "} {
		write(f, "hello\n")
	}
	write("bom/.gitignore", "\xEF\xBB\xBFfirst.txt\nsecond.txt\n")
	write(".git/info/exclude", "*.dat\n")
	run(filepath.Join(dir, "inner"), "init", "-q", ".")
	var want []string
	for _, f := range strings.Split(run(dir, "ls-files", "-z", "--others", "--exclude-standard")+
		prefixed("inner/", run(filepath.Join(dir, "inner"), "ls-files", "-z", "--others", "--exclude-standard")), "\x00") {
		if f != "" && !strings.HasSuffix(f, "/") { // git names the nested repository itself as inner/
			want = append(want, f)
		}
	}
	sort.Strings(want)

	fsys, err := localfs.New(localfs.Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	tl := &core.Tools{FS: fsys, MaxBytes: 64 << 20}
	res, err := tl.Find(context.Background(), core.FindRequest{Pattern: "**", Type: "file", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Results {
		got = append(got, e.Path)
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("agentfs find:\n  %q\ngit ls-files:\n  %q", got, want)
	}
}

// prefixed is git's NUL-separated names, each with p before it.
func prefixed(p, names string) string {
	var b strings.Builder
	for _, n := range strings.Split(names, "\x00") {
		if n != "" {
			b.WriteString(p + n + "\x00")
		}
	}
	return b.String()
}
