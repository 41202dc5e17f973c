package core

import (
	"context"
	"errors"
	"path"
	"strings"
)

// Suggestion bounds: five names are enough to spot a typo, and one page of
// the parent keeps a NOT_FOUND cheap in a huge directory.
const (
	maxSuggestions   = 5
	suggestScanLimit = 2000
)

// WithSuggestions adds to a NOT_FOUND error for p up to five paths that p
// may have meant. They come from the deepest directory of p that exists:
// names close to p's first missing component there (the same name in
// another case, then close spellings), each with the rest of p when that
// exists below it (srcc/net suggests src/net). Other errors, and a
// directory that cannot be listed, leave err as it is. Every tool that
// takes an existing path can use it.
func (t *Tools) WithSuggestions(ctx context.Context, p string, err error) error {
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeNotFound || p == "" {
		return err
	}
	dir, missing := path.Clean(p), ""
	for {
		parent, base := path.Split(dir)
		missing = path.Join(base, missing)
		switch dir = strings.TrimSuffix(parent, "/"); {
		case parent == "":
			dir = "."
		case dir == "":
			dir = "/"
		}
		page, lerr := t.FS.ReadDir(ctx, dir, 0, suggestScanLimit)
		if lerr == nil {
			t.suggest(ctx, e, dir, missing, page)
			return e
		}
		if AsError(lerr).Code != CodeNotFound || dir == "." || dir == "/" {
			return err
		}
	}
}

// suggest adds to e the entries of dir (listed in page) close to the first
// component of missing, each with the rest of missing when that exists.
func (t *Tools) suggest(ctx context.Context, e *Error, dir, missing string, page DirPage) {
	first, rest, _ := strings.Cut(missing, "/")
	names := make([]string, 0, len(page.Entries))
	for _, fi := range page.Entries {
		names = append(names, fi.Name)
	}
	for _, n := range Nearest(first, names, maxSuggestions) {
		s := path.Join(dir, n)
		if rest != "" {
			if _, err := t.FS.Lstat(ctx, path.Join(s, rest)); err == nil {
				s = path.Join(s, rest)
			}
		}
		text, _ := PathText(t.FS.Display(s))
		e.Suggestions = append(e.Suggestions, text)
	}
	if len(e.Suggestions) > 0 {
		e.Hint = "did you mean " + e.Suggestions[0] + "? (see suggestions)"
	}
}
