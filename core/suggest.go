package core

import (
	"context"
	"errors"
	"path"
)

// Suggestion bounds: five names are enough to spot a typo, and one page of
// the parent keeps a NOT_FOUND cheap in a huge directory.
const (
	maxSuggestions   = 5
	suggestScanLimit = 2000
)

// WithSuggestions adds to a NOT_FOUND error for p up to five paths from p's
// parent directory that p may have meant: the same name in another case,
// then close spellings. Other errors, and a parent that cannot be listed,
// leave err as it is. Every tool that takes an existing path can use it.
func (t *Tools) WithSuggestions(ctx context.Context, p string, err error) error {
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeNotFound || p == "" {
		return err
	}
	dir, base := path.Split(path.Clean(p))
	if dir == "" {
		dir = "."
	}
	page, lerr := t.FS.ReadDir(ctx, dir, 0, suggestScanLimit)
	if lerr != nil {
		return err
	}
	names := make([]string, 0, len(page.Entries))
	for _, fi := range page.Entries {
		names = append(names, fi.Name)
	}
	for _, n := range Nearest(base, names, maxSuggestions) {
		text, _ := PathText(t.FS.Display(path.Join(dir, n)))
		e.Suggestions = append(e.Suggestions, text)
	}
	if len(e.Suggestions) > 0 {
		e.Hint = "did you mean " + e.Suggestions[0] + "? (see suggestions)"
	}
	return e
}
