package core

import (
	"slices"
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
	// base, set by fromRoot for a path pattern that starts with **/, is
	// the start as the answers spell it, which rel extends.
	base string
	// anchored: the pattern was given with a leading ./, which anchors it
	// at the start, so that fromRoot leaves it matched against rel.
	anchored bool
	// alts, when set, are the globs a pattern that starts with braces
	// stands for (ignore.Alternatives), matched in its place.
	alts []glob
}

// newGlob prepares a validated pattern. anyDepth says a pattern without a
// slash matches a name at any depth (include, exclude) rather than only at
// the top (find).
func newGlob(pattern string, anyDepth bool) glob {
	if alts := ignore.Alternatives(pattern); len(alts) > 1 {
		// Each shaped as the whole is: {**/a/*.go,zz} names zz at the
		// top only, as a pattern split here always holds a slash (its
		// **/ alternative).
		g := glob{pattern: pattern}
		for _, a := range alts {
			g.alts = append(g.alts, newGlob(a, false))
		}
		return g
	}
	// A final /** matches below what the rest names, never that itself.
	g := glob{pattern: ignore.BelowOnly(pattern)}
	switch rest, ok := strings.CutPrefix(pattern, "**/"); {
	case ok && !strings.Contains(rest, "/") && !strings.Contains(rest, "**"):
		g.nameOnly, g.name = true, rest
	case anyDepth && !strings.Contains(pattern, "/"):
		g.nameOnly, g.name = true, pattern
	}
	if g.nameOnly {
		switch {
		case !strings.ContainsAny(g.name, ignore.Meta):
			g.exact = g.name
		case g.name[0] == '*' && !strings.ContainsAny(g.name[1:], ignore.Meta):
			g.suffix = g.name[1:]
		}
	}
	return g
}

// givenGlob prepares the pattern given as a request has it, and checked,
// the same without the leading ./ that anchors it (checkGlob).
func givenGlob(given, checked string) glob {
	g := newGlob(checked, !strings.Contains(given, "/"))
	if _, anchored := cutDotSlash(given); anchored {
		g.anchor()
	}
	return g
}

// anchor anchors g at the start, and each glob its alternatives stand
// for, which newGlob builds as globs in turn: anchored at the first level
// only, ./{**/q,{**/b/*.go,zz}} matched **/b/*.go from the root while
// ignore.Alternatives split one level at a time.
func (g *glob) anchor() {
	g.anchored = true
	for i := range g.alts {
		g.alts[i].anchor()
	}
}

// cutDotSlash is the glob g without its leading ./, which anchors it at
// the start (anchored), taken off as a path is cleaned: repeated (././x)
// or with its slash doubled (.//x), as git's pathspec takes them (git
// ls-files ././x lists x). One ./ was taken off and the rest refused as
// a "." segment, the message quoting ./x, which is valid.
func cutDotSlash(g string) (rest string, anchored bool) {
	rest = g
	for {
		r, ok := strings.CutPrefix(rest, "./")
		if !ok {
			return rest, anchored
		}
		rest, anchored = strings.TrimLeft(r, "/"), true
	}
}

// match reports whether an entry (its path relative to the start, and its
// name) matches.
func (g glob) match(rel, name string) bool {
	if g.alts != nil {
		return slices.ContainsFunc(g.alts, func(a glob) bool { return a.match(rel, name) })
	}
	if !g.nameOnly {
		return doublestar.MatchUnvalidated(g.pattern, ignore.FromRoot(g.base, rel))
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

// fromRoot is gs matched below the start that the answers spell base
// (FS.Display): a path pattern that starts with **/ matches at any depth,
// so it is matched against the path from the root, base/rel
// (ignore.AnyDepth), as rg -g matches a glob against the path as given
// and as WalkOptions.ExcludeBase has the walk match an exclude. Matched
// against rel alone, grep src --include '**/{src,lib}/*.go' missed
// src/main.go and grep src/x --include '**/src/**' src/x/a.go, with
// exit 0. A leading ./ anchors the pattern at the start, **/ and all, as
// rg -g '/**/src/*.go' run in the path searched and git's pathspec
// ./**/src/*.go take it: matched from the root, find './**/a/src/*.go' a
// answered a/src/n.go.
func fromRoot(gs []glob, base string) []glob {
	for i := range gs {
		gs[i].alts = fromRoot(gs[i].alts, base)
		if !gs[i].nameOnly && !gs[i].anchored && ignore.AnyDepth(gs[i].pattern) {
			gs[i].base = base
		}
	}
	return gs
}

// globSet is include's globs, a file kept when one matches. Those that
// are a name without a metacharacter are looked up, not matched: 10,000
// names matched one by one made grep in a directory of 100,000 files take
// 12 s.
type globSet struct {
	names map[string]bool
	rest  []glob
}

func newGlobSet(gs []glob) globSet {
	var s globSet
	for _, g := range gs {
		if g.exact == "" {
			s.rest = append(s.rest, g)
			continue
		}
		if s.names == nil {
			s.names = map[string]bool{}
		}
		s.names[g.exact] = true
	}
	return s
}

// all reports whether the set keeps every file: it holds no glob.
func (s globSet) all() bool { return len(s.names) == 0 && len(s.rest) == 0 }

// match reports whether an entry (its path relative to the start, and
// its name) matches one of the globs.
func (s globSet) match(rel, name string) bool {
	if s.names[name] {
		return true
	}
	for _, g := range s.rest {
		if g.match(rel, name) {
			return true
		}
	}
	return false
}
