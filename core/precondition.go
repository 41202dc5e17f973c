package core

import (
	"encoding/hex"
	"strings"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// Precondition is what a mutation expects the file to be, taken from an
// earlier read: a mismatch is STALE and nothing is changed, so an agent never
// overwrites a change it has not seen. Embedded in write, edit and rm requests.
type Precondition struct {
	ExpectedVersion string `json:"expectedVersion,omitempty" notEmpty:"true" help:"version token from a read; STALE if the file changed since"`
	ExpectedSha256  string `json:"expectedSha256,omitempty" notEmpty:"true" pattern:"^[0-9a-fA-F]{64}$" patternIs:"a sha256: 64 hexadecimal digits" help:"sha256 from a read (64 hex digits, either case); STALE if the content differs"`
}

// Set reports whether the caller gave any expectation.
func (p Precondition) Set() bool { return p.ExpectedVersion != "" || p.ExpectedSha256 != "" }

// Check compares the expectation with the file as it is now: info is its
// current state (exists false when missing) and sum computes its sha256
// only when one is expected. It must run under the mutation's lock.
func (p Precondition) Check(path string, info backend.FileInfo, exists bool, sum func() (string, error)) error {
	if !p.Set() {
		return nil
	}
	stale := func(why string) error {
		e := fault.Errorf(fault.CodeStale, "the file changed since it was read: %s.", why).WithPath(path).
			WithHint("read the file again and redo the change against its current content")
		if exists && info.Version != "" {
			e.WithDetail("currentVersion", info.Version)
		}
		return e
	}
	if !exists {
		return stale("it no longer exists")
	}
	if p.ExpectedVersion != "" && info.Version == "" {
		// No version to compare (an object store's directory, a prefix; an
		// object the store gave no ETag): STALE would hand back an empty
		// currentVersion, which no retry can pass.
		if info.Type == backend.TypeDir {
			return fault.InvalidArgument("a directory has no version on this backend, so a change cannot be conditional on one.").
				WithPath(path).WithHint("drop --expected-version; nothing was changed")
		}
		return fault.Errorf(fault.CodeNotSupported, "the file has no version (an object its store gave no ETag), so a change cannot be conditional on one.").
			WithPath(path).WithHint("drop --expected-version; nothing was changed")
	}
	if p.ExpectedVersion != "" && p.ExpectedVersion != info.Version {
		if e := sha256AsVersion(path, p.ExpectedVersion, info.Version); e != nil {
			return e.WithHint("pass it as --expected-sha256, or pass the version a read returned as --expected-version; nothing was changed")
		}
		return stale("its version is " + info.Version + ", not " + p.ExpectedVersion)
	}
	if p.ExpectedSha256 != "" {
		got, err := sum()
		if err != nil {
			return err
		}
		if !strings.EqualFold(got, p.ExpectedSha256) {
			return stale("its sha256 is " + got)
		}
	}
	return nil
}

// sha256AsVersion is the INVALID_ARGUMENT of expected, an expectedVersion
// the file at path does not have, when it has the form of a sha256 (64
// hexadecimal digits), nil for any other: read answers a version and a
// sha256, and the sum given as the version was STALE, "the file changed
// since it was read", which it had not, and which reading again and
// retrying repeated. One that matches (a store whose ETags have that
// form) is the file's version, and never reaches here; one that does not
// where the file's version, current, has that form too is a version that
// changed (STALE).
func sha256AsVersion(path, expected, current string) *fault.Error {
	if !sha256Form(expected) || sha256Form(current) {
		return nil
	}
	return fault.InvalidArgument("expectedVersion %s has the form of a sha256 (64 hexadecimal digits), and is not the file's version.", expected).WithPath(path)
}

// sha256Form reports whether s has the form of a sha256: 64 hexadecimal
// digits.
func sha256Form(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && len(s) == 64
}
