//go:build race

package localfs_test

import "time"

// A race-detector holder unmaps a large shadow memory before the kernel
// closes its files, so its locks are freed later than a real binary's.
func init() { killBound = time.Second }
