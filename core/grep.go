package core

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// GrepRequest searches file contents below a path.
type GrepRequest struct {
	Query      string   `json:"query" arg:"0" alias:"pattern" help:"text to search for (a regex with --regex)"`
	Path       string   `json:"path,omitempty" arg:"1" alias:"file_path,dir_path" help:"file or directory to search (default: the current directory)"`
	Include    string   `json:"include,omitempty" alias:"glob" help:"search only files matching this glob (without a slash it matches the name at any depth)"`
	Regex      bool     `json:"regex,omitempty" help:"the query is a regular expression (Go RE2 syntax)"`
	IgnoreCase bool     `json:"ignoreCase,omitempty" flag:"ignore-case" help:"ignore case (Unicode simple folding, as ripgrep)"`
	Context    int      `json:"context,omitempty" help:"lines of context around each match, 0 to 10"`
	Limit      int      `json:"limit,omitempty" help:"matching lines (files in files mode) per page (default 200, max 1000)"`
	Offset     int      `json:"offset,omitempty" help:"matching lines (files) to skip (pass the previous nextOffset)"`
	Mode       string   `json:"mode,omitempty" help:"content (default), files (paths with match counts) or count (totals)"`
	NoIgnore   bool     `json:"noIgnore,omitempty" help:"do not honour .gitignore, .ignore, .git/info/exclude and .agentfsignore"`
	Exclude    []string `json:"exclude,omitempty" help:"glob of paths to leave out (repeatable; without a slash it matches a name at any depth)"`
	Timeout    Duration `json:"timeout,omitempty" help:"stop after this long and return the partial page (default 30s)"`
}

// Duration is a time span given as Go text ("30s", "1m") or a number of
// seconds in JSON.
type Duration time.Duration

// UnmarshalText parses "30s"-style text or a plain number of seconds.
func (d *Duration) UnmarshalText(b []byte) error {
	s := string(b)
	// A day is far beyond any useful timeout and keeps the float conversion
	// clear of overflow (1e12 seconds would wrap negative).
	const most = 24 * time.Hour
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || f < 0 || f > most.Seconds() {
			return InvalidArgument("a duration must be from 0 to %s, not %s.", most, s).WithHint("give a duration such as 30s")
		}
		*d = Duration(f * float64(time.Second))
	} else if v, err := time.ParseDuration(s); err == nil {
		if v < 0 || v > most {
			return InvalidArgument("a duration must be from 0 to %s, not %s.", most, s).WithHint("give a duration such as 30s")
		}
		*d = Duration(v)
	} else {
		return InvalidArgument("%q is not a duration such as 30s or 2m.", s).WithHint("give a duration such as 30s")
	}
	return nil
}

// UnmarshalJSON takes a string ("30s") or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		return d.UnmarshalText([]byte(s))
	}
	return d.UnmarshalText(b)
}

// MarshalText writes the Go spelling, 30s.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// GrepLine is one line of a match's context.
type GrepLine struct {
	Line       int    `json:"line"`
	Text       string `json:"text"`
	TextBase64 string `json:"textBase64,omitempty"`
	IsMatch    bool   `json:"isMatch"`
}

// GrepMatch is one matching line or, with context, one block of merged
// context: line and text are then its first matching line, and context
// holds every line of the block, the matching ones with isMatch.
type GrepMatch struct {
	Path       string     `json:"path"`
	PathBase64 string     `json:"pathBase64,omitempty"`
	Line       int        `json:"line"`
	Text       string     `json:"text"`
	TextBase64 string     `json:"textBase64,omitempty"`
	Context    []GrepLine `json:"context,omitempty"`
}

// GrepFile is one file with matches, in files mode.
type GrepFile struct {
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
	Count      int    `json:"count"`
}

// GrepResult is one page of a search. Count is the number of matching lines
// in the page (files in files mode, total matching lines in count mode).
type GrepResult struct {
	Path       string      `json:"path"`
	PathBase64 string      `json:"pathBase64,omitempty"`
	Mode       string      `json:"mode"`
	Count      int         `json:"count"`
	Matches    []GrepMatch `json:"matches,omitempty"`
	Files      []GrepFile  `json:"files,omitempty"`
	// FilesWithMatches is set in count mode.
	FilesWithMatches *int `json:"filesWithMatches,omitempty"`
	// FilesSearched and BinarySkipped cover the files read for this page.
	FilesSearched int  `json:"filesSearched"`
	BinarySkipped int  `json:"binaryFilesSkipped"`
	Truncated     bool `json:"truncated,omitempty"`
	TimedOut      bool `json:"timedOut,omitempty"`
	// Hint says what to do next when the page is partial for a reason the
	// caller can act on (a timeout).
	Hint       string `json:"hint,omitempty"`
	NextOffset *int   `json:"nextOffset,omitempty"`
}

// MarshalJSON always writes matches in content mode and files in files
// mode, empty or not, and neither in the other modes.
func (r *GrepResult) MarshalJSON() ([]byte, error) {
	type plain GrepResult
	v := struct {
		*plain
		Matches *[]GrepMatch `json:"matches,omitempty"`
		Files   *[]GrepFile  `json:"files,omitempty"`
	}{plain: (*plain)(r)}
	switch r.Mode {
	case ModeContent:
		m := r.Matches
		if m == nil {
			m = []GrepMatch{}
		}
		v.Matches = &m
	case ModeFiles:
		f := r.Files
		if f == nil {
			f = []GrepFile{}
		}
		v.Files = &f
	}
	return json.Marshal(v)
}

// Grep defaults and caps.
const (
	GrepDefaultLimit   = 200
	GrepMaxLimit       = 1000
	GrepMaxContext     = 10
	GrepDefaultTimeout = 30 * time.Second
	// MaxLineBytes is where a reported line is cut, with a marker.
	MaxLineBytes = 1000
)

// Grep modes.
const (
	ModeContent = "content"
	ModeFiles   = "files"
	ModeCount   = "count"
)

// grepJob is a batch of files of a search: listed by the walk, opened and
// searched by a worker, and consumed in walk order. Batches rather than
// single files keep channel hand-offs, and the thread wake-ups they cost,
// off the per-file path.
type grepJob struct {
	paths []string
	opens []func() (io.ReadCloser, error)
	res   chan []fileResult
}

// grepBatch is the number of files in a job.
const grepBatch = 16

// Grep searches a file, or the files below a directory in walk order, and
// returns one page of matching lines. Files are searched in parallel by a
// bounded pool; results are consumed in walk order, and the walk stops as
// soon as the page is known to be full.
func (t *Tools) Grep(ctx context.Context, req GrepRequest) (*GrepResult, error) {
	limit, err := PageWindow(req.Offset, req.Limit, GrepDefaultLimit, GrepMaxLimit)
	if err != nil {
		return nil, err
	}
	mode := req.Mode
	switch mode {
	case "":
		mode = ModeContent
	case ModeContent, ModeFiles, ModeCount:
	default:
		return nil, InvalidArgument("mode must be content, files or count, not %q.", req.Mode).
			WithHint("omit mode for matching lines, or use files for paths with counts")
	}
	if req.Context < 0 || req.Context > GrepMaxContext {
		return nil, InvalidArgument("context must be 0 to %d, not %d.", GrepMaxContext, req.Context).
			WithHint("ask for at most %d lines of context", GrepMaxContext)
	}
	m, err := newMatcher(req.Query, req.Regex, req.IgnoreCase)
	if err != nil {
		return nil, err
	}
	var include *glob
	if req.Include != "" {
		p, err := checkGlob("include", req.Include)
		if err != nil {
			return nil, err
		}
		g := newGlob(p, true)
		include = &g
	}
	exclude, err := checkGlobs("exclude", req.Exclude)
	if err != nil {
		return nil, err
	}
	path := req.Path
	if path == "" {
		path = "."
	}
	timeout := time.Duration(req.Timeout)
	if timeout == 0 {
		timeout = GrepDefaultTimeout
	}
	info, err := t.FS.Stat(ctx, path)
	if err != nil {
		return nil, t.WithSuggestions(ctx, path, err)
	}
	var w Walker
	if info.Type == TypeDir {
		if w, err = t.walker(); err != nil {
			return nil, err
		}
	}

	tctx, cancelT := context.WithTimeout(ctx, timeout)
	defer cancelT()
	sctx, stopWalk := context.WithCancel(tctx)
	defer stopWalk()

	ctxLines, capPerFile := req.Context, req.Offset+limit+1
	if mode != ModeContent {
		ctxLines, capPerFile = 0, 0
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	jobs := make(chan *grepJob, workers*2)
	order := make(chan *grepJob, workers*4)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newSearcher(m, ctxLines, capPerFile)
			for j := range jobs {
				out := make([]fileResult, len(j.opens))
				for i, open := range j.opens {
					r, err := open()
					if err != nil {
						out[i].err = err // gone or not regular since the listing: skipped
						continue
					}
					out[i] = s.search(sctx, r)
					r.Close()
				}
				j.res <- out
			}
		}()
	}
	var walkErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(order)
		defer close(jobs)
		cur := &grepJob{}
		flush := func() error {
			j := cur
			cur = &grepJob{}
			if len(j.opens) == 0 {
				return nil
			}
			j.res = make(chan []fileResult, 1)
			var err error
			select {
			case order <- j:
			case <-sctx.Done():
				// Not consumed, but run all the same: every opener is
				// called once, and what it opens closed.
				err = sctx.Err()
			}
			jobs <- j // never blocks for long: workers drain jobs until it closes
			return err
		}
		add := func(path string, open func() (io.ReadCloser, error)) error {
			cur.paths, cur.opens = append(cur.paths, path), append(cur.opens, open)
			if len(cur.opens) == grepBatch {
				return flush()
			}
			return nil
		}
		if w == nil {
			r, err := t.FS.Open(sctx, path, 0)
			if err != nil {
				walkErr = err
				return
			}
			add(t.FS.Display(path), func() (io.ReadCloser, error) { return r, nil })
			walkErr = flush()
			return
		}
		walkErr = w.Walk(sctx, path, WalkOptions{NoIgnore: req.NoIgnore, Exclude: exclude}, func(e WalkEntry) error {
			if e.Type != TypeFile || (include != nil && !include.match(e.Rel, e.Name)) {
				return nil
			}
			if e.Later != nil {
				return add(e.Path, e.Later())
			}
			r, err := e.Open()
			if err != nil {
				return nil // gone or not regular since the listing: skipped
			}
			return add(e.Path, func() (io.ReadCloser, error) { return r, nil })
		})
		if err := flush(); walkErr == nil {
			walkErr = err
		}
	}()

	res := &GrepResult{Mode: mode}
	res.Path, res.PathBase64 = PathText(t.FS.Display(path))
	pg := &page{req: req, limit: limit, res: res, budget: t.maxBytes() - 1024}
	filesWithMatches := 0
	done := false
	for j := range order {
		// Once done, batches are only drained: every opened file is closed
		// by a worker.
		frs := <-j.res
		for i := 0; i < len(frs) && !done; i++ {
			fr := frs[i]
			if fr.err != nil && !fr.partial {
				continue // unreadable file: skipped, as ripgrep does
			}
			res.FilesSearched++
			if fr.binary {
				res.BinarySkipped++
				continue
			}
			if fr.matches > 0 {
				filesWithMatches++
			}
			switch mode {
			case ModeContent:
				done = pg.addLines(j.paths[i], fr)
			case ModeFiles:
				done = pg.addFile(j.paths[i], fr.matches)
			case ModeCount:
				res.Count += fr.matches
			}
			if !done && fr.err != nil {
				done = true // the deadline cut this file short
			}
			if done {
				stopWalk()
			}
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if tctx.Err() != nil {
		res.TimedOut = true
		if mode != ModeCount && res.NextOffset == nil {
			next := req.Offset + pg.taken
			res.NextOffset = &next
		}
		// Every page searches the tree from its start, so a page that found
		// nothing in time would find nothing again with the same timeout.
		res.Hint = "the timeout cut this page short: pass nextOffset to continue; a page searches from the start of the tree, so raise --timeout if it found little"
		if pg.taken == 0 {
			res.Hint = "nothing was found before the timeout, and the next page would search the same files again: raise --timeout"
		}
	} else if walkErr != nil && !errors.Is(walkErr, context.Canceled) {
		return nil, walkErr
	}
	if mode == ModeCount {
		res.FilesWithMatches = &filesWithMatches
	} else {
		res.Count = pg.taken
	}
	return res, nil
}

// page assembles one page in walk order, bounded in items and bytes.
type page struct {
	req    GrepRequest
	limit  int
	res    *GrepResult
	budget int
	seen   int // matching lines (files) met so far, skipped ones included
	taken  int // matching lines (files) in the page
}

// full ends the page: one more item exists past it.
func (p *page) full() bool {
	next := p.req.Offset + p.taken
	p.res.NextOffset = &next
	return true
}

// addFile adds one file of files mode; it returns true when the page is done.
func (p *page) addFile(path string, count int) bool {
	if count == 0 {
		return false
	}
	if p.seen++; p.seen <= p.req.Offset {
		return false
	}
	if p.taken == p.limit {
		return p.full()
	}
	f := GrepFile{Count: count}
	f.Path, f.PathBase64 = PathText(path)
	if !p.spend(f) {
		p.res.Truncated = true
		return p.full()
	}
	p.res.Files = append(p.res.Files, f)
	p.taken++
	return false
}

func (p *page) spend(v any) bool {
	b, _ := json.Marshal(v)
	if p.budget -= len(b) + 1; p.budget < 0 && p.taken > 0 {
		return false
	}
	return true
}

// addLines adds the lines of one file: each taken match with the context
// lines around it, merged into blocks; it returns true when the page is done.
func (p *page) addLines(path string, fr fileResult) bool {
	c := p.req.Context
	var cur *GrepMatch
	lastLine, lastMatch := -1, -1<<30
	ptext, pb64 := PathText(path)
	lines := fr.lines
	for i, r := range lines {
		if r.isMatch {
			if p.seen++; p.seen <= p.req.Offset {
				continue
			}
			if p.taken == p.limit {
				return p.full()
			}
			// The block: context lines before this match not yet taken.
			start := i
			for start > 0 && !lines[start-1].isMatch && lines[start-1].line >= r.line-c && lines[start-1].line > lastLine {
				start--
			}
			if c == 0 || cur == nil || lines[start].line != lastLine+1 {
				if !p.spend(GrepMatch{Path: ptext, PathBase64: pb64}) {
					p.res.Truncated = true
					return p.full()
				}
				p.res.Matches = append(p.res.Matches, GrepMatch{Path: ptext, PathBase64: pb64, Line: -1})
				cur = &p.res.Matches[len(p.res.Matches)-1]
			}
			text, b64 := lineText(r)
			if c == 0 {
				if !p.spend(text + b64) {
					p.res.Truncated = true
					p.res.Matches = p.res.Matches[:len(p.res.Matches)-1]
					return p.full()
				}
				cur.Line, cur.Text, cur.TextBase64 = r.line, text, b64
			} else {
				block := make([]GrepLine, 0, i-start+1)
				for _, b := range lines[start : i+1] {
					t, tb := lineText(b)
					block = append(block, GrepLine{Line: b.line, Text: t, TextBase64: tb, IsMatch: b.isMatch})
				}
				if !p.spend(block) {
					p.res.Truncated = true
					if cur.Line < 0 {
						p.res.Matches = p.res.Matches[:len(p.res.Matches)-1]
					}
					return p.full()
				}
				if cur.Line < 0 {
					cur.Line, cur.Text, cur.TextBase64 = r.line, text, b64
				}
				cur.Context = append(cur.Context, block...)
			}
			p.taken++
			lastLine, lastMatch = r.line, r.line
			continue
		}
		// An after-context line of the last taken match.
		if cur != nil && r.line == lastLine+1 && r.line <= lastMatch+c {
			t, tb := lineText(r)
			gl := GrepLine{Line: r.line, Text: t, TextBase64: tb}
			if !p.spend(gl) {
				p.res.Truncated = true // context dropped for the byte bound
				continue
			}
			cur.Context = append(cur.Context, gl)
			lastLine = r.line
		}
	}
	return false
}

// lineText is a line for output: cut at MaxLineBytes with a visible marker
// (keeping the match in view), and with its base64 twin when it is not UTF-8.
func lineText(r lineRec) (string, string) {
	b := r.text
	if len(b) > MaxLineBytes {
		start := 0
		if r.isMatch && r.at > MaxLineBytes/2 {
			start = r.at - MaxLineBytes/4
			for start < len(b) && !utf8.RuneStart(b[start]) {
				start++
			}
		}
		end := min(len(b), start+MaxLineBytes)
		for end < len(b) && end > start && !utf8.RuneStart(b[end]) {
			end--
		}
		prefix := ""
		if start > 0 {
			prefix = "[… " + strconv.Itoa(start) + " bytes cut] "
		}
		suffix := ""
		if end < len(b) {
			suffix = " [… " + strconv.Itoa(len(b)-end) + " bytes cut]"
		}
		kept := b[start:end]
		s := prefix + strings.ToValidUTF8(string(kept), "\uFFFD") + suffix
		if utf8.Valid(kept) {
			return s, ""
		}
		// The kept bytes, losslessly: the markers are not part of the file.
		return s, base64.StdEncoding.EncodeToString(kept)
	}
	if utf8.Valid(b) {
		return string(b), ""
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), base64.StdEncoding.EncodeToString(b)
}
