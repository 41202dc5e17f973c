package localfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// tree makes root/ (the allowed root) and a sibling outside/ holding a secret.
func tree(t *testing.T) (base, root string) {
	t.Helper()
	base = t.TempDir()
	root = filepath.Join(base, "allowed")
	for _, d := range []string{"allowed/sub", "allowed_evil", "outside"} {
		must(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(root, "in.txt"), []byte("inside\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "sub", "deep.txt"), []byte("deep\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(base, "allowed_evil", "x.txt"), []byte("SECRET\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(base, "outside", "secret.txt"), []byte("SECRET\n"), 0o644))
	return base, root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newFS(t *testing.T, cfg Config) *FS {
	t.Helper()
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func code(err error) fault.Code {
	var e *fault.Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return "untyped: " + fault.Code(err.Error())
}

func readAll(f *FS, p string) (string, error) {
	r, err := f.Open(context.Background(), p)
	if err != nil {
		return "", err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	return string(b), err
}

func TestConfinement(t *testing.T) {
	base, root := tree(t)
	must(t, os.Symlink(filepath.Join(base, "outside", "secret.txt"), filepath.Join(root, "escape")))
	must(t, os.Symlink(filepath.Join(base, "outside", "missing.txt"), filepath.Join(root, "dangling-escape")))
	must(t, os.Symlink("../outside", filepath.Join(root, "escape-dir")))
	must(t, os.Symlink("sub/deep.txt", filepath.Join(root, "inlink")))
	must(t, os.Symlink("sub", filepath.Join(root, "inlink-dir")))
	must(t, os.Symlink("missing", filepath.Join(root, "dangling-in")))
	must(t, os.Symlink(root, filepath.Join(base, "alias")))

	cases := []struct {
		name   string
		policy SymlinkPolicy
		path   string
		want   fault.Code // "" means the read succeeds
		text   string
	}{
		{"relative inside", SymlinksWithin, "in.txt", "", "inside\n"},
		{"dot-dot inside", SymlinksWithin, "sub/../in.txt", "", "inside\n"},
		{"dot-dot escape", SymlinksWithin, "../outside/secret.txt", fault.CodeOutsideRoot, ""},
		{"deep dot-dot escape", SymlinksWithin, "sub/../../outside/secret.txt", fault.CodeOutsideRoot, ""},
		{"absolute outside", SymlinksWithin, filepath.Join(base, "outside", "secret.txt"), fault.CodeOutsideRoot, ""},
		{"sibling prefix root", SymlinksWithin, filepath.Join(base, "allowed_evil", "x.txt"), fault.CodeOutsideRoot, ""},
		{"sibling prefix relative", SymlinksWithin, "../allowed_evil/x.txt", fault.CodeOutsideRoot, ""},
		{"escaping link", SymlinksWithin, "escape", fault.CodeOutsideRoot, ""},
		{"escaping dir link", SymlinksWithin, "escape-dir/secret.txt", fault.CodeOutsideRoot, ""},
		{"dangling escaping link", SymlinksWithin, "dangling-escape", fault.CodeOutsideRoot, ""},
		{"in-root link within", SymlinksWithin, "inlink", "", "deep\n"},
		{"in-root dir link within", SymlinksWithin, "inlink-dir/deep.txt", "", "deep\n"},
		{"dangling in-root link", SymlinksWithin, "dangling-in", fault.CodeNotFound, ""},
		{"in-root link refused", SymlinksRefuse, "inlink", fault.CodeSymlink, ""},
		{"in-root dir link refused", SymlinksRefuse, "inlink-dir/deep.txt", fault.CodeSymlink, ""},
		{"escaping link refused", SymlinksRefuse, "escape", fault.CodeSymlink, ""},
		{"plain file refuse policy", SymlinksRefuse, "sub/deep.txt", "", "deep\n"},
		{"root reached through a link", SymlinksWithin, filepath.Join(base, "alias", "in.txt"), "", "inside\n"},
		{"root through a link refused", SymlinksRefuse, filepath.Join(base, "alias", "in.txt"), fault.CodeSymlink, ""},
		{"directory", SymlinksWithin, "sub", fault.CodeNotAFile, ""},
		{"missing", SymlinksWithin, "nope.txt", fault.CodeNotFound, ""},
		{"NUL byte", SymlinksWithin, "in\x00.txt", fault.CodeInvalidArgument, ""},
		{"over-long name", SymlinksWithin, strings.Repeat("n", 300), fault.CodeInvalidArgument, ""},
		{"file as directory", SymlinksWithin, "in.txt/x", fault.CodeNotADirectory, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFS(t, Config{Roots: []string{root}, Cwd: root, Symlinks: tc.policy})
			got, err := readAll(f, tc.path)
			if code(err) != tc.want {
				t.Fatalf("read %q: code %q (%v), want %q", tc.path, code(err), err, tc.want)
			}
			if err == nil && got != tc.text {
				t.Fatalf("read %q = %q, want %q", tc.path, got, tc.text)
			}
			if strings.Contains(got, "SECRET") {
				t.Fatalf("read %q reached outside the root", tc.path)
			}
		})
	}
}

func TestMultipleRootsLinkIntoOtherRoot(t *testing.T) {
	base, root := tree(t)
	must(t, os.Symlink(filepath.Join(base, "outside", "secret.txt"), filepath.Join(root, "to-other")))
	f := newFS(t, Config{Roots: []string{root, filepath.Join(base, "outside")}, Cwd: root})
	got, err := readAll(f, "to-other")
	if err != nil || got != "SECRET\n" {
		t.Fatalf("a link into another allowed root: %q, %v", got, err)
	}
}

func TestDeny(t *testing.T) {
	base, root := tree(t)
	must(t, os.MkdirAll(filepath.Join(root, "secrets"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "secrets", "key"), []byte("k"), 0o600))
	must(t, os.Symlink("secrets/key", filepath.Join(root, "keylink")))
	f := newFS(t, Config{Roots: []string{root}, Cwd: root, Deny: []string{filepath.Join(root, "secrets")}})
	for _, p := range []string{"secrets/key", "sub/../secrets/key", "keylink", filepath.Join(root, "secrets", "key")} {
		if _, err := readAll(f, p); code(err) != fault.CodeDenied {
			t.Errorf("read %q: %v, want DENIED", p, err)
		}
	}
	if _, err := f.ReadDir(context.Background(), "secrets", 0, 10); code(err) != fault.CodeDenied {
		t.Errorf("ls secrets: %v, want DENIED", err)
	}
	page, err := f.ReadDir(context.Background(), ".", 0, 100)
	must(t, err)
	for _, e := range page.Entries {
		if e.Name == "secrets" {
			t.Errorf("a denied directory is listed")
		}
	}
	if _, err := f.Lstat(context.Background(), "secrets/key"); code(err) != fault.CodeDenied {
		t.Errorf("lstat secrets/key: %v, want DENIED", err)
	}
	_ = base
}

// A denied file is denied under every name: a walk leaves a hard link to
// it out, while a file of the same device with the same content but
// another inode opens.
func TestDenyFileByIdentityInWalks(t *testing.T) {
	_, root := tree(t)
	must(t, os.WriteFile(filepath.Join(root, "secret.txt"), []byte("SECRET\n"), 0o600))
	must(t, os.Link(filepath.Join(root, "secret.txt"), filepath.Join(root, "sub", "alias.txt")))
	must(t, os.WriteFile(filepath.Join(root, "sub", "copy.txt"), []byte("SECRET\n"), 0o600))
	f := newFS(t, Config{Roots: []string{root}, Cwd: root, Deny: []string{filepath.Join(root, "secret.txt")}})
	got := map[string]string{}
	err := f.Walk(context.Background(), "sub", backend.WalkOptions{}, func(e backend.WalkEntry) error {
		if e.Type != backend.TypeFile {
			return nil
		}
		r, err := e.Open()
		if err != nil {
			got[e.Name] = string(code(err))
			return nil
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		must(t, err)
		got[e.Name] = string(b)
		return nil
	})
	must(t, err)
	want := map[string]string{"copy.txt": "SECRET\n", "deep.txt": "deep\n"}
	if !maps.Equal(got, want) {
		t.Fatalf("walk opened %q, want %q", got, want)
	}
}

// walkSwappingForDeniedLink walks sub of a tree whose secret.txt (holding
// secret) is denied, swaps sub/deep.txt for a hard link to it while
// deep.txt is visited, and then calls visited with the entry.
func walkSwappingForDeniedLink(t *testing.T, secret string, visited func(backend.WalkEntry)) *FS {
	t.Helper()
	_, root := tree(t)
	denied := filepath.Join(root, "secret.txt")
	must(t, os.WriteFile(denied, []byte(secret), 0o600))
	f := newFS(t, Config{Roots: []string{root}, Cwd: root, Deny: []string{denied}})
	err := f.Walk(context.Background(), "sub", backend.WalkOptions{}, func(e backend.WalkEntry) error {
		if e.Name == "deep.txt" {
			p := filepath.Join(root, "sub", "deep.txt")
			must(t, os.Remove(p))
			must(t, os.Link(denied, p))
			visited(e)
		}
		return nil
	})
	must(t, err)
	return f
}

// A hard link to a denied file put in a listed file's place after the
// walk listed it is refused when opened; ReadDir leaves one out too.
func TestDenyFileLinkedAfterListing(t *testing.T) {
	var openErr error
	f := walkSwappingForDeniedLink(t, "SECRET\n", func(e backend.WalkEntry) {
		r, err := e.Open()
		if err == nil {
			r.Close()
		}
		openErr = err
	})
	if code(openErr) != fault.CodeDenied {
		t.Errorf("open of a hard link to the denied file made after the listing: %v, want DENIED", openErr)
	}
	page, err := f.ReadDir(context.Background(), "sub", 0, 10)
	must(t, err)
	for _, e := range page.Entries {
		if e.Name == "deep.txt" {
			t.Errorf("ReadDir lists a hard link to a denied file: %+v", e)
		}
	}
}

// Info describes the entry the deny check stat'ed: one swapped for a hard
// link to the denied file during the visit is not described as it.
func TestInfoDescribesTheCheckedEntry(t *testing.T) {
	walkSwappingForDeniedLink(t, "SECRET-OF-23-BYTES-LONG", func(e backend.WalkEntry) {
		if fi, err := e.Info(); err == nil && fi.Size == 23 {
			t.Errorf("Info of an entry swapped for a hard link to the denied file: %+v", fi)
		}
	})
}

// realPath is where an open file is now, not where it was opened: a
// directory renamed since is found at its new name.
func TestRealPathFollowsTheOpenFile(t *testing.T) {
	base := t.TempDir()
	before, after := filepath.Join(base, "before"), filepath.Join(base, "after")
	must(t, os.Mkdir(before, 0o755))
	dir, err := os.Open(before)
	must(t, err)
	defer dir.Close()
	must(t, os.Rename(before, after))
	want, err := filepath.EvalSymlinks(after)
	must(t, err)
	if got := realPath(dir, before); got != want {
		t.Fatalf("realPath of a directory renamed to %s: %s", want, got)
	}
	// A descriptor with no path (a pipe's is "pipe:[N]") falls back to the
	// given path, its links resolved, or as given when it does not resolve.
	r, w, err := os.Pipe()
	must(t, err)
	defer r.Close()
	defer w.Close()
	link := filepath.Join(base, "link")
	must(t, os.Symlink("after", link))
	for fallback, want := range map[string]string{link: want, filepath.Join(base, "gone"): filepath.Join(base, "gone")} {
		if got := realPath(r, fallback); got != want {
			t.Errorf("realPath of a pipe, falling back to %s: %s, want %s", fallback, got, want)
		}
	}
}

func TestProcIsDenied(t *testing.T) {
	f := newFS(t, Config{Roots: []string{"/"}, Cwd: "/"})
	for _, p := range []string{"/proc/self/status", "/proc/../proc/self/status", "/sys/kernel", "/dev/null"} {
		if _, err := readAll(f, p); code(err) != fault.CodeDenied {
			t.Errorf("read %s: %v, want DENIED", p, err)
		}
	}
}

func TestFIFOAnswersAtOnce(t *testing.T) {
	_, root := tree(t)
	must(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))
	f := newFS(t, Config{Roots: []string{root}, Cwd: root})
	done := make(chan error, 1)
	go func() {
		_, err := readAll(f, "fifo")
		done <- err
	}()
	select {
	case err := <-done:
		if code(err) != fault.CodeNotRegular {
			t.Fatalf("read fifo: %v, want NOT_REGULAR", err)
		}
	case <-time.After(time.Second):
		t.Fatal("read of a FIFO blocked for a second")
	}
	fi, err := f.Stat(context.Background(), "fifo")
	if err != nil || fi.Type != backend.TypeOther {
		t.Fatalf("stat fifo: %+v %v", fi, err)
	}
}

func TestNonUTF8Names(t *testing.T) {
	_, root := tree(t)
	name := "bad\xff\xfe.txt"
	must(t, os.WriteFile(filepath.Join(root, name), []byte("x\n"), 0o644))
	f := newFS(t, Config{Roots: []string{root}, Cwd: root})
	page, err := f.ReadDir(context.Background(), ".", 0, 100)
	must(t, err)
	found := false
	for _, e := range page.Entries {
		found = found || e.Name == name
	}
	if !found {
		t.Fatalf("non-UTF-8 name not listed losslessly: %+v", page.Entries)
	}
	if got, err := readAll(f, name); err != nil || got != "x\n" {
		t.Fatalf("read non-UTF-8 name: %q %v", got, err)
	}
}

func TestVersionChangesOnRewrite(t *testing.T) {
	_, root := tree(t)
	f := newFS(t, Config{Roots: []string{root}, Cwd: root})
	a, err := f.Stat(context.Background(), "in.txt")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(root, "in.txt"), []byte("inside\n"), 0o644))
	b, err := f.Stat(context.Background(), "in.txt")
	must(t, err)
	if a.Version == b.Version {
		t.Fatal("a rewrite with the same content and size kept the version")
	}
}

// TestSwapRace swaps a directory for a link to outside in another process,
// in a loop, while reads run: no read may ever return the outside bytes.
func TestSwapRace(t *testing.T) {
	if testing.Short() {
		t.Skip("swap race skipped in -short")
	}
	base, root := tree(t)
	must(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "d", "secret.txt"), []byte("inside\n"), 0o644))
	for _, policy := range []SymlinkPolicy{SymlinksWithin, SymlinksRefuse} {
		t.Run(string(policy), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "AGENTFS_TEST_SWAPPER="+root+"|"+filepath.Join(base, "outside"))
			stdout, err := cmd.StdoutPipe()
			must(t, err)
			must(t, cmd.Start())
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			ready := make([]byte, 1)
			if _, err := io.ReadFull(stdout, ready); err != nil {
				t.Fatalf("swapper did not start: %v", err)
			}
			f := newFS(t, Config{Roots: []string{root}, Cwd: root, Symlinks: policy})
			// Enough attempts that some land while d is a real directory,
			// however the scheduler interleaves the two processes under load.
			// Enough, too, that some land while d is the link.
			var ok, asLink, outside, i int
			for ; i < 200000 && (i < 3000 || ok < 20 || asLink < 20); i++ {
				got, err := readAll(f, "d/secret.txt")
				if strings.Contains(got, "SECRET") {
					outside++
				}
				switch code(err) {
				case "":
					ok++
				case fault.CodeOutsideRoot, fault.CodeSymlink:
					asLink++
				}
			}
			if outside != 0 {
				t.Fatalf("%d reads returned bytes from outside the root", outside)
			}
			if ok == 0 || asLink == 0 {
				t.Fatalf("%d reads succeeded and %d met the link: the race was not exercised", ok, asLink)
			}
			t.Logf("%d reads: %d inside, %d refused while d was the link, 0 outside", i, ok, asLink)
		})
	}
}

// TestMain doubles as the swapper process of TestSwapRace.
func TestMain(m *testing.M) {
	if spec := os.Getenv("AGENTFS_TEST_SWAPPER"); spec != "" {
		root, outside, _ := strings.Cut(spec, "|")
		d, real := filepath.Join(root, "d"), filepath.Join(root, "d.real")
		os.Stdout.Write([]byte{'.'})
		for {
			os.Rename(d, real)
			os.Symlink(outside, d)
			os.Remove(d)
			os.Rename(real, d)
		}
	}
	os.Exit(m.Run())
}

// TestDenyHoldsBeforeTheFileExists: a deny path spelled through a link, and
// names inside a deny root that do not exist, answer DENIED: nothing can be
// created there, and whether a name exists is never told.
func TestDenyHoldsBeforeTheFileExists(t *testing.T) {
	_, root := tree(t)
	must(t, os.MkdirAll(filepath.Join(root, "real"), 0o755))
	must(t, os.Symlink("real", filepath.Join(root, "alias")))
	must(t, os.MkdirAll(filepath.Join(root, "secret"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "secret", "key.txt"), []byte("k"), 0o600))
	t.Setenv(StateDirEnv, t.TempDir())
	f := newFS(t, Config{Roots: []string{root}, Cwd: root, Deny: []string{"alias/planted.txt", "secret"}})
	ctx := context.Background()
	if _, err := f.WriteFile(ctx, "alias/planted.txt", []byte("x"), backend.WriteOptions{}); code(err) != fault.CodeDenied {
		t.Errorf("write through a link to a denied path not yet there: %v, want DENIED", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "real", "planted.txt")); !os.IsNotExist(err) {
		t.Errorf("the denied file was created")
	}
	must(t, os.Symlink("secret/key.txt", filepath.Join(root, "keylink")))
	must(t, os.Symlink("secret/nokey", filepath.Join(root, "misslink")))
	for _, p := range []string{"keylink", "misslink"} {
		if _, err := f.Stat(ctx, p); code(err) != fault.CodeDenied {
			t.Errorf("stat %s: %v, want DENIED", p, err)
		}
	}
	for _, p := range []string{"secret/key.txt", "secret/missing.txt", "secret/no/such/dir"} {
		if _, err := readAll(f, p); code(err) != fault.CodeDenied {
			t.Errorf("read %s: %v, want DENIED", p, err)
		}
		if _, err := f.Lstat(ctx, p); code(err) != fault.CodeDenied {
			t.Errorf("lstat %s: %v, want DENIED", p, err)
		}
	}
}

// A deny path that does not exist holds whatever the letter case of the
// name that would make it: on a file system that ignores case (macOS's
// APFS, vfat), .git/hooks/PRE-COMMIT is the denied pre-commit, which git
// then runs. A name that is not the deny path's in any case is written,
// and one that exists is denied by its identity as before, so its other
// case on a case-sensitive file system is another file.
func TestDenyMissingPathInAnyCase(t *testing.T) {
	_, root := tree(t)
	must(t, os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755))
	must(t, os.MkdirAll(filepath.Join(root, "env"), 0o755))
	t.Setenv(StateDirEnv, t.TempDir())
	f := newFS(t, Config{Roots: []string{root}, Cwd: root, Deny: []string{".git/hooks/pre-commit", "env", "caf\u00e9/key", "kdir/key"}})
	ctx := context.Background()
	// café and kdir in another Unicode form too: APFS and ext4's casefold
	// take a decomposed e + U+0301 for the precomposed é, the Kelvin sign
	// for K.
	for _, p := range []string{".git/hooks/PRE-COMMIT", ".git/hooks/Pre-Commit", ".GIT/hooks/pre-commit", ".git/hooks/pre-commit/x",
		"cafe\u0301/key", "CAFE\u0301/key", "\u212adir/key"} {
		if _, err := f.WriteFile(ctx, p, []byte("#!/bin/sh\n"), backend.WriteOptions{}); code(err) != fault.CodeDenied {
			t.Errorf("write %s: %v, want DENIED", p, err)
		}
	}
	if names, _ := os.ReadDir(filepath.Join(root, ".git", "hooks")); len(names) != 0 {
		t.Errorf("hooks: %v; want nothing written", names)
	}
	for _, p := range []string{".git/hooks/pre-commit.sample", ".git/hooks/pre-commi", "ENV/x"} {
		if _, err := f.WriteFile(ctx, p, []byte("x"), backend.WriteOptions{}); err != nil {
			t.Errorf("write %s: %v, want it written", p, err)
		}
	}
	if page, err := f.ReadDir(ctx, ".", 0, 100); err != nil || slices.ContainsFunc(page.Entries, func(e backend.FileInfo) bool { return e.Name == "env" }) {
		t.Errorf("ls: %+v %v; want env left out", page, err)
	}
}

// TestAbsoluteLinkInsideRoot: os.Root refuses absolute links; one whose
// target is inside the root is followed under within, like a relative one.
func TestAbsoluteLinkInsideRoot(t *testing.T) {
	_, root := tree(t)
	must(t, os.Symlink(filepath.Join(root, "sub", "deep.txt"), filepath.Join(root, "abs.txt")))
	must(t, os.Symlink(filepath.Join(root, "sub"), filepath.Join(root, "absdir")))
	must(t, os.Symlink(filepath.Join(root, "sub", "gone.txt"), filepath.Join(root, "absgone.txt")))
	f := newFS(t, Config{Roots: []string{root}, Cwd: root})
	// A dangling absolute link inside the root is missing, like a relative one.
	if _, err := readAll(f, "absgone.txt"); code(err) != fault.CodeNotFound {
		t.Errorf("read of a dangling absolute link inside the root: %v, want NOT_FOUND", err)
	}
	for _, p := range []string{"abs.txt", "absdir/deep.txt"} {
		if got, err := readAll(f, p); err != nil || got != "deep\n" {
			t.Errorf("read %s: %q %v", p, got, err)
		}
	}
	if page, err := f.ReadDir(context.Background(), "absdir", 0, 10); err != nil || len(page.Entries) != 1 {
		t.Errorf("ls absdir: %+v %v", page, err)
	}
	refuse := newFS(t, Config{Roots: []string{root}, Cwd: root, Symlinks: SymlinksRefuse})
	if _, err := readAll(refuse, "abs.txt"); code(err) != fault.CodeSymlink {
		t.Errorf("absolute link under refuse: %v, want SYMLINK", err)
	}
}

// TestStatFollowsFinalLink: Stat describes a link's target (Lstat the link).
func TestStatFollowsFinalLink(t *testing.T) {
	base, root := tree(t)
	must(t, os.Symlink("in.txt", filepath.Join(root, "rel.lnk")))
	must(t, os.Symlink(filepath.Join(root, "sub"), filepath.Join(root, "abs.lnk")))
	must(t, os.Symlink("rel.lnk", filepath.Join(root, "chain.lnk")))
	must(t, os.Symlink(filepath.Join(base, "outside", "secret.txt"), filepath.Join(root, "out.lnk")))
	must(t, os.Symlink("missing", filepath.Join(root, "dangling.lnk")))
	f := newFS(t, Config{Roots: []string{root}, Cwd: root})
	ctx := context.Background()
	for p, want := range map[string]backend.FileType{"rel.lnk": backend.TypeFile, "abs.lnk": backend.TypeDir, "chain.lnk": backend.TypeFile} {
		fi, err := f.Stat(ctx, p)
		if err != nil || fi.Type != want {
			t.Errorf("stat %s: %v %v, want %v", p, fi.Type, err, want)
		}
		if li, err := f.Lstat(ctx, p); err != nil || li.Type != backend.TypeSymlink {
			t.Errorf("lstat %s: %v %v", p, li.Type, err)
		}
	}
	if _, err := f.Stat(ctx, "out.lnk"); code(err) != fault.CodeOutsideRoot {
		t.Errorf("stat of an escaping link: %v", err)
	}
	if _, err := f.Stat(ctx, "dangling.lnk"); code(err) != fault.CodeNotFound {
		t.Errorf("stat of a dangling link: %v", err)
	}
	refuse := newFS(t, Config{Roots: []string{root}, Cwd: root, Symlinks: SymlinksRefuse})
	if _, err := refuse.Stat(ctx, "rel.lnk"); code(err) != fault.CodeSymlink {
		t.Errorf("stat of a link under refuse: %v", err)
	}
}

// A deny root made after the start (in a batch or MCP session) has no
// identity to compare: the check of a ".." stops at it by name, so that
// whether secret/x/../../u.txt reads u.txt tells nothing of whether
// secret/x is a directory: DENIED either way, as a path through it.
func TestDotDotBelowADenyMadeLater(t *testing.T) {
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "u.txt"), []byte("u\n"), 0o644))
	f, err := New(Config{Roots: []string{root}, Deny: []string{filepath.Join(root, "secret")}, Cwd: root})
	must(t, err)
	defer f.Close()
	must(t, os.MkdirAll(filepath.Join(root, "secret", "x"), 0o755))
	_, errX := f.Stat(context.Background(), "secret/x/../../u.txt")
	_, errY := f.Stat(context.Background(), "secret/y/../../u.txt")
	if code(errX) != fault.CodeDenied || code(errY) != fault.CodeDenied {
		t.Errorf("below a denied directory: x (a directory) gives %q, y (missing) gives %q; want DENIED for both", code(errX), code(errY))
	}
}

// A path that goes up out of the root and back in (../../w/sub/f from the
// root's subdirectory) is refused, and says so: it said there was a ".."
// after a name that is not a directory, which there is not, and the same
// whether or not the directory above the root exists.
func TestDotDotOutOfTheRootAndBack(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "w")
	must(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "sub", "f"), []byte("f\n"), 0o644))
	f := newFS(t, Config{Roots: []string{filepath.Join(root, "sub")}, Cwd: filepath.Join(root, "sub")})
	if _, err := f.Stat(context.Background(), "../sub/f"); err != nil {
		t.Errorf("../sub/f, up from the root and back in at once: %v; want it found", err)
	}
	for _, p := range []string{"../../w/sub/f", "../../nowhere/../w/sub/f"} {
		_, err := f.Stat(context.Background(), p)
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidArgument || !strings.Contains(e.Message, "out of the roots and back in") {
			t.Errorf("%s: %v; want INVALID_ARGUMENT saying it goes out of the roots and back in", p, err)
		}
	}
}

// A path that reaches the root through a link from outside the roots and
// has a ".." there (/x/l/sub/../g, l a link to the root) is refused for
// that link, as it was: it never went up out of the roots, which the
// refusal said once a ".." outside the roots was met.
func TestDotDotThroughALinkToTheRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "w")
	must(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "g"), []byte("g\n"), 0o644))
	must(t, os.Symlink("w", filepath.Join(base, "l")))
	f := newFS(t, Config{Roots: []string{root}, Cwd: root})
	p := base + "/l/sub/../g"
	_, err := f.Stat(context.Background(), p)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidArgument || strings.Contains(e.Message, "out of the roots") || !strings.Contains(e.Message, "without a link") {
		t.Errorf("%s: %v; want INVALID_ARGUMENT for the \"..\" after a link", p, err)
	}
}

// A path of 1000 directories, a missing name, 1040 more names and a ".."
// is refused (the walk stops at the missing name and looks at the rest
// only where a root is spelled); BenchmarkDotDotAfterAMissingName times it.
func TestDotDotAfterAMissingName(t *testing.T) {
	f, p := deepDotDot(t)
	if _, err := f.Stat(context.Background(), p); code(err) != fault.CodeInvalidArgument {
		t.Errorf("a %d-byte path with a missing name before its \"..\": %v, want INVALID_ARGUMENT", len(p), err)
	}
}

func BenchmarkDotDotAfterAMissingName(b *testing.B) {
	f, p := deepDotDot(b)
	for b.Loop() {
		f.Stat(context.Background(), p)
	}
}

func deepDotDot(tb testing.TB) (*FS, string) {
	root := tb.TempDir()
	d, err := os.OpenRoot(root)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 1; i <= 1000; i++ {
		if err := d.Mkdir(strings.Repeat("a/", i), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	d.Close()
	f, err := New(Config{Roots: []string{root}, Cwd: root})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f, strings.Repeat("a/", 1000) + "n/" + strings.Repeat("x/", 1040) + "../u.txt"
}

// Past PATH_MAX getcwd(2) fails (ERANGE), and so does agentfs, with
// IO_ERROR: os.Getwd's answer there may be $PWD naming another directory
// of the same identity, and a working directory that cannot be resolved
// was taken for one outside the roots, so that relative paths started at
// the first root: another file, exit 0.
func TestWorkingDirPastPathMax(t *testing.T) {
	t.Chdir(t.TempDir())
	name := strings.Repeat("d", 200)
	for range 25 {
		must(t, os.Mkdir(name, 0o755))
		must(t, os.Chdir(name))
	}
	t.Setenv("PWD", "")
	_, err := New(Config{Roots: []string{"/tmp"}})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeIOError || !strings.Contains(e.Hint, "PATH_MAX") {
		t.Fatalf("a working directory over 5000 bytes: %v, want IO_ERROR with a hint naming PATH_MAX", err)
	}
}

// A working directory removed (an agent's rm -r of the build directory
// its shell sits in) is outside every root: with absolute roots the call
// works, relative paths and relative deny paths starting at the first
// root; it made every call IO_ERROR, with no hint. A relative root has
// nothing to start from, and says how to go on.
func TestWorkingDirRemoved(t *testing.T) {
	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "secret"), []byte("s\n"), 0o644))
	gone := filepath.Join(ws, "build")
	must(t, os.Mkdir(gone, 0o755))
	t.Chdir(gone)
	must(t, os.Remove(gone))
	f := newFS(t, Config{Roots: []string{ws}, Deny: []string{"secret"}})
	a := filepath.Join(ws, "a.txt")
	if fi, err := f.Stat(context.Background(), a); err != nil || fi.Size != 2 {
		t.Fatalf("a.txt from a removed working directory: %+v, %v", fi, err)
	}
	// A relative path meant the removed directory's file: taken from the
	// first root, rm -r out removed the root's out.
	if _, err := f.Stat(context.Background(), "a.txt"); code(err) != fault.CodeInvalidArgument || !strings.Contains(err.Error(), "removed") {
		t.Fatalf("a relative path from a removed working directory: %v, want INVALID_ARGUMENT", err)
	}
	// Shown absolute, as it may be given back.
	if got := f.Display(a); got != a {
		t.Fatalf("shown as %q, want %s", got, a)
	}
	if _, err := f.Stat(context.Background(), filepath.Join(ws, "secret")); code(err) != fault.CodeDenied {
		t.Fatalf("a relative deny path: %v, want DENIED", err)
	}
	for _, roots := range [][]string{nil, {"."}, {ws, "other"}} {
		_, err := New(Config{Roots: roots})
		var e *fault.Error
		if !errors.As(err, &e) || e.Code != fault.CodeIOError || !strings.Contains(e.Hint, "absolute") {
			t.Fatalf("roots %q from a removed working directory: %v, want IO_ERROR with a hint", roots, err)
		}
	}
}

// A chain of more links than the kernel follows (40) outside the roots
// reaches nothing, and the walk of it stops there, whatever its length.
func TestDeniedOnTheWayStopsAtTheLinkLimit(t *testing.T) {
	dir := t.TempDir()
	for i := range 60 {
		must(t, os.Symlink(fmt.Sprintf("l%d", i+1), filepath.Join(dir, fmt.Sprintf("l%d", i))))
	}
	must(t, os.Mkdir(filepath.Join(dir, "l60"), 0o755))
	f, err := New(Config{Roots: []string{t.TempDir()}})
	must(t, err)
	defer f.Close()
	if _, err := f.deniedOnTheWay(filepath.Join(dir, "l0", "f")); !errors.Is(err, errLinkLoop) {
		t.Errorf("a chain of 60 links: %v, want a link loop", err)
	}
	if denied, err := f.deniedOnTheWay(filepath.Join(dir, "l30", "f")); denied || err != nil {
		t.Errorf("a chain of 30 links, within the kernel's limit: denied %v, %v", denied, err)
	}
	if _, err := f.Stat(context.Background(), filepath.Join(dir, "l0", "f")); code(err) != fault.CodeSymlink {
		t.Errorf("a path through 60 links: %v, want SYMLINK (as the kernel's ELOOP), not DENIED", err)
	}
}

// leadsTo of a missing deny path folds case and form component by
// component, whatever the two share byte for byte first.
func TestDeniedLeadsToFolded(t *testing.T) {
	for _, c := range []struct {
		base, abs string
		want      bool
	}{
		{"/r/.git/hooks", "/r/.git/hooks/pre-commit", true},
		{"/r/.git/hooks", "/r/.git/HOOKS/pre-commit", true},
		{"/r/.git/hooks/pre-commit", "/r/.git/hooks/PRE-COMMIT", true},
		{"/r/.git/hooks/pre-commit", "/r/.git/hooks/pre-commit.sample", false},
		{"/r/.git/hooks/pre-commit", "/r/.git/hooks/pre-commi", false},
		{"/r/.git/hooks/pre-commit", "/r/.git/hooks", false},
		{"/r/a/b", "/r/a/bb", false},
		{"/r/a/bb", "/r/a/b", false},
		{"/r/kdir", "/r/\u212adir/x", true},
		{"/r/caf\u00e9", "/r/CAFE\u0301", true},
		{"/r/caf\u00e9", "/r/cafe", false},
		{"/r/stra\u00dfe", "/r/STRASSE/x", true},
		{"/r/stra\u00dfe", "/r/STRASE/x", false},
		{"/", "/r/x", true},
		// Default-ignorable code points, which HFS+ and ext4's casefold
		// before Linux 6.13 drop from a name: pre-<ZWJ>commit is pre-commit.
		{"/r/.git/hooks/pre-commit", "/r/.git/hooks/pre-\u200dcommit", true},
		{"/r/.git/hooks", "/r/.g\u200cit/hooks/pre-commit", true},
		{"/r/.git/hooks/pre-commit", "/r/.git/hooks/pre-commit\ufeff", true},
		{"/r/.git/hooks/pre-commit", "/r/.git/hooks/pre-\u200dcommix", false},
		// A name not UTF-8 is its bytes, to a file system that ignores
		// case as to one that does not: two invalid bytes are two names.
		{"/r/\xff/key", "/r/\xfe/key", false},
		{"/r/\xff/key", "/r/\xef\xbf\xbd/key", false},
		{"/r/\xff/key", "/r/\xff/key", true},
	} {
		d := denied{path: c.base}
		if got := d.leadsTo(c.base, c.abs); got != c.want {
			t.Errorf("leadsTo(%q, %q) = %v, want %v", c.base, c.abs, got, c.want)
		}
	}
}
