package subcommands

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/assets/localdir"
)

// TestProgressBar: a small upload draws nothing; a large one draws each
// percent once, on one line rewritten in place, ended at the total.
func TestProgressBar(t *testing.T) {
	for _, tc := range []struct {
		name  string
		total int64
		draws int
	}{
		{"small", progressMinBytes - 1, 0},
		{"large", 10 << 20, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			bar := progressBar(&b)
			for _, done := range []int64{0, 1, tc.total / 2, tc.total} {
				bar(done, tc.total)
			}
			out := b.String()
			if got := strings.Count(out, "\r"); got != tc.draws {
				t.Fatalf("%d draws, want %d: %q", got, tc.draws, out)
			}
			if tc.draws > 0 && !strings.HasSuffix(out, "100% 10/10 MiB\n") {
				t.Errorf("does not end at the total: %q", out)
			}
		})
	}
}

// TestBatchPublishesWithTheKeyAndFolderOfNow: a batch session publishes
// with the signing key and the assets folder as they are at each request:
// a key removed between two publishes is made again (the first store kept
// for the session signed the second link with the removed key, whose link
// a server answered 403), and a folder removed is made again (IO_ERROR).
func TestBatchPublishesWithTheKeyAndFolderOfNow(t *testing.T) {
	ws, state, assetsDir := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "assets")
	t.Setenv("AGENTFS_STATE_DIR", state)
	t.Chdir(ws)
	if err := os.WriteFile("r.txt", []byte("report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	or, ow := io.Pipe()
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), []string{"--assets", assetsDir, "batch"}, Streams{Stdin: pr, Stdout: ow, Stderr: &errb})
		ow.Close()
	}()
	answers := bufio.NewReader(or)
	publish := func(id int) map[string]any {
		t.Helper()
		go fmt.Fprintf(pw, `{"tool":"publish","args":{"path":"r.txt"},"id":%d}`+"\n", id)
		line, err := answers.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var a map[string]any
		if err := json.Unmarshal([]byte(line), &a); err != nil || a["error"] != nil {
			t.Fatalf("publish %d: %s", id, line)
		}
		return a["result"].(map[string]any)
	}
	keyPath := filepath.Join(state, "publish.key")
	publish(1)
	first, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(keyPath); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(assetsDir); err != nil {
		t.Fatal(err)
	}
	res := publish(2)
	second, err := os.ReadFile(keyPath)
	if err != nil || bytes.Equal(first, second) {
		t.Fatalf("the key after its removal: %v (the same as before: %v)", err, bytes.Equal(first, second))
	}
	u, _ := url.Parse(res["url"].(string))
	id, name, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	srv, err := localdir.NewServer(assetsDir, localdir.KeyReader(state))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, u.RequestURI(), nil))
	if w.Code != 200 || w.Body.String() != "report\n" {
		t.Fatalf("the second link (%s/%s): %d %q", id, name, w.Code, w.Body)
	}
	pw.Close()
	if code := <-done; code != 0 {
		t.Fatalf("batch exit %d: %s", code, errb.String())
	}
}
