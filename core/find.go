package core

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"path"
	"strings"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/bmatcuk/doublestar/v4"
)

// FindRequest finds paths below a directory by glob.
type FindRequest struct {
	Pattern  string `json:"pattern" arg:"0" alias:"glob" default:"**" help:"glob: * matches within a segment, ** any depth, ? one character, {a,b} and [abc] as usual; without a slash it matches names at any depth, with one the path below path (one that starts with **/ the path from the root, as rg -g, unless a leading ./ anchors it below path)"`
	Path     string `json:"path,omitempty" arg:"1" alias:"dir_path" default:"." help:"directory to search"`
	Type     string `json:"type,omitempty" flagAlias:"t" enum:"file|f,dir|d|directory,symlink|l|link,other,any" default:"any" help:"kind of entry to find (other: a FIFO, socket or device)"`
	Limit    int    `json:"limit,omitempty" min:"1" max:"1000" default:"200" help:"results per page"`
	Offset   int    `json:"offset,omitempty" min:"0" help:"results to skip: the previous page's nextOffset"`
	Cursor   string `json:"cursor,omitempty" help:"the previous page's nextCursor: the walk resumes where that page ended instead of from the start"`
	NoIgnore bool   `json:"noIgnore,omitempty" help:"do not honour .gitignore, .ignore, .git/info/exclude and .agentfsignore"`
	Exclude  Globs  `json:"exclude,omitempty" help:"globs to leave out, with what is below them; without a slash a glob matches a name at any depth"`
}

// FindEntry is one path found; Type is left out for a regular file.
type FindEntry struct {
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
	Type       string `json:"type,omitempty"`
}

// FindResult is one page of paths, in walk order: depth-first, each
// directory's entries in name order.
type FindResult struct {
	Path       string      `json:"path"`
	PathBase64 string      `json:"pathBase64,omitempty"`
	Results    []FindEntry `json:"results"`
	Truncated  bool        `json:"truncated,omitempty"`
	// Unreadable counts the directories the walk skipped for want of
	// permission: the answer is partial (--exit-status: 4).
	Unreadable int `json:"unreadable,omitempty"`
	// Hint says, when nothing matched a pattern that names a directory
	// here (find src -type f, as find(1) takes it), how to list what is
	// below that directory.
	Hint       string `json:"hint,omitempty"`
	NextOffset *int   `json:"nextOffset,omitempty"`
	NextCursor string `json:"nextCursor,omitempty"`
	// Matched says the walk met an entry that matches, on this page or on
	// those its offset or cursor passed (GrepResult.Matched).
	Matched bool `json:"-"`
}

// maxUnreadable is the count of unreadable entries a page's skeleton makes
// room for: a page that meets more (a million directories it may not
// enter) is TOO_LARGE rather than over the bound.
const maxUnreadable = 999_999

// FindDefaultLimit is the page of a request that gives no limit.
const FindDefaultLimit = 200

// quotedGlob is the glob g as a message or hint shows it: as given,
// between double quotes that show where it ends, as the messages' other
// globs (what it names) and a hint's paths are shown as given. %q doubled
// a backslash ("./\\*.go" for ./\*.go), which a caller copying the glob
// into a shell or JSON got wrong.
func quotedGlob(g string) string { return `"` + g + `"` }

// checkGlob validates a glob of a request field; an invalid one is
// INVALID_GLOB naming the field and quoting the glob as given, its
// leading ./ kept.
func checkGlob(field, g string) (string, error) {
	given := g
	g, _ = cutDotSlash(g)
	if field != "pattern" && strings.HasPrefix(g, "!") {
		// rg's -g '!x' negates; here include only narrows and exclude only
		// prunes, so a leading ! would silently match nothing.
		return "", fault.Errorf(fault.CodeInvalidGlob, "%s %s starts with !, which does not negate here.", field, quotedGlob(given)).
			WithHint("leave paths out with --exclude GLOB, without the !; keep only some with grep's --include or find's pattern")
	}
	if !doublestar.ValidatePattern(g) {
		return "", fault.Errorf(fault.CodeInvalidGlob, "%s %s is not a valid glob.", field, quotedGlob(given)).
			WithHint("check brackets and braces; escape a literal *, ?, [ or { with a backslash")
	}
	if n, depth := braceLoad(g); n > maxGlobAlternatives || depth > maxBraceDepth {
		// doublestar matches braces by trying each alternative with the
		// rest of the pattern, so that its work per name grows with the
		// patterns they stand for, and with the square of their nesting:
		// "{a,a}" 24 times took 5 s on one name, and 10,000 nested braces
		// 0.7 s a name.
		return "", fault.Errorf(fault.CodeInvalidGlob, "%s %s has braces that stand for more than %d patterns or nest more than %d deep.", field, quotedGlob(given), maxGlobAlternatives, maxBraceDepth).
			WithHint("split it into fewer alternatives, or search with several calls")
	}
	if slashInClass(g) {
		// doublestar matches it across segments (src[/]c.go matched
		// src/c.go), where a class is one character of a name.
		return "", fault.Errorf(fault.CodeInvalidGlob, "%s %s has a / inside [...], which matches one character of a name, never a slash.", field, quotedGlob(given)).
			WithHint("write the slash outside the brackets")
	}
	if name := posixClassIn(g); name != "" {
		// doublestar reads [[:digit:]] as the class [[:digt] then a ],
		// so that it matched d] and not 5, with exit 0 (as rg -g and
		// fd -g do; git knows the class).
		e := fault.Errorf(fault.CodeInvalidGlob, "%s %s holds the POSIX class [:%s:], which globs here do not know.", field, quotedGlob(given), name)
		if r, ok := posixRanges[name]; ok {
			return "", e.WithHint("write its characters as a range inside the brackets: [%s] for [[:%s:]]", r, name)
		}
		return "", e.WithHint("write its characters as ranges inside the brackets, such as [a-zA-Z0-9]")
	}
	if path.IsAbs(g) {
		return "", fault.Errorf(fault.CodeInvalidGlob, "%s %s is absolute; it must be relative to path.", field, quotedGlob(given)).
			WithHint("put the directory in path and the rest in %s", field)
	}
	// A glob that no path can match is an error, never an empty success
	// that a gate would take for "nothing there".
	body := g
	if strings.HasSuffix(g, "/") {
		if field == "include" {
			// Dropping the slash alone, as the hint said, names files
			// called src, and the search answered nothing with exit 0.
			dirs := strings.TrimSuffix(given, "/")
			below := dirs + "/**"
			if !strings.Contains(dirs, "/") {
				below = "**/" + below // a name at any depth
			}
			asPath := ""
			if d := strings.TrimSuffix(g, "/"); !strings.ContainsAny(d, `*?[]{}\`) {
				asPath = fmt.Sprintf(", or give %s as the path", d)
			}
			return "", fault.Errorf(fault.CodeInvalidGlob, "include %s ends with a slash, which names directories; include selects files.", quotedGlob(given)).
				WithHint("for the files below the directories %s names, write %s%s; to leave them out, use --exclude %s", given, below, asPath, given)
		}
		body = strings.TrimSuffix(g, "/")
	}
	for _, seg := range strings.Split(body, "/") {
		switch seg {
		case "":
			return "", fault.Errorf(fault.CodeInvalidGlob, "%s %s has an empty segment (//), which no path has.", field, quotedGlob(given)).
				WithHint("write one slash between names")
		case ".", "..":
			return "", fault.Errorf(fault.CodeInvalidGlob, "%s %s has a %s segment, which no path below path has.", field, quotedGlob(given), seg).
				WithHint("put the directory in path and the rest in %s", field)
		}
	}
	return g, nil
}

// checkGlobsBelow refuses a glob with a slash that starts with dir as
// the answers spell it (core/*.go, searching below core): matched below
// dir, where nothing bears that name, it matches nothing, so that an
// include answered nothing and an exclude left nothing out, with exit 0
// (a replace changed the files it was told to spare); rg -g, which takes
// a glob from where it runs, matches it. A dir holding an entry of that
// name may be meant and is let be, as is a glob that repeats nothing.
func (t *Tools) checkGlobsBelow(ctx context.Context, dir, field string, globs []string) error {
	d := t.FS.Display(dir)
	if d == "." || path.IsAbs(d) || strings.ContainsAny(d, `*?[]{}\`) {
		return nil
	}
	missing := func(name string) bool {
		_, err := t.FS.Stat(ctx, path.Join(dir, name))
		return err != nil && fault.AsError(err).Code == fault.CodeNotFound
	}
	isDir := func() bool {
		info, err := t.FS.Stat(ctx, dir)
		return err == nil && info.Type == backend.TypeDir
	}
	for _, g := range globs {
		g0, _ := cutDotSlash(g)
		rest, ok := strings.CutPrefix(g0, d+"/")
		if !ok || strings.Trim(rest, "/") == "" {
			// One that starts with a directory above dir (x/**/*.go
			// below x/y) names dir/x, as rg -g would not take it.
			if err := t.checkGlobAbove(d, field, g, missing, isDir); err != nil {
				return err
			}
			continue
		}
		if !missing(d) {
			continue
		}
		if !isDir() {
			return nil // the search says what is wrong with dir
		}
		below := rest
		if !strings.Contains(strings.TrimSuffix(rest, "/"), "/") {
			below = "./" + rest // anchored, as the glob was below the top
		}
		return fault.Errorf(fault.CodeInvalidGlob, "%s %s starts with %s/, the path it is matched below: it names %s/%s, and nothing is there.", field, quotedGlob(g), d, d, g0).
			WithHint("write it below the path: %s", quotedGlob(below))
	}
	return nil
}

// checkGlobAbove refuses the glob g when it starts with a directory above
// d, the path searched as the answers spell it, and d holds no entry named
// as the glob's first name (missing): matched below d, it matches nothing.
func (t *Tools) checkGlobAbove(d, field, g string, missing func(string) bool, isDir func() bool) error {
	g0, _ := cutDotSlash(g)
	for up := path.Dir(d); up != "." && up != "/" && path.Base(up) != ".."; up = path.Dir(up) {
		rest, ok := strings.CutPrefix(g0, up+"/")
		if !ok || strings.Trim(rest, "/") == "" {
			continue
		}
		first, _, _ := strings.Cut(up, "/")
		if !missing(first) || !isDir() {
			return nil
		}
		return fault.Errorf(fault.CodeInvalidGlob, "%s %s starts with %s/, a directory above the path %s it is matched below: it names %s/%s, and nothing is there.", field, quotedGlob(g), up, d, d, g0).
			WithHint("write it below the path %s, or give %s as the path", d, up)
	}
	return nil
}

// maxGlobAlternatives bounds the brace-free patterns a glob's braces stand
// for ("*.{go,md}" stands for 2, "{a,b}{c,d}" for 4), and maxBraceDepth
// their nesting: enough for any glob written by hand, and they keep the
// cost of matching one name within a millisecond or so.
const (
	maxGlobAlternatives = 256
	maxBraceDepth       = 16
)

// braceLoad is the number of brace-free patterns the valid glob g stands
// for (at most maxGlobAlternatives+1: it stops counting past) and how deep
// its braces nest (at most maxBraceDepth+1, where it stops reading).
// Escaped braces and braces in a class are literals, as doublestar has
// them.
func braceLoad(g string) (patterns, depth int) {
	type group struct{ sum, prod int }
	stack := []group{{0, 1}}
	capped := func(n int) int { return min(n, maxGlobAlternatives+1) }
	for i, class := range globChars(g) {
		if class >= 0 {
			continue
		}
		top := &stack[len(stack)-1]
		switch g[i] {
		case '{':
			if len(stack) > maxBraceDepth {
				return stack[0].prod, len(stack)
			}
			stack = append(stack, group{0, 1})
			depth = max(depth, len(stack)-1)
		case ',':
			if len(stack) > 1 {
				top.sum, top.prod = capped(top.sum+top.prod), 1
			}
		case '}':
			if len(stack) > 1 {
				n := capped(top.sum + top.prod)
				stack = stack[:len(stack)-1]
				parent := &stack[len(stack)-1]
				parent.prod = capped(parent.prod * n)
			}
		}
	}
	return stack[0].prod, depth
}

// globChars yields the index of each character of the valid glob g that
// is neither a backslash nor escaped by one, with the index of the [ of
// the bracket expression it stands in, -1 outside one. A class's [ and ]
// and its negation (! or ^ after the [) are outside it; the class ends at
// its first ] that is not escaped (ValidatePattern refused an empty one).
func globChars(g string) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		class := -1
		for i := 0; i < len(g); i++ {
			switch c := g[i]; {
			case c == '\\':
				i++
				continue
			case class < 0 && c == '[':
				if !yield(i, -1) {
					return
				}
				class = i
				if i+1 < len(g) && (g[i+1] == '!' || g[i+1] == '^') {
					i++
				}
				continue
			case class >= 0 && c == ']':
				class = -1
			}
			if !yield(i, class) {
				return
			}
		}
	}
}

// slashInClass reports whether the valid glob g has a / inside a bracket
// expression that is not negated ([!/] never matches a slash, as meant).
func slashInClass(g string) bool {
	for i, class := range globChars(g) {
		if class >= 0 && g[i] == '/' && g[class+1] != '!' && g[class+1] != '^' {
			return true
		}
	}
	return false
}

// posixClassIn returns the name of the first POSIX class ([:digit:])
// inside a bracket expression of g, or "".
func posixClassIn(g string) string {
	for i, class := range globChars(g) {
		if class < 0 || g[i] != '[' || !strings.HasPrefix(g[i+1:], ":") {
			continue
		}
		rest := g[i+2:]
		if end := strings.Index(rest, ":]"); end > 0 && strings.Trim(rest[:end], "abcdefghijklmnopqrstuvwxyz") == "" {
			return rest[:end]
		}
	}
	return ""
}

// posixRanges spells the POSIX classes of ASCII as ranges a glob's
// brackets hold.
var posixRanges = map[string]string{
	"digit":  "0-9",
	"alpha":  "a-zA-Z",
	"alnum":  "a-zA-Z0-9",
	"upper":  "A-Z",
	"lower":  "a-z",
	"xdigit": "0-9a-fA-F",
}

// checkGlobs validates the exclude globs gs. One that starts with ./
// keeps it, which anchors it at the walk's start (ignore.NewExcludes):
// dropped, a glob with no other slash matched names at any depth, and
// one that starts with **/ the path from the root.
func checkGlobs(field string, gs []string) ([]string, error) {
	out := make([]string, 0, len(gs))
	for _, g := range gs {
		if g == "" {
			continue // no glob, as include takes it: nothing left out
		}
		c, err := checkGlob(field, g)
		if err != nil {
			return nil, err
		}
		if _, anchored := cutDotSlash(g); anchored {
			c = "./" + c
		}
		out = append(out, c)
	}
	return out, nil
}

// walker returns the backend's Walker, or NOT_CONFIGURED when it has none.
func (t *Tools) walker() (backend.Walker, error) {
	w, ok := t.FS.(backend.Walker)
	if !ok {
		return nil, fault.Errorf(fault.CodeNotSupported, "this backend cannot walk directories.").
			WithHint("read files by their paths, or use a backend that lists directories")
	}
	return w, nil
}

// Find walks path and returns the entries that match pattern, a page at a
// time: a pattern without a slash is matched against each name at any
// depth, as ignore files, include and rg -g do; one with a slash against the
// path relative to path. The walk stops at the first result past the page,
// so the cost of a page does not grow with the size of the tree.
func (t *Tools) Find(ctx context.Context, req FindRequest) (*FindResult, error) {
	if err := Validate(req); err != nil {
		return nil, err
	}
	digest := req.digest(t.FS.Display)
	from, err := resume(req.Cursor, digest, &req.Offset)
	if err != nil {
		return nil, err
	}
	limit := cmp.Or(req.Limit, FindDefaultLimit)
	if req.Pattern == "" {
		req.Pattern = "**"
	}
	// A final slash names directories, as in an ignore file and fd.
	if p, ok := strings.CutSuffix(req.Pattern, "/"); ok && p != "" && !strings.HasSuffix(p, "/") {
		switch req.Type {
		case "", "any", "dir", "directory", "d":
			// any, the schema's default, holds directories too.
			req.Pattern, req.Type = p, "dir"
		default:
			// Dropping the slash alone led to find src -type f, which
			// finds what is named src, where find(1) lists below it.
			e := fault.InvalidArgument("pattern %s ends with a slash, which names directories, but --type is %s.", quotedGlob(req.Pattern), req.Type)
			below := path.Join(cmp.Or(req.Path, "."), p)
			if info, err := t.FS.Stat(ctx, below); err == nil && info.Type == backend.TypeDir {
				d := t.FS.Display(below)
				return nil, e.WithHint("for what is below %s, give it as the path and ** as the pattern (find '**' %s); drop the final slash for entries named %s", d, d, p)
			}
			g := p + "/**"
			if !strings.Contains(p, "/") {
				g = "**/" + g
			}
			return nil, e.WithHint("pass the pattern %s for what is below the directories %s names; drop the final slash for entries named %s", g, req.Pattern, p)
		}
	}
	pattern, err := checkGlob("pattern", req.Pattern)
	if err != nil {
		return nil, err
	}
	// Shaped by the glob as given, whose leading ./ anchors.
	g := givenGlob(req.Pattern, pattern)
	exclude, err := checkGlobs("exclude", req.Exclude)
	if err != nil {
		return nil, err
	}
	want := typeFilters[req.Type]
	w, err := t.walker()
	if err != nil {
		return nil, err
	}
	dir := req.Path
	if dir == "" {
		dir = "."
	}
	if err := t.checkGlobsBelow(ctx, dir, "pattern", []string{req.Pattern}); err != nil {
		return nil, err
	}
	if err := t.checkGlobsBelow(ctx, dir, "exclude", req.Exclude); err != nil {
		return nil, err
	}
	base := t.FS.Display(dir)
	g = fromRoot([]glob{g}, base)[0]
	res := &FindResult{Results: []FindEntry{}}
	res.Path, res.PathBase64 = fault.PathText(t.FS.Display(dir))
	pg := t.newWalkPage(req.Offset, limit, &FindResult{Path: res.Path, PathBase64: res.PathBase64,
		Results: []FindEntry{}, Truncated: true, Unreadable: maxUnreadable, NextOffset: new(req.Offset + limit)})
	if from.From != "" {
		pg.resumeAt(from)
	}
	opts := backend.WalkOptions{NoIgnore: req.NoIgnore, Exclude: exclude, ExcludeBase: base, From: from.From, Unreadable: pg.unreadable}
	err = w.Walk(ctx, dir, opts, func(e backend.WalkEntry) error {
		if !want(e.Type) || !g.match(e.Rel, e.Name) {
			return nil
		}
		if pg.skip(e.Rel) {
			return nil
		}
		if pg.full() {
			return backend.ErrStopWalk
		}
		fe := FindEntry{Type: e.Type.EntryType()}
		fe.Path, fe.PathBase64 = fault.PathText(e.Path)
		next := pg.cursorAfter(e.Rel, digest)
		if ok, err := pg.fits(fe, e.Path, e.Rel, next); !ok {
			return cmp.Or(err, backend.ErrStopWalk)
		}
		res.Results = append(res.Results, fe)
		return nil
	})
	if err != nil {
		return nil, t.WithSuggestions(ctx, dir, err)
	}
	res.NextOffset, res.Truncated, res.Matched = pg.next, pg.truncated, pg.seen > 0
	res.Unreadable = pg.unreadableCount()
	if pg.next != nil {
		res.NextCursor = pg.last
	}
	if req.Offset == 0 && req.Cursor == "" {
		if hint := t.dirPatternHint(ctx, dir, pattern, res.Matched); hint != "" && jsonSize(res)+jsonLen(hint)+len(`,"hint":""`) <= t.maxBytes() {
			res.Hint = hint
		}
	}
	return fitted(t, res)
}

// dirPatternHint is the hint of a search for a pattern that is no glob but
// the path of a directory below dir: find src -type f as find(1) takes it,
// where it lists what is below src; matched says the search found
// something all the same (find src lists the directory src alone).
func (t *Tools) dirPatternHint(ctx context.Context, dir, pattern string, matched bool) string {
	if pattern == "" || strings.ContainsAny(pattern, `*?[{\`) {
		return ""
	}
	p := path.Join(dir, pattern)
	if info, err := t.FS.Stat(ctx, p); err != nil || info.Type != backend.TypeDir {
		return ""
	}
	d := t.FS.Display(p)
	if matched {
		return fmt.Sprintf("%s is a directory here: for what is below it, give %s as the path and ** as the pattern (find '**' %s)", pattern, d, d)
	}
	return fmt.Sprintf("nothing is named %s, a directory here: for what is below it, give %s as the path and ** as the pattern (find '**' %s)", pattern, d, d)
}

// includeDirHint is the hint of a search that matched nothing under an
// include that is no glob but the path of a directory below dir (--include
// src, meaning the files below src): include selects files, and names
// files called src.
func (t *Tools) includeDirHint(ctx context.Context, dir string, include []string) string {
	for _, g := range include {
		p, _ := cutDotSlash(g)
		if p == "" || strings.ContainsAny(p, `*?[{\`) {
			continue
		}
		below := path.Join(dir, p)
		if info, err := t.FS.Stat(ctx, below); err != nil || info.Type != backend.TypeDir {
			continue
		}
		return fmt.Sprintf("include %s names files, and %s is a directory here: for the files below it, write %s/** or give %s as the path", g, p, g, t.FS.Display(below))
	}
	return ""
}

// digest identifies the request by all but its paging, its path by its
// spelling in output (display).
func (req FindRequest) digest(display func(string) string) string {
	req.Offset, req.Limit, req.Cursor = 0, 0, ""
	req.Path = displayedPath(req.Path, display)
	return requestDigest(req)
}

// typeFilters turn each spelling of the type field, which Validate
// checked, into a predicate.
var typeFilters = map[string]func(backend.FileType) bool{
	"":          func(backend.FileType) bool { return true },
	"any":       func(backend.FileType) bool { return true },
	"file":      isType(backend.TypeFile),
	"f":         isType(backend.TypeFile),
	"dir":       isType(backend.TypeDir),
	"directory": isType(backend.TypeDir),
	"d":         isType(backend.TypeDir),
	"symlink":   isType(backend.TypeSymlink),
	"link":      isType(backend.TypeSymlink),
	"l":         isType(backend.TypeSymlink),
	"other":     isType(backend.TypeOther),
}

func isType(want backend.FileType) func(backend.FileType) bool {
	return func(t backend.FileType) bool { return t == want }
}
