package core

import (
	"sync"
	"time"

	"github.com/agentfs/agentfs/backend"
)

// LineCounts remembers the line counts of the files a process read, by
// path and version, so that the windows of one file read in one process
// (read --all, a batch or MCP session paging) count the lines after them
// once: each window counted the rest of the file for its totalLines, and
// read --all of a file of 5 million lines took 22 s, the square of its
// size. A version names the content it was taken with, as a read's
// expectedVersion trusts it; a file without one is counted each time, and
// so is one changed within backend.RacySlack (settled).
type LineCounts struct {
	mu     sync.Mutex
	counts map[lineCountKey]int
}

type lineCountKey struct{ path, version string }

// maxLineCounts bounds the files remembered; past it, they are forgotten.
const maxLineCounts = 1024

// NewLineCounts makes an empty memory of line counts.
func NewLineCounts() *LineCounts { return &LineCounts{counts: map[lineCountKey]int{}} }

// get is the count of path at version, when remembered; a nil c
// remembers nothing.
func (c *LineCounts) get(path, version string) (int, bool) {
	if c == nil || version == "" {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.counts[lineCountKey{path, version}]
	return n, ok
}

// put remembers n as the count of path at version.
func (c *LineCounts) put(path, version string, n int) {
	if c == nil || version == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.counts) >= maxLineCounts {
		clear(c.counts)
	}
	c.counts[lineCountKey{path, version}] = n
}

// settled reports whether info's times are over backend.RacySlack old. A
// file rewritten at its size within the granularity of its timestamps
// may keep a version made of its stat, and a count remembered for that
// version would be the old content's in every later window of the
// session, where a new process counts the new one.
func settled(info backend.FileInfo) bool {
	edge := time.Now().Add(-backend.RacySlack)
	return info.ModTime.Before(edge) && info.ChangeTime.Before(edge)
}
