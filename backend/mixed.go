package backend

// Mixed is a backend made of several (a workspace mixing local roots and
// object-store roots), each holding some of the paths: an optional
// capability holds for one path, not for the whole, so a caller asks it of
// the backend At gives.
type Mixed interface {
	// Owner is the backend that holds path, or nil when none does.
	Owner(path string) FS
}

// At is the backend whose optional capabilities (Moder, RemoteReader,
// Renamer...) hold for path: fsys itself, or the member of a Mixed that
// holds path. Ask it questions; call the operations on fsys, which
// spells the paths for its members.
func At(fsys FS, path string) FS {
	if m, ok := fsys.(Mixed); ok {
		if owner := m.Owner(path); owner != nil {
			return owner
		}
	}
	return fsys
}
