// Package assets is where publish puts a file so that a person can open
// it by a link that expires: the contract of a target, apart from any one
// kind of target. Package localdir keeps files in a local folder served by
// agentfs serve; package s3store uploads them to an S3-compatible store and
// links them by presigned URLs.
package assets

import (
	"context"
	"errors"
	"io"
	"time"
)

// Object describes one published file. Its content is Size bytes whose
// SHA-256 is SHA256: a Store that can check them refuses other content.
type Object struct {
	// Name is the file's base name, the last segment of its link.
	Name string `json:"name"`
	// MIMEType is the Content-Type the link is served with.
	MIMEType string `json:"mimeType"`
	Size     int64  `json:"size"`
	// SHA256 is the lowercase hex SHA-256 of the content.
	SHA256 string `json:"sha256"`
	// NotUTF8 says that the content is not UTF-8 to its end, whatever its
	// start: a text type it is served with names no charset.
	NotUTF8 bool `json:"notUTF8,omitempty"`
	// Lifetime is how long the link works, counted from when the content
	// is stored (a copy of a large file takes a while).
	Lifetime time.Duration `json:"-"`
}

// Link is a link that Put made.
type Link struct {
	URL string
	// Expires is when the link stops working, in whole seconds: the link
	// works for at least the object's Lifetime after Put returns, but
	// where a store counts from the second before (an S3 presigned URL),
	// for up to a second less.
	Expires time.Time
}

// Store is a target of publish.
type Store interface {
	// SampleLink is a link Put could make for obj: as long as any it
	// makes, spelled with the same characters (escaped alike in JSON), so
	// that a caller bounds its answer before anything is stored.
	SampleLink(obj Object) (string, error)
	// Put stores content, which is obj.Size bytes, and returns a link to
	// it. A failed Put leaves no partial object behind a link, and leaves
	// nothing else unless its error wraps ErrLeft.
	Put(ctx context.Context, obj Object, content io.Reader) (Link, error)
}

// ErrLeft marks the failure of a Put that could not remove what it had
// stored (an S3 upload's parts): its error says what is left and how to
// remove it, which an interrupt must not hide.
var ErrLeft = errors.New("a failed publish left data in the target")

// Opener is a target opened anew for each publish: a call other than
// publish never makes a key or connects to a bucket, and a session that
// outlives a signing key or a folder (batch, mcp) publishes with them as
// they are now, a key made again or a folder made again included.
type Opener interface {
	Open() (Store, error)
}

// A Checker is an Opener whose settings are checked apart (Check), which
// publish does before any work: checked only as it opened, after the size
// check and the hash of the whole file, a setting out of its set was
// refused once the file was read through, or not at all when the file was
// over the default limit (TOO_LARGE, over a limit never set).
type Checker interface {
	Opener
	Check() error
}
