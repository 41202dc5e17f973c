package backend

import (
	"path"
	"strings"
)

// Clean is path.Clean of a caller's path, except that a path spelled from
// an object store's root, scheme://bucket/key, keeps its scheme's //:
// path.Clean would fold it into a relative path, which a mixed workspace
// takes for a path of another root. Its .. elements are resolved within
// the path after the scheme, as a local path's are.
func Clean(p string) string {
	if scheme, rest, ok := strings.Cut(p, "://"); ok && scheme != "" && !strings.Contains(scheme, "/") {
		return scheme + "://" + strings.TrimPrefix(path.Clean("/"+rest), "/")
	}
	return path.Clean(p)
}

// Join is path.Join that keeps a scheme's // as Clean does.
func Join(dir, name string) string {
	if dir == "" {
		return Clean(name)
	}
	return Clean(dir + "/" + name)
}
