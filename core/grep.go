package core

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"path"
	"reflect"
	"regexp/syntax"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/ordered"
	"github.com/agentfs/agentfs/search"
)

// GrepRequest searches file contents below a path.
type GrepRequest struct {
	Query      string   `json:"query" arg:"0" refusesEmpty:"true" help:"text to search for, one line: a fixed string, or a regular expression when regex is true; needed unless pattern is given"`
	Pattern    string   `json:"pattern,omitempty" standsFor:"query" help:"a regular expression to search for, in place of query, as other agents' Grep tools take it; a fixed string when regex is false"`
	Path       string   `json:"path,omitempty" arg:"1" alias:"file_path,dir_path" default:"." help:"file or directory to search"`
	Include    Globs    `json:"include,omitempty" alias:"glob" help:"search only files matching one of these globs (one glob may be given as a string); without a slash a glob matches the name at any depth"`
	Regex      *bool    `json:"regex,omitempty" help:"the query is a regular expression (Go RE2 syntax)"`
	IgnoreCase bool     `json:"ignoreCase,omitempty" flagAlias:"i" help:"ignore case (Unicode simple folding, as ripgrep)"`
	Word       bool     `json:"word,omitempty" flagAlias:"w" help:"match whole words only, as rg -w and replace's word: foo does not match in http2foo, foobar or fooé"`
	Context    int      `json:"context,omitempty" flagAlias:"C" min:"0" max:"10" default:"0" help:"lines of context around each match"`
	Limit      int      `json:"limit,omitempty" min:"1" max:"1000" default:"200" help:"matching lines per page (files in files and count modes)"`
	Offset     int      `json:"offset,omitempty" min:"0" help:"matching lines (files) to skip: the previous page's nextOffset"`
	Cursor     string   `json:"cursor,omitempty" help:"the previous page's nextCursor: the search resumes where that page ended instead of from the start"`
	Mode       string   `json:"mode,omitempty" enum:"content,files,count" default:"content" help:"content: the matching lines, in blocks; files: the paths of matching files; count: the paths with their counts, and totals"`
	NoIgnore   bool     `json:"noIgnore,omitempty" help:"do not honour .gitignore, .ignore, .git/info/exclude and .agentfsignore"`
	Exclude    Globs    `json:"exclude,omitempty" help:"globs of paths to leave out; without a slash a glob matches a name at any depth"`
	NoIndex    bool     `json:"noIndex,omitempty" help:"read every file, even when an index (agentfs index) covers the path; the results are the same"`
	Timeout    Duration `json:"timeout,omitempty" default:"30s" help:"stop after this long and return the partial page, with timedOut: a duration such as 30s or 2m (up to 24h), or a number of seconds; 0 is the same as leaving it out"`
}

// globs checks and compiles an include list: a file is kept when any one
// matches, a glob without a slash matching the name at any depth.
func (g Globs) globs() ([]glob, error) {
	var include []glob
	for _, s := range g {
		if s == "" {
			continue // no glob, as a tool schema's default sends it: no filter
		}
		p, err := checkGlob("include", s)
		if err != nil {
			return nil, err
		}
		// Shaped by the glob as given, whose leading ./ anchors.
		include = append(include, givenGlob(s, p))
	}
	return include, nil
}

// Globs is a list of globs that JSON may also give as one string
// ("include": "*.go", "exclude": "*.txt"), as other agents' tools do.
type Globs []string

// UnmarshalJSON takes one string, an array of strings, or null. A null
// in the array is no string: taken for "", no glob, it left include
// out, and a replace changed every file.
func (g *Globs) UnmarshalJSON(b []byte) error {
	var one *string
	if json.Unmarshal(b, &one) == nil {
		*g = nil
		if one != nil {
			*g = Globs{*one}
		}
		return nil
	}
	var many []*string
	if err := json.Unmarshal(b, &many); err != nil || slices.Contains(many, nil) {
		return globsRefused("globs", b)
	}
	*g = make(Globs, len(many))
	for i, s := range many {
		(*g)[i] = *s
	}
	return nil
}

// globsRefused is the refusal of the JSON value b given for the globs
// field named name (DecodeJSON knows the name, UnmarshalJSON does not).
func globsRefused(name string, b []byte) *fault.Error {
	return fault.InvalidArgument("%s must be one glob or an array of globs, not %s.", name, jsonKind(b)).
		WithHint(`give "*.go", or ["*.go", "*.md"] for several`)
}

// jsonKind names the kind of a JSON value that is not a string.
func jsonKind(b []byte) string {
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array of other values than strings"
	case 't', 'f':
		return "true or false"
	}
	return "a number"
}

// Duration is a time span given as Go text ("30s", "1m") or a number of
// seconds in JSON.
type Duration time.Duration

// UnmarshalText parses "30s"-style text or a plain number of seconds; ""
// is the field left out, as any string field's.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b), 0, maxDuration)
	if errors.Is(err, errDurationRange) {
		err = fault.InvalidArgument("a duration must be from 0 to %s, not %s.", strings.TrimSuffix(maxDuration.String(), "0m0s"), b).WithHint("give a duration such as 30s")
	}
	*d = Duration(v)
	return err
}

// maxDuration bounds a Duration: a day is far beyond any useful timeout
// and keeps the float conversion clear of overflow (1e12 seconds would
// wrap negative).
const maxDuration = 24 * time.Hour

// errDurationRange is parseDuration's error for a duration outside its
// range, which its caller words.
var errDurationRange = errors.New("duration out of range")

// parseDuration parses "30s"-style text or a plain number of seconds, from
// least to most; "" is 0, the field left out.
func parseDuration(s string, least, most time.Duration) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if f, ok := Seconds(s); ok {
		if f < least.Seconds() || f > most.Seconds() {
			return 0, errDurationRange
		}
		return time.Duration(f * float64(time.Second)), nil
	} else if v, err := time.ParseDuration(s); err == nil {
		if v < least || v > most {
			return 0, errDurationRange
		}
		return v, nil
	}
	return 0, NotADuration(s)
}

// Seconds reads s, a plain number (30, 1.5), as that many seconds: the
// reading every duration gives a bare number, a flag's and an environment
// variable's as a request field's, as JSON's numbers are; false when s is
// no finite number.
func Seconds(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

// NotADuration is the error of the text s that is no duration: neither
// Go's form (30s, 2m) nor a number of seconds. Its caller puts the flag,
// field or variable before it, as in "--timeout: ", so that every
// duration is refused in the same words.
func NotADuration(s string) *fault.Error {
	return fault.InvalidArgument("%q is not a duration such as 30s or 2m.", s).WithHint("give a duration such as 30s")
}

// UnmarshalJSON takes a string ("30s") or a number of seconds; null, as
// a strict-form tool call sends for a field it does not use, is the field
// left out.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if err := durationToken(b, reflect.TypeFor[Duration]()); err != nil {
		return err
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		return d.UnmarshalText([]byte(s))
	}
	return d.UnmarshalText(b)
}

// durationToken refuses a JSON value that is neither a string nor a
// number as a type error, which the decoder gives the field's name (a
// true was "\"true\" is not a duration", naming no field).
func durationToken(b []byte, t reflect.Type) error {
	switch {
	case len(b) == 0, b[0] == '"', b[0] == '-', '0' <= b[0] && b[0] <= '9':
		return nil
	case b[0] == 't', b[0] == 'f':
		return &json.UnmarshalTypeError{Value: "bool", Type: t}
	case b[0] == '[':
		return &json.UnmarshalTypeError{Value: "array", Type: t}
	}
	return &json.UnmarshalTypeError{Value: "object", Type: t}
}

// MarshalText writes the Go spelling, 30s.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// GrepBlock is a run of consecutive lines of one file: matching lines and,
// with context, the lines around them. Its lines are numbered from Start.
type GrepBlock struct {
	Start int      `json:"start"`
	Lines []string `json:"lines"`
	// Matches lists the numbers of the matching lines. It is left out when
	// every line of the block matches, as always without context.
	Matches []int `json:"matches,omitempty"`
	// LinesBase64 holds, by line number, the bytes of each line that is not
	// UTF-8, whose entry in Lines has U+FFFD in their place (for a cut line,
	// the bytes kept, without the markers).
	LinesBase64 map[int]string `json:"linesBase64,omitempty"`
}

// GrepFile is one file with matches: its blocks in content mode, its
// number of matching lines in count mode, its path alone in files mode.
type GrepFile struct {
	Path       string      `json:"path"`
	PathBase64 string      `json:"pathBase64,omitempty"`
	Count      int         `json:"count,omitempty"`
	Blocks     []GrepBlock `json:"blocks,omitempty"`
}

// GrepResult is one page of a search, grouped by file in walk order. Count
// is the number of matching lines in the page in content mode, of files in
// files mode, and of matching lines in the whole search in count mode.
type GrepResult struct {
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
	Mode       string `json:"mode"`
	Count      int    `json:"count"`
	// FilesWithMatches is set in count mode: files in the whole search.
	FilesWithMatches *int `json:"filesWithMatches,omitempty"`
	// FilesSearched and BinarySkipped cover the files read for this page.
	FilesSearched int  `json:"filesSearched"`
	BinarySkipped int  `json:"binaryFilesSkipped,omitempty"`
	Truncated     bool `json:"truncated,omitempty"`
	TimedOut      bool `json:"timedOut,omitempty"`
	// Unreadable counts the files and directories the search skipped for
	// want of permission: the answer is partial (--exit-status: 4).
	Unreadable int `json:"unreadable,omitempty"`
	// Hint says what to do next when the page is partial for a reason the
	// caller can act on (a timeout), or when nothing matched a fixed
	// string that reads as a regular expression.
	Hint       string `json:"hint,omitempty"`
	NextOffset *int   `json:"nextOffset,omitempty"`
	NextCursor string `json:"nextCursor,omitempty"`
	// Files comes last: the totals above are read first.
	Files []GrepFile `json:"files"`
	// Matched says the search met a match, on this page or on the pages
	// its offset or cursor passed: a page past the last match is empty,
	// yet the search matched (--exit-status exited 1, "nothing matched").
	Matched bool `json:"-"`
	// Context is the request's lines of context, for the text that
	// prints -- between two blocks as rg -C does, whether or not they
	// hold a context line.
	Context int `json:"-"`
}

// queryField is GrepRequest's query, needed unless pattern is given.
var queryField = func() FieldSpec {
	for _, f := range Fields(reflect.TypeFor[GrepRequest]()) {
		if f.JSON == "query" {
			return f
		}
	}
	panic("core: GrepRequest has no query")
}()

// query is the text to search for, and whether it is a regex: pattern is
// a regex unless regex is false, query a fixed string unless regex is true.
func (req GrepRequest) query() (string, bool, error) {
	switch {
	case req.Query != "" && req.Pattern != "":
		return "", false, fault.InvalidArgument("query and pattern are both given; they are the same field.").
			WithHint("give the text as query, or a regex as pattern")
	case req.Pattern != "":
		return req.Pattern, req.Regex == nil || *req.Regex, checkQuery("grep", req.Pattern)
	case req.Query == "":
		// As replace's query, which Validate requires, is refused.
		return "", false, queryField.Missing(queryField.JSON)
	}
	return req.Query, req.Regex != nil && *req.Regex, checkQuery("grep", req.Query)
}

// checkQuery refuses a query over MaxQueryBytes, the text of one line or
// a few: parsed and compiled, a regular expression takes two hundred
// times its size in memory (1 MB took 190 MB, 50 MB more than 1.8 GB)
// and the hint of an empty answer parses a fixed string too.
func checkQuery(tool, query string) error {
	if len(query) <= MaxQueryBytes {
		return nil
	}
	return fault.Errorf(fault.CodeTooLarge, "the query is %d bytes; %s takes at most %d (64 KiB).", len(query), tool, MaxQueryBytes).
		WithDetail("size", len(query)).WithDetail("limit", MaxQueryBytes).
		WithHint("%s", queryHint[tool])
}

var queryHint = map[string]string{
	"grep":    "search for a shorter part of the text: a line of it, or a few words no other place holds",
	"replace": "replace a shorter part of the text, a few times over if need be, or change each file with edit (up to 2 MiB)",
}

// regexLookalikeHint is the hint of a search for a fixed string that
// found nothing while the string reads as a regular expression meaning
// something else (func .*Serve, a\.b, x|y): agents write regexes out of
// habit, and an empty answer with exit 0 says the text is nowhere. A
// string that is no regex ([]int, Open() or only groups
// (Close()) gets none: its fixed reading is the only one.
func regexLookalikeHint(query string) string {
	re, err := syntax.Parse(query, syntax.Perl)
	if err != nil || (!strings.Contains(query, `\`) && !beyondLiteral(re)) {
		return ""
	}
	return "nothing matched this fixed string, which reads as a regular expression: if it is one, search again with --regex (regex: true)"
}

// beyondLiteral reports whether re matches other text than its literals
// in a row: a class, a repeat, an alternative or an anchor.
func beyondLiteral(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpEmptyMatch, syntax.OpCapture, syntax.OpConcat:
		return slices.ContainsFunc(re.Sub, beyondLiteral)
	}
	return true
}

// Grep defaults; the tags of GrepRequest bound limit and context.
const (
	GrepDefaultLimit   = 200
	GrepDefaultTimeout = 30 * time.Second
	// MaxLineBytes is where a reported line is cut, with a marker.
	MaxLineBytes = 1000
	// MaxQueryBytes bounds the query of grep and replace (checkQuery).
	MaxQueryBytes = 64 << 10
)

// Grep modes.
const (
	ModeContent = "content"
	ModeFiles   = "files"
	ModeCount   = "count"
)

// grepItem is a file of a search: listed by the walk, opened and searched
// by a worker, and consumed in walk order.
type grepItem struct {
	path, rel string
	// open is nil for files the index proved cannot match, in a row:
	// their result is known without reading them. files counts them,
	// binaries those binary; first is the first's rel, rel the last's.
	open            func() (io.ReadCloser, error)
	files, binaries int
	first           string
	// same and still are the file's IndexedFile.Same and Still.
	same  int
	still func() bool
	// progress holds what its search has found so far (searcher.progress):
	// the page keeps it when the deadline comes while a worker is inside
	// the file.
	progress *atomic.Pointer[fileResult]
}

// skipRun gathers the files in a row that the index proved cannot match
// into one item: such a file, most of an indexed search's, then costs no
// trip through the searchers and the ordering of their results. A run
// ends its batch and holds at most max files, so that a page the timeout
// cuts short still counts the files skipped before it and resumes after
// them.
type skipRun struct {
	add func(grepItem) error
	max int
	run grepItem
}

// Bounds of a run: the index's list is made at once, so its runs can be
// long; a walk stats each file as it goes, so its runs are handed over as
// often as a batch of files to search would be.
const (
	maxListedRun = 256
	maxWalkedRun = grepBatch
)

// skip adds a file proven not to match to the run, handing the run over
// once it is full.
func (s *skipRun) skip(path, rel string, binary bool) error {
	if s.run.files == 0 {
		s.run.first = rel
	}
	s.run.path, s.run.rel = path, rel
	s.run.files++
	if binary {
		s.run.binaries++
	}
	if s.run.files == s.max {
		return s.flush()
	}
	return nil
}

// flush hands the run over, if any.
func (s *skipRun) flush() error {
	if s.run.files == 0 {
		return nil
	}
	run := s.run
	s.run = grepItem{}
	return s.add(run)
}

// file hands over the run, then a file to search: always, since it may
// hold an open file or directory that only its searcher closes (add keeps
// an item even when it reports the search stopped).
func (s *skipRun) file(it grepItem) error {
	it.progress = new(atomic.Pointer[fileResult])
	err := s.flush()
	if addErr := s.add(it); err == nil {
		err = addErr
	}
	return err
}

// grepBatch is the number of files in a batch.
const grepBatch = 16

// Grep searches a file, or the files below a directory in walk order, and
// returns one page of matching lines. Files are searched in parallel by a
// bounded pool; results are consumed in walk order, and the walk stops as
// soon as the page is known to be full.
func (t *Tools) Grep(ctx context.Context, req GrepRequest) (*GrepResult, error) {
	g, err := t.newGrep(ctx, req)
	if err != nil {
		return nil, err
	}
	tctx, cancelT := context.WithTimeout(ctx, g.timeout)
	defer cancelT()
	if err := g.narrowBy(tctx); err != nil {
		return nil, err
	}
	pg := t.grepPage(g)
	sctx, stopWalk := context.WithCancel(tctx)
	defer stopWalk()
	order, wait := g.start(sctx)
	filesWithMatches, abandoned := g.consume(tctx, order, stopWalk, pg)
	var walkErr error
	if !abandoned {
		walkErr = wait()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if pg.err != nil {
		return nil, pg.err
	}
	if tctx.Err() == nil && walkErr != nil && !errors.Is(walkErr, context.Canceled) {
		return nil, walkErr
	}
	return t.finishGrep(ctx, g, pg, filesWithMatches, tctx.Err() != nil)
}

// grepPage is the empty page of g's answer, resumed where its cursor
// stands.
func (t *Tools) grepPage(g *grepSearch) *page {
	res := &GrepResult{Mode: g.mode, Files: []GrepFile{}, Context: g.ctxLines}
	res.Path, res.PathBase64 = fault.PathText(t.FS.Display(g.path))
	pg := t.newPage(g.req, g.limit, res)
	pg.digest = g.digest
	for _, c := range []cursor{g.from, g.anchor} {
		if c.From != "" {
			pg.from.resumeAt(c, &pg.seen)
		}
	}
	if g.from.From != "" {
		pg.span.passed(g.from.From)
	}
	return pg
}

// grepSearch is one grep, its request checked and compiled.
type grepSearch struct {
	t       *Tools
	req     GrepRequest
	digest  string
	from    cursor
	limit   int
	mode    string
	m       *search.Matcher
	include globSet
	exclude []string
	path    string
	// base is path as the answers spell it, where a glob that starts
	// with **/ is matched from (fromRoot, WalkOptions.ExcludeBase).
	base    string
	info    backend.FileInfo // path as the search's Stat found it
	timeout time.Duration
	w       backend.Walker // nil for a search of one file
	// narrow, when an index covers the search, tells the files it proves
	// cannot match, or lists the files in place of the walk.
	narrow *Narrowing
	// query is the text to find, a regular expression when isRegex.
	query    string
	isRegex  bool
	ctxLines int
	// withCR: the query names a CR, which a CRLF line's matching then
	// sees as its last character (namesCR), as replace's does.
	withCR bool
	// anchor is the cursor of a count page: its walk starts at the top,
	// for the totals, and its page at the cursor's file.
	anchor cursor
	// cut is the path of the file the deadline cut short, whose matches
	// before it the page holds; the page ends there.
	cut string
	// unreadable are the files and directories skipped for want of
	// permission, by path, with where the walk met them (rel from the
	// start; "" above it); the walk's goroutine and the consumer's add to
	// them.
	unreadableMu sync.Mutex
	unreadable   map[string]string
}

// addUnreadable counts the entry at path (rel) skipped for want of
// permission, once.
func (g *grepSearch) addUnreadable(path, rel string) {
	g.unreadableMu.Lock()
	defer g.unreadableMu.Unlock()
	if g.unreadable == nil {
		g.unreadable = map[string]string{}
	}
	if _, seen := g.unreadable[path]; !seen {
		g.unreadable[path] = rel
	}
}

// unreadableIn counts the files and directories skipped for want of
// permission that s holds. The walk runs ahead of the page: counted as
// met, a page cut by its limit counted one more or less from run to run,
// and --exit-status exited 4 or 0 for one call.
func (g *grepSearch) unreadableIn(s span) int {
	g.unreadableMu.Lock()
	defer g.unreadableMu.Unlock()
	// One entry once (by path): an ignore file it may not read is skipped
	// both for its rules and as a file to search.
	return s.count(maps.Values(g.unreadable))
}

// newGrep checks and compiles req.
func (t *Tools) newGrep(ctx context.Context, req GrepRequest) (*grepSearch, error) {
	if err := Validate(req); err != nil {
		return nil, err
	}
	// The query's size is checked before the digest copies it.
	query, isRegex, err := req.query()
	if err != nil {
		return nil, err
	}
	g := &grepSearch{t: t, digest: req.digest(t.FS.Display)}
	g.limit, g.mode = cmp.Or(req.Limit, GrepDefaultLimit), cmp.Or(req.Mode, ModeContent)
	newMatcher := search.NewMatcher
	if req.Word {
		// A word match is a match of the query: the index narrows the
		// search by the query's own trigrams (narrowBy).
		newMatcher = search.NewWordMatcher
	}
	if g.m, err = newMatcher(query, isRegex, req.IgnoreCase); err != nil {
		return nil, err
	}
	g.withCR = namesCR(query, isRegex)
	include, err := req.Include.globs()
	if err != nil {
		return nil, err
	}
	if g.exclude, err = checkGlobs("exclude", req.Exclude); err != nil {
		return nil, err
	}
	g.path = cmp.Or(req.Path, ".")
	g.timeout = cmp.Or(time.Duration(req.Timeout), GrepDefaultTimeout)
	info, err := t.FS.Stat(ctx, g.path)
	if err != nil {
		return nil, t.WithSuggestions(ctx, g.path, err)
	}
	g.info = info
	if err := checkFinalSlash(g.path, t.FS.Display(g.path), info.Type); err != nil {
		return nil, err
	}
	if err := g.resume(&req); err != nil {
		return nil, err
	}
	g.req = req
	if g.mode == ModeCount {
		// Its totals cover the whole search, so it walks from the start
		// (resumed where the cursor stood, the totals left out the files
		// before it), and its page starts at the cursor's file.
		g.anchor, g.from = g.from, cursor{}
	}
	if info.Type == backend.TypeDir {
		if err := t.checkGlobsBelow(ctx, g.path, "include", req.Include); err != nil {
			return nil, err
		}
		if err := t.checkGlobsBelow(ctx, g.path, "exclude", req.Exclude); err != nil {
			return nil, err
		}
		g.base = t.FS.Display(g.path)
		g.include = newGlobSet(fromRoot(include, g.base))
		if g.w, err = t.walker(); err != nil {
			return nil, err
		}
		g.query, g.isRegex = query, isRegex
	}
	if g.mode == ModeContent {
		g.ctxLines = req.Context
	}
	return g, nil
}

// resume starts g at req's cursor, setting req's offset to the cursor's.
// A cursor is sealed with the kind of the path it was given for: one of a
// file's grep names its file oneFileRel, which a directory may hold, so
// that a path made a directory (or a file) since goes on from no place
// it does not mean, and is STALE.
func (g *grepSearch) resume(req *GrepRequest) error {
	kinds := [2]string{g.digest + "\x00dir", g.digest + "\x00file"}
	if g.info.Type != backend.TypeDir {
		kinds[0], kinds[1] = kinds[1], kinds[0]
	}
	g.digest = kinds[0]
	var err error
	if g.from, err = resume(req.Cursor, g.digest, &req.Offset); err != nil {
		if _, other := resume(req.Cursor, kinds[1], new(int)); other == nil {
			was, is := "directory", "a file"
			if g.info.Type == backend.TypeDir {
				was, is = "file", "a directory"
			}
			return fault.Errorf(fault.CodeStale, "the cursor was given for a grep of a %s, and the path is %s now.", was, is).
				WithPath(g.t.FS.Display(g.path)).WithHint("grep it again from the start, without the cursor")
		}
		return err
	}
	return nil
}

// oneFileRel is the rel of the file a grep of one file searches, which
// its cursors name as a grep of a directory's name the file they go on
// in: a page resumed by one finds whether the matches earlier pages took
// are still the file's first (resumed.arrive), where the offset alone
// repeated or lost matches of a file edited above the cut.
const oneFileRel = "-"

// passAhead is how many matching lines of a file before a page's offset a
// search of a directory keeps, ahead of knowing how many the page passes
// in that file; a page that passes more in one file searches it again
// (cover), counting them unkept. Kept, every line before the offset of a
// deep page was held: 830 MB at offset 3,000,000 of a 6 MB file. (A
// variable: tests make it small.)
var passAhead = 1 << 12

// keeps is what a search of the file at rel keeps for the page: the first
// skip matching lines are counted (and digested, for a cursor) but not
// kept, and the search stops at cap matching lines, 0 when it only counts.
func (g *grepSearch) keeps(rel string) (skip, cap int) {
	switch {
	case g.mode != ModeContent:
		return 0, 0
	case rel == g.from.From:
		// Earlier pages took its first matches; their digest tells
		// whether they are still its first (resumed.arrive).
		return g.from.Skip, g.from.Skip + g.limit + 1
	case g.w == nil:
		// One file by offset: the page passes its first matches.
		return g.req.Offset, g.req.Offset + g.limit + 1
	case g.from.From == "":
		return 0, min(g.req.Offset, passAhead) + g.limit + 1
	}
	return 0, g.limit + 1
}

// cover returns the search fr of the file it, or, when fr does not hold
// the lines of the page past pass of its matches, a search of it again
// that passes them. It opens the file again by its path: an item's opener
// runs once (backend.WalkEntry.Later).
func (g *grepSearch) cover(ctx context.Context, it grepItem, fr fileResult, pass int) fileResult {
	capped := fr.partial && fr.err == nil
	if fr.skipped <= pass && (!capped || fr.matches > pass+g.limit) {
		return fr
	}
	s := newSearcher(g.m, g.ctxLines, pass+g.limit+1)
	s.skip, s.digest, s.withCR = pass, true, g.withCR
	r, err := g.t.FS.Open(ctx, it.path)
	if err != nil {
		return fileResult{err: err, partial: ctx.Err() != nil} // a deadline's open: a page cut short
	}
	defer r.Close()
	return s.search(ctx, r)
}

// narrowBy asks the index, when one covers the search, which files it
// need not read, within tctx, the search's timeout: the question (a
// watcher's answer, the stat pass) counted outside it, and a watcher that
// did not answer held a search of --timeout 1ms for 2 s. Cut by the
// timeout, the search goes on without the index, and times out.
func (g *grepSearch) narrowBy(tctx context.Context) error {
	if g.w == nil || g.t.Index == nil || g.req.NoIndex {
		return nil
	}
	q := IndexQuery{Path: g.path, Query: g.query, IsRegex: g.isRegex, IgnoreCase: g.req.IgnoreCase, NoIgnore: g.req.NoIgnore, Exclude: g.exclude}
	narrow, err := g.t.Index.Narrow(tctx, q)
	if err != nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return nil
	}
	g.narrow = narrow
	return err
}

// start runs the walk and a pool of searchers until sctx is done, and
// returns the batches in walk order, and wait, which waits for them all
// and returns the walk's error.
func (g *grepSearch) start(sctx context.Context) (<-chan *ordered.Batch[grepItem, fileResult], func() error) {
	workers, batch := max(1, runtime.GOMAXPROCS(0)), grepBatch
	if r, ok := backend.At(g.t.FS, g.path).(backend.RemoteReader); ok {
		// A file a request away is handed over alone: a reader goes
		// through its batch one file after another, so that the first
		// file's answer, which may fill the page, waited for the fetch of
		// fifteen more, and each other reader fetched as many meanwhile
		// (255 GETs for a page of one match). A hand-over costs nothing
		// beside a request.
		workers, batch = max(workers, r.ReadsInFlight()), 1
	}
	var shared sameResults
	searcher := func() func(grepItem) fileResult {
		s := newSearcher(g.m, g.ctxLines, 0)
		s.digest, s.withCR = true, g.withCR
		// A file's other matches change nothing of a files page: its
		// cursor's skip, within a file, is at most that one (addFile).
		s.first = g.mode == ModeFiles
		return func(it grepItem) fileResult {
			if it.open == nil {
				return fileResult{} // known: see consume
			}
			s.skip, s.cap = g.keeps(it.rel)
			// A file's copies share its search but for its skip.
			same := it.same
			if s.skip > 0 {
				same = 0
			}
			if res, ok := shared.get(same); ok && it.still() {
				return res
			}
			r, err := it.open()
			if err != nil {
				return fileResult{err: err, partial: sctx.Err() != nil} // gone since the listing: skipped; the deadline: a page cut short
			}
			defer r.Close()
			s.progress = it.progress
			res := s.search(sctx, r)
			s.progress = nil
			if same != 0 && it.still() {
				// Read as indexed: its bytes are its copies'.
				shared.put(it.same, res)
			}
			return res
		}
	}
	runEnds := func(it grepItem) bool { return it.open == nil }
	return ordered.Start(sctx, workers, batch, searcher, runEnds, func(add func(grepItem) error) error {
		return g.list(sctx, add)
	})
}

// sameResults are the results of the files searched that others of the
// index's list hold the same bytes as (IndexedFile.Same), by Same: their
// lines are copied out of the searcher's buffer, and never changed after.
// Copies (vendored trees, checkouts side by side) are read once, as the
// index read them once.
type sameResults struct {
	mu     sync.Mutex
	bySame map[int]fileResult
}

func (s *sameResults) get(same int) (fileResult, bool) {
	if same == 0 {
		return fileResult{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res, ok := s.bySame[same]
	return res, ok
}

// put keeps res for the files of same, unless it failed: an error (a
// deadline) is the one file's.
func (s *sameResults) put(same int, res fileResult) {
	if res.err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bySame == nil {
		s.bySame = map[int]fileResult{}
	}
	s.bySame[same] = res
}

// list lists the files to search, in walk order.
func (g *grepSearch) list(sctx context.Context, add func(grepItem) error) error {
	if g.w == nil {
		r, err := backend.OpenKnown(sctx, g.t.FS, g.path, g.info)
		if err != nil {
			return err
		}
		return add(grepItem{path: g.t.FS.Display(g.path), rel: oneFileRel, open: func() (io.ReadCloser, error) { return r, nil }, progress: new(atomic.Pointer[fileResult])})
	}
	run := &skipRun{add: add, max: maxWalkedRun}
	if g.narrow != nil && g.narrow.Files != nil {
		run.max = maxListedRun
		if err := g.listIndexed(sctx, run); err != nil {
			return err
		}
		return run.flush()
	}
	opts := backend.WalkOptions{NoIgnore: g.req.NoIgnore, Exclude: g.exclude, ExcludeBase: g.base, From: g.from.From,
		Unreadable: g.addUnreadable, Stated: true}
	err := g.w.Walk(sctx, g.path, opts, func(e backend.WalkEntry) error {
		if e.Type != backend.TypeFile || (!g.include.all() && !g.include.match(e.Rel, e.Name)) {
			return nil
		}
		if g.narrow != nil {
			// The freshness proof: the file's identity now against the
			// indexed one. Reading it stays the answer for any doubt.
			if info, err := e.Info(); err == nil && info.Type == backend.TypeFile {
				if v := g.narrow.Judge(e.Rel, info); v.Skip {
					return run.skip(e.Path, e.Rel, v.Binary)
				}
			}
		}
		if e.Later != nil {
			return run.file(grepItem{path: e.Path, rel: e.Rel, open: e.Later()})
		}
		r, err := e.Open()
		if err != nil {
			if SkippedFile(err) {
				g.countUnreadable(e.Path, e.Rel, err)
				return nil // gone or not regular since the listing: skipped
			}
			return err
		}
		return run.file(grepItem{path: e.Path, rel: e.Rel, open: func() (io.ReadCloser, error) { return r, nil }})
	})
	if err != nil {
		return err
	}
	return run.flush()
}

// listIndexed hands over the files of the index's list, in place of a
// walk: those it proves cannot match without reading them.
func (g *grepSearch) listIndexed(sctx context.Context, run *skipRun) error {
	display := g.narrow.Display
	if display == "" {
		display = g.t.FS.Display(g.path)
	}
	for _, d := range g.narrow.Unreadable {
		if g.from.From == "" || WalkOrder(d, g.from.From) > 0 {
			g.addUnreadable(g.t.belowDisplay(display, d), d)
		}
	}
	for _, f := range g.narrow.Files {
		if g.from.From != "" && WalkOrder(f.Rel, g.from.From) < 0 {
			continue
		}
		if !g.include.all() && !g.include.match(f.Rel, path.Base(f.Rel)) {
			continue
		}
		shown := g.t.belowDisplay(display, f.Rel)
		if f.Skip {
			if err := run.skip(shown, f.Rel, f.Binary); err != nil {
				return err
			}
			continue
		}
		if err := run.file(grepItem{path: shown, rel: f.Rel, open: indexedOpen(sctx, g.t.FS, shown, f.Open), same: f.Same, still: f.Still}); err != nil {
			return err
		}
	}
	return nil
}

// indexedOpen opens a file of an index's list: by direct, its opener
// when it has one, else, or when that says ErrReopen, by its path.
func indexedOpen(ctx context.Context, fsys backend.FS, shown string, direct func() (io.ReadCloser, error)) func() (io.ReadCloser, error) {
	byPath := func() (io.ReadCloser, error) { return fsys.Open(ctx, shown) }
	if direct == nil {
		return byPath
	}
	return func() (io.ReadCloser, error) {
		r, err := direct()
		if errors.Is(err, ErrReopen) {
			return byPath()
		}
		return r, err
	}
}

// belowDisplay is the display path of rel below the directory shown as
// dir, as a walk shows it: a directory shown absolute (outside the base)
// may hold the base, whose files are shown relative, as Display shows
// them.
func (t *Tools) belowDisplay(dir, rel string) string {
	switch {
	case dir == ".":
		return rel
	case dir == "/":
		return t.FS.Display("/" + rel)
	case strings.HasPrefix(dir, "/"):
		return t.FS.Display(dir + "/" + rel)
	}
	return dir + "/" + rel
}

// WalkOrder compares two relative paths in walk order: depth first, names
// in byte order, so a directory's entries come right after it.
func WalkOrder(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x == '/' {
			return -1
		}
		if y == '/' {
			return 1
		}
		return int(x) - int(y)
	}
	return len(a) - len(b)
}

// consume takes the batches in walk order into the page, stopping the walk
// once the page is full (a count goes on to the end for its totals). It
// returns the files with matches, and abandoned: the deadline (or a
// signal) came while a worker was still inside a file, in work that may
// take no context (a regex on a huge line); the page is then answered as
// it stands, and the workers finish aside, closing what they opened.
func (g *grepSearch) consume(tctx context.Context, order <-chan *ordered.Batch[grepItem, fileResult], stopWalk func(), pg *page) (filesWithMatches int, abandoned bool) {
	res, done := pg.res, false
	for j := range order {
		// Once the walk is stopped, batches are only drained: every opened
		// file is closed by a worker.
		frs, err := j.Results(tctx)
		if err != nil {
			// The deadline came while a worker was inside a file of this
			// batch: the files it searched before that one are the
			// page's, as the batches before are, and so are the matches
			// it found in that one before (a search cut short by the
			// deadline, as one that saw it returns); the page ends there.
			stopWalk()
			abandoned = true
			if n := len(frs); n < len(j.Items) && j.Items[n].progress != nil {
				if fr := j.Items[n].progress.Load(); fr != nil {
					frs = append(frs, *fr) // frs is capped: a copy
				}
			}
		}
		for i := 0; i < len(frs) && pg.err == nil && g.cut == "" && (!done || g.mode == ModeCount); i++ {
			fr := frs[i]
			if it := &j.Items[i]; it.open == nil {
				// Files the index proved cannot match: searched, nothing
				// found, the binary ones counted.
				res.FilesSearched += it.files
				res.BinarySkipped += it.binaries
				if !g.beforeAnchor(it.rel) {
					pg.from.arrive(it.first, &pg.seen, func(int) (string, int, bool) { return "", 0, false })
					pg.atFile(it.rel, false)
				}
				continue
			}
			if fr.err != nil && !fr.partial {
				if !SkippedFile(fr.err) {
					pg.err = ioError(fr.err, j.Items[i].path) // never a smaller answer for an error; a failed read named by its file
					break
				}
				g.countUnreadable(j.Items[i].path, j.Items[i].rel, fr.err)
				continue // gone or unreadable: skipped, and unreadable counted
			}
			res.FilesSearched++
			if fr.err != nil {
				// The deadline cut this file short: the page keeps what its
				// search found before, and takes no file after it, which
				// a worker may have gone through after the deadline,
				// finding nothing (a count counted them as searched).
				g.cut = j.Items[i].path
				stopWalk()
			}
			if g.beforeAnchor(j.Items[i].rel) {
				// A count page's file before its cursor: in the totals only.
				switch {
				case fr.binary:
					res.BinarySkipped++
				case fr.matches > 0:
					res.Count += fr.matches
					filesWithMatches++
				}
				continue
			}
			taken := fr.firstMatches
			if g.mode != ModeContent {
				// A file is the one item: earlier pages took it when it
				// matched, and one that no longer matches holds none.
				taken = func(n int) (string, int, bool) { return "", min(n, fr.matches), fr.err != nil }
			}
			again := pg.from.arrive(j.Items[i].rel, &pg.seen, taken)
			pg.atFile(j.Items[i].rel, again)
			if fr.binary {
				res.BinarySkipped++
				continue
			}
			if g.mode == ModeContent {
				if fr = g.cover(tctx, j.Items[i], fr, max(0, g.req.Offset-pg.seen)); fr.err != nil && !fr.partial {
					// Gone or unreadable since it was searched: skipped, and
					// the files after it lose none of their matches for it.
					if !SkippedFile(fr.err) {
						pg.err = ioError(fr.err, j.Items[i].path)
						break
					}
					g.countUnreadable(j.Items[i].path, j.Items[i].rel, fr.err)
					pg.seen = max(pg.seen, g.req.Offset)
					continue
				}
			}
			if fr.matches > 0 {
				filesWithMatches++
			}
			switch g.mode {
			case ModeCount:
				res.Count += fr.matches
				done = done || pg.addFile(j.Items[i].path, fr.matches)
				continue
			case ModeFiles:
				done = pg.addFile(j.Items[i].path, fr.matches)
			default:
				done = pg.addLines(j.Items[i].path, fr)
			}
			if done {
				stopWalk()
			}
		}
		if abandoned {
			return filesWithMatches, true
		}
		if pg.err != nil {
			stopWalk()
		}
	}
	return filesWithMatches, false
}

// beforeAnchor reports a file before the cursor of a count page.
func (g *grepSearch) beforeAnchor(rel string) bool {
	return g.anchor.From != "" && WalkOrder(rel, g.anchor.From) < 0
}

// finishGrep completes the page's totals, and for a page the timeout cut
// short its continuation and hint.
func (t *Tools) finishGrep(ctx context.Context, g *grepSearch, pg *page, filesWithMatches int, timedOut bool) (*GrepResult, error) {
	res := pg.res
	if g.mode == ModeCount {
		// Its totals, this one too, cover the whole search.
		res.Unreadable = g.unreadableIn(span{})
	} else {
		res.Unreadable = g.unreadableIn(pg.span)
	}
	// timedCursor resumes a page the timeout cut short; sameCursor, when
	// it is the page's own.
	var timedCursor string
	sameCursor := false
	// ownNext: the page found its next page before the timeout.
	ownNext := res.NextOffset != nil
	if timedOut {
		res.TimedOut = true
		if res.NextOffset == nil {
			next := g.req.Offset + pg.taken
			res.NextOffset = new(pg.from.fromStart(next))
			switch {
			case pg.from.pending():
				// Cut short before it could tell whether the cursor's
				// file changed, which a partial search is no evidence
				// of: the page goes on from the same cursor.
				timedCursor, sameCursor = g.req.Cursor, true
			case pg.seen == next && (g.w != nil || pg.seen > pg.fileStart):
				// The search reached the page: it goes on in the last file
				// it searched, past the matches counted in it. In the one
				// file, at its start, that is where its offset goes: the
				// next page searches it again from its start.
				timedCursor = pg.cursorAt(next, pg.seen-pg.fileStart)
			}
		}
	}
	if g.mode == ModeCount {
		res.FilesWithMatches = &filesWithMatches
	} else {
		res.Count = pg.taken
	}
	// The cursor of a timed-out page, like its hint, takes what room the
	// bound leaves.
	if timedCursor != "" && jsonSize(res)+cursorCost(timedCursor) <= t.maxBytes() {
		res.NextCursor = timedCursor
	}
	if res.TimedOut {
		// A page resumed by offset searches the tree from its start, so
		// one that found nothing in time would find nothing again with the
		// same timeout; nextCursor goes on from where it stopped. The hint
		// is not sized with the page: it goes where the bound leaves room
		// for it, timedOut and nextOffset saying the rest.
		hint := hintTimedOut
		switch {
		case g.mode == ModeCount:
			// A count goes no further than where the timeout stopped it:
			// a later call would count the same files again and stop
			// there too. A next page it found before then is kept: the
			// files of the page are whole, and the next page exists.
			if !ownNext {
				res.NextOffset, res.NextCursor = nil, ""
			}
			hint = fmt.Sprintf("the counts are partial: they cover the %d file(s) searched before the timeout; raise --timeout for the whole count", res.FilesSearched)
			if g.cut != "" {
				hint = fmt.Sprintf("the counts are partial: they cover the %d file(s) searched before the timeout, the last of them, %s, only up to where the timeout stopped its search; raise --timeout for the whole count", res.FilesSearched, g.cut)
			}
		case res.NextCursor != "" && !sameCursor:
			hint = hintTimedOutCursor
		case pg.taken == 0:
			hint = hintTimedOutEmpty
		}
		if jsonSize(res)+jsonLen(hint)+len(`,"hint":""`) <= t.maxBytes() {
			res.Hint = hint
		}
	}
	res.Matched = pg.seen > 0 || res.Count > 0
	if !res.Matched && !res.TimedOut && g.req.Offset == 0 && g.req.Cursor == "" {
		hint := ""
		if g.info.Type == backend.TypeDir {
			hint = t.includeDirHint(ctx, g.path, g.req.Include)
		}
		if q, regex, _ := g.req.query(); !regex && hint == "" {
			hint = regexLookalikeHint(q)
		}
		if hint != "" && jsonSize(res)+jsonLen(hint)+len(`,"hint":""`) <= t.maxBytes() {
			res.Hint = hint
		}
	}
	return fitted(t, res)
}

// countUnreadable counts the file at path (rel) when err is its lack of
// permission, or of a key (fault.Unreadable).
func (g *grepSearch) countUnreadable(path, rel string, err error) {
	if fault.Unreadable(err) {
		g.addUnreadable(path, rel)
	}
}

// SkippedFile reports an error of one file that a search (or an index's
// build) passes over, as ripgrep does: the file gone, replaced by something that is not a regular
// file, unreadable (fault.Unreadable) or denied, or its path now leading
// out of the roots (a directory on it swapped for a link since the
// listing, which an index's candidate, opened by path, meets). Any other
// (EMFILE, EIO) fails the search: skipping it would answer less than the
// tree holds, with exit 0.
func SkippedFile(err error) bool {
	if errors.Is(err, fault.ErrNoWorkspace) {
		return false
	}
	if fault.Unreadable(err) {
		return true
	}
	switch fault.AsError(err).Code {
	case fault.CodeNotFound, fault.CodeNotRegular, fault.CodeNotAFile, fault.CodeNotADirectory, fault.CodeSymlink, fault.CodeDenied, fault.CodeOutsideRoot:
		return true
	}
	return false
}

// The hints of a page that the timeout cut short.
const (
	hintTimedOut       = "the timeout cut this page short: pass nextOffset to continue; a page searches from the start of the tree, so raise --timeout if it found little"
	hintTimedOutEmpty  = "nothing was found before the timeout, and the next page would search the same files again: raise --timeout"
	hintTimedOutCursor = "the timeout cut this page short: pass nextCursor to go on from where it stopped"
)

// page assembles one page in walk order, bounded in items and bytes.
type page struct {
	t      *Tools
	req    GrepRequest
	limit  int
	res    *GrepResult
	budget int
	// textBudget is what the bound leaves of a page printed as text
	// (Tools.TextLinePrefix), which must fit it as the JSON does: the
	// text lines alone, no JSON field, so the two are charged apart.
	textBudget int
	// skeleton is the size of the result without its files.
	skeleton int
	seen     int       // matching lines (files) met so far, skipped ones included
	taken    int       // matching lines (files) in the page
	unit     []outLine // a match with its before-context, reused
	// fileRel is the file being added, relative to the walk's start, and
	// fileStart the value of seen before its first item; digest identifies
	// the request. They make last, the nextCursor that resumes after the
	// last item taken, whose bytes (reserve) the budget always keeps.
	fileRel   string
	fileStart int
	// fileSum digests the file's matching lines counted so far, which a
	// cursor into it says earlier pages took; fileAgain is set when the
	// file's matches were taken again from its first (resumed.again).
	fileSum   hash.Hash64
	fileAgain bool
	digest    string
	last      string
	reserve   int
	// from is the file a resumed page starts at.
	from resumed
	// err is TOO_LARGE when an item does not fit an empty page.
	err error
	// span is where the page lies in walk order, by file, for the
	// unreadable entries it counts.
	span span
}

// newPage sizes the page of res: the budget for files is what the bound
// leaves of the result without them, with its fields at their largest
// (the totals of a huge tree), a timeout's hint aside.
func (t *Tools) newPage(req GrepRequest, limit int, res *GrepResult) *page {
	big, next := math.MaxInt, req.Offset+limit
	sk := *res
	sk.Count, sk.FilesSearched, sk.BinarySkipped, sk.Unreadable = big, big, big, maxUnreadable
	sk.Truncated, sk.TimedOut, sk.NextOffset = true, true, &next
	if res.Mode == ModeCount {
		sk.FilesWithMatches = &big
	}
	size := jsonSize(&sk)
	// The budget is below 0 when the fields alone are over the bound (a
	// path longer than it): the first item is then TOO_LARGE naming the
	// bound that holds it with them, and without one the result is sized
	// whole (fitted). Refused here, the need named was the fields' alone,
	// and a search at that bound failed again.
	return &page{t: t, req: req, limit: limit, res: res, budget: t.maxBytes() - size, textBudget: t.maxBytes(), skeleton: size}
}

// full ends the page: one more item exists past it, the last one counted
// in seen.
func (p *page) full() bool {
	next := p.from.fromStart(p.req.Offset + p.taken)
	p.res.NextOffset = &next
	p.res.NextCursor = p.last
	p.span.end()
	return true
}

// cursorAt is the cursor of a page starting at offset, which goes on in the
// current file past its first skip items; none before the first file.
func (p *page) cursorAt(offset, skip int) string {
	if p.fileRel == "" {
		return ""
	}
	c := cursor{Offset: p.from.fromStart(offset), From: p.fileRel, Skip: skip, Request: p.digest}
	if skip > 0 && p.res.Mode == ModeContent {
		c.Sum, c.Again = sumText(p.fileSum), p.fileAgain
	}
	return c.encode()
}

// atFile starts the count of the file at rel, whose items come next;
// again, when they were taken again from its first (resumed.again).
func (p *page) atFile(rel string, again bool) {
	p.fileRel, p.fileStart, p.fileAgain = rel, p.seen, again
	if p.fileSum == nil {
		p.fileSum = fnv.New64a()
	}
	p.fileSum.Reset()
}

// addToSum adds a matching line to the digest h of a file's matches.
func addToSum(h hash.Hash64, r lineRec) {
	var n [16]byte
	binary.LittleEndian.PutUint64(n[:8], uint64(len(r.text)))
	binary.LittleEndian.PutUint64(n[8:], uint64(r.size))
	h.Write(n[:])
	h.Write(r.text)
}

// sumText is the digest h as a cursor carries it.
func sumText(h hash.Hash64) string {
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// firstMatches is what the file holds of its first n matching lines (see
// held): their digest, how many of them were kept, and whether the timeout
// cut its search short.
func (fr fileResult) firstMatches(n int) (string, int, bool) {
	if fr.sum != nil {
		// Searched past the cursor's skip, n (keeps): the lines it kept
		// come after those it digested, which are all n it holds.
		return sumText(fr.sum), fr.skipped, fr.err != nil
	}
	h, count := fnv.New64a(), 0
	for _, r := range fr.lines {
		if count == n {
			break
		}
		if r.isMatch {
			addToSum(h, r)
			count++
		}
	}
	return sumText(h), count, fr.err != nil
}

// cursorCost is the bytes a nextCursor of text adds to a result.
func cursorCost(text string) int {
	if text == "" {
		return 0
	}
	return len(`,"nextCursor":""`) + len(text)
}

// digest identifies the request by all but its paging, and noIndex, which
// changes how the files are found, not what is found; its path by its
// spelling in output (display).
func (req GrepRequest) digest(display func(string) string) string {
	req.Offset, req.Limit, req.Cursor, req.Timeout, req.NoIndex = 0, 0, "", 0, false
	req.Path = displayedPath(req.Path, display)
	// The text and its kind, however given (query or pattern, regex
	// left out or given its default).
	if q, regex, err := req.query(); err == nil {
		req.Query, req.Pattern, req.Regex = q, "", &regex
	}
	return requestDigest(req)
}

// spendItem takes the n bytes of the item counted last in seen, and its
// text bytes printed as text, when they fit with the nextCursor that
// resumes after it, which becomes the page's.
func (p *page) spendItem(n, text int) bool {
	next := p.cursorAt(p.req.Offset+p.taken+1, p.seen-p.fileStart)
	reserve := cursorCost(next)
	if n+reserve > p.budget && p.taken == 0 {
		next, reserve = "", 0 // the page's one item goes without a cursor
	}
	if n+reserve > p.budget || text > p.textBudget {
		return false
	}
	p.budget -= n
	p.textBudget -= text
	p.last, p.reserve = next, reserve
	p.span.last = p.fileRel
	return true
}

// refuse ends a page that an item of n bytes (text printed as text) does
// not fit: cut short, or when the page is empty TOO_LARGE, since no page
// would hold the item. what names the item; it is the next to take, its
// path is path.
func (p *page) refuse(n, text int, what, path string) bool {
	if p.taken > 0 {
		p.res.Truncated = true
		return p.full()
	}
	needed := max(p.skeleton+n, text)
	hint := fmt.Sprintf("raise --max-bytes to %d or more, or pass --offset %d to skip it", p.t.raiseTo(needed), p.seen)
	if p.req.Context > 0 && p.req.Mode != ModeFiles && p.req.Mode != ModeCount {
		hint = fmt.Sprintf("raise --max-bytes to %d or more, or lower --context, or pass --offset %d to skip it", p.t.raiseTo(needed), p.seen)
	}
	p.err = p.t.tooLarge(needed, what).WithPath(path).WithDetail("offset", p.seen-1).WithHint("%s", hint)
	return true
}

// newFile is a file's entry with the bytes it adds to the page's files,
// the comma before it included: with blocks, those of an empty
// "blocks":[] too.
func (p *page) newFile(path string, blocks bool) (GrepFile, int) {
	f := GrepFile{}
	f.Path, f.PathBase64 = fault.PathText(path)
	cost := len(`{"path":""}`) + jsonLen(f.Path) + comma(len(p.res.Files))
	if f.PathBase64 != "" {
		cost += len(`,"pathBase64":""`) + len(f.PathBase64)
	}
	if blocks {
		cost += len(`,"blocks":[]`)
	}
	return f, cost
}

// addFile adds one file of files or count mode; it returns true when the
// page is done.
func (p *page) addFile(path string, count int) bool {
	if count == 0 {
		return false
	}
	if p.seen++; p.seen <= p.req.Offset {
		p.span.passed(p.fileRel)
		return false
	}
	if p.taken == p.limit {
		return p.full()
	}
	f, cost := p.newFile(path, false)
	if p.req.Mode == ModeCount {
		f.Count = count
		cost += len(`"count":,`) + digits(count)
	}
	if !p.spendItem(cost, 0) {
		return p.refuse(cost, 0, "the path of a file with matches does not fit", path)
	}
	p.res.Files = append(p.res.Files, f)
	p.taken++
	return false
}

// addLines adds the lines of one file: each taken match with the context
// lines around it, in blocks of consecutive lines; it returns true when the
// page is done.
func (p *page) addLines(path string, fr fileResult) bool {
	c := p.req.Context
	bb := &blockBuilder{lastLine: -1, lastMatch: -1 << 30}
	// Skipped by the searcher, with their context: on the page before.
	p.seen += fr.skipped
	if fr.skipped > 0 {
		p.span.passed(p.fileRel)
	}
	if fr.sum != nil {
		p.fileSum = fr.sum
	}
	for i, r := range fr.lines {
		if !r.isMatch {
			// An after-context line of the last match taken, paid for
			// with it.
			if bb.b != nil && r.line == bb.lastLine+1 && r.line <= bb.lastMatch+c {
				bb.add(newOutLine(r))
			}
			continue
		}
		if p.fileSum != nil {
			addToSum(p.fileSum, r)
		}
		if p.seen++; p.seen <= p.req.Offset {
			// On the page before, with its after-context.
			p.span.passed(p.fileRel)
			bb.shown = r.line + c
			continue
		}
		if p.taken == p.limit {
			return p.full()
		}
		if p.addMatch(path, fr.lines, i, bb) {
			return true
		}
	}
	return false
}

// addMatch adds the match lines[i] with the context lines before it not
// yet taken, and pays for those after it, which addLines adds: a unit that
// the byte bound never splits, so that the next page, which starts its
// before-context after them (bb.shown), never drops one. It returns true
// when the page is done.
func (p *page) addMatch(path string, lines []lineRec, i int, bb *blockBuilder) bool {
	c, r := p.req.Context, lines[i]
	start := i
	for start > 0 && !lines[start-1].isMatch && lines[start-1].line >= r.line-c && lines[start-1].line > max(bb.lastLine, bb.shown) {
		start--
	}
	// cost is the unit's JSON, text its text lines, each with the path:
	// its lines before the match, the match, and those after it.
	var nf GrepFile
	cost, text := 0, 0
	if bb.f == nil {
		nf, cost = p.newFile(path, true)
	}
	if p.t.TextLinePrefix != nil && c > 0 && (bb.b == nil || lines[start].line != bb.lastLine+1) &&
		(p.taken > 0 || p.req.Offset > 0 || p.req.Cursor != "") {
		// The -- before a block with context: after the page's first, or
		// --all's between two pages.
		text += len("--\n")
	}
	unit, end := p.unit[:0], r.line
	for _, r := range lines[start : i+1] {
		unit = append(unit, newOutLine(r))
	}
	for j := i + 1; j < len(lines) && !lines[j].isMatch && lines[j].line == lines[j-1].line+1 && lines[j].line <= r.line+c; j++ {
		unit, end = append(unit, newOutLine(lines[j])), lines[j].line
	}
	for _, l := range unit {
		text += p.textCost(path, l)
	}
	cost += bb.cost(unit)
	p.unit = unit
	if !p.spendItem(cost, text) {
		what := fmt.Sprintf("the match at line %d does not fit", r.line)
		if r.line > lines[start].line || end > r.line {
			what = fmt.Sprintf("the match at line %d, with its context (lines %d to %d), does not fit", r.line, lines[start].line, end)
		}
		return p.refuse(cost, text, what, path)
	}
	if bb.f == nil {
		p.res.Files = append(p.res.Files, nf)
		bb.f = &p.res.Files[len(p.res.Files)-1]
	}
	// The lines after the match come with the lines that follow it
	// (addLines).
	for _, l := range unit[:i-start+1] {
		bb.add(l)
	}
	p.taken++
	bb.lastMatch = r.line
	return false
}

// blockBuilder fills one file's entry with blocks of consecutive lines.
type blockBuilder struct {
	f         *GrepFile  // the file's entry, made with its first taken match
	b         *GrepBlock // the block being filled
	allMatch  bool       // every line of b so far matches
	lastLine  int        // the last line taken
	lastMatch int        // the last matching line taken
	// shown is the last line the page before gave (a match skipped by
	// offset, and its after-context): before-context stops after it, so
	// that the pages give each line once.
	shown int
}

// add appends a line to the block, starting a new block unless the line
// follows the last one taken.
func (bb *blockBuilder) add(l outLine) {
	if bb.b == nil || l.line != bb.lastLine+1 {
		bb.f.Blocks = append(bb.f.Blocks, GrepBlock{Start: l.line})
		bb.b, bb.allMatch = &bb.f.Blocks[len(bb.f.Blocks)-1], true
	}
	b := bb.b
	switch {
	case l.isMatch && !bb.allMatch:
		b.Matches = append(b.Matches, l.line)
	case !l.isMatch && bb.allMatch:
		// The first context line: every line before it matched.
		for n := b.Start; n < l.line; n++ {
			b.Matches = append(b.Matches, n)
		}
		bb.allMatch = false
	}
	b.Lines = append(b.Lines, l.text)
	if l.b64 != "" {
		if b.LinesBase64 == nil {
			b.LinesBase64 = map[int]string{}
		}
		b.LinesBase64[l.line] = l.b64
	}
	bb.lastLine = l.line
}

// cost is the bytes that adding lines, in order, adds to the file's
// entry, as add adds them: the blocks they start, their text, their
// numbers in matches (when a block's first context line comes, those of
// its lines so far too: matches is left out while every line matches)
// and their entries in linesBase64, each comma included.
func (bb *blockBuilder) cost(lines []outLine) int {
	blocks, last, allMatch := 0, bb.lastLine, bb.allMatch
	start, taken, matches, b64 := 0, 0, 0, 0
	if bb.b != nil {
		blocks, start, taken = len(bb.f.Blocks), bb.b.Start, len(bb.b.Lines)
		matches, b64 = len(bb.b.Matches), len(bb.b.LinesBase64)
	}
	n := 0
	for _, l := range lines {
		if blocks == 0 || l.line != last+1 {
			n += len(`{"start":,"lines":[]}`) + digits(l.line) + comma(blocks)
			blocks, start, allMatch, taken, matches, b64 = blocks+1, l.line, true, 0, 0, 0
		}
		n += len(`""`) + jsonLen(l.text) + comma(taken)
		taken++
		switch {
		case l.isMatch && !allMatch:
			n += digits(l.line) + comma(matches)
			matches++
		case !l.isMatch && allMatch:
			n += len(`,"matches":[]`)
			for m := start; m < l.line; m++ {
				n += digits(m) + comma(matches)
				matches++
			}
			allMatch = false
		}
		if l.b64 != "" {
			if b64 == 0 {
				n += len(`,"linesBase64":{}`)
			}
			n += len(`"":""`) + digits(l.line) + len(l.b64) + comma(b64)
			b64++
		}
		last = l.line
	}
	return n
}

// comma is the byte of the comma before an element of an array or object
// that holds n before it.
func comma(n int) int {
	return min(n, 1)
}

// outLine is a line ready for a block: its text cut and made UTF-8, and
// its bytes in base64 when they are not UTF-8.
type outLine struct {
	line      int
	isMatch   bool
	text, b64 string
}

func newOutLine(r lineRec) outLine {
	text, b64 := lineText(r)
	return outLine{line: r.line, isMatch: r.isMatch, text: text, b64: b64}
}

// textCost is the bytes l of the file at path adds to a page printed as
// text: its line with the path:N: prefix; none for JSON.
func (p *page) textCost(path string, l outLine) int {
	if p.t.TextLinePrefix == nil {
		return 0
	}
	return p.t.TextLinePrefix(path, l.line) + len(l.text) + len("\n")
}

func digits(n int) int {
	return len(strconv.Itoa(n))
}

// cutFrom is where a cut line starts to show, its match at at: from its
// start, or a quarter of the cut before a match past its middle (then on
// to a character's start).
func cutFrom(at int) int {
	if at > MaxLineBytes/2 {
		return at - MaxLineBytes/4
	}
	return 0
}

// lineText is a line for output: cut at MaxLineBytes with a visible marker
// (keeping the match in view), and with its base64 twin when it is not UTF-8.
func lineText(r lineRec) (string, string) {
	b := r.text
	size := len(b)
	if r.size > 0 {
		size = r.size // b is the part of a long line from r.off
	}
	if size > MaxLineBytes {
		lim := r.off + len(b) // the end of what b holds
		start := 0
		// Cuts move to a character's start, at most UTFMax-1 bytes: bytes
		// further from one are no UTF-8 (a run of continuation bytes), and
		// the search for one ran past what a streamed line's part holds.
		if r.isMatch {
			start = cutFrom(r.at)
			for n := 1; n < utf8.UTFMax && start < lim && !utf8.RuneStart(b[start-r.off]); n++ {
				start++
			}
		}
		end := min(lim, start+MaxLineBytes)
		for n := 1; n < utf8.UTFMax && end < lim && end > start && !utf8.RuneStart(b[end-r.off]); n++ {
			end--
		}
		prefix := ""
		if start > 0 {
			prefix = "[… " + strconv.Itoa(start) + " bytes cut] "
		}
		suffix := ""
		if end < size {
			suffix = " [… " + strconv.Itoa(size-end) + " bytes cut]"
		}
		kept := b[start-r.off : end-r.off]
		if utf8.Valid(kept) {
			return prefix + string(kept) + suffix, ""
		}
		s := prefix + perByteFFFD(kept) + suffix
		// The kept bytes, losslessly: the markers are not part of the file.
		return s, base64.StdEncoding.EncodeToString(kept)
	}
	if utf8.Valid(b) {
		return string(b), ""
	}
	return perByteFFFD(b), base64.StdEncoding.EncodeToString(b)
}

// perByteFFFD is b with one U+FFFD for each byte that is not UTF-8, as a
// U+FFFD of a query matches one such byte: a line shown with one for a
// run of them (strings.ToValidUTF8) was not found when copied back.
func perByteFFFD(b []byte) string {
	var out strings.Builder
	out.Grow(len(b) + 8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out.WriteString("\uFFFD")
		} else {
			out.Write(b[:n])
		}
		b = b[n:]
	}
	return out.String()
}
