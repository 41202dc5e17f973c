// Package allocs measures what a call allocates, for the tests that bound
// the memory of a request by its size: a bound on bytes allocated fails
// where a copy too many is made, whatever the machine's speed, as a timed
// test would not.
package allocs

import "runtime"

// Bytes is what f allocates, in bytes, as runtime.MemStats counts them.
func Bytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
