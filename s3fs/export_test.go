package s3fs

import "time"

// SetLease sets how old a journal is when its transaction is taken for
// dead, so that a test recovers at once.
func SetLease(f *FS, d time.Duration) { f.lease = d }
