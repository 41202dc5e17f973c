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
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A writer that dies after a batch session began is settled before the
// session's next line reads: a read and a grep reported the files of a
// commit that was then undone, until a mutation line of the session
// recovered it. The dead commit is made as a killed one leaves it: the
// new content staged at the name, the old as a backup, a pending journal
// whose flock no process holds.
func TestBatchSettlesAWriterThatDiedSinceItBegan(t *testing.T) {
	state := t.TempDir()
	t.Setenv("AGENTFS_STATE_DIR", state)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if err := os.WriteFile("a.txt", []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	or, ow := io.Pipe()
	var errb bytes.Buffer
	go Main(context.Background(), []string{"batch"}, Streams{Stdin: pr, Stdout: ow, Stderr: &errb})
	answers := bufio.NewReader(or)
	read := func(id int) string {
		go pw.Write([]byte(fmt.Sprintf(`{"tool":"read","args":{"path":"a.txt"},"id":%d}`+"\n", id)))
		answer, err := answers.ReadString('\n')
		if err != nil {
			t.Fatal(err, errb.String())
		}
		return answer
	}
	if a := read(1); !strings.Contains(a, `"content":"old\n"`) {
		t.Fatalf("first read: %s", a)
	}
	// The writer that dies now.
	if err := os.WriteFile("bk", []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("a.txt", []byte("staged new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat("a.txt", &st); err != nil {
		t.Fatal(err)
	}
	journal, err := json.Marshal([]map[string]string{{"dir": dir, "name": "a.txt", "staged": ".agentfs-staged",
		"stagedId": fmt.Sprintf("%d:%d", st.Dev, st.Ino), "stagedStamp": fmt.Sprintf("%d:%d", st.Size, st.Mtim.Nano()), "backup": "bk"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(state, "journal"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "journal", "dead.pending"), journal, 0o600); err != nil {
		t.Fatal(err)
	}
	if a := read(2); !strings.Contains(a, `"content":"old\n"`) {
		t.Fatalf("a read after the writer died: %s", a)
	}
}
