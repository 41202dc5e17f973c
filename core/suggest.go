package core

import (
	"context"
	"errors"
	"path"
)

// Suggestion bounds: five names are enough to spot a typo, one page of a
// directory keeps a NOT_FOUND cheap in a huge one, and three levels of
// missing directories are as many typos as a path plausibly holds.
const (
	maxSuggestions   = 5
	suggestScanLimit = 2000
	suggestDepth     = 3
)

// WithSuggestions adds to a NOT_FOUND error for p up to five existing paths
// that p may have meant: names in p's directory in another case, then close
// spellings; when the directory is missing too (a mistyped directory), the
// same for it, with the rest of p kept. Other errors, and a directory that
// cannot be listed, leave err as it is. Every tool that takes an existing
// path can use it.
func (t *Tools) WithSuggestions(ctx context.Context, p string, err error) error {
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeNotFound || p == "" {
		return err
	}
	for _, s := range t.nearPaths(ctx, path.Clean(p), suggestDepth) {
		text, _ := PathText(t.FS.Display(s))
		e.Suggestions = append(e.Suggestions, text)
	}
	if len(e.Suggestions) > 0 {
		e.Hint = "did you mean " + e.Suggestions[0] + "? (see suggestions)"
	}
	return e
}

// nearPaths lists existing paths close to p, which does not exist: its
// directory's entries named like its last component or, when the directory
// is missing too, the paths near the directory (up to depth more levels)
// that hold an entry with that last component's name.
func (t *Tools) nearPaths(ctx context.Context, p string, depth int) []string {
	dir, base := path.Split(p)
	dir = path.Clean(dir)
	page, err := t.FS.ReadDir(ctx, dir, 0, suggestScanLimit)
	if err != nil {
		var e *Error
		if depth == 0 || dir == "." || dir == "/" || !errors.As(err, &e) || e.Code != CodeNotFound {
			return nil
		}
		var out []string
		for _, d := range t.nearPaths(ctx, dir, depth-1) {
			if _, err := t.FS.Stat(ctx, path.Join(d, base)); err == nil {
				out = append(out, path.Join(d, base))
			}
		}
		return out
	}
	names := make([]string, 0, len(page.Entries))
	for _, fi := range page.Entries {
		names = append(names, fi.Name)
	}
	var out []string
	for _, n := range Nearest(base, names, maxSuggestions) {
		out = append(out, path.Join(dir, n))
	}
	return out
}
