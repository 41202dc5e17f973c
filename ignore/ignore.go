// Package ignore decides which entries of a walk are left out: the rules of
// ignore files (.gitignore, .ignore, .git/info/exclude, .agentfsignore) and
// the --exclude globs. It is policy that belongs to no backend, so it works
// on bytes and paths only: a backend reads the ignore files its own way
// (localfs through directory descriptors) and hands their bytes to Compile.
//
// Ignore rules and excludes share one notion of where a pattern applies,
// Shape: without a slash it matches a name at any depth, and with a final
// slash only directories.
package ignore

import (
	"iter"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Shape is where a pattern applies. A pattern with no slash but a final
// one matches an entry's name at any depth; any other matches the entry's
// path below the pattern's base (an ignore file's directory, a walk's
// start). A final slash restricts it to directories.
type Shape struct {
	Name    bool
	DirOnly bool
}

// ShapeOf returns the shape of pattern p, and p without its final slash.
func ShapeOf(p string) (Shape, string) {
	body, dirOnly := strings.CutSuffix(p, "/")
	return Shape{Name: !strings.Contains(body, "/"), DirOnly: dirOnly}, body
}

// Subject returns what a pattern of shape s is matched against for an
// entry, given as its path below the base and as its name: the name for a
// name pattern, else the path. ok is false when the pattern cannot match
// the entry at all (a directory-only pattern and a file).
func Subject[P any](s Shape, isDir bool, path, name P) (subject P, ok bool) {
	if s.DirOnly && !isDir {
		return subject, false
	}
	if s.Name {
		return name, true
	}
	return path, true
}

// Excludes are the --exclude globs of a walk (doublestar syntax, already
// validated), matched on each entry's path below the walk's start, or, for
// a glob that starts with **/, on its path from the root (FromRoot).
// A glob without a metacharacter (a name or a path an agent has at hand,
// thousands of them at times) is looked up, not matched: 10,000 of them
// matched one by one made find in a directory of 100,000 files take 46 s.
type Excludes struct {
	// names and paths hold the globs without a metacharacter that match
	// an entry's name and its path, each true when only a directory.
	names, paths map[string]bool
	globs        []exclude
}

type exclude struct {
	shape Shape
	glob  string
	// base, when set, is the start as the answers spell it, which the
	// entry's path below the start extends (FromRoot).
	base string
}

// NewExcludes prepares validated globs, of a walk whose start the answers
// spell base (backend.WalkOptions.ExcludeBase; "" or "." for the root).
func NewExcludes(globs []string, base string) Excludes {
	var x Excludes
	for _, g := range globs {
		// A leading ./ anchors a glob at the start, as a slash does.
		anchored := strings.HasPrefix(g, "./")
		shape, body := ShapeOf(strings.TrimPrefix(g, "./"))
		shape.Name = shape.Name && !anchored
		for _, alt := range Alternatives(body) {
			e := exclude{shape: shape, glob: BelowOnly(alt)}
			if !anchored && !shape.Name && AnyDepth(alt) && strings.Contains(alt[len("**/"):], "/") {
				// (**/name matches a name, wherever the path starts; ./**/
				// is anchored at the start, as ./ anchors any glob.)
				e.base = base
			}
			if !strings.ContainsAny(e.glob, Meta) {
				set := &x.paths
				if shape.Name {
					set = &x.names
				}
				if *set == nil {
					*set = map[string]bool{}
				}
				// For directories only unless another glob says any entry.
				dirOnly, seen := (*set)[e.glob]
				(*set)[e.glob] = shape.DirOnly && (!seen || dirOnly)
				continue
			}
			x.globs = append(x.globs, e)
		}
	}
	return x
}

// Meta are the bytes that make a validated glob other than the name or
// path it spells.
const Meta = `*?[]{}\`

// Match reports whether an entry, its path rel below the walk's start and
// its name, is excluded.
func (x Excludes) Match(rel, name string, isDir bool) bool {
	if dirOnly, ok := x.names[name]; ok && (isDir || !dirOnly) {
		return true
	}
	if dirOnly, ok := x.paths[rel]; ok && (isDir || !dirOnly) {
		return true
	}
	for _, e := range x.globs {
		if subject, ok := Subject(e.shape, isDir, rel, name); ok && doublestar.MatchUnvalidated(e.glob, FromRoot(e.base, subject)) {
			return true
		}
	}
	return false
}

// AnyDepth reports whether the validated glob g starts with **/: it
// matches at any depth, so it is matched against an entry's path from the
// root (FromRoot), as rg -g matches a glob against the path as given,
// the path searched included, unless a leading ./ anchors it at the start
// (as rg -g '/**/src/*.go' run in the path searched, or git's pathspec). Matched below the start alone,
// **/src/*.go searched below src matched only src/x/src/*.go, never
// src/main.go, and **/src/** below src/x nothing at all.
func AnyDepth(g string) bool {
	return strings.HasPrefix(g, "**/")
}

// Alternatives returns the globs that the validated glob g stands for
// when it starts with braces one of whose alternatives starts with **/
// ({**/src/*.go,**/lib/*.go}): each alternative followed by the rest of
// g, so that each is matched from the root or below the start by its
// own start, as AnyDepth has it; an alternative that starts with braces
// is split so in turn, and the **/ may be there ({q,{**/src/*.go,zz}}).
// Split at the first level only, the **/ of such nested braces was
// matched below the start, where include and find's pattern, which
// split each level, matched it from the root. Matched whole
// below the start, such a glob searched below src missed src/main.go,
// with exit 0. Any other g is returned alone, as is one whose split
// would give an empty or absolute glob ({,**/}/x).
func Alternatives(g string) []string {
	if !strings.HasPrefix(g, "{") {
		return []string{g}
	}
	var alts []string
	depth, from := 0, 1
	for i := range unquoted(g) {
		switch g[i] {
		case '{':
			depth++
		case ',':
			if depth == 1 {
				alts, from = append(alts, g[from:i]), i+1
			}
		case '}':
			if depth--; depth > 0 {
				continue
			}
			alts = append(alts, g[from:i])
			// An alternative that starts with such braces in turn is
			// split so too.
			var all []string
			for _, a := range alts {
				if a += g[i+1:]; a == "" || strings.HasPrefix(a, "/") {
					return []string{g}
				}
				all = append(all, Alternatives(a)...)
			}
			if !slices.ContainsFunc(all, AnyDepth) {
				return []string{g}
			}
			return all
		}
	}
	return []string{g}
}

// unquoted yields the index of each byte of the validated glob g that is
// neither escaped nor inside a class, as doublestar reads them: a class
// ends at its first ].
func unquoted(g string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := 0; i < len(g); i++ {
			switch g[i] {
			case '\\':
				i++
			case '[':
				for i++; i < len(g) && g[i] != ']'; i++ {
					if g[i] == '\\' {
						i++
					}
				}
			default:
				if !yield(i) {
					return
				}
			}
		}
	}
}

// FromRoot is the path rel below a walk's start that the answers spell
// base ("" or "." for the root), spelled from the root as they spell it.
func FromRoot(base, rel string) string {
	switch base {
	case "", ".":
		return rel
	}
	if strings.HasSuffix(base, "/") {
		return base + rel
	}
	return base + "/" + rel
}

// BelowOnly returns the validated glob g, matched on paths, so that a
// final /** matches only what is below what the rest of g names, as in an
// ignore file, rg -g and fd: doublestar's /** also matches no name at all,
// so that */** matched every file at the top (--exclude '*/**' left out
// everything, with exit 0) and src/** the directory src itself. A /**
// that ends an alternative of braces which end g is final in the globs
// the braces stand for, and is read so too: {a/**,b/**} matched a and b
// themselves, and --exclude '{*/**,c}' left out everything at the top.
func BelowOnly(g string) string {
	if !strings.Contains(g, "/**") {
		return g
	}
	var (
		open []int // the braces open at i
		// ends maps a brace's commas and its } to the index of that }.
		ends = map[int]int{}
		at   []int // each unescaped /** outside a class
	)
	commas := map[int][]int{} // an open brace's commas
	for i := range unquoted(g) {
		switch g[i] {
		case '{':
			open = append(open, i)
		case ',':
			if len(open) > 0 {
				o := open[len(open)-1]
				commas[o] = append(commas[o], i)
			}
		case '}':
			if len(open) > 0 {
				o := open[len(open)-1]
				open = open[:len(open)-1]
				ends[i] = i
				for _, c := range commas[o] {
					ends[c] = i
				}
			}
		case '/':
			if strings.HasPrefix(g[i:], "/**") {
				at = append(at, i)
			}
		}
	}
	var b strings.Builder
	last := 0
	for _, i := range at {
		if endsGlob(g, i+len("/**"), ends) {
			b.WriteString(g[last : i+1])
			b.WriteString("*/")
			last = i + 1
		}
	}
	if last == 0 {
		return g
	}
	b.WriteString(g[last:])
	return b.String()
}

// endsGlob reports whether the glob g ends at i in some of the globs its
// braces stand for: at its end, or where an alternative ends whose braces
// (and theirs) end g. ends maps a comma or } of braces to that }.
func endsGlob(g string, i int, ends map[int]int) bool {
	for i < len(g) {
		end, ok := ends[i]
		if !ok {
			return false
		}
		i = end + 1
	}
	return true
}
