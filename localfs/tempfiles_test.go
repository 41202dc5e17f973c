package localfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// isTempName takes exactly the names tempName makes: the prefix and 16
// lower-case hex digits.
func TestIsTempName(t *testing.T) {
	for name, want := range map[string]bool{
		tempName():                                true,
		tempPrefix + "0123456789abcdef":           true,
		tempPrefix + "09af09af09af09af":           true,
		tempPrefix + "0123456789abcde":            false, // 15 digits
		tempPrefix + "0123456789abcdef0":          false, // 17
		tempPrefix + "0123456789abcdeg":           false,
		tempPrefix + "0123456789abcde`":           false, // just below 'a'
		tempPrefix + "0123456789abcde/":           false, // just below '0'
		tempPrefix + "0123456789abcde:":           false, // just above '9'
		tempPrefix + "0123456789ABCDEF":           false,
		strings.TrimSuffix(tempPrefix, "-") + "x": false,
		"0123456789abcdef":                        false,
	} {
		if got := isTempName(name); got != want {
			t.Errorf("isTempName(%q) = %v, want %v", name, got, want)
		}
	}
}

// A record's path may hold a line ending (a directory named so): split at
// the first, the rest of the path was taken for the temp file's identity,
// and the temp file of a dead writer there was never swept.
func TestRecordText(t *testing.T) {
	for _, tc := range []struct {
		record, path, id string
		ok               bool
	}{
		{"/tmp/d/.agentfs-tmp-1\n42:7", "/tmp/d/.agentfs-tmp-1", "42:7", true},
		{"/tmp/d/.agentfs-tmp-1\n", "/tmp/d/.agentfs-tmp-1", "", true},
		{"/tmp/a\nb/.agentfs-tmp-1\n42:7", "/tmp/a\nb/.agentfs-tmp-1", "42:7", true},
		{"/tmp/a\nb/.agentfs-tmp-1\n", "/tmp/a\nb/.agentfs-tmp-1", "", true},
		{"/tmp/d/.agentfs-tmp-1", "", "", false},
		{"rel\n42:7", "rel", "42:7", false},
	} {
		path, id, ok := recordText([]byte(tc.record))
		if path != tc.path || id != tc.id || ok != tc.ok {
			t.Errorf("record %q: %q %q %v, want %q %q %v", tc.record, path, id, ok, tc.path, tc.id, tc.ok)
		}
	}
}

// A record another user may have written (its own, or in a records
// directory of another user's or that others can write: the state
// directory was not private once, and chmod 700 since, as the refusal's
// hint says) proves nothing: a sweep removes nothing it names. Trusted,
// a record planted by another user naming any file (without an identity)
// had that file removed by the next start of agentfs, outside the roots
// too, and a directory record had an empty directory removed.
func TestSweepTrustsNoRecordAnotherUserMayHaveWritten(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chowns a record to another user: run the tests as root")
	}
	for _, tc := range []struct {
		name  string
		kind  string // tempRecords or dirRecords
		plant func(t *testing.T, records, record string)
		// removed: the record is this user's in a private directory, and
		// what it names goes (the test's control).
		removed bool
	}{
		{"a temp record of this user", tempRecords, func(*testing.T, string, string) {}, true},
		{"a temp record of another user", tempRecords, func(t *testing.T, _, record string) {
			must(t, os.Chown(record, 65534, 65534))
		}, false},
		{"a temp record in a directory of another user", tempRecords, func(t *testing.T, records, _ string) {
			must(t, os.Chown(records, 65534, 65534))
		}, false},
		{"a temp record in a directory others can write to", tempRecords, func(t *testing.T, records, _ string) {
			must(t, os.Chmod(records, 0o777))
		}, false},
		{"a directory record of this user", dirRecords, func(*testing.T, string, string) {}, true},
		{"a directory record of another user", dirRecords, func(t *testing.T, _, record string) {
			must(t, os.Chown(record, 65534, 65534))
		}, false},
		{"a directory record in a directory others can write to", dirRecords, func(t *testing.T, records, _ string) {
			must(t, os.Chmod(records, 0o777))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, dir := t.TempDir(), t.TempDir()
			victim := filepath.Join(dir, "keep.txt")
			content := ""
			if tc.kind == dirRecords {
				victim = filepath.Join(dir, "empty")
				must(t, os.Mkdir(victim, 0o755))
				var st unix.Stat_t
				must(t, unix.Stat(victim, &st))
				content = victim + "\n" + identity(&st)
			} else {
				must(t, os.WriteFile(victim, []byte("precious\n"), 0o644))
				content = victim + "\n" // no identity: whatever file is there
			}
			records := filepath.Join(state, tc.kind)
			must(t, os.Mkdir(records, 0o700))
			record := filepath.Join(records, "planted")
			must(t, os.WriteFile(record, []byte(content), 0o666))
			tc.plant(t, records, record)
			sweepRecords(state)
			_, err := os.Lstat(victim)
			if gone := errors.Is(err, os.ErrNotExist); gone != tc.removed {
				t.Errorf("after a sweep of %s naming %s: removed %v (%v), want %v", tc.name, victim, gone, err, tc.removed)
			}
		})
	}
}
