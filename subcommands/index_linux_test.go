package subcommands

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	r, w := io.Pipe()
	var errb strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"index", "--watch"}, Streams{Stdin: strings.NewReader(""), Stdout: w, Stderr: &errb})
		w.Close()
	}()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("no result from index --watch: %v (stderr %q)", err, errb.String())
	}
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
	go io.Copy(io.Discard, r)
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
