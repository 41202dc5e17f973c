package localfs

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
)

// BenchmarkLock is one uncontended Lock and unlock of a path three levels
// deep: four lock files opened, flocked and closed.
func BenchmarkLock(b *testing.B) {
	fsys, _ := newTestFS(b)
	ctx := context.Background()
	for b.Loop() {
		unlock, err := fsys.Lock(ctx, "a/b/c.txt", time.Second)
		if err != nil {
			b.Fatal(err)
		}
		unlock()
	}
}

// BenchmarkWriteFile is one atomic replace of a 64 KiB file, fsyncs included.
func BenchmarkWriteFile(b *testing.B) {
	fsys, _ := newTestFS(b)
	data := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	ctx := context.Background()
	for b.Loop() {
		if _, err := fsys.WriteFile(ctx, "f.txt", data, backend.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
