package localfs

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Two requests of a session at once (MCP) each look at the working
// directory as they begin: the look of one that began before the
// directory was renamed, noted after the look of one that found it
// renamed, let that request (and any other) go on through the name into
// the directory another writer put there. The newest look stands.
func TestWdNewestLookStands(t *testing.T) {
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	root := t.TempDir()
	wd := filepath.Join(root, "proj")
	must(t, os.MkdirAll(wd, 0o755))
	f := newFS(t, Config{Roots: []string{root}, Cwd: wd})
	if f.wd == nil {
		t.Fatal("no working directory taken")
	}
	looked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	wdCheckedHook = func(int32) {
		first := false
		once.Do(func() { first = true })
		if first {
			close(looked)
			<-release
		}
	}
	t.Cleanup(func() { wdCheckedHook = nil })
	ctx := context.Background()
	older := make(chan error, 1)
	go func() { older <- f.BeginRequest(ctx) }() // looks: kept
	Within(t, looked, "look")
	must(t, os.Rename(wd, wd+".bak"))
	must(t, os.Mkdir(wd, 0o755))
	newer := make(chan error, 1)
	go func() { newer <- f.BeginRequest(ctx) }() // looks: moved
	newerDone := false
	select {
	case <-newer:
		newerDone = true
	case <-time.After(200 * time.Millisecond): // waits its turn
	}
	close(release)
	Within(t, older, "older request")
	if !newerDone {
		Within(t, newer, "newer request")
	}
	if err := f.startsNowhere("main.go"); err == nil {
		t.Error("a relative path goes on through the name of the directory renamed, once an older look was noted after the newer")
	}
}

// A session started through a link to its working directory goes on
// once the link is removed or re-pointed: its relative paths start at
// the directory the link led to, which is where it was, as a shell's do.
// They were refused "renamed or replaced". A path spelled through the
// link re-pointed is shown absolute, not as the relative path of the
// file of the same name in the working directory.
func TestWdThroughALinkChanged(t *testing.T) {
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	root := t.TempDir()
	for _, d := range []string{"rel42/sub", "rel43/sub"} {
		must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	link := filepath.Join(root, "current")
	must(t, os.Symlink("rel42", link))
	f := newFS(t, Config{Roots: []string{root}, Cwd: filepath.Join(link, "sub")})
	ctx := context.Background()
	must(t, f.BeginRequest(ctx))
	if err := f.startsNowhere("f.txt"); err != nil {
		t.Fatal(err)
	}
	if got := f.Display(filepath.Join(link, "sub", "f.txt")); got != "f.txt" {
		t.Errorf("through the link as it was: %s, want f.txt", got)
	}
	must(t, os.Remove(link))
	must(t, os.Symlink("rel43", link))
	must(t, f.BeginRequest(ctx))
	if err := f.startsNowhere("f.txt"); err != nil {
		t.Errorf("the link re-pointed: %v, want relative paths to start where they did", err)
	}
	if got, want := f.Display(filepath.Join(link, "sub", "f.txt")), filepath.Join(link, "sub", "f.txt"); got != want {
		t.Errorf("through the link re-pointed: %s, want %s", got, want)
	}
	if got := f.Display("f.txt"); got != "f.txt" {
		t.Errorf("a relative path once the link is re-pointed: %s, want f.txt", got)
	}
	must(t, os.Remove(link))
	must(t, f.BeginRequest(ctx))
	if err := f.startsNowhere("f.txt"); err != nil {
		t.Errorf("the link removed: %v, want relative paths to start where they did", err)
	}
	// The directory itself replaced is still refused.
	must(t, os.Rename(filepath.Join(root, "rel42"), filepath.Join(root, "rel42.bak")))
	must(t, os.MkdirAll(filepath.Join(root, "rel42", "sub"), 0o755))
	must(t, f.BeginRequest(ctx))
	if err := f.startsNowhere("f.txt"); err == nil {
		t.Error("the directory replaced: relative paths go on through its name")
	}
}
