package subcommands

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/registry"
	"github.com/urfave/cli/v2"
)

// A number flag of a field absent when left out (replace's
// --expected-count, whose flag type shows no default) is decimal too: it
// took 010 for 8.
func TestAbsentNumberFlagIsDecimal(t *testing.T) {
	got, _, err := reorderArgs([]string{"replace", "a", "b", "--expected-count", "010"}, commands("replace"), globalFlags())
	if want := []string{"agentfs", "replace", "--expected-count", "10", "--", "a", "b"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("%q, %v; want %q", got, err, want)
	}
}

// TestReorderArgs checks flag parsing apart from execution: flags may follow
// positionals, global flags may follow the subcommand.
func TestReorderArgs(t *testing.T) {
	cmds := []*cli.Command{{Name: "read", Flags: []cli.Flag{
		&cli.IntFlag{Name: "limit"}, &cli.BoolFlag{Name: "line-numbers", Aliases: []string{"n"}}, &cli.StringFlag{Name: "json"},
		&cli.IntFlag{Name: "context", Aliases: []string{"C"}},
	}}}
	cases := []struct {
		in, want []string
		err      string
	}{
		{in: []string{"read", "f", "--limit", "5"}, want: []string{"agentfs", "read", "--limit", "5", "--", "f"}},
		{in: []string{"read", "--limit", "5", "f"}, want: []string{"agentfs", "read", "--limit", "5", "--", "f"}},
		{in: []string{"read", "f", "--line-numbers", "--limit=5"}, want: []string{"agentfs", "read", "--line-numbers", "--limit=5", "--", "f"}},
		{in: []string{"--root", "/x", "read", "f"}, want: []string{"agentfs", "--root", "/x", "read", "--", "f"}},
		{in: []string{"read", "f", "--root", "/x"}, want: []string{"agentfs", "--root", "/x", "read", "--", "f"}},
		{in: []string{"read", "--", "-odd-name"}, want: []string{"agentfs", "read", "--", "-odd-name"}},
		{in: []string{"read", "-"}, want: []string{"agentfs", "read", "--", "-"}},
		{in: []string{"read", "--limit", "-5", "f"}, want: []string{"agentfs", "read", "--limit", "-5", "--", "f"}},
		{in: []string{"--help"}, want: []string{"agentfs", "--help"}},
		{in: []string{"help", "read"}, want: []string{"agentfs", "read", "--help"}},
		{in: []string{"help"}, want: []string{"agentfs", "--help"}},
		{in: []string{"read", "f", "--help"}, want: []string{"agentfs", "read", "--help"}},
		{in: []string{"raed", "f"}, err: `did you mean "read"`},
		// A value written against a one-letter flag, as getopt takes it.
		{in: []string{"read", "f", "-C2"}, want: []string{"agentfs", "read", "-C", "2", "--", "f"}},
		{in: []string{"read", "-C", "2", "f"}, want: []string{"agentfs", "read", "-C", "2", "--", "f"}},
		{in: []string{"read", "-n", "f"}, want: []string{"agentfs", "read", "-n", "--", "f"}},
		{in: []string{"read", "-nC2", "f"}, want: []string{"agentfs", "read", "-nC2", "--", "f"}},
		// Letters after -C are a misspelt flag, not its value.
		{in: []string{"read", "-Context", "2", "f"}, want: []string{"agentfs", "read", "-Context", "--", "2", "f"}},
		{in: []string{"read", "--C2", "f"}, want: []string{"agentfs", "read", "--C2", "--", "f"}},
		{in: []string{"--readonly"}, err: "no subcommand"},
		// A number is read in decimal, as its JSON twin: Go's flag package
		// took 010 for 8 and 0x10 for 16.
		{in: []string{"read", "f", "--limit", "010"}, want: []string{"agentfs", "read", "--limit", "10", "--", "f"}},
		{in: []string{"read", "f", "--limit=010"}, want: []string{"agentfs", "read", "--limit=10", "--", "f"}},
		{in: []string{"read", "f", "-C010"}, want: []string{"agentfs", "read", "-C", "10", "--", "f"}},
		{in: []string{"read", "f", "--limit", "-05"}, want: []string{"agentfs", "read", "--limit", "-5", "--", "f"}},
		{in: []string{"read", "f", "--max-bytes", "01000"}, want: []string{"agentfs", "--max-bytes", "1000", "read", "--", "f"}},
		{in: []string{"read", "f", "--limit", "0x10"}, err: `--limit takes a decimal integer, not "0x10"`},
		{in: []string{"read", "f", "--limit", "1_0"}, err: "decimal integer"},
		{in: []string{"read", "f", "--limit", "-99999999999999999999"}, err: "--limit -99999999999999999999 is out of range"},
		{in: []string{"read", "f", "--limit", "99999999999999999999"}, err: "within the range --help gives for --limit"},
		{in: []string{"--max-bytes", "0b11", "read", "f"}, err: "decimal integer"},
		{in: []string{"read", "--json", "--limit", "f"}, want: []string{"agentfs", "read", "--json", "--limit", "--", "f"}},
	}
	for _, tc := range cases {
		got, _, err := reorderArgs(tc.in, cmds, globalFlags())
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error()+" hint: "+fault.AsError(err).Hint, tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q -> %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// blockingReader fails the test if anything reads it: stdin is never read
// implicitly, so a harness that leaves it open cannot hang a call.
type blockingReader struct{ t *testing.T }

func (b blockingReader) Read([]byte) (int, error) {
	b.t.Error("stdin was read without being asked for")
	time.Sleep(time.Hour)
	return 0, nil
}

func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	s := Streams{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	if stdin == "<block>" {
		s.Stdin = blockingReader{t}
	}
	code = Main(context.Background(), args, s)
	return code, out.String(), errb.String()
}

// TestStdinUnreadable: standard input that fails (a directory, a
// terminal hung up: EIO) is IO_ERROR saying why, as batch and mcp say it,
// and the file is untouched: the message said only that it could not be
// read, the cause left out of the JSON.
func TestStdinUnreadable(t *testing.T) {
	dir := t.TempDir()
	k := filepath.Join(dir, "k.txt")
	os.WriteFile(k, []byte("keep\n"), 0o644)
	for _, args := range [][]string{
		{"write", "k.txt", "--content-file", "-"},
		{"write", "-"},
		{"apply-patch", "--patch-file", "-"},
	} {
		var out, errb bytes.Buffer
		s := Streams{Stdin: iotest.ErrReader(syscall.EIO), Stdout: &out, Stderr: &errb}
		code := Main(context.Background(), append([]string{"--root", dir}, args...), s)
		var e struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(errb.Bytes(), &e)
		if code != ExitFailure || out.Len() != 0 || e.Error.Code != "IO_ERROR" || e.Error.Message != "standard input could not be read: input/output error." {
			t.Errorf("%v: exit %d, stdout %q, stderr %s; want IO_ERROR saying why standard input could not be read", args, code, out.String(), errb.String())
		}
	}
	if b, _ := os.ReadFile(k); string(b) != "keep\n" {
		t.Errorf("k.txt is now %q", b)
	}
}

func TestMainContract(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/a.txt", []byte("a\n"), 0o644)
	t.Chdir(dir)

	code, out, errs := run(t, "<block>", "ls")
	if code != 0 || errs != "" || !strings.HasSuffix(out, "}\n") || strings.Count(out, "\n") != 1 {
		t.Fatalf("ls: %d %q %q", code, out, errs)
	}
	var v map[string]any
	if json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("stdout is not one JSON object: %q", out)
	}

	code, out, errs = run(t, `{"path":"."}`, "ls", "-")
	if code != 0 || !strings.Contains(out, `"a.txt"`) {
		t.Fatalf("ls - (stdin JSON): %d %q %q", code, out, errs)
	}
	code, out, _ = run(t, `{"file_path":"."}`, "ls", "--json", "-")
	if code != 0 || !strings.Contains(out, `"a.txt"`) {
		t.Fatalf("ls --json -: %d %q", code, out)
	}

	for _, args := range [][]string{
		{"ls", "--json", `{}`, "."},
		{"ls", "--limit", "1", "-"},
		{"ls", "--nope"},
		{"nope"},
		{},
		{"ls", "a", "b"},
		{"--format", "yaml", "ls"},
	} {
		code, out, errs := run(t, "{}", args...)
		var e struct {
			Error struct{ Code, Message, Hint string }
		}
		if code != 2 || out != "" || json.Unmarshal([]byte(errs), &e) != nil || e.Error.Code != "INVALID_ARGUMENT" || e.Error.Hint == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want one INVALID_ARGUMENT with a hint, exit 2", args, code, out, errs)
		}
	}

	code, out, _ = run(t, "", "--format", "text", "ls")
	if code != 0 || out != "a.txt\n" {
		t.Fatalf("--format text ls: %q", out)
	}
	code, _, errs = run(t, "", "--format", "text", "ls", "missing")
	if code != 1 || !strings.HasPrefix(errs, "agentfs: NOT_FOUND:") {
		t.Fatalf("--format text error: %d %q", code, errs)
	}
}

// Every argument after -- is a path or a query, "-" too: rm -- - removes
// the file named "-", where it read its request from stdin (and hung on a
// stdin left open). A lone "-" still asks for the request on stdin.
func TestDashAfterEndOfFlags(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/-", []byte("dash\n"), 0o644)
	os.WriteFile(dir+"/a.txt", []byte("a-b\n"), 0o644)
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"read", "--", "-"}, `"content":"dash\n"`},
		{[]string{"read", "--limit", "1", "--", "-"}, `"content":"dash\n"`},
		{[]string{"grep", "--mode", "files", "--", "-"}, `"files":[{"path":"a.txt"}]`},
		{[]string{"read", "-"}, `"content":"a-b\n"`},
	} {
		code, out, errs := run(t, `{"path":"a.txt"}`, tc.args...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%q: exit %d, stdout %s, stderr %s; want %s", tc.args, code, out, errs, tc.want)
		}
	}
	if code, out, errs := run(t, "", "rm", "--", "-"); code != 0 || !strings.Contains(out, `"deleted":true`) {
		t.Errorf("rm -- -: exit %d, stdout %s, stderr %s", code, out, errs)
	}
}

func TestInterruptedIsExit130(t *testing.T) {
	var out, errb bytes.Buffer
	o := &output{streams: Streams{Stdout: &out, Stderr: &errb}}
	if got := o.fail(context.Canceled); got != 130 || !strings.Contains(errb.String(), `"INTERRUPTED"`) || out.Len() != 0 {
		t.Fatalf("cancelled: exit %d, stderr %s", got, errb.String())
	}
}

// TestNonUTF8RoundTrip: a name that is not UTF-8 comes out with its base64
// twin, and that twin passed back as pathBase64 reaches the same directory.
func TestNonUTF8RoundTrip(t *testing.T) {
	dir := t.TempDir()
	bad := "d\xff\xfe"
	if err := os.Mkdir(dir+"/"+bad, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dir+"/"+bad+"/inner.txt", nil, 0o644)
	t.Chdir(dir)
	code, out, errs := run(t, "", "ls")
	var ls struct {
		Entries []struct{ Name, NameBase64 string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &ls) != nil || len(ls.Entries) != 1 || ls.Entries[0].NameBase64 == "" {
		t.Fatalf("ls: %d %s %s", code, out, errs)
	}
	code, out, errs = run(t, "", "ls", "--json", `{"pathBase64":"`+ls.Entries[0].NameBase64+`"}`)
	if code != 0 || !strings.Contains(out, `"inner.txt"`) || !strings.Contains(out, `"pathBase64"`) {
		t.Fatalf("ls by pathBase64: %d %s %s", code, out, errs)
	}
	// --print0 gives the name's own bytes.
	code, out, errs = run(t, "", "find", "--print0", "**/*.txt")
	if code != 0 || out != bad+"/inner.txt\x00" {
		t.Fatalf("find --print0: %d %q %s", code, out, errs)
	}
}

// TestInterruptedWhileReadingStdin: a signal while write waits for its
// content on stdin answers INTERRUPTED (130) at once and writes nothing,
// not the part that had arrived.
func TestInterruptedWhileReadingStdin(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	os.WriteFile("f.txt", []byte("ORIGINAL\n"), 0o644)
	for _, args := range [][]string{{"write", "f.txt", "--content-file", "-"}, {"write", "-"}} {
		pr, pw := io.Pipe()
		go pw.Write([]byte(`partial-`))
		ctx, cancel := context.WithCancel(context.Background())
		var out, errb bytes.Buffer
		done := make(chan int, 1)
		go func() { done <- Main(ctx, args, Streams{Stdin: pr, Stdout: &out, Stderr: &errb}) }()
		cancel()
		if code := <-done; code != 130 || out.Len() != 0 || !strings.Contains(errb.String(), `"INTERRUPTED"`) {
			t.Errorf("%q interrupted: exit %d, stdout %q, stderr %q", args, code, out.String(), errb.String())
		}
		pw.Close()
		if b, _ := os.ReadFile("f.txt"); string(b) != "ORIGINAL\n" {
			t.Fatalf("%q interrupted: f.txt is %q", args, b)
		}
	}
}

// TestRmLinkWithPreconditionFromRead: read follows a final link, so the
// version and sha256 it reports are the target's; rm of the link accepts
// them, removes the link and keeps the target.
func TestRmLinkWithPreconditionFromRead(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	os.WriteFile("target.txt", []byte("t\n"), 0o644)
	os.Symlink("target.txt", "a.lnk")
	os.Symlink("target.txt", "b.lnk")
	_, out, _ := run(t, "", "read", "a.lnk")
	var r struct{ Version, Sha256 string }
	if json.Unmarshal([]byte(out), &r) != nil || r.Version == "" || r.Sha256 == "" {
		t.Fatalf("read a.lnk: %s", out)
	}
	for _, args := range [][]string{
		{"rm", "a.lnk", "--expected-version", r.Version},
		{"rm", "b.lnk", "--expected-sha256", r.Sha256},
	} {
		code, out, errs := run(t, "", args...)
		if code != 0 || !strings.Contains(out, `"deleted":true`) {
			t.Errorf("%q: %d %s %s", args, code, out, errs)
		}
	}
	if _, err := os.Lstat("target.txt"); err != nil {
		t.Fatal("the link's target was removed")
	}
	if code, _, errs := run(t, "", "rm", "target.txt", "--expected-version", "0000"); code != 3 || !strings.Contains(errs, "STALE") {
		t.Errorf("a wrong version: %d %s", code, errs)
	}
}

// TestReadContinuationOfAChangedFile: a continuation that carries the
// previous window's version answers STALE once the file changed, instead of
// a window of other bytes under the old line numbers.
func TestReadContinuationOfAChangedFile(t *testing.T) {
	t.Chdir(t.TempDir())
	os.WriteFile("ch.txt", []byte("l1\nl2\nl3\nl4\n"), 0o644)
	_, out, _ := run(t, "", "read", "ch.txt", "--limit", "2")
	var r struct {
		Version        string
		NextOffset     int
		NextByteOffset int
	}
	json.Unmarshal([]byte(out), &r)
	next := []string{"read", "ch.txt", "--offset", fmt.Sprint(r.NextOffset), "--byte-offset", fmt.Sprint(r.NextByteOffset), "--expected-version", r.Version}
	if code, out, errs := run(t, "", next...); code != 0 || !strings.Contains(out, `"content":"l3\nl4\n"`) {
		t.Fatalf("continuation of an unchanged file: %d %s %s", code, out, errs)
	}
	os.WriteFile("ch.txt", []byte("XX\nl1\nl2\nl3\nl4\n"), 0o644)
	if code, _, errs := run(t, "", next...); code != 3 || !strings.Contains(errs, `"STALE"`) {
		t.Fatalf("continuation of a changed file: %d %s", code, errs)
	}
}

// TestReplaceFlags checks that a JSON caller's errors name fields: whole
// flag tokens only, global flags left as they are.
func TestReplaceFlags(t *testing.T) {
	pairs := []string{"--byte-offset", "byteOffset", "--offset", "offset", "--old", "oldText"}
	cases := []struct{ in, want string }{
		{"pass --offset and --byte-offset together", "pass offset and byteOffset together"},
		{"pass --old and --new", "pass oldText and --new"},
		{"--offset-lines is not --offset.", "--offset-lines is not offset."},
		{"wait longer with --lock-timeout", "wait longer with --lock-timeout"},
		{"a -- b --", "a -- b --"},
		{"", ""},
	}
	for _, c := range cases {
		if got := replaceFlags(c.in, pairs); got != c.want {
			t.Errorf("replaceFlags(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A signal answers INTERRUPTED at once even while the tool is inside work
// it cannot cancel, and a tool that has not reached its point of no return
// can never reach it afterwards.
func TestRunStoppableAbandonsUncancellableWork(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tl := &core.Tools{}
	release := make(chan struct{})
	defer close(release)
	got := make(chan error, 1)
	go func() {
		_, err := runStoppable(ctx, tl, func() (int, error) {
			<-release // a regex on a huge line: no context to notice
			return 1, nil
		})
		got <- err
	}()
	cancel()
	select {
	case err := <-got:
		if fault.AsError(err).Code != fault.CodeInterrupted {
			t.Fatalf("want INTERRUPTED, got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("runStoppable waited for work that cannot be cancelled")
	}
	if tl.Commits.Close() {
		t.Fatal("the abandoned tool passed the commit gate")
	}
}

// An interrupted tool that notices the signal (waiting for a lock,
// staging its copies) has cleaned up by the time INTERRUPTED is answered,
// for the process then exits: abandoned at once, a replace left a lock
// file per file it had locked.
func TestRunStoppableWaitsForAToolThatNotices(t *testing.T) {
	defer func(g time.Duration) { interruptGrace = g }(interruptGrace)
	interruptGrace = time.Minute // the tool below returns at once; no load delays it a minute
	ctx, cancel := context.WithCancel(context.Background())
	cleaned := false
	go cancel()
	_, err := runStoppable(ctx, &core.Tools{}, func() (int, error) {
		<-ctx.Done()
		cleaned = true // its lock files removed
		return 0, ctx.Err()
	})
	if fault.AsError(err).Code != fault.CodeInterrupted {
		t.Fatalf("want INTERRUPTED, got %v", err)
	}
	if !cleaned {
		t.Fatal("INTERRUPTED was answered before the tool, which noticed the signal, cleaned up")
	}
}

// TestFlagsAreKebabTwins: every flag of every subcommand is the kebab-case
// twin of a JSON field of its request, and the other way round (issue
// 7.7): the camelCase of each flag is a field that --json knows.
func TestFlagsAreKebabTwins(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, c := range commands("") {
		for _, f := range c.Flags {
			name := f.Names()[0]
			if name == "json" || name == "help" {
				continue
			}
			field := camel(name)
			_, _, errs := run(t, "", c.Name, "--json", `{"`+field+`":null}`)
			if strings.Contains(errs, "unknown field") {
				t.Errorf("%s --%s has no JSON twin %q: %s", c.Name, name, field, errs)
			}
		}
	}
}

// TestFieldsHaveFlags: the other way round, every field of every tool's
// request has its kebab-case flag (edit's edits as JSON text).
func TestFieldsHaveFlags(t *testing.T) {
	flags := map[string]map[string]bool{}
	for _, c := range commands("") {
		flags[c.Name] = map[string]bool{}
		for _, f := range c.Flags {
			flags[c.Name][f.Names()[0]] = true
		}
	}
	for _, tool := range registry.All() {
		info := tool.Info()
		for _, p := range info.InputSchema.Properties {
			if want := kebabOf(p.Name); !flags[info.Name][want] {
				t.Errorf("%s: field %q has no flag --%s", info.Name, p.Name, want)
			}
		}
	}
}

// A field that is absent when left out (a pointer with no default) shows
// no default in --help: replace's --expected-count showed "(default: 0)",
// which is STALE when given, and write's --bom "(default: false)", which
// drops the file's mark. Any other flag shows its default.
func TestHelpShowsOnlyRealDefaults(t *testing.T) {
	absent := 0
	for _, typ := range []reflect.Type{reflect.TypeFor[core.ReplaceRequest](), reflect.TypeFor[core.WriteRequest](), reflect.TypeFor[core.LsRequest]()} {
		for _, s := range core.Fields(typ) {
			f, base := flagFor(s), s.Type
			if base.Kind() == reflect.Pointer {
				base = base.Elem()
			}
			if f == nil || base.Kind() != reflect.Int && base.Kind() != reflect.Bool {
				continue // a string shows only a default it has
			}
			help := cli.FlagStringer(f)
			isAbsent := s.Type.Kind() == reflect.Pointer && s.Default == ""
			if isAbsent {
				absent++
			}
			if shown := strings.Contains(help, "(default: "); shown == isAbsent {
				t.Errorf("--%s: %q; a default shown: %v, want %v", s.Flag, help, shown, !isAbsent)
			}
		}
	}
	if absent < 2 {
		t.Fatalf("%d fields absent when left out, want expectedCount and bom at least", absent)
	}
}

func kebabOf(camel string) string {
	var b strings.Builder
	for _, r := range camel {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func camel(kebab string) string {
	parts := strings.Split(kebab, "-")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// version and --version print the same JSON object (issue 15.7).
func TestVersionAgrees(t *testing.T) {
	c1, out1, _ := run(t, "", "version")
	c2, out2, _ := run(t, "", "--version")
	var v versionInfo
	if c1 != 0 || c2 != 0 || out1 != out2 || json.Unmarshal([]byte(out1), &v) != nil || v.Version == "" || v.Go == "" {
		t.Fatalf("version %d %q, --version %d %q", c1, out1, c2, out2)
	}
}

// A release names its commit whether or not the toolchain stamped the
// VCS: goreleaser's -X sets Commit, and a build with -buildvcs=false (a
// GOFLAGS of CI, a source tree without .git) printed no commit at all.
func TestVersionNamesReleaseCommit(t *testing.T) {
	release, err := os.ReadFile("../goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(release), "-X github.com/agentfs/agentfs/subcommands.Commit={{.FullCommit}}") {
		t.Error("goreleaser.yaml does not stamp subcommands.Commit")
	}
	defer func(c string) { Commit = c }(Commit)
	Commit = "751e8b6494f178b111a35e35ad5422edd9a2f0b8"
	if v := buildVersion(); v.Commit != Commit {
		t.Errorf("commit %q, want %q", v.Commit, Commit)
	}
}

// A panic on the goroutine that runs a tool answers as one on Main's does:
// the contract's error object, not a stack trace.
func TestPanicInToolIsAnError(t *testing.T) {
	_, err := runStoppable(context.Background(), &core.Tools{}, func() (int, error) { panic("boom") })
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeIOError || !strings.Contains(e.Message, "internal error: boom") {
		t.Fatalf("a panicking tool: %v", err)
	}
}

// TestInterruptedBatchWaitingForALine: a signal while a batch waits for
// its next line ends it at once with 130, not when stdin closes with 0.
func TestInterruptedBatchWaitingForALine(t *testing.T) {
	t.Chdir(t.TempDir())
	pr, pw := io.Pipe()
	defer pw.Close()
	or, ow := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := Main(ctx, []string{"batch"}, Streams{Stdin: pr, Stdout: ow, Stderr: &errb})
		// A batch that ended before its first answer ends the read below
		// with EOF, where it waited for the answer until the test timed out.
		ow.Close()
		done <- code
	}()
	go pw.Write([]byte(`{"tool":"ls","id":1}` + "\n"))
	answer, err := bufio.NewReader(or).ReadString('\n')
	if err != nil {
		code := <-done
		t.Fatalf("the batch ended before its first answer: %q, %v, exit %d, stderr %q", answer, err, code, errb.String())
	}
	if !strings.Contains(answer, `"id":1`) {
		t.Fatalf("the first answer: %q", answer)
	}
	go io.Copy(io.Discard, or)
	cancel()
	select {
	case code := <-done:
		if code != 130 || !strings.Contains(errb.String(), `"INTERRUPTED"`) {
			t.Fatalf("interrupted while waiting: exit %d, stderr %q", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the batch went on waiting for a line after the interrupt")
	}
}

// TestReadLinesByteOrderMark: a byte-order mark before the first line is
// cut (a file of requests saved by a Windows editor); one before a later
// line is that line's, and refused as any byte that is not JSON.
func TestReadLinesByteOrderMark(t *testing.T) {
	lines := make(chan inputLine)
	go readLines(strings.NewReader("\ufeff{}\r\n\ufeff{}\n"), 100, lines)
	var got []string
	for l := <-lines; l.err != io.EOF; l = <-lines {
		if l.err != nil {
			t.Fatal(l.err)
		}
		got = append(got, string(l.data))
	}
	if want := []string{"{}", "\ufeff{}"}; !slices.Equal(got, want) {
		t.Fatalf("lines %q, want %q", got, want)
	}
}

// TestBatchLineTooLong: a line over the bound is dropped up to its newline
// and answered with its error; the lines around it are read whole.
func TestBatchLineTooLong(t *testing.T) {
	lines := make(chan inputLine)
	go readLines(strings.NewReader("ab\n0123456789\r\ncd\r\n\nabcd\r\nabcde\r\nabcde\nlast\nabcde"), 4, lines)
	var got []string
	for l := <-lines; l.err != io.EOF; l = <-lines {
		switch {
		case l.err != nil:
			t.Fatal(l.err)
		case l.tooLong:
			got = append(got, "<too long>")
		default:
			got = append(got, string(l.data))
		}
	}
	// A line of exactly the bound is read whole whatever its terminator,
	// and one byte more is too long (abcd with CR LF was refused, abcde
	// at the end of the input taken).
	if want := []string{"ab", "<too long>", "cd", "", "abcd", "<too long>", "<too long>", "last", "<too long>"}; !slices.Equal(got, want) {
		t.Fatalf("lines %q, want %q", got, want)
	}
}

// TestBatchTooDeepKeepsItsID: a line nested past encoding/json's depth is
// answered under its id, which it was not.
func TestBatchTooDeepKeepsItsID(t *testing.T) {
	line := `{"tool":"ls","id":5,"args":{"x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}}\n"
	var out bytes.Buffer
	if code := Main(context.Background(), []string{"--root", t.TempDir(), "batch"}, Streams{Stdin: strings.NewReader(line), Stdout: &out, Stderr: io.Discard}); code != ExitUsage {
		t.Fatalf("exit %d", code)
	}
	if !strings.HasPrefix(out.String(), `{"id":5,"error":{"code":"INVALID_ARGUMENT"`) {
		t.Fatalf("answer %s", out.String())
	}
}

// The id of a line too long to decode is read from either end of it.
func TestIDOfCut(t *testing.T) {
	pad := strings.Repeat("x", 5000)
	for _, tc := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":7,"method":"m","params":{"p":"` + pad + `"}}`, `7`},
		{`{"tool":"write","args":{"content":"` + pad + `"},"id":"a\"b"}`, `"a\"b"`},
		{`{"method":"m","params":{"p":"` + pad + `","id":3}}`, ``},
		{`{"params":{"p":"` + pad + `"},"id":-2.5e3}`, `-2.5e3`},
		{`{"id":{"x":1},"params":"` + pad + `"}`, ``},
		{`{"params":"` + pad + `\"id\":4}"}`, ``},
		{`[1,"` + pad + `"]`, ``},
		// Not JSON: the answer could not be written, and the batch ended.
		{`{"params":"` + pad + `","id":1-}`, ``},
		{`{"params":"` + pad + `","id":01}`, ``},
		{`{"params":"` + pad + `","id":"a\qb"}`, ``},
		{`{"tool":"ls","id":01}`, ``},
		{`{"tool":"ls","id":12x}`, ``},
		{`{"tool":"ls","id":1.2.3}`, ``},
		{`{"tool":"ls","id":00007,"args":{}}`, ``},
		{`{"id":12 , "tool":"ls" x}`, `12`},
		{`{"id":"s"}`, `"s"`},
		{`{"tool":"ls","id":"s"`, `"s"`},
		// A number at the end of a cut line's head may go on.
		{`{"tool":"ls","id":7`, ``},
	} {
		n := min(len(tc.line), cutEnds)
		if got := string(idOfCut([]byte(tc.line[:n]), []byte(tc.line[len(tc.line)-n:]))); got != tc.want {
			t.Errorf("%.60s...: id %q, want %q", tc.line, got, tc.want)
		}
	}
	// A whole line read: its newline ends the number; the input's end
	// without one may have cut it (12 of 123).
	if got := string(idOfLine([]byte(`{"tool":"ls","id":7`), false)); got != "7" {
		t.Errorf("a whole line ending in its id: %q, want 7", got)
	}
	if got := string(idOfLine([]byte(`{"tool":"ls","id":7`), true)); got != "" {
		t.Errorf("a line the input's end cut in its id: %q, want none", got)
	}
	if got := string(idOfLine([]byte(`{"tool":"ls","id":"s"`), true)); got != `"s"` {
		t.Errorf("a line the input's end cut after its string id: %q, want \"s\"", got)
	}
}

// A whole line refused before its id (a syntax error, a raw control
// character) is answered under it when the id is the last key of the
// line's own object.
func TestIDOfWholeLine(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"tool":"read","args":{"path":"a.txt",},"id":7}`, `7`},
		{`{"tool":"read","args":{"path":"a` + "\x01" + `.txt"},"id":"s"}` + " \r", `"s"`},
		{` {"tool":"read","args":{"p":[1,,2],"q":"}]\""} , "id" : -3 }`, `-3`},
		{`{"id":8,"tool":"read","args":{"path":"a.txt",}}`, `8`},
		// The id of args, not the line's.
		{`{"tool":"read","args":{"path":"a.txt",,"id":5}`, ``},
		{`{"tool":"read","args":{"id":5}`, ``},
		{`{"tool":"read","args":{"p":"a,"id":5}`, ``},
		{`{"tool":"read","args":{"path":"a.txt}, "id":5}`, ``},
		// After the line's object, or in another value.
		{`{"tool":"read",}},"id":5}`, ``},
		{`{"tool":"read",]},"id":5}`, ``},
		{`x{"tool":"read",,"id":5}`, ``},
		{`[{"tool":"read",,"id":5}`, ``},
		{`{"tool":"read",,"id":05}`, ``},
		{`{"tool":"read",,"id":"\ud800"}`, ``},
	} {
		line := strings.NewReplacer(`\x01`, "\x01").Replace(tc.line)
		if got := string(idOfLine([]byte(line), false)); got != tc.want {
			t.Errorf("%s: id %q, want %q", tc.line, got, tc.want)
		}
	}
}

// fullWriter is standard output on a full disk.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// An answer that cannot be written fails the call, and says that the
// change was made: its hint said "retry", and a retried append was made
// twice.
func TestAnswerNotWrittenSaysTheChangeStands(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	t.Chdir(dir)
	os.WriteFile("log.txt", []byte("line1\n"), 0o644)
	var errb bytes.Buffer
	code := Main(context.Background(), []string{"write", "--append", "log.txt", "--content", "line2\n"}, Streams{Stdin: strings.NewReader(""), Stdout: fullWriter{}, Stderr: &errb})
	b, _ := os.ReadFile("log.txt")
	if code != 1 || !strings.Contains(errb.String(), `"IO_ERROR"`) || !strings.Contains(errb.String(), "change it made stands") || string(b) != "line1\nline2\n" {
		t.Errorf("exit %d, %s; the file %q", code, errb.String(), b)
	}
}

// blockedReader is standard output whose reader takes nothing: a write
// cancels ctx (a signal as it is written) and then blocks.
type blockedReader struct {
	cancel  context.CancelFunc
	release chan struct{}
}

func (b *blockedReader) Write(p []byte) (int, error) {
	b.cancel()
	<-b.release
	return len(p), nil
}

// TestInterruptedWhileTheAnswerIsStuck: a signal while the answer cannot
// be written (a pager left open) ends the call with 130 once the write has
// blocked for stuckAnswer, saying the call ran; it waited in write(2) as
// long as the reader did.
func TestInterruptedWhileTheAnswerIsStuck(t *testing.T) {
	t.Chdir(t.TempDir())
	saved := stuckAnswer
	stuckAnswer = 10 * time.Millisecond
	t.Cleanup(func() { stuckAnswer = saved })
	ctx, cancel := context.WithCancel(context.Background())
	out := &blockedReader{cancel: cancel, release: make(chan struct{})}
	defer close(out.release)
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"ls"}, Streams{Stdin: strings.NewReader(""), Stdout: out, Stderr: &errb})
	}()
	select {
	case code := <-done:
		if code != 130 || !strings.Contains(errb.String(), `"INTERRUPTED"`) || !strings.Contains(errb.String(), "the call itself ran") {
			t.Fatalf("interrupted while the answer was stuck: exit %d, stderr %q", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call went on waiting for its reader after the interrupt")
	}
}

// slowReader takes an answer a part at a time, each once the test lets it.
type slowReader struct {
	bytes.Buffer
	next chan struct{}
}

func (s *slowReader) Write(p []byte) (int, error) {
	<-s.next
	return s.Buffer.Write(p)
}

// TestAnswerStreamReadSlowly: a signal does not give up an answer its
// reader goes on taking, slowly (it was cut after a second, exit 130),
// and the bytes written are the caller's as they were when it wrote them,
// though it reuses its buffer.
func TestAnswerStreamReadSlowly(t *testing.T) {
	saved := stuckAnswer
	stuckAnswer = 400 * time.Millisecond
	t.Cleanup(func() { stuckAnswer = saved })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := &slowReader{next: make(chan struct{})}
	s := &answerStream{w: out, ctx: ctx}
	answer := bytes.Repeat([]byte("a"), 5*answerPart)
	want := bytes.Clone(answer)
	go func() {
		for range 5 {
			time.Sleep(stuckAnswer / 4) // a reader: 5 parts take longer than the bound, each far less
			out.next <- struct{}{}
		}
	}()
	n, err := s.Write(answer)
	clear(answer)
	if err != nil || n != len(want) || !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("a slow reader: %d bytes, %v; it got %d bytes", n, err, out.Len())
	}
}

// TestAnswerStreamReadAPageAtATime: a signal does not give up an answer
// read through a pipe, which takes a write's bytes as its reader frees
// room, a page at a time: a part of 64 KiB returned only once the reader
// had taken all of it, so a reader taking 4 KiB ten times a second was
// judged to take nothing and its answer cut (94,208 of 261,262 bytes,
// exit 130, "took nothing for a second").
func TestAnswerStreamReadAPageAtATime(t *testing.T) {
	saved := stuckAnswer
	stuckAnswer = 400 * time.Millisecond
	t.Cleanup(func() { stuckAnswer = saved })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pr, pw := io.Pipe()
	s := &answerStream{w: pw, ctx: ctx}
	answer := bytes.Repeat([]byte("a"), 64<<10)
	got := make(chan int, 1)
	go func() {
		n, buf := 0, make([]byte, 4<<10)
		for n < len(answer) {
			time.Sleep(stuckAnswer / 4) // a reader: a page each quarter of the bound
			m, err := io.ReadFull(pr, buf[:min(len(buf), len(answer)-n)])
			n += m
			if err != nil {
				break
			}
		}
		got <- n
	}()
	n, err := s.Write(answer)
	pw.Close()
	if r := <-got; err != nil || n != len(answer) || r != len(answer) {
		t.Fatalf("a reader taking a page at a time: %d bytes written, %v; it read %d", n, err, r)
	}
}

// The next window of --all (and of the "... more:" note) is of the
// version the page read, so that a file replaced between pages is STALE:
// --all joined the pages of two files, exit 0.
func TestReadNextKeepsTheVersion(t *testing.T) {
	next, byteNext := 3, int64(40)
	res := &core.ReadResult{Version: "v1", TextWindow: &core.TextWindow{Truncated: true, NextOffset: &next, NextByteOffset: &byteNext}}
	var req core.ReadRequest
	flags, more := readNext(&req, res)
	if !more || req.Offset != 3 || req.ByteOffset != 40 || req.ExpectedVersion != "v1" || !strings.HasSuffix(flags, "--expected-version v1") {
		t.Fatalf("%+v, %q, %v; want offset 3, byteOffset 40, expectedVersion v1", req, flags, more)
	}
}

// The continuation a text note names is the cursor when the page has one:
// a grep page cut by its timeout before its first match has nextOffset 0,
// and --offset 0 searched the same files again. The next request takes
// both, as the page gave them, for --all. A request given an offset has
// the offset named too: its flags added to the command as it was run
// override that offset, where the cursor alone beside it was
// INVALID_ARGUMENT (the offsets differ).
func TestWalkPageNamesTheCursor(t *testing.T) {
	zero, four := 0, 4
	for _, tc := range []struct {
		name       string
		offset     int
		nextOffset *int
		nextCursor string
		want       string
		more       bool
	}{
		{"timed out before a match", 0, &zero, "C0", "--cursor C0", true},
		{"a full page", 0, &four, "C4", "--cursor C4", true},
		{"a page from an offset", 2, &four, "C4", "--offset 4 --cursor C4", true},
		{"no cursor (one file)", 2, &four, "", "--offset 4", true},
		{"the last page", 2, nil, "", "", false},
	} {
		offset, cursor := tc.offset, "old"
		got, more := walkPage(&offset, &cursor, tc.nextOffset, tc.nextCursor)
		if got != tc.want || more != tc.more {
			t.Errorf("%s: %q, %v; want %q, %v", tc.name, got, more, tc.want, tc.more)
		}
		if tc.more && (offset != *tc.nextOffset || cursor != tc.nextCursor) {
			t.Errorf("%s: next request at offset %d cursor %q", tc.name, offset, cursor)
		}
	}
}

// writeCalls records each Write it is given, as one string, under a lock.
type writeCalls struct {
	mu    sync.Mutex
	calls []string
}

func (w *writeCalls) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, string(p))
	return len(p), nil
}

// A note goes to stderr in one write, so that serve's notes, written from
// its request goroutines, its accept loop and its prune at once, never
// interleave; in --format text one was four writes, its lines mixable
// with another note's.
func TestNoteIsOneWrite(t *testing.T) {
	e := fault.Errorf(fault.CodeIOError, "the disk failed.").WithPath("a.txt").WithHint("check it")
	e.Suggestions = []string{"b.txt"}
	for _, format := range []string{"json", "text"} {
		w := &writeCalls{}
		o := &output{streams: Streams{Stderr: w}, format: format, maxBytes: 1 << 16}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 50 {
					o.note(e)
				}
			})
		}
		wg.Wait()
		want := w.calls[0]
		if len(w.calls) != 400 || !strings.Contains(want, "b.txt") || strings.Count(want, "\n") != map[string]int{"json": 1, "text": 4}[format] {
			t.Fatalf("%s: %d writes, the first %q; want 400, each a whole note", format, len(w.calls), want)
		}
		for _, c := range w.calls {
			if c != want {
				t.Fatalf("%s: a write %q, want each the whole note %q", format, c, want)
			}
		}
	}
}

// grep --all ends at a page the timeout cut short before the cursor's
// file, which gives back the cursor it was given: each next page searched
// the same files and timed out there again, for ever (a 27 MB file with
// --limit 10 --timeout 100ms: 176 pages in 20 s, none with a match). The
// timeout of 1ns cuts every page short before any file; the guard's
// deadline turns a loop into exit 130 rather than a hung test.
func TestGrepAllStopsAtATimedOutPageThatGivesItsCursorBack(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/a.txt", []byte("foo\nfoo\nfoo\n"), 0o644)
	os.WriteFile(dir+"/b.txt", []byte("foo\n"), 0o644)
	t.Chdir(dir)
	code, out, errs := run(t, "", "grep", "foo", "--limit", "1")
	var first core.GrepResult
	if code != 0 || json.Unmarshal([]byte(out), &first) != nil || first.NextCursor == "" {
		t.Fatalf("first page: %d %q %q", code, out, errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code = Main(ctx, []string{"--format", "text", "--all", "grep", "foo", "--limit", "1", "--cursor", first.NextCursor, "--timeout", "1ns"},
		Streams{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
	if n := strings.Count(stderr.String(), "timed out"); code != 0 || n != 1 || stdout.Len() != 0 {
		t.Fatalf("exit %d, %d timeout notes, stdout %q, stderr %.300q; want exit 0 and one note", code, n, stdout.String(), stderr.String())
	}
}

// READ_ONLY's hint names what made agentfs read-only: the flag, or the
// variable AGENTFS_READONLY, which a script that only set the variable
// never passed (it said "run without --readonly" then too), or both.
func TestReadOnlyHintNamesItsSource(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct {
		env  string
		flag bool
		fix  string
	}{
		{"", true, "run without --readonly to "},
		{"1", false, "unset AGENTFS_READONLY to "},
		{"true", true, "run without --readonly and unset AGENTFS_READONLY to "},
	} {
		t.Setenv("AGENTFS_READONLY", tc.env)
		for _, args := range [][]string{
			{"write", "f", "--content", "x"},
			{"rm", "f"},
			{"publish", "f"},
			{"--assets", filepath.Join(dir, "assets"), "serve"},
		} {
			if tc.flag {
				args = append([]string{"--readonly"}, args...)
			}
			code, _, errs := run(t, "", args...)
			var e struct{ Error struct{ Code, Hint string } }
			if err := json.Unmarshal([]byte(errs), &e); err != nil || code == 0 || e.Error.Code != "READ_ONLY" || !strings.Contains(e.Error.Hint, tc.fix) {
				t.Errorf("AGENTFS_READONLY=%q %v: exit %d, %s; want READ_ONLY, a hint with %q", tc.env, args, code, errs, tc.fix)
			}
		}
	}
}
