package s3fs_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/s3fs/s3test"
)

// large10k, set, adds the 10,000-object trees to BenchmarkTools: writing
// them takes minutes, so only bench/s3.sh asks for them.
var large10k = os.Getenv("AGENTFS_BENCH_10K") != ""

// benchTree writes the benchmarks' tree: tree/d0..d9 of 100 small text
// files each (every tenth holding "needle"), flat100 and flat1000
// directories of as many files, and a 64 MiB text file, big; with
// large10k, tree10k/d00..d99 of 100 files each, like tree's, and flat10000.
func benchTree(b *testing.B, m backend.MutableFS) {
	ctx := context.Background()
	put := func(p string, data []byte) {
		if _, err := m.WriteFile(ctx, p, data, backend.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	line := "the quick brown fox jumps over the lazy dog, again and again\n"
	for d := range 10 {
		for f := range 100 {
			text := strings.Repeat(line, 30)
			if f%10 == 0 {
				text += "a needle in the haystack\n"
			}
			put(fmt.Sprintf("tree/d%d/f%02d.txt", d, f), []byte(text))
		}
	}
	for _, n := range []int{100, 1000} {
		for f := range n {
			put(fmt.Sprintf("flat%d/f%04d.txt", n, f), []byte(line))
		}
	}
	if large10k {
		benchLarge(b, m, line)
	}
	var big bytes.Buffer
	for i := 0; big.Len() < 64<<20; i++ {
		fmt.Fprintf(&big, "%08d %s", i, line)
	}
	put("big", big.Bytes())
	put("edit.txt", []byte("value=0\n"))
}

// benchLarge writes the 10,000-object trees, 16 objects at a time.
func benchLarge(b *testing.B, m backend.MutableFS, line string) {
	ctx := context.Background()
	var paths []string
	data := map[string][]byte{}
	for d := range 100 {
		for f := range 100 {
			p := fmt.Sprintf("tree10k/d%02d/f%02d.txt", d, f)
			text := strings.Repeat(line, 30)
			if f%10 == 0 {
				text += "a needle in the haystack\n"
			}
			paths, data[p] = append(paths, p), []byte(text)
		}
	}
	for f := range 10000 {
		p := fmt.Sprintf("flat10000/f%05d.txt", f)
		paths, data[p] = append(paths, p), []byte(line)
	}
	slots := make(chan struct{}, 16)
	errs := make(chan error, len(paths))
	var wg sync.WaitGroup
	for _, p := range paths {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			if _, err := m.WriteFile(ctx, p, data[p], backend.WriteOptions{}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkTools times the tools on a local folder and on versitygw on
// loopback, for the same tree, with the store's requests per operation
// (req/op) and the bytes of the bodies it sent (B-fetched/op). bench/s3.sh
// runs it.
func BenchmarkTools(b *testing.B) {
	bucket := s3test.Bucket(b)
	s3, cnt := openFS(b, "s3://"+bucket+"/bench")
	dir := b.TempDir()
	local, err := localfs.New(localfs.Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ptr := func(s string) *string { return &s }
	ops := []struct {
		name string
		run  func(t *core.Tools, i int) error
	}{
		{"ls-first-page/100", func(t *core.Tools, _ int) error { _, err := t.Ls(ctx, core.LsRequest{Path: "flat100"}); return err }},
		{"ls-first-page/1000", func(t *core.Tools, _ int) error { _, err := t.Ls(ctx, core.LsRequest{Path: "flat1000"}); return err }},
		{"find-first-page/100", func(t *core.Tools, _ int) error {
			_, err := t.Find(ctx, core.FindRequest{Pattern: "*.txt", Path: "tree/d0"})
			return err
		}},
		{"find-first-page/1000", func(t *core.Tools, _ int) error {
			_, err := t.Find(ctx, core.FindRequest{Pattern: "*.txt", Path: "tree"})
			return err
		}},
		{"read-64MiB/start", func(t *core.Tools, _ int) error {
			_, err := t.Read(ctx, core.ReadRequest{Path: "big", Limit: 100})
			return err
		}},
		{"read-64MiB/end", func(t *core.Tools, _ int) error {
			_, err := t.Read(ctx, core.ReadRequest{Path: "big", Offset: -100})
			return err
		}},
		{"grep/100", func(t *core.Tools, _ int) error {
			_, err := t.Grep(ctx, core.GrepRequest{Query: "needle", Path: "tree/d0"})
			return err
		}},
		{"grep/1000", func(t *core.Tools, _ int) error {
			_, err := t.Grep(ctx, core.GrepRequest{Query: "needle", Path: "tree"})
			return err
		}},
		{"edit-round-trip", func(t *core.Tools, i int) error {
			r, err := t.Read(ctx, core.ReadRequest{Path: "edit.txt"})
			if err != nil {
				return err
			}
			_, err = t.Edit(ctx, core.EditRequest{Path: "edit.txt", OldText: ptr(strings.TrimSuffix(r.Content, "\n")), NewText: ptr(fmt.Sprintf("value=%d", i+1))})
			return err
		}},
		{"mv-dir/100", func(t *core.Tools, i int) error {
			// tree/d9 and its 100 objects there and back, an op each way.
			from, to := "tree/d9", "moved/d9"
			if i%2 == 1 {
				from, to = to, from
			}
			_, err := t.Mv(ctx, core.MvRequest{From: from, To: to})
			return err
		}},
	}
	if large10k {
		ops = append(ops, []struct {
			name string
			run  func(t *core.Tools, i int) error
		}{
			{"ls-first-page/10000", func(t *core.Tools, _ int) error {
				_, err := t.Ls(ctx, core.LsRequest{Path: "flat10000"})
				return err
			}},
			{"find-first-page/10000", func(t *core.Tools, _ int) error {
				_, err := t.Find(ctx, core.FindRequest{Pattern: "*.txt", Path: "tree10k"})
				return err
			}},
			{"grep/10000", func(t *core.Tools, _ int) error {
				_, err := t.Grep(ctx, core.GrepRequest{Query: "needle", Path: "tree10k"})
				return err
			}},
			// A first page of grep/10000 is full before the end of the tree;
			// a word found nowhere reads all of it.
			{"grep-everything/10000", func(t *core.Tools, _ int) error {
				_, err := t.Grep(ctx, core.GrepRequest{Query: "haystacks", Path: "tree10k"})
				return err
			}},
		}...)
	}
	for _, bc := range []struct {
		name string
		fs   backend.MutableFS
		cnt  *counter
	}{{"local", local, nil}, {"s3", s3, cnt}} {
		benchTree(b, bc.fs)
		t := &core.Tools{FS: bc.fs}
		for _, op := range ops {
			b.Run(bc.name+"/"+op.name, func(b *testing.B) {
				if bc.cnt != nil {
					bc.cnt.reset()
				}
				n := 0
				for b.Loop() {
					if err := op.run(t, n); err != nil {
						b.Fatal(err)
					}
					n++
				}
				if bc.cnt != nil {
					total := 0
					for _, c := range bc.cnt.requests {
						total += c
					}
					b.ReportMetric(float64(total)/float64(n), "req/op")
					b.ReportMetric(float64(bc.cnt.bytes)/float64(n), "B-fetched/op")
				}
			})
		}
	}
}
