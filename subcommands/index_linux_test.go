package subcommands

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestIndexWatch: index --watch prints its result once it answers
// searches, --status then says watched, and an interrupt ends it with
// exit status 0, as serve ends, leaving no socket behind.
func TestIndexWatch(t *testing.T) {
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done, errb := startIndexWatch(t, ctx)
	var res struct {
		Files   int
		Watched bool
	}
	if err := json.Unmarshal([]byte(line), &res); err != nil || res.Files != 1 || !res.Watched {
		t.Fatalf("index --watch printed %q (%v)", line, err)
	}
	code, out, errs := run(t, "", "index", "--status")
	if code != 0 || !strings.Contains(out, `"watched":true`) {
		t.Fatalf("--status while watched: %d %q %q", code, out, errs)
	}
	// A second watcher is refused, and says of which tree.
	code, _, errs = run(t, "", "index", "--watch")
	if code != 3 || !strings.Contains(errs, `"code":"EXISTS"`) || !strings.Contains(errs, `"path":"."`) {
		t.Fatalf("a second watcher: %d %q", code, errs)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("index --watch ended with %d, stderr %q", code, errb.String())
	}
	code, out, _ = run(t, "", "index", "--status")
	if code != 0 || strings.Contains(out, `"watched"`) {
		t.Fatalf("--status after the watcher: %d %q", code, out)
	}
	socks, _ := filepath.Glob(filepath.Join(os.Getenv("AGENTFS_STATE_DIR"), "index", "*.sock"))
	if len(socks) != 0 {
		t.Fatalf("the watcher left %q", socks)
	}
}

// A watcher whose build again fails ends, and --status says how: a
// --detach watcher's output goes nowhere once it answers, and it ended
// unseen, searches only slower.
func TestStatusSaysHowTheWatcherEnded(t *testing.T) {
	state := t.TempDir()
	t.Setenv("AGENTFS_STATE_DIR", state)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	_, done, errb := startIndexWatch(t, context.Background())
	// Another build, which the watcher builds again once a search (here
	// --status) asks about it, where its builders' lock is no file.
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run(t, "", "index"); code != 0 {
		t.Fatalf("index: %d %q %q", code, out, errs)
	}
	locks, _ := filepath.Glob(filepath.Join(state, "index", "*.lock"))
	if len(locks) != 1 {
		t.Fatalf("lock files: %q", locks)
	}
	if err := os.Remove(locks[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(locks[0], "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	run(t, "", "index", "--status")
	select {
	case code := <-done:
		if code == 0 {
			t.Fatalf("the watcher whose build failed ended with 0, stderr %q", errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher did not end within 30 s of its failure")
	}
	code, out, errs := run(t, "", "index", "--status")
	var res struct {
		Watched      bool
		WatcherEnded struct {
			Pid     int
			At      time.Time
			Code    string
			Message string
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || res.Watched {
		t.Fatalf("--status after the watcher failed: %d %q %q (%v)", code, out, errs, err)
	}
	if e := res.WatcherEnded; e.Code != "IO_ERROR" || !strings.Contains(e.Message, "is not a file") || e.Pid != os.Getpid() || time.Since(e.At) > time.Minute {
		t.Fatalf("--status after the watcher failed: %q, want watcherEnded with its IO_ERROR", out)
	}
}

// An mcp --watch session that relies on another watcher of its root
// starts its own once that one ends: it was left without one for the
// rest of the session, and said nothing.
func TestSessionWatchesOnceTheOtherWatcherEnds(t *testing.T) {
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	other, endOther := context.WithCancel(context.Background())
	defer endOther()
	_, otherDone, _ := startIndexWatch(t, other)
	relying := make(chan struct{})
	var once sync.Once
	relyingHook = func() { once.Do(func() { close(relying) }) }
	defer func() { relyingHook = nil }()
	session, endSession := context.WithCancel(context.Background())
	stdin, keepOpen := io.Pipe()
	defer keepOpen.Close()
	var errb strings.Builder
	sessionDone := make(chan int, 1)
	go func() {
		sessionDone <- Main(session, []string{"mcp", "--watch"}, Streams{Stdin: stdin, Stdout: io.Discard, Stderr: &errb})
	}()
	select {
	case <-relying:
	case <-time.After(30 * time.Second):
		t.Fatalf("the session did not rely on the other watcher (stderr %q)", errb.String())
	}
	endOther()
	<-otherDone
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, out, _ := run(t, "", "index", "--status"); strings.Contains(out, `"watched":true`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session started no watcher of its own within 30 s of the other's end (stderr %q)", errb.String())
		}
		<-time.After(50 * time.Millisecond)
	}
	endSession()
	keepOpen.Close()
	<-sessionDone
}

// startIndexWatch runs index --watch in the working directory until ctx
// ends, and returns its result line once it answers, the channel of its
// exit status, and its standard error.
func startIndexWatch(t *testing.T, ctx context.Context) (string, <-chan int, *strings.Builder) {
	t.Helper()
	r, w := io.Pipe()
	errb := &strings.Builder{}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"index", "--watch"}, Streams{Stdin: strings.NewReader(""), Stdout: w, Stderr: errb})
		w.Close()
	}()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("no result from index --watch: %v (stderr %q)", err, errb.String())
	}
	go io.Copy(io.Discard, r)
	return line, done, errb
}
