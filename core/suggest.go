package core

import (
	"context"
	"errors"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// Suggestion bounds: five names are enough to spot a typo, and one page of
// the parent keeps a NOT_FOUND cheap in a huge directory.
const (
	maxSuggestions   = 5
	suggestScanLimit = 2000
)

// WithSuggestions adds to a NOT_FOUND error for p up to five paths that p
// may have meant: the same name in another case, then close spellings, from
// p's parent directory or, when the parent is missing too (a mistyped
// directory), from the directories its own name may have meant. Other
// errors, and a parent that cannot be listed, leave err as it is. Every tool
// that takes an existing path can use it.
func (t *Tools) WithSuggestions(ctx context.Context, p string, err error) error {
	var e *fault.Error
	if !errors.As(err, &e) || e.Code != fault.CodeNotFound || p == "" {
		return err
	}
	var twins []string
	for _, n := range t.nearestPaths(ctx, backend.Clean(p), suggestDepth) {
		text, b64 := fault.PathText(t.FS.Display(n))
		e.Suggestions, twins = append(e.Suggestions, text), append(twins, b64)
	}
	if slices.ContainsFunc(twins, func(s string) bool { return s != "" }) {
		e.SuggestionsBase64 = twins
	}
	switch {
	case len(e.Suggestions) > 0:
		e.Hint = "did you mean " + e.Suggestions[0] + "? (see suggestions)"
	case strings.HasPrefix(p, "-"):
		// grep -- -race --limit 2 searched the paths --limit and 2.
		e.Hint = "if " + strconv.Quote(p) + " was meant as a flag, put it before --: every argument after -- is a path"
	}
	return e
}

// suggestDepth is how many missing directories in a row a suggestion looks
// through: srcc/a.go finds src/a.go, not an arbitrary rewrite of the path.
const suggestDepth = 2

// nearestPaths returns existing paths close to the missing path p.
func (t *Tools) nearestPaths(ctx context.Context, p string, depth int) []string {
	dir, base := path.Split(p)
	dir = backend.Clean(dir)
	if base == "" || base == "." || base == ".." {
		return nil
	}
	page, err := t.FS.ReadDir(ctx, dir, 0, suggestScanLimit)
	if err == nil {
		var out []string
		for _, n := range Nearest(base, entryNames(page), maxSuggestions) {
			out = append(out, backend.Join(dir, n))
		}
		return out
	}
	var e *fault.Error
	if depth == 0 || !errors.As(err, &e) || e.Code != fault.CodeNotFound {
		return nil
	}
	var out []string
	parents := t.nearestPaths(ctx, dir, depth-1)
	for _, parent := range parents {
		page, err := t.FS.ReadDir(ctx, parent, 0, suggestScanLimit)
		if err != nil {
			continue
		}
		names := entryNames(page)
		if slices.Contains(names, base) {
			out = append(out, backend.Join(parent, base))
			continue
		}
		for _, n := range Nearest(base, names, maxSuggestions) {
			out = append(out, backend.Join(parent, n))
		}
	}
	if len(out) == 0 {
		// Nothing close below: the directory alone is still the typo's fix.
		return parents
	}
	return out[:min(len(out), maxSuggestions)]
}

func entryNames(page backend.DirPage) []string {
	names := make([]string, 0, len(page.Entries))
	for _, fi := range page.Entries {
		names = append(names, fi.Name)
	}
	return names
}
