//go:build !linux

package localfs

// mountEntry is unused where there is no mountinfo to read.
type mountEntry struct{}

// mountTable is empty off Linux: lock keys are the real absolute paths,
// which a bind mount (nullfs) can spell twice.
func mountTable() []mountEntry { return nil }

// lockKeyParts is p within no known file system.
func lockKeyParts(_ []mountEntry, p string) (dev, fsPath string) { return "", p }

// MountsBelow is empty off Linux, where no watcher runs.
func MountsBelow(string) (string, bool) { return "", true }

// mountPoints are not known off Linux: a search opens a mount point, and
// its device says it is another file system.
func mountPoints() map[string]string { return nil }

// devName is not needed where no mount point is known.
func devName(uint64) string { return "" }
