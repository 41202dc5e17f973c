package patch

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/editmatch"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/textfile"
)

// ReadFunc reads a file as it is before the patch. ok is false when nothing
// is at path; any other failure (a directory, an I/O error) is err, which
// Plan returns as it is. ok with err is a file whose content cannot be
// planned on (not text): a delete of it, or an add over it, goes ahead,
// and an update of it returns err.
type ReadFunc func(path string) (content string, ok bool, err error)

// Change is the net effect of a patch on one path.
type Change struct {
	// Path is the path as the patch names it, cleaned.
	Path string
	// Kind is Add for a file that did not exist before the patch, Update
	// for one that did and still does, Delete for one that no longer does.
	Kind Kind
	// Content is the whole new content, byte-order mark and line endings
	// included; empty for Delete.
	Content string
	// From is the file, as it was before the patch, that Content was made
	// from, whose mode it keeps: Path for an update in place, the source of
	// a move; empty for content the patch wrote whole.
	From string
	// Chunks say where the chunks of the updates that made Content applied.
	Chunks []Located
}

// Located says where one chunk applied.
type Located struct {
	// PatchLine is the chunk's first line in the patch.
	PatchLine int
	// Line is the 1-based line of the file, as the update found it, where
	// the chunk's old lines start, or where its lines were added.
	Line int
	// Rung is the Matcher's rung that found the old lines; empty for a
	// chunk that only adds lines.
	Rung string
}

// Plan applies the patch in memory, in order, to the files read returns
// (each path is read once; later sections see what earlier ones did), and
// returns the net change of every path it touches, in the order the patch
// first names them. It verifies every chunk before it returns anything:
// on error, nothing is to change. m locates chunks; nil is Ladder.
//
// An updated file keeps its byte-order mark, and each line it keeps keeps
// its line ending; added lines take the ending of the lines they replace,
// else the file's usual one. As with Codex, an updated file always ends
// with a line ending.
func (p *Patch) Plan(read ReadFunc, m Matcher) ([]Change, error) {
	if m == nil {
		m = Ladder
	}
	pl := &planner{read: read, m: m, files: map[string]*file{}}
	for _, op := range p.Ops {
		if err := pl.apply(op); err != nil {
			return nil, err
		}
	}
	if err := pl.nested(); err != nil {
		return nil, err
	}
	var changes []Change
	for _, name := range pl.order {
		f := pl.files[name]
		c := Change{Path: name, Content: f.content, From: f.from, Chunks: f.chunks}
		switch {
		case f.existed && f.exists:
			c.Kind = Update
		case f.exists:
			c.Kind = Add
		case f.existed:
			c = Change{Path: name, Kind: Delete}
		default:
			continue // added, then deleted or moved away
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// file is the planned state of one path.
type file struct {
	existed, exists bool // before the patch, and now
	content, from   string
	chunks          []Located
	// wroteAt is the patch line of the section that wrote this path
	// whole (an add, or a move to it), 0 for none; changedAt, of the
	// last that changed it in place.
	wroteAt, changedAt int
	// unplanned is why the content as read cannot be updated (not text).
	unplanned error
}

type planner struct {
	read  ReadFunc
	m     Matcher
	files map[string]*file
	order []string
}

// file returns the state of name, reading it on first use.
func (pl *planner) file(name string) (*file, error) {
	if f, ok := pl.files[name]; ok {
		return f, nil
	}
	content, ok, err := pl.read(name)
	if err != nil && !ok {
		return nil, err
	}
	f := &file{existed: ok, exists: ok, content: content, unplanned: err}
	if ok {
		f.from = name
	}
	pl.files[name] = f
	pl.order = append(pl.order, name)
	return f, nil
}

func (pl *planner) apply(op Op) error {
	name := backend.Clean(op.Path)
	f, err := pl.file(name)
	if err != nil {
		return err
	}
	if op.Kind == Add {
		if err := overwritten(op, name, f); err != nil {
			return err
		}
		*f = file{existed: f.existed, exists: true, content: op.Content, wroteAt: op.Line}
		return nil
	}
	if !f.exists {
		e := missing(op, f.existed)
		if newAt, pending, ok := pl.movedAlready(op); ok && pending == nil {
			e.WithDetail("movedTo", op.MoveTo).WithDetail("newAt", newAt).
				WithHint("%s exists, and the change stands in it at line %d: this patch looks applied already; if it was, nothing is left to do", op.MoveTo, newAt)
		} else if ok {
			e.WithDetail("movedTo", op.MoveTo).WithDetail("newAt", newAt).WithDetail("pending", pending).
				WithHint("%s exists, and a part of the change stands in it at line %d, %s not: if this patch was applied before, update %s with the pending chunks alone", op.MoveTo, newAt, pendingText(pending), op.MoveTo)
		}
		return e
	}
	if op.Kind == Delete {
		if err := deletedAfter(op, name, f); err != nil {
			return err
		}
		*f = file{existed: f.existed}
		return nil
	}
	if f.unplanned != nil {
		return f.unplanned
	}
	content, located, err := update(f.content, op, pl.m)
	if err != nil {
		return err
	}
	f.content, f.chunks = content, append(f.chunks, located...)
	if op.MoveTo == "" || backend.Clean(op.MoveTo) == name {
		f.changedAt = op.Line
		return nil
	}
	dest, err := pl.file(backend.Clean(op.MoveTo))
	if err != nil {
		return err
	}
	if err := overwritten(op, backend.Clean(op.MoveTo), dest); err != nil {
		return err
	}
	*dest = file{existed: dest.existed, exists: true, content: f.content, from: f.from, chunks: f.chunks, wroteAt: op.Line}
	*f = file{existed: f.existed}
	return nil
}

// nested refuses a patch that leaves a file at a path and a file below
// it (Add File: d and Add File: d/x): one path cannot be a file and a
// directory. Refused as the patch is planned, before anything is written:
// the commit found it as a conflict, and each backend named it otherwise.
func (pl *planner) nested() error {
	for _, name := range pl.order {
		if !pl.files[name].exists {
			continue
		}
		for d := path.Dir(name); d != "." && d != "/"; d = path.Dir(d) {
			if outer, ok := pl.files[d]; ok && outer.exists {
				inner := pl.files[name]
				return fault.Errorf(fault.CodePatchVerify, "the patch leaves %s a file (patch line %d) and writes %s inside it (patch line %d): a path cannot be both a file and a directory.", d, outer.wroteAt, name, inner.wroteAt).
					WithPath(name).WithDetail("patchLine", inner.wroteAt).WithDetail("fileAt", outer.wroteAt).
					WithHint("give the file or the directory another name")
			}
		}
	}
	return nil
}

// overwritten refuses op writing the path name whole (f) when an earlier
// section of the patch wrote it whole or changed it: what that section
// did would be lost without a trace (two moves to one path, a move onto
// an added or updated file). A file that existed before the patch may be
// overwritten, as in Codex.
func overwritten(op Op, name string, f *file) error {
	if !f.exists {
		return nil
	}
	hint := "write each path once: move or add to another path, or merge the two sections"
	switch {
	case f.wroteAt != 0:
		return fault.Errorf(fault.CodePatchVerify, "the section at patch line %d writes %s, which the section at patch line %d already wrote: that file would be lost.", op.Line, name, f.wroteAt).
			WithPath(name).WithDetail("patchLine", op.Line).WithDetail("wroteAt", f.wroteAt).WithHint("%s", hint)
	case f.changedAt != 0:
		return fault.Errorf(fault.CodePatchVerify, "the section at patch line %d writes %s whole, which the section at patch line %d changed: that change would be lost.", op.Line, name, f.changedAt).
			WithPath(name).WithDetail("patchLine", op.Line).WithDetail("changedAt", f.changedAt).WithHint("%s", hint)
	}
	return nil
}

// deletedAfter refuses op deleting the path name (f) when an earlier
// section of the patch wrote it whole (an add, a move to it) or changed
// it: what that section did would be dropped without a trace, the patch
// answering success (an add then a delete answered no file at all). A
// delete, then an add, replaces the file, and loses nothing.
func deletedAfter(op Op, name string, f *file) error {
	at, detail, did := f.wroteAt, "wroteAt", "wrote"
	if at == 0 {
		at, detail, did = f.changedAt, "changedAt", "changed"
	}
	if at == 0 {
		return nil
	}
	return fault.Errorf(fault.CodePatchVerify, "the section at patch line %d deletes %s, which the section at patch line %d %s: that section would be dropped without a trace.", op.Line, name, at, did).
		WithPath(name).WithDetail("patchLine", op.Line).WithDetail(detail, at).
		WithHint("leave out one of the two sections: the delete, or the section at patch line %d; nothing was changed", at)
}

// movedAlready finds, for an update and move of a file that is not
// there, the change standing in the destination, as a retry finds it
// (details.newAt): sent again, such a patch found its file gone, and the
// hint to add it made a second copy beside the moved one. pending, when
// some chunks stand there and the others would apply, lists the others
// (see partlyApplied).
func (pl *planner) movedAlready(op Op) (newAt int, pending []int, ok bool) {
	if op.Kind != Update || op.MoveTo == "" || len(op.Chunks) == 0 {
		return 0, nil, false
	}
	dest, err := pl.file(backend.Clean(op.MoveTo))
	if err != nil || !dest.exists || dest.unplanned != nil {
		return 0, nil, false
	}
	_, _, err = update(dest.content, op, pl.m)
	if e := fault.AsError(err); e != nil {
		newAt, ok = e.Details["newAt"].(int)
		pending, _ = e.Details["pending"].([]int)
		return newAt, pending, ok
	}
	return 0, nil, false
}

func missing(op Op, removed bool) *fault.Error {
	verb, hint := "update", "check the path, or create the file with '"+addMarker+" "+op.Path+"' and its whole content"
	if op.Kind == Delete {
		verb, hint = "delete", "check the path, or leave the '"+deleteMarker+"' section out"
	}
	why := "does not exist"
	if removed {
		why = "is deleted or moved away by an earlier section of the patch"
	}
	return fault.Errorf(fault.CodeNotFound, "the file to %s (patch line %d) %s.", verb, op.Line, why).
		WithPath(op.Path).WithDetail("patchLine", op.Line).WithHint("%s", hint)
}

// fileLine is a line of a file: its text, its ending ("" for a last line
// without one), and whether the patch added it.
type fileLine struct {
	text, eol string
	added     bool
}

func splitFile(s string) []fileLine {
	var out []fileLine
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, fileLine{text: s})
			break
		}
		l := fileLine{text: s[:i], eol: "\n"}
		if t, ok := strings.CutSuffix(l.text, "\r"); ok {
			l = fileLine{text: t, eol: "\r\n"}
		}
		out = append(out, l)
		s = s[i+1:]
	}
	return out
}

// usualEOL is the ending most of lines have, "\r\n" or "\n"; def when none
// has one.
func usualEOL(lines []fileLine, def string) string {
	crlf, lf := 0, 0
	for _, l := range lines {
		switch l.eol {
		case "\r\n":
			crlf++
		case "\n":
			lf++
		}
	}
	switch {
	case crlf+lf == 0:
		return def
	case crlf > lf:
		return "\r\n"
	}
	return "\n"
}

// appliedHint is the hint of a chunk that looks applied already, its
// result at line newAt; otherwise says what to do if it was not.
func appliedHint(newAt int, otherwise string) string {
	return fmt.Sprintf("%s; %s", appliedAlready(newAt), otherwise)
}

// appliedAlready is the hint's first words for a chunk whose result
// stands at line newAt (partlyApplied finds them there).
func appliedAlready(newAt int) string {
	return fmt.Sprintf("this patch looks applied already at line %d: if it was, nothing is left to do", newAt)
}

// partlyApplied is err, the error of a chunk of op that looks applied
// already (details.newAt), its hint saying which chunks are pending when
// the others, that chunk and any other that looks applied left out,
// would apply (details.pending): "nothing is left to do" stopped an agent
// with half the change made.
func partlyApplied(lines []fileLine, op Op, m Matcher, err error) error {
	e := fault.AsError(err)
	newAt, ok := e.Details["newAt"].(int)
	otherwise, cut := strings.CutPrefix(e.Hint, appliedAlready(newAt)+"; ")
	if !ok || !cut || len(op.Chunks) < 2 {
		return err
	}
	applied := []int{e.Details["chunk"].(int) - 1}
	for round := 1; ; round++ {
		if round > partlyRounds {
			// Each round locates the chunks left again: bounded, so that
			// a large patch applied in part is told in milliseconds.
			return e.WithHint("%s look applied already (chunk %d at line %d), and whether the others are was not worked out: read the file, and send only the chunks still to make; %s", chunkList(applied, 1), applied[0]+1, newAt, otherwise)
		}
		rest := op
		rest.Chunks = nil
		var index []int // of rest's chunks in op
		for k, c := range op.Chunks {
			if !slices.Contains(applied, k) {
				rest.Chunks, index = append(rest.Chunks, c), append(index, k)
			}
		}
		if len(index) == 0 {
			return err
		}
		_, _, err2 := locateChunks(lines, rest, m, false)
		if err2 == nil {
			pending := make([]int, len(index))
			for i, k := range index {
				pending[i] = k + 1
			}
			looks := fmt.Sprintf("chunk %d looks applied already at line %d", applied[0]+1, newAt)
			if len(applied) > 1 {
				looks = fmt.Sprintf("%s look applied already (chunk %d at line %d)", chunkList(applied, 1), applied[0]+1, newAt)
			}
			return e.WithDetail("pending", pending).
				WithHint("%s, and %s not: if so, leave out what was applied and send the patch again; %s", looks, pendingText(pending), otherwise)
		}
		e2 := fault.AsError(err2)
		if _, ok := e2.Details["newAt"]; !ok {
			return err
		}
		applied = append(applied, index[e2.Details["chunk"].(int)-1])
	}
}

// partlyRounds bounds the rounds of partlyApplied: a chunk more that
// looks applied each.
const partlyRounds = 16

// pendingText names the pending chunks (numbered from 1) with their
// verb: "chunk 2 is", "chunks 1-3 are".
func pendingText(pending []int) string {
	if len(pending) == 1 {
		return chunkList(pending, 0) + " is"
	}
	return chunkList(pending, 0) + " are"
}

// chunkList names chunks ks, plus add to each, runs as ranges: "chunk 2",
// "chunks 1 and 3", "chunks 1-200 and 203".
func chunkList(ks []int, add int) string {
	sorted := slices.Sorted(slices.Values(ks))
	var s []string
	for i := 0; i < len(sorted); {
		j := i
		for j+1 < len(sorted) && sorted[j+1] == sorted[j]+1 {
			j++
		}
		if j > i {
			s = append(s, fmt.Sprintf("%d-%d", sorted[i]+add, sorted[j]+add))
		} else {
			s = append(s, strconv.Itoa(sorted[i]+add))
		}
		i = j + 1
	}
	if len(s) == 1 && len(sorted) == 1 {
		return "chunk " + s[0]
	}
	if len(s) == 1 {
		return "chunks " + s[0]
	}
	return "chunks " + strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// replacement is a chunk located in the file: its lines take the place of
// the n lines at index at.
type replacement struct {
	at, n int
	lines []Line
	chunk int
}

// update applies the chunks of op to content.
func update(content string, op Op, m Matcher) (string, []Located, error) {
	body, bom := strings.CutPrefix(content, "\uFEFF")
	lines := splitFile(body)
	if bom {
		op = withoutMark(op, lines)
	}
	reps, located, err := locateChunks(lines, op, m, true)
	if err != nil {
		return "", nil, partlyApplied(lines, op, m, err)
	}
	if err := checkOverlap(reps, op); err != nil {
		return "", nil, err
	}
	rendered, put := render(lines, reps, len(body))
	out := textfile.WithoutNewMarks(body, rendered, put)
	if bom {
		out = "\uFEFF" + out
	}
	return out, located, nil
}

// withoutMark is op for a file with a byte-order mark, its chunks' first
// old lines and @@ lines without the U+FEFF that starts them: line 1 as
// a diff or cat shows it, the mark in front, which the lines matched
// (the file's text after the mark, lines) do not hold. A line of the file
// that starts with U+FEFF itself (a zero-width no-break space) keeps it
// in a chunk that names it.
func withoutMark(op Op, lines []fileLine) Op {
	var marked []string
	for _, l := range lines {
		if strings.HasPrefix(l.text, "\uFEFF") {
			marked = append(marked, strings.TrimSpace(l.text))
		}
	}
	unmarked := func(s string) string {
		if !strings.HasPrefix(s, "\uFEFF") || slices.Contains(marked, strings.TrimSpace(s)) {
			return s
		}
		return strings.TrimPrefix(s, "\uFEFF")
	}
	chunks := slices.Clone(op.Chunks)
	for k := range chunks {
		c := &chunks[k]
		c.Context = unmarked(c.Context)
		if len(c.Scopes) > 0 {
			c.Scopes = slices.Clone(c.Scopes)
			for i := range c.Scopes {
				c.Scopes[i] = unmarked(c.Scopes[i])
			}
		}
		if i := slices.IndexFunc(c.Lines, func(l Line) bool { return l.Op != '+' }); i >= 0 {
			c.Lines = slices.Clone(c.Lines)
			c.Lines[i].Text = unmarked(c.Lines[i].Text)
		}
	}
	op.Chunks = chunks
	return op
}

// locateChunks finds each chunk of op in lines, moving forward through the
// file, and returns the replacements they make, in the file's order. A
// chunk not found is explained (its closest region) when explain is set.
func locateChunks(lines []fileLine, op Op, m Matcher, explain bool) ([]replacement, []Located, error) {
	texts := make([]string, len(lines))
	for i, l := range lines {
		texts[i] = l.text
	}
	if l, ok := m.(ladder); ok {
		// Sought in again and again, from many places (spans): keyed
		// once per rung.
		m = newFileLadder(texts, l.steps)
	}
	var reps []replacement
	located := make([]Located, len(op.Chunks))
	start := 0
	for k, c := range op.Chunks {
		located[k].PatchLine = c.Line
		old := c.Old()
		prev := start // where the chunk before ends
		// Its scopes, outermost first, each at its first place, as Codex
		// seeks: the chunk's own @@ and old lines, sought after them,
		// still have to be found there.
		for _, scope := range c.Scopes {
			at, _, ok := m.Seek(texts, []string{scope}, start)
			if !ok {
				return nil, nil, notFound(op, k, texts, []string{scope}, start, start, soughtContext, explain)
			}
			start = at + 1
		}
		// An @@ line names where a chunk is unless it too is found only
		// loosely, at more than one place: the chunk is then placed as
		// one without it (the search went on after the first of them,
		// and a chunk found exactly before it was edited elsewhere).
		named := c.Context != ""
		// unplaced, when the @@ line is found loosely at two places, is
		// the error of a chunk that adds lines after it alone: their
		// place would be a guess.
		var unplaced error
		// leftFrom is where the search for the lines the chunk leaves
		// starts: around its @@ line when the chunk holds that line, as a
		// context line, and they, not its old lines, stand there
		// (retried, such a chunk found its old lines in the next
		// function). A chunk whose lines left hold the @@ line's text
		// only as a line it adds is no retry there ("@@ }", "-x()", "+}"
		// leaves a second "}").
		leftFrom := start
		if named {
			at, rung, ok := m.Seek(texts, []string{c.Context}, start)
			if !ok {
				return nil, nil, notFound(op, k, texts, []string{c.Context}, start, start, soughtContext, explain)
			}
			if rung != RungExact {
				if again, rung2, ok := m.Seek(texts, []string{c.Context}, at+1); ok && rung2 == rung {
					named, unplaced = false, ambiguousChunk(op, k, at, again, rung)
				}
			}
			if named {
				before := start
				start, leftFrom = at+1, at+1
				// At or after that line: a chunk may hold its @@ line
				// (@@ def f(): then " def f():", or a line further in
				// the chunk), which the search after it passed, to edit
				// the next def f() instead; its last blank line may be
				// the file's final line ending.
				if !c.EOF {
					left, _ := result(c.Lines)
					if i, ok := spans(m, texts, old, c.Context, at, before, nil); ok {
						start, leftFrom = at-i, at-i
					} else if i, ok := spans(m, texts, left, c.Context, at, before, keptContext(c.Lines)); ok {
						leftFrom = at - i
					}
					if !slices.ContainsFunc(left, func(l string) bool { return alike(m, l, c.Context) }) &&
						slices.ContainsFunc(old, func(l string) bool { return alike(m, l, c.Context) }) {
						// The @@ line names a line the chunk removes:
						// applied, it is gone, and the @@ line found in
						// the next look-alike says nothing of where the
						// chunk was meant.
						leftFrom = before
					}
				}
			}
		}
		// Codex adds a chunk without old lines at the end of the file
		// (before a last blank line); after its @@ context line when it
		// names one, as the patch's author means.
		addAt := func() (int, error) {
			if unplaced != nil && !c.EOF {
				return 0, unplaced
			}
			if !named || c.EOF {
				at := len(texts)
				if at > 0 && texts[at-1] == "" {
					at--
				}
				return at, nil
			}
			return start, nil
		}
		if len(old) == 0 {
			at, err := addAt()
			if err == nil {
				err = addedAgain(op, k, texts, c.Lines, at)
			}
			if err != nil {
				return nil, nil, err
			}
			reps = append(reps, replacement{at: at, lines: c.Lines, chunk: k})
			located[k].Line = at + 1
			continue
		}
		cl := c.Lines
		at, rung, ok := seek(m, texts, old, start, c.EOF)
		if !ok && old[len(old)-1] == "" {
			// A last blank old line may stand for the file's final line
			// ending, which is no line of its own.
			cl, old = dropLastOld(cl), old[:len(old)-1]
			if len(old) == 0 {
				// Then no old line is left: the chunk adds, where one
				// without old lines does (an empty sequence matched at
				// the search's start, the top of the file).
				at, err := addAt()
				if err == nil {
					err = addedAgain(op, k, texts, cl, at)
				}
				if err != nil {
					return nil, nil, err
				}
				reps = append(reps, replacement{at: at, lines: cl, chunk: k})
				located[k].Line = at + 1
				continue
			}
			at, rung, ok = seek(m, texts, old, start, c.EOF)
		}
		if !ok {
			sought := soughtAfterChunk
			if named {
				sought = soughtAfterContext
			}
			e := notFound(op, k, texts, c.Old(), start, prev, sought, explain)
			if lines, adds := result(cl); adds {
				// Under '*** End of File', only as the file's last lines:
				// the hint to drop the marker added them again.
				if newAt, _, ok := seek(m, texts, lines, leftFrom, c.EOF); ok && newAt >= leftFrom {
					// A retry, most likely: "copy the lines" sent the
					// caller to make the change again.
					e.WithDetail("newAt", newAt+1).
						WithHint("%s", appliedHint(newAt+1, "if not, read the file and copy the chunk's context (' ') and removed ('-') lines from it exactly"))
				}
			}
			return nil, nil, e
		}
		if newAt, ok := standsBefore(m, texts, cl, leftFrom, at, rung, named); ok && !c.EOF {
			// What the chunk writes already stands where it leads, its old
			// lines only further on: a retry, whose change would land in
			// another function (Post for Get), or a patch meant elsewhere.
			return nil, nil, fault.Errorf(fault.CodePatchVerify, "chunk %d of '%s' (patch line %d): the lines it would leave already stand at line %d, and its old lines are found only further on, at line %d: changing them there may not be what was meant.", k+1, op.Path, c.Line, newAt+1, at+1).
				WithPath(op.Path).WithDetail("path", op.Path).WithDetail("chunk", k+1).WithDetail("patchLine", c.Line).
				WithDetail("newAt", newAt+1).WithDetail("oldAt", at+1).
				WithHint("%s", appliedHint(newAt+1, fmt.Sprintf("if it is meant for line %d, give the chunk an @@ line naming the function or class there, or more context lines", at+1)))
		}
		if newAt, ok := standsAfter(m, texts, cl, at+len(old), rung); ok && !c.EOF && !named {
			// Found only loosely, and what the chunk writes stands exactly
			// further on: a retry that would change a sibling alike but
			// for its white space or typography (edit's rule).
			return nil, nil, fault.Errorf(fault.CodePatchVerify, "chunk %d of '%s' (patch line %d): its old lines are found only at the %s rung, at line %d, and the lines it would leave already stand at line %d: changing them there may not be what was meant.", k+1, op.Path, c.Line, rung, at+1, newAt+1).
				WithPath(op.Path).WithDetail("path", op.Path).WithDetail("chunk", k+1).WithDetail("patchLine", c.Line).
				WithDetail("newAt", newAt+1).WithDetail("oldAt", at+1).WithDetail("rung", rung).
				WithHint("%s", appliedHint(newAt+1, fmt.Sprintf("if it is meant for line %d, copy the chunk's lines from there exactly", at+1)))
		}
		if rung != RungExact && !c.EOF && !named {
			// Found only loosely: at one place, or it is a guess (edit's
			// rule). Exact, or under an @@ line that names where it is,
			// the first place at or after that is the one, as Codex has
			// it. No stricter rung finds it past start, so another place
			// is one at this rung.
			if again, rung2, ok := seek(m, texts, old, at+1, false); ok && rung2 == rung {
				return nil, nil, fault.Errorf(fault.CodeAmbiguousMatch, "chunk %d of '%s' (patch line %d) matches lines %d and %d of the file, at the %s rung only.", k+1, op.Path, c.Line, at+1, again+1, rung).
					WithPath(op.Path).WithDetail("path", op.Path).WithDetail("chunk", k+1).WithDetail("patchLine", c.Line).
					WithDetail("lines", []int{at + 1, again + 1}).WithDetail("rung", rung).
					WithHint("give the chunk's lines as the file spells them, or an @@ line naming the function or class it is in (or more context lines) to tell the places apart")
			}
		}
		given := cl
		cl, err := reindentAdded(cl, old, texts[at:at+len(old)], texts, rung)
		var left leftOfMargin
		if errors.As(err, &left) {
			return nil, nil, fault.Errorf(fault.CodePatchVerify, "chunk %d of '%s' (patch line %d) matches %s only with less indentation than it gives, and its added line %q would go left of the margin: whether its lines are meant where they stand or relative to the context cannot be told.", k+1, op.Path, c.Line, editmatch.LineSpan(at+1, at+len(old)), string(left)).
				WithPath(op.Path).WithDetail("path", op.Path).WithDetail("chunk", k+1).WithDetail("patchLine", c.Line).
				WithDetail("lines", []int{at + 1, at + len(old)}).WithDetail("rung", rung).WithDetail("addedLine", string(left)).
				WithHint("read %s and copy the chunk's context (' ') and removed ('-') lines from there with the file's indentation, and indent its added ('+') lines as the file does", editmatch.LineSpan(at+1, at+len(old)))
		}
		if err != nil {
			return nil, nil, fault.Errorf(fault.CodePatchVerify, "chunk %d of '%s' (patch line %d) matches %s but for indentation that differs from the file's by different amounts from line to line: where its added lines go cannot be told.", k+1, op.Path, c.Line, editmatch.LineSpan(at+1, at+len(old))).
				WithPath(op.Path).WithDetail("path", op.Path).WithDetail("chunk", k+1).WithDetail("patchLine", c.Line).
				WithDetail("lines", []int{at + 1, at + len(old)}).WithDetail("rung", rung).
				WithHint("copy the chunk's context (' ') and removed ('-') lines from those lines with their indentation, and indent its added ('+') lines as the file does")
		}
		if err := addedAgain(op, k, texts, netInsertion(given, cl), at); err != nil {
			return nil, nil, err
		}
		reps = append(reps, replacement{at: at, n: len(old), lines: cl, chunk: k})
		located[k].Line, located[k].Rung = at+1, rung
		start = at + len(old)
	}
	slices.SortStableFunc(reps, func(a, b replacement) int { return a.at - b.at })
	return reps, located, nil
}

// netInsertion is a chunk's lines, given as written, taken as the lines
// it adds around those it keeps: each run of removed lines that comes
// back unchanged among the added lines that follow it ("-X" "+Y" "+X")
// is context there ("+Y" " X"). The text is applied's, the lines as they
// will be applied (added lines re-indented), line for line. Applied, such
// a chunk left its old lines together where they were, and sent again it
// added its lines a second time.
func netInsertion(given, applied []Line) []Line {
	out := make([]Line, 0, len(given))
	for i := 0; i < len(given); {
		if given[i].Op != '-' {
			out = append(out, applied[i])
			i++
			continue
		}
		r := i
		for r < len(given) && given[r].Op == '-' {
			r++
		}
		a := r
		for a < len(given) && given[a].Op == '+' {
			a++
		}
		removed, added := Chunk{Lines: given[i:r]}.Old(), Chunk{Lines: given[r:a]}.New()
		p := -1
		for s := 0; s+len(removed) <= len(added); s++ {
			if slices.Equal(added[s:s+len(removed)], removed) {
				p = s
				break
			}
		}
		if p < 0 {
			out = append(out, applied[i:a]...)
		} else {
			for j, l := range applied[r:a] {
				if j >= p && j < p+len(removed) {
					l.Op = ' '
				}
				out = append(out, l)
			}
		}
		i = a
	}
	return out
}

// addedAgain is the PATCH_VERIFY of chunk k of op, whose lines cl add
// and remove none (taken as its net insertion: see netInsertion), when
// its added lines already stand where it adds them, at line at of texts
// (where its context was found, or where lines alone go): a retried
// patch added them twice, with success. Lines alone stand just before at
// when added at the end of the file (a retry adds after them), just
// after it under their @@ line. Lines too slight to tell a retry (a lone
// brace, a blank line) are added again, as edit adds them around its
// oldText again.
func addedAgain(op Op, k int, texts []string, cl []Line, at int) error {
	if slices.ContainsFunc(cl, func(l Line) bool { return l.Op == '-' }) {
		return nil
	}
	var added []string
	for _, l := range cl {
		if l.Op == '+' {
			added = append(added, l.Text)
		}
	}
	if !editmatch.Telling(strings.Join(added, "\n")) {
		return nil
	}
	// lead is the count of lines added before the context.
	lead := slices.IndexFunc(cl, func(l Line) bool { return l.Op == ' ' })
	c := op.Chunks[k]
	from := at - lead
	if lead < 0 {
		// Lines alone: before at at the end of the file, after at under
		// their @@ line (the lines before at end with the @@ line).
		from = at
		if c.Context == "" || c.EOF {
			from = at - len(cl)
		}
	}
	first := slices.IndexFunc(cl, func(l Line) bool { return l.Op == '+' })
	if from >= 0 && from+len(cl) <= len(texts) && standsAt(texts, cl, from, at) {
		return fault.Errorf(fault.CodePatchVerify, "chunk %d of '%s' (patch line %d) adds lines (any it removes it adds back), and they already stand at line %d, where it would add them.", k+1, op.Path, c.Line, from+first+1).
			WithPath(op.Path).WithDetail("path", op.Path).WithDetail("chunk", k+1).WithDetail("patchLine", c.Line).
			WithDetail("newAt", from+first+1).
			WithHint("%s", appliedHint(from+first+1, "if the lines are meant twice, give the chunk context lines (' ') from the file around where they go"))
	}
	return nil
}

// standsAt reports whether the lines cl leaves stand in texts from from:
// each added line as it is, each context line as the file line it was
// found at (the chunk's context found from at). A context line after an
// added one stands one further on for each line added before it: the
// file line that follows the context where a line is added is not that
// line already added, but the context the chunk names after it.
func standsAt(texts []string, cl []Line, from, at int) bool {
	j := 0 // the index in the context found at at
	for i, l := range cl {
		switch {
		case l.Op == '+' && texts[from+i] != l.Text:
			return false
		case l.Op == ' ':
			if texts[from+i] != texts[at+j] {
				return false
			}
			j++
		}
	}
	return true
}

// standsBefore finds the lines cl leaves (its context and added lines)
// at or after start and before at, where its old lines were found at
// rung: the text the chunk would make, standing where the search began.
// A chunk that replaces lines says so when what it leaves tells a retry
// (editmatch.Telling), however unlike its old lines. A chunk that only
// adds lines (cl as its net insertion: see netInsertion), or only removes
// them, says so only under an @@ line (named), which bounds the search to
// the function it names: without one, its result may stand in a sibling
// (a defer another function has). Added lines must tell a retry beside a
// context line (a lone "pass" stands in any method under "@@ class
// Base:"), and lines left by a removal must prove one as an edit's
// newText does (editmatch.RetryProof) and not be a part of the old lines.
// Found only at a rung no looser than the old lines' ("    x" is not "x"
// retried for "  x").
func standsBefore(m Matcher, texts []string, cl []Line, start, at int, rung string, named bool) (int, bool) {
	if at <= start {
		return 0, false
	}
	lines, _ := result(cl)
	var added []string
	removes, kept := false, false
	for _, l := range netInsertion(cl, cl) {
		switch {
		case l.Op == '-':
			removes = true
		case l.Op == ' ':
			kept = true
		case strings.TrimSpace(l.Text) != "":
			added = append(added, l.Text)
		}
	}
	oldLines := Chunk{Lines: cl}.Old()
	old, left := strings.Join(oldLines, "\n"), strings.Join(lines, "\n")
	proof := false
	switch {
	case len(added) > 0 && removes:
		// However unlike its old lines: retried, "-\treturn nil"
		// "+\tlog.Flush()" changed the next function, with success. A
		// first send whose result stands before by chance ("pass" for
		// "raise NotImplementedError", a method above holding "pass")
		// is refused, its hint asking for an @@ line: an error to act on,
		// never a change made twice.
		proof = editmatch.Telling(left)
	case len(added) > 0:
		proof = named && kept && editmatch.Telling(strings.Join(added, "\n"))
	case removes:
		// A part of the old lines as m takes them: "x  " is "x".
		_, _, within := m.Seek(oldLines, lines, 0)
		proof = named && editmatch.RetryProof(old, left) && !within
	}
	if !proof {
		return 0, false
	}
	// Cut so that a place found ends before at: a result overlapping the
	// old lines (row zero, row zero, row one) is the file's own repeat.
	newAt, newRung, ok := m.Seek(texts[:at], lines, start)
	return newAt, ok && rungRank(newRung) <= rungRank(rung)
}

// standsAfter finds, exactly and once, the lines cl leaves at or after
// from, where its old lines, found at rung, end; only when that rung is a
// loose one, the chunk removes a line and adds one with text (see
// standsBefore), and its old lines and those it leaves prove a retry as
// an edit's oldText and newText do (editmatch.RetryProof). A common line
// further on ("        pass" for "        raise NotImplementedError", a
// "return nil" that stands in many places) is no sign of one.
func standsAfter(m Matcher, texts []string, cl []Line, from int, rung string) (int, bool) {
	lines, adds := result(cl)
	removes := slices.ContainsFunc(cl, func(l Line) bool { return l.Op == '-' })
	if rung == RungExact || !adds || !removes {
		return 0, false
	}
	if !editmatch.RetryProof(strings.Join(Chunk{Lines: cl}.Old(), "\n"), strings.Join(lines, "\n")) {
		return 0, false
	}
	newAt, newRung, ok := m.Seek(texts, lines, from)
	if !ok || newRung != RungExact {
		return 0, false
	}
	if _, again, ok := m.Seek(texts, lines, newAt+1); ok && again == RungExact {
		return 0, false
	}
	return newAt, true
}

// result is the lines cl leaves, its context and added lines, and
// whether it adds a line with text, without which they say nothing of
// whether it was applied.
func result(cl []Line) ([]string, bool) {
	var lines []string
	adds := false
	for _, l := range cl {
		if l.Op != '-' {
			lines = append(lines, l.Text)
			adds = adds || l.Op == '+' && strings.TrimSpace(l.Text) != ""
		}
	}
	return lines, adds
}

// rungRank orders the rungs of Ladder, from the strictest; another
// Matcher's rung ranks past them all.
func rungRank(rung string) int {
	if i := slices.Index([]string{RungExact, RungTrailingWhitespace, RungWhitespace, RungUnicode}, rung); i >= 0 {
		return i
	}
	return 4
}

// spans finds the index i of a line of lines alike the @@ line context,
// one that holds marks when given, such that lines begin at line at-i
// of texts, not before line from: found at at, that line is a chunk's
// own, and the chunk is there.
func spans(m Matcher, texts, lines []string, context string, at, from int, holds []bool) (int, bool) {
	for i, l := range lines {
		if at-i < from || holds != nil && !holds[i] || !alike(m, l, context) {
			continue
		}
		// Their first line there first (cheap), then the whole search.
		if alike(m, texts[at-i], lines[0]) && beginsAt(m, texts, lines, at-i) {
			return i, true
		}
	}
	return 0, false
}

// keptContext marks the lines a chunk leaves (result's) that are its
// context lines, not lines it adds.
func keptContext(cl []Line) []bool {
	var kept []bool
	for _, l := range cl {
		if l.Op != '-' {
			kept = append(kept, l.Op == ' ')
		}
	}
	return kept
}

// alike reports whether m takes line a for line b.
func alike(m Matcher, a, b string) bool {
	_, _, ok := m.Seek([]string{a}, []string{b}, 0)
	return ok
}

// beginsAt reports whether old, or old less a last blank line (the
// file's final line ending), is found at line at of texts.
func beginsAt(m Matcher, texts, old []string, at int) bool {
	if from, _, ok := m.Seek(texts, old, at); ok && from == at {
		return true
	}
	if len(old) > 1 && old[len(old)-1] == "" {
		from, _, ok := m.Seek(texts, old[:len(old)-1], at)
		return ok && from == at
	}
	return false
}

// ambiguousChunk is the AMBIGUOUS_MATCH of chunk k of op, which adds
// lines under an @@ line found only loosely, at lines at and again.
func ambiguousChunk(op Op, k, at, again int, rung string) error {
	c := op.Chunks[k]
	return fault.Errorf(fault.CodeAmbiguousMatch, "chunk %d of '%s' (patch line %d) adds lines after its @@ line, which matches lines %d and %d of the file, at the %s rung only.", k+1, op.Path, c.Line, at+1, again+1, rung).
		WithPath(op.Path).WithDetail("path", op.Path).WithDetail("chunk", k+1).WithDetail("patchLine", c.Line).
		WithDetail("lines", []int{at + 1, again + 1}).WithDetail("rung", rung).
		WithHint("give the @@ line as the file spells it, or a context line before the added ones, to tell the places apart")
}

// reindentAdded writes the added lines of cl in the file's indentation
// when the chunk's old lines matched got at a rung that ignores leading
// whitespace, as edit re-indents its newText: a chunk written with spaces
// for a tab-indented file otherwise put space-indented lines among tabbed
// ones. The change is the one uniform shift that turns old into got; or
// none, old being got at the same columns; or level by level, from old's
// lines or, short of a map of them all, from its removed lines alone, which
// the added lines replace (context "if x:" 4 columns in, "-y = 1" 8). It
// fails with errUneven when none of these holds and the chunk adds a line
// with text: its indentation would be a guess, and writing it as given
// broke a block. An added line the change would put left of column 0 fails
// it as a leftOfMargin: meant where it stands or relative to the context,
// it cannot be told. file is the file's lines, whose indentation tells
// tabs from spaces when got has none. The added lines inside a literal
// that the chunk's added lines open and close are left as given, as edit
// leaves newText's (see asGiven).
func reindentAdded(cl []Line, old, got, file []string, rung string) ([]Line, error) {
	if rung != RungWhitespace && rung != RungUnicode {
		return cl, nil
	}
	given := asGiven(cl)
	var added, removed, theirs []string
	j := 0 // cl's index in old
	for i, l := range cl {
		switch l.Op {
		case '+':
			if given == nil || !given[i] {
				added = append(added, l.Text)
			}
			continue
		case '-':
			removed, theirs = append(removed, old[j]), append(theirs, got[j])
		}
		j++
	}
	f, ok := editmatch.IndentTransform(old, got, file)
	if !ok {
		f, ok = editmatch.IndentLevels(old, got, added)
	}
	if !ok {
		f, ok = editmatch.IndentLevels(removed, theirs, added)
	}
	if !ok && editmatch.SameColumns(old, got) {
		f, ok = nil, true
	}
	if !ok {
		if slices.ContainsFunc(added, func(l string) bool { return strings.TrimSpace(l) != "" }) {
			return cl, errUneven
		}
		return cl, nil
	}
	if f == nil {
		return cl, nil
	}
	out := slices.Clone(cl)
	for i, l := range out {
		if l.Op == '+' && (given == nil || !given[i]) {
			if out[i].Text, ok = f(l.Text); !ok {
				return cl, leftOfMargin(l.Text)
			}
		}
	}
	return out, nil
}

// asGiven marks the added lines of cl that re-indentation leaves as
// given: those inside a multi-line literal (a here-document's body and
// terminator, a triple-quoted or backtick string's inside) that the
// chunk's added lines open and close, as editmatch reads newText's
// (LiteralSpans): their columns are part of the literal's value, and a
// here-document's terminator shifted ("    EOF") ended none. The lines
// the chunk leaves, context and added, are scanned in order, so that a
// literal a context line opens (a docstring the file holds, which an
// added line closes) is read as one, and its closing quotes open none. A
// literal is left as given only when its opener, its inside and its
// closer are added lines, one after another in the file (removed lines
// between them aside): one that a context line opens, closes or stands
// in, blank or not, is the file's in part, matched in the chunk's frame,
// and its added lines are shifted with the rest (edit's rule for a
// literal that keeps a line of oldText). Nil when none, and when the
// chunk's old lines open a string they do not close (editmatch.Dangles:
// found inside a literal opened above them, whose closing quotes an
// added line copies and the scan reads as an opener).
func asGiven(cl []Line) []bool {
	var left, old []string
	var at []int // cl's index of each line of left
	for i, l := range cl {
		if l.Op != '-' {
			left, at = append(left, l.Text), append(at, i)
		}
		if l.Op != '+' {
			old = append(old, l.Text)
		}
	}
	var given []bool
spans:
	for _, sp := range editmatch.LiteralSpans(left) {
		for j := sp[0] - 1; j <= sp[1]; j++ {
			if cl[at[j]].Op != '+' {
				continue spans
			}
		}
		if given == nil {
			given = make([]bool, len(cl))
		}
		for j := sp[0]; j <= sp[1]; j++ {
			given[at[j]] = true
		}
	}
	if given != nil && editmatch.Dangles(old) {
		return nil
	}
	return given
}

// errUneven: a chunk's old lines differ from the file's by indentation
// that changes from line to line, and where its added lines go cannot be
// told.
var errUneven = errors.New("indentation differs unevenly")

// leftOfMargin is an added line that re-indented would go left of column 0.
type leftOfMargin string

func (l leftOfMargin) Error() string { return "added line would go left of the margin: " + string(l) }

// checkOverlap refuses two chunks that replace the same lines.
func checkOverlap(reps []replacement, op Op) error {
	for k := 1; k < len(reps); k++ {
		if a, b := reps[k-1], reps[k]; b.at < a.at+a.n {
			return fault.Errorf(fault.CodePatchVerify, "chunks %d and %d of '%s' (patch line %d) overlap at line %d of the file.", min(a.chunk, b.chunk)+1, max(a.chunk, b.chunk)+1, op.Path, op.Line, b.at+1).
				WithPath(op.Path).WithDetail("path", op.Path).WithDetail("patchLine", op.Line).
				WithDetail("chunks", []int{min(a.chunk, b.chunk) + 1, max(a.chunk, b.chunk) + 1}).
				WithHint("merge the two chunks into one, with their lines in the order of the file")
		}
	}
	return nil
}

// render applies reps, in the file's order, to lines: a kept line is the
// file's own, an added one takes the line ending of the lines it replaces.
// It returns the text and the U+FEFF an added line put at its start.
func render(lines []fileLine, reps []replacement, size int) (string, int) {
	def := usualEOL(lines, "\n")
	out := make([]fileLine, 0, len(lines))
	pos := 0
	for _, r := range reps {
		out = append(out, lines[pos:r.at]...)
		eol := usualEOL(lines[r.at:r.at+r.n], def)
		i := r.at
		// In a file of mixed endings, the n-th line added after a run of
		// removed ones takes the n-th removed line's ending (those past
		// the run's length the last one's), as edit keeps them in their
		// places; a line only inserted takes the chunk's usual ending.
		var removed []string
		taken := 0
		for _, l := range r.lines {
			switch l.Op {
			case ' ':
				// The file's own text: a rung may have matched it loosely.
				out = append(out, lines[i])
				i++
				removed, taken = removed[:0], 0
			case '-':
				removed = append(removed, lines[i].eol)
				i++
			case '+':
				e := eol
				if len(removed) > 0 {
					e = cmp.Or(removed[min(taken, len(removed)-1)], eol)
					taken++
				}
				out = append(out, fileLine{text: l.Text, eol: e, added: true})
			}
		}
		pos = r.at + r.n
	}
	out = append(out, lines[pos:]...)
	var b strings.Builder
	b.Grow(size + 64)
	for i, l := range out {
		b.WriteString(l.text)
		if l.eol == "" && (i < len(out)-1 || l.added) {
			// A line without an ending is the file's last: one that is no
			// longer last, or one the patch wrote, takes one, as Codex
			// ends what it writes. An untouched last line keeps none.
			l.eol = def
		}
		b.WriteString(l.eol)
	}
	put := 0
	if len(out) > 0 && out[0].added {
		put = textfile.LeadingMarks(out[0].text)
	}
	return b.String(), put
}

// seek locates old at or after start; with eof, only as the file's last
// lines.
func seek(m Matcher, texts, old []string, start int, eof bool) (int, string, bool) {
	if !eof {
		return m.Seek(texts, old, start)
	}
	at := len(texts) - len(old)
	if at < 0 {
		return 0, "", false
	}
	return m.Seek(texts, old, at)
}

// dropLastOld removes the last line of lines that is an old line.
func dropLastOld(lines []Line) []Line {
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Op != '+' {
			return slices.Concat(lines[:i], lines[i+1:])
		}
	}
	return lines
}
