package index

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs/agentfs/localfs"
)

// cpuTime is the process's user and system time: on a shared machine the
// steady measure, where wall time swings with the load.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// goroot is the Go installation's root, whose source the benchmarks read.
func goroot(b *testing.B) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command: ", err)
	}
	return strings.TrimSpace(string(out))
}

// corpus is the Go files of the standard library's net and runtime
// packages: source text as an index meets it.
func corpus(b *testing.B) [][]byte {
	var files [][]byte
	root := goroot(b)
	for _, dir := range []string{"net", "runtime"} {
		filepath.WalkDir(filepath.Join(root, "src", dir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Ext(p) == ".go" {
				if data, err := os.ReadFile(p); err == nil {
					files = append(files, data)
				}
			}
			return nil
		})
	}
	if len(files) == 0 {
		b.Skip("no Go source under GOROOT")
	}
	return files
}

func BenchmarkExtract(b *testing.B) {
	files := corpus(b)
	var size int64
	for _, f := range files {
		size += int64(len(f))
	}
	lists := make(chan []uint32, 1)
	x := newExtractor(lists, nil)
	b.SetBytes(size)
	start := cpuTime()
	for b.Loop() {
		for _, f := range files {
			r := x.extract(bytes.NewReader(f), int64(len(f)))
			select {
			case lists <- r.trigrams[:0]:
			default:
			}
		}
	}
	reportCPU(b, start)
}

func BenchmarkRuns(b *testing.B) {
	files := corpus(b)
	x := newExtractor(make(chan []uint32, 1), nil)
	var lists [][]uint32
	pairs := 0
	for _, f := range files {
		r := x.extract(bytes.NewReader(f), int64(len(f)))
		lists = append(lists, r.trigrams)
		pairs += len(r.trigrams)
	}
	b.ReportMetric(float64(pairs), "pairs/op")
	start := cpuTime()
	for b.Loop() {
		r := newRuns(filepath.Join(b.TempDir(), "runs"))
		for id, l := range lists {
			r.add(uint32(id), l)
		}
		if err := r.finish(); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkBuild builds an index of GOROOT/src from nothing.
func BenchmarkBuild(b *testing.B) {
	b.Setenv(localfs.StateDirEnv, b.TempDir())
	dir := filepath.Join(goroot(b), "src")
	fsys, err := localfs.New(localfs.Config{Roots: []string{dir}})
	if err != nil {
		b.Skip("no GOROOT/src: ", err)
	}
	ctx := context.Background()
	start := cpuTime()
	for b.Loop() {
		if _, err := Drop(ctx, dir, nil, time.Second); err != nil && !IsNoIndex(err) {
			b.Fatal(err)
		}
		st, err := Build(ctx, fsys, dir, dir, BuildOptions{LockTimeout: time.Second, Config: fsys.Fingerprint(), Roots: fsys.Roots()})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(st.Bytes)
	}
	reportCPU(b, start)
}

func BenchmarkSortRun(b *testing.B) {
	files := corpus(b)
	x := newExtractor(make(chan []uint32, 1), nil)
	var c chunk
	for id, f := range files {
		r := x.extract(bytes.NewReader(f), int64(len(f)))
		c.add(uint32(id), r.trigrams)
		x.list = nil
	}
	b.Logf("%d pairs", len(c.trigrams))
	s := sorter{trigrams: newTrigramSet()}
	start := cpuTime()
	for b.Loop() {
		s.sort(&c)
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/float64(len(c.trigrams)), "cpu-ns/pair")
}
