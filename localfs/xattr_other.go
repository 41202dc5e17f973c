//go:build !linux

package localfs

// keepsXattrs says whether a replace gives the new file the extended
// attributes of the one it replaces (keepXattrs), so that the replaced
// file is opened for them.
const keepsXattrs = false

// copyXattrs carries nothing off Linux: a move across file systems there
// drops extended attributes, as the man page says.
func copyXattrs(from, to int, at string) error { return nil }

// keepXattrs carries nothing off Linux: a replaced file there keeps its
// mode and owner, not its extended attributes.
func keepXattrs(from, to int) error { return nil }
