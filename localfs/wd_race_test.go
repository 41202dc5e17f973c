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
