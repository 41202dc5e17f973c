package core

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentfs/agentfs/internal/linediff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// diffContext is the number of unchanged lines around each hunk, as
// diff -u has it, unless a request says otherwise.
const diffContext = 3

// diffLine is one line of a line diff: ' ', '-' or '+', and its text with
// its terminator (none on a last line without one).
type diffLine struct {
	op   byte
	text string
}

// diffSearch is how long the line diffs of one request, all of its files
// together, may search for the shortest diff; past it a diff is still
// whole and right, only coarser (a run of changed lines all deleted, then
// all added). Each file had its own 2 s: a replace that swapped the lines
// of ten files took 20 s of search, under their locks. A var for tests.
var diffSearch = 2 * time.Second

// lineDiff diffs a and b line by line (a CRLF line differs from its LF
// twin), its search ending by until.
func lineDiff(a, b string, until time.Time) []diffLine {
	if a == "" || b == "" {
		// Every line added (a new file), or every line deleted: nothing
		// to search, where go-diff hashed each line and joined them all
		// again (26 MB allocated for the diffs of an 8 MB patch adding
		// four files).
		op, text := byte('+'), b
		if b == "" {
			op, text = '-', a
		}
		return appendDiffLines(make([]diffLine, 0, strings.Count(text, "\n")+1), op, text)
	}
	dmp := diffmatchpatch.New()
	// go-diff takes a timeout of 0 for none.
	dmp.DiffTimeout = max(time.Until(until), time.Nanosecond)
	ra, rb, lines := dmp.DiffLinesToRunes(a, b)
	var out []diffLine
	for _, d := range dmp.DiffCharsToLines(linediff.Runes(dmp, ra, rb), lines) {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		out = appendDiffLines(out, op, d.Text)
	}
	return out
}

// appendDiffLines appends the lines of text to out, each with op.
func appendDiffLines(out []diffLine, op byte, text string) []diffLine {
	for s := text; s != ""; {
		i := strings.IndexByte(s, '\n') + 1
		if i == 0 {
			i = len(s)
		}
		out = append(out, diffLine{op, s[:i]})
		s = s[i:]
	}
	return out
}

// unifiedDiff renders the diff of a and b with diffContext lines of context
// and ---/+++ headers naming path, and returns the first changed line of b
// (0 when a and b are equal).
func unifiedDiff(path, a, b string) (string, int) {
	return contextDiff(path, a, b, diffContext)
}

// contextDiff is unifiedDiff with context lines of context.
func contextDiff(path, a, b string, context int) (string, int) {
	return contextDiffUntil(time.Now().Add(diffSearch), path, a, b, context)
}

// contextDiffUntil is contextDiff with a search that ends by until, the
// deadline a request's diffs share.
func contextDiffUntil(until time.Time, path, a, b string, context int) (string, int) {
	if a == b {
		return "", 0
	}
	// Only the lines between the common head and tail, with their context,
	// go through the line diff: a small edit of a large file stays cheap.
	pre, aEnd, bEnd := changedSpan(a, b, context)
	return renderDiff(path, lineDiff(a[pre:aEnd], b[pre:bEnd], until), strings.Count(a[:pre], "\n"), context)
}

// diffName is path as a diff header names it: quoted as git quotes a name
// with a control character, a double quote or a backslash (C escapes,
// octal for the rest), so that a name holding a newline and "+++ b" does
// not end the header early.
func diffName(path string) string {
	if !strings.ContainsFunc(path, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '"' || r == '\\' }) {
		return path
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(path); i++ {
		c := path[i]
		if k := strings.IndexByte("\"\\\a\b\t\n\v\f\r", c); k >= 0 {
			b.WriteByte('\\')
			b.WriteByte("\"\\abtnvfr"[k])
		} else if c < 0x20 || c == 0x7f {
			fmt.Fprintf(&b, "\\%03o", c)
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// movedDiff is diff, of a file moved from the path from, with its old
// side named from: named by where it went on both sides, the diff of a
// move applied (patch -p0, git apply) to no file of the tree as it was.
func movedDiff(diff, from string) string {
	i := strings.IndexByte(diff, '\n')
	if i < 0 {
		return diff // no change: no diff
	}
	return "--- " + diffName(from) + diff[i:]
}

// renderDiff renders lines, a line diff whose first line comes after
// before lines that both sides share, as contextDiff does.
func renderDiff(path string, lines []diffLine, before, context int) (string, int) {
	var out strings.Builder
	first := writeDiff(&out, path, lines, before, context, true)
	return out.String(), first
}

// renderedJSONLen is jsonLen of renderDiff's rendering, which it does
// not make: a replace sizes every file's diff, and renders only those
// its answer has room for (40 files of 500,000 changed lines rendered
// 120 MB of diffs to keep 256 KiB).
func renderedJSONLen(path string, lines []diffLine, before, context int) int {
	var n jsonCounter
	writeDiff(&n, path, lines, before, context, false)
	return int(n)
}

// diffWriter is what writeDiff writes to.
type diffWriter interface {
	io.Writer
	io.StringWriter
	io.ByteWriter
	Grow(n int)
}

// jsonCounter is a diffWriter that counts the bytes of JSON (jsonLen) of
// what it is given. Every piece writeDiff writes starts with an ASCII
// byte, or follows one, so that no character is split between two: the
// sum of their lengths is the length of the whole.
type jsonCounter int

func (c *jsonCounter) Write(p []byte) (int, error) {
	*c += jsonCounter(jsonLen(string(p)))
	return len(p), nil
}

func (c *jsonCounter) WriteString(s string) (int, error) {
	*c += jsonCounter(jsonLen(s))
	return len(s), nil
}

func (c *jsonCounter) WriteByte(b byte) error {
	*c += jsonCounter(jsonLen(string([]byte{b})))
	return nil
}

func (c *jsonCounter) Grow(int) {}

// writeDiff writes renderDiff's rendering to out, grown once to its size
// when grow is set, and returns the first changed line of the new side.
// The numbers of the lines a hunk starts at, and its counts, are those
// of a cursor walked to each of its ends, where two arrays of a number a
// line took 16 MB for a diff of a million lines.
func writeDiff(out diffWriter, path string, lines []diffLine, before, context int, grow bool) int {
	name := diffName(path)
	fmt.Fprintf(out, "--- %s\n+++ %s\n", name, name)
	first := 0
	newNo := before
	for _, l := range lines {
		if l.op != ' ' {
			first = newNo + 1
			break
		}
		newNo++
	}
	if grow {
		out.Grow(renderedSize(lines, context))
	}
	// at is a line of lines, and oldNo and newNo the numbers of the lines
	// before it.
	at, oldNo, newNo := 0, before, before
	moveTo := func(k int) {
		for ; at < k; at++ {
			if lines[at].op != '+' {
				oldNo++
			}
			if lines[at].op != '-' {
				newNo++
			}
		}
		for ; at > k; at-- {
			if lines[at-1].op != '+' {
				oldNo--
			}
			if lines[at-1].op != '-' {
				newNo--
			}
		}
	}
	for i := 0; i < len(lines); {
		if lines[i].op == ' ' {
			i++
			continue
		}
		start := max(0, i-context)
		end := i // one past the last change of the hunk
		for j := i; j < len(lines); j++ {
			if lines[j].op != ' ' {
				end = j + 1
			} else if j-end >= 2*context {
				break
			}
		}
		stop := min(len(lines), end+context)
		moveTo(stop)
		oldStop, newStop := oldNo, newNo
		moveTo(start)
		fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(oldNo, oldStop-oldNo), hunkRange(newNo, newStop-newNo))
		for _, l := range lines[start:stop] {
			text := l.text
			if l.op == ' ' {
				text = cutContext(text)
			}
			out.WriteByte(l.op)
			out.WriteString(text)
			if !strings.HasSuffix(text, "\n") {
				out.WriteString(noNewline)
			}
		}
		i = stop
	}
	return first
}

// renderedSize bounds the length of renderDiff's hunks of lines: a line
// is rendered when a change is at most context lines from it, and each
// run of such lines is a hunk, under a header of at most 100 bytes.
// renderDiff's rendering is grown to it once: grown by doubling, the
// diffs of an 8 MB patch adding four files allocated 40 MB.
func renderedSize(lines []diffLine, context int) int {
	near := make([]bool, len(lines))
	for i, last := 0, -1; i < len(lines); i++ {
		if lines[i].op != ' ' {
			last = i
		}
		near[i] = last >= 0 && i-last <= context
	}
	for i, next := len(lines)-1, -1; i >= 0; i-- {
		if lines[i].op != ' ' {
			next = i
		}
		near[i] = near[i] || next >= 0 && next-i <= context
	}
	size := 0
	for i, l := range lines {
		if !near[i] {
			continue
		}
		size += 1 + len(l.text)
		if !strings.HasSuffix(l.text, "\n") {
			size += len(noNewline)
		}
		if i == 0 || !near[i-1] {
			size += 100
		}
	}
	return size
}

// noNewline ends a diff's line that has no newline.
const noNewline = "\n\\ No newline at end of file\n"

// cutContext is an unchanged line of a diff, text with its terminator,
// cut as read cuts a line by default, with its marker: a one-line edit
// beside a minified line of 100 KB answered 100 KB of diff for a line the
// caller neither changed nor asked for.
func cutContext(text string) string {
	body, nl := strings.CutSuffix(text, "\n")
	if len(body) <= ReadLineChars || utf8.RuneCountInString(body) <= ReadLineChars {
		return text
	}
	at := 0
	for range ReadLineChars {
		_, n := utf8.DecodeRuneInString(body[at:])
		at += n
	}
	cut := body[:at] + lineCutMarker(int64(len(body)))
	if nl {
		cut += "\n"
	}
	return cut
}

// hunkRange is "start,count" of a hunk side; an empty side names the line
// before it, as diff -u does.
func hunkRange(before, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", before)
	}
	if count == 1 {
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, count)
}

// changedSpan returns where a and b differ, widened to whole lines and
// context lines of context: a[pre:aEnd] and b[pre:bEnd], the rest of
// both being equal.
func changedSpan(a, b string, context int) (pre, aEnd, bEnd int) {
	const chunk = 256 // compared a chunk at a time first: string equality is vectorised
	n := min(len(a), len(b))
	for pre+chunk <= n && a[pre:pre+chunk] == b[pre:pre+chunk] {
		pre += chunk
	}
	for pre < n && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf+chunk <= n-pre && a[len(a)-suf-chunk:len(a)-suf] == b[len(b)-suf-chunk:len(b)-suf] {
		suf += chunk
	}
	for suf < n-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	for k := 0; k <= context && pre > 0; k++ {
		pre = strings.LastIndexByte(a[:pre-1], '\n') + 1
	}
	aEnd, bEnd = len(a)-suf, len(b)-suf
	// The change already ends a line on both sides only when both end in a
	// newline there; an edit that joins lines ends one mid-line in b.
	atLineEnd := aEnd > 0 && a[aEnd-1] == '\n' && bEnd > 0 && b[bEnd-1] == '\n'
	for k := 0; k <= context && aEnd < len(a); k++ {
		if k == 0 && atLineEnd {
			continue
		}
		if i := strings.IndexByte(a[aEnd:], '\n'); i >= 0 {
			aEnd += i + 1
		} else {
			aEnd = len(a)
		}
	}
	return pre, aEnd, len(b) - (len(a) - aEnd)
}
