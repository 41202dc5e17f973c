//go:build race

package localfs_test

import "time"

// A race-detector holder unmaps a large shadow memory before the kernel
// closes its files, so its locks are freed later than a real binary's; and
// its processes start slowly, so the stress tests run fewer rounds.
func init() {
	killBound = time.Second
	rmRaceRounds, killRounds = 4, 8
}
