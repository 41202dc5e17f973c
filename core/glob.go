package core

import (
	"strings"

	"github.com/agentfs/agentfs/ignore"
	"github.com/bmatcuk/doublestar/v4"
)

// glob is a validated doublestar pattern with fast paths for the shapes
// agents use most (**/*.go, *_test.go, Makefile): on a large tree a find
// spends more time matching than walking otherwise.
type glob struct {
	pattern string
	// nameOnly: the pattern is **/P or, for include and exclude, P without
	// a slash; either way only the entry's name is matched, against P.
	nameOnly bool
	name     string
	// suffix, when set, is P = *suffix with no other metacharacter; exact
	// is P with none at all.
	suffix, exact string
}

// newGlob prepares a validated pattern. anyDepth says a pattern without a
// slash matches a name at any depth (include, exclude) rather than only at
// the top (find).
func newGlob(pattern string, anyDepth bool) glob {
	// A final /** matches below what the rest names, never that itself.
	g := glob{pattern: ignore.BelowOnly(pattern)}
	switch rest, ok := strings.CutPrefix(pattern, "**/"); {
	case ok && !strings.Contains(rest, "/") && !strings.Contains(rest, "**"):
		g.nameOnly, g.name = true, rest
	case anyDepth && !strings.Contains(pattern, "/"):
		g.nameOnly, g.name = true, pattern
	}
	if g.nameOnly {
		const meta = `*?[]{}\`
		switch {
		case !strings.ContainsAny(g.name, meta):
			g.exact = g.name
		case g.name[0] == '*' && !strings.ContainsAny(g.name[1:], meta):
			g.suffix = g.name[1:]
		}
	}
	return g
}

// match reports whether an entry (its path relative to the start, and its
// name) matches.
func (g glob) match(rel, name string) bool {
	if !g.nameOnly {
		return doublestar.MatchUnvalidated(g.pattern, rel)
	}
	switch {
	case g.exact != "":
		return name == g.exact
	case g.suffix != "":
		// doublestar's * matches the empty string and dot files alike.
		return strings.HasSuffix(name, g.suffix)
	}
	return doublestar.MatchUnvalidated(g.name, name)
}
