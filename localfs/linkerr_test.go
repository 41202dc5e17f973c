package localfs

import (
	"testing"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// FreeBSD's open(2) answers EMLINK, not ELOOP, for a link opened with
// O_NOFOLLOW: a directory swapped for a link under a walk, a search or a
// move's comparison is the same change there as on Linux and macOS, not a
// failure of the file system.
func TestLinkOpenedNoFollow(t *testing.T) {
	for _, errno := range []error{unix.ELOOP, unix.EMLINK} {
		if !goneErr(errno) {
			t.Errorf("goneErr(%v) is false: a walk fails where the entry became a link", errno)
		}
		if !notThere(errno) {
			t.Errorf("notThere(%v) is false: a search fails where its directory became a link", errno)
		}
		if got := code(changedOr(errno, "d")); got != fault.CodeStale {
			t.Errorf("changedOr(%v) is %v, want STALE", errno, got)
		}
	}
}
