package core

import (
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// An entry without a version (an object store's directory, an object
// without an ETag) was STALE "its version is , not V" with an empty
// currentVersion that no retry could pass: a version expected of it is
// refused instead, and no message or detail carries an empty version.
func TestPreconditionCheck(t *testing.T) {
	sum := func() (string, error) { return "aa", nil }
	const sum64 = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
	for _, tc := range []struct {
		name    string
		p       Precondition
		info    backend.FileInfo
		exists  bool
		want    fault.Code
		current any // details.currentVersion, nil when absent
	}{
		{"matching version", Precondition{ExpectedVersion: "v1"}, backend.FileInfo{Type: backend.TypeFile, Version: "v1"}, true, "", nil},
		{"other version", Precondition{ExpectedVersion: "v0"}, backend.FileInfo{Type: backend.TypeFile, Version: "v1"}, true, fault.CodeStale, "v1"},
		{"directory with a version", Precondition{ExpectedVersion: "v0"}, backend.FileInfo{Type: backend.TypeDir, Version: "d1"}, true, fault.CodeStale, "d1"},
		{"directory without a version", Precondition{ExpectedVersion: "v0"}, backend.FileInfo{Type: backend.TypeDir}, true, fault.CodeInvalidArgument, nil},
		{"file without a version", Precondition{ExpectedVersion: "v0"}, backend.FileInfo{Type: backend.TypeFile}, true, fault.CodeNotSupported, nil},
		{"file without a version, sha256 differs", Precondition{ExpectedSha256: "bb"}, backend.FileInfo{Type: backend.TypeFile}, true, fault.CodeStale, nil},
		{"file without a version, sha256 matches", Precondition{ExpectedSha256: "AA"}, backend.FileInfo{Type: backend.TypeFile}, true, "", nil},
		{"missing", Precondition{ExpectedVersion: "v0"}, backend.FileInfo{}, false, fault.CodeStale, nil},
		// read returns a version and a sha256: a sum given as the version
		// was STALE "the file changed", which it had not.
		{"a sha256 as the version", Precondition{ExpectedVersion: sum64}, backend.FileInfo{Type: backend.TypeFile, Version: "v1"}, true, fault.CodeInvalidArgument, nil},
		{"a sha256 in upper case as the version", Precondition{ExpectedVersion: strings.ToUpper(sum64)}, backend.FileInfo{Type: backend.TypeFile, Version: "v1"}, true, fault.CodeInvalidArgument, nil},
		{"a version of a sha256's form that matches", Precondition{ExpectedVersion: sum64}, backend.FileInfo{Type: backend.TypeFile, Version: sum64}, true, "", nil},
		// A store whose versions have that form: one changed since is
		// STALE, as any version.
		{"a version of a sha256's form that changed", Precondition{ExpectedVersion: sum64}, backend.FileInfo{Type: backend.TypeFile, Version: strings.Repeat("0", 64)}, true, fault.CodeStale, strings.Repeat("0", 64)},
		{"a sha256 as the version of a missing file", Precondition{ExpectedVersion: sum64}, backend.FileInfo{}, false, fault.CodeStale, nil},
		{"63 hexadecimal digits", Precondition{ExpectedVersion: sum64[:63]}, backend.FileInfo{Type: backend.TypeFile, Version: "v1"}, true, fault.CodeStale, "v1"},
		{"64 characters, not all hexadecimal", Precondition{ExpectedVersion: sum64[:63] + "g"}, backend.FileInfo{Type: backend.TypeFile, Version: "v1"}, true, fault.CodeStale, "v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Check("p", tc.info, tc.exists, sum)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			e := fault.AsError(err)
			if e == nil || e.Code != tc.want {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
			if got := e.Details["currentVersion"]; got != tc.current {
				t.Errorf("currentVersion %v, want %v", got, tc.current)
			}
		})
	}
}
