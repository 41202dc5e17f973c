package backend

import (
	"path"
	"strings"

	"github.com/agentfs/agentfs/fault"
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

// NamesDirectory reports whether p, as spelled, can name a directory only,
// as open(2) and rename(2) read it: it ends with a slash, or its last name
// is . or .. (a path that Clean turns into a file's name, "f.txt/.", is no
// name of that file).
func NamesDirectory(p string) bool {
	if strings.HasSuffix(p, "/") {
		return true
	}
	last := p[strings.LastIndexByte(p, '/')+1:]
	return last == "." || last == ".."
}

// DotName is the last name of p, as spelled, when it is "." or ".."
// (after any final slashes), else "": such a path names a directory only
// by way of itself or of a directory below it, which rm(1) refuses to
// remove and rename(2) to move (EBUSY).
func DotName(p string) string {
	p = strings.TrimRight(p, "/")
	last := p[strings.LastIndexByte(p, '/')+1:]
	if last == "." || last == ".." {
		return last
	}
	return ""
}

// Join is path.Join that keeps a scheme's // as Clean does.
func Join(dir, name string) string {
	if dir == "" {
		return Clean(name)
	}
	return Clean(dir + "/" + name)
}

// CheckDotDot refuses p when a ".." in it follows a name that is not a
// directory (a file, or nothing), as a disk's kernel does: a store's keys
// resolve such a path by the names alone, and rm -r f.txt/../keep removed
// keep. isDir says whether the part of p before a ".." is a directory,
// false for one outside the workspace or denied, which is refused alike.
// A path with no ".." costs nothing.
func CheckDotDot(p string, isDir func(prefix string) (bool, error)) error {
	if !strings.Contains(p, "..") {
		return nil
	}
	parts := strings.Split(p, "/")
	for i, part := range parts {
		if part != ".." || i == 0 {
			continue
		}
		dir, err := isDir(strings.Join(parts[:i], "/"))
		if err != nil {
			return err
		}
		if !dir {
			return fault.DotDotRefused(p)
		}
	}
	return nil
}
