package s3fs

import (
	"time"

	"github.com/agentfs/agentfs/s3client"
)

// SetLease sets the lease f's transactions declare in their journals; one
// of 0 or less is never renewed, and a negative one is over when written,
// so that a test recovers it at once.
func SetLease(f *FS, d time.Duration) { f.lease = d }

// ClaimKey is the key of the claim a move of the file at path makes.
func ClaimKey(f *FS, path string) string {
	return f.claimKey(f.key(path))
}

// SetPaused has f's moves run paused between a lease check and the copy
// ("copy") or deletion ("delete") of the object key it lets through.
func SetPaused(f *FS, paused func(phase, key string)) { f.paused = paused }

// Nameable reports whether a part of a key is one a path can name.
var Nameable = nameable

// BucketNameFault says what makes a name no S3 bucket's.
var BucketNameFault = bucketNameFault

// UploadsLeft is err saying that it left the uploads lefts.
func UploadsLeft(f *FS, err error, lefts []*s3client.LeftError) error {
	return f.uploadsLeft(err, lefts)
}

// JournalVersion is the version of the journals this agentfs writes.
const JournalVersion = journalVersion

// AgeSeen makes what f saw of every version d older, as if its answers
// came d earlier.
func AgeSeen(f *FS, d time.Duration) {
	f.marks.mu.Lock()
	defer f.marks.mu.Unlock()
	for k, s := range f.marks.m {
		s.at = s.at.Add(-d)
		f.marks.m[k] = s
	}
}
