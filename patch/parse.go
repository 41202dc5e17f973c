package patch

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// heredocOpeners are the first lines of a shell heredoc that a model may
// wrap around the whole patch when it calls the tool without a shell.
var heredocOpeners = []string{"<<EOF", "<<'EOF'", `<<"EOF"`}

// Parse reads a patch in the format of Codex's apply_patch, with Codex's
// leniencies: whitespace around the Begin, End, file and Move markers, a
// first chunk without "@@", blank lines where a chunk may start (an empty
// line right after a chunk's lines is an empty context line of it), a
// heredoc wrapper ("<<'EOF'" ... "EOF") around the whole patch, and CRLF
// line endings. It also skips blank lines between file sections. Errors
// are PATCH_PARSE with details.line, the 1-based line of the patch text.
func Parse(text string) (*Patch, error) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	p := &parser{lines: lines}
	lo, hi, err := p.bounds(0, len(lines))
	if err != nil {
		return nil, err
	}
	return p.body(lo+1, hi)
}

type parser struct {
	lines []string
}

// bounds finds the Begin and End markers among lines [lo,hi), which are
// the first and last lines that are not blank, or those of a heredoc
// wrapper; it returns their indexes.
func (p *parser) bounds(lo, hi int) (int, int, error) {
	for lo < hi && blank(p.lines[lo]) {
		lo++
	}
	for hi > lo && blank(p.lines[hi-1]) {
		hi--
	}
	if lo == hi {
		return 0, 0, p.errorf(0, "the patch is empty.").
			WithHint("give the patch, from a line '%s' to a line '%s'", beginMarker, endMarker)
	}
	first, last := strings.TrimSpace(p.lines[lo]), strings.TrimSpace(p.lines[hi-1])
	switch {
	case first == beginMarker && last == endMarker:
		return lo, hi - 1, nil
	case slices.Contains(heredocOpeners, first) && strings.HasSuffix(last, "EOF") && hi-lo >= 4:
		return p.bounds(lo+1, hi-1)
	case first != beginMarker:
		e := p.errorf(lo, "the patch must start with '%s', not %q.", beginMarker, cut(first))
		if hi-lo == 1 && !strings.ContainsAny(first, " \t") {
			// One word, as a file's name is: apply-patch patch.diff.
			return 0, 0, e.WithHint("start the patch with a line '%s'; a file that holds the patch is --patch-file %s", beginMarker, first)
		}
		return 0, 0, e.WithHint("start the patch with a line '%s'", beginMarker)
	}
	return 0, 0, p.errorf(hi-1, "the patch must end with '%s', not %q.", endMarker, cut(last)).
		WithHint("end the patch with a line '%s'", endMarker)
}

// body parses the file sections of lines [i,end), end being the End marker.
func (p *parser) body(i, end int) (*Patch, error) {
	patch := &Patch{}
	for i < end {
		if blank(p.lines[i]) {
			i++
			continue
		}
		op, next, err := p.op(i, end)
		if err != nil {
			return nil, err
		}
		patch.Ops = append(patch.Ops, op)
		i = next
	}
	if len(patch.Ops) == 0 {
		return nil, p.errorf(end, "the patch has no file sections.").
			WithHint("add a section '%s PATH', '%s PATH' or '%s PATH' before '%s'", addMarker, deleteMarker, updateMarker, endMarker)
	}
	return patch, nil
}

// op parses the file section starting at line i and returns the index of
// the line after it.
func (p *parser) op(i, end int) (Op, int, error) {
	header := strings.TrimSpace(p.lines[i])
	op := Op{Line: i + 1}
	var marker string
	for _, m := range []struct {
		marker string
		kind   Kind
	}{{addMarker, Add}, {deleteMarker, Delete}, {updateMarker, Update}} {
		if rest, ok := strings.CutPrefix(header, m.marker); ok {
			marker, op.Kind, op.Path = m.marker, m.kind, strings.TrimSpace(rest)
		}
	}
	if marker == "" {
		return op, 0, p.errorf(i, "%q is not a file section header.", cut(header)).
			WithHint("start each file section with '%s PATH', '%s PATH' or '%s PATH', and every line of an added file with '+'", addMarker, deleteMarker, updateMarker)
	}
	if op.Path == "" {
		return op, 0, p.errorf(i, "'%s' has no path.", marker).
			WithHint("give the file's path after the marker: '%s src/main.go'", marker)
	}
	if backend.NamesDirectory(op.Path) {
		return op, 0, p.errorf(i, "'%s' names a directory (a final slash, . or ..); a section changes a file.", marker).
			WithHint("name a file, as in '%s src/main.go'", marker)
	}
	i++
	switch op.Kind {
	case Add:
		// Sized once: grown by doubling, an 8 MB patch adding four
		// files allocated 36 MB for their contents.
		var content strings.Builder
		size := 0
		for j := i; j < end && strings.HasPrefix(p.lines[j], "+"); j++ {
			size += len(p.lines[j])
		}
		content.Grow(size)
		for ; i < end && strings.HasPrefix(p.lines[i], "+"); i++ {
			content.WriteString(p.lines[i][1:])
			content.WriteByte('\n')
		}
		op.Content = content.String()
	case Update:
		if i < end {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(p.lines[i]), moveMarker); ok {
				if op.MoveTo = strings.TrimSpace(rest); op.MoveTo == "" {
					return op, 0, p.errorf(i, "'%s' has no path.", moveMarker).
						WithHint("give the new path after the marker, or leave the line out to keep the file where it is")
				}
				if backend.NamesDirectory(op.MoveTo) {
					return op, 0, p.errorf(i, "'%s' names a directory (a final slash, . or ..); a file moves to a file's path.", moveMarker).
						WithHint("give the file's new path, name included: '%s %s'", moveMarker, path.Join(op.MoveTo, path.Base(op.Path)))
				}
				i++
			}
		}
		for i < end {
			if blank(p.lines[i]) {
				i++
				continue
			}
			if strings.HasPrefix(p.lines[i], "*") {
				break
			}
			c, next, err := p.chunk(i, end, len(op.Chunks) == 0)
			if err != nil {
				return op, 0, err
			}
			op.Chunks = append(op.Chunks, c)
			i = next
		}
		if len(op.Chunks) == 0 {
			e := p.errorf(op.Line-1, "'%s %s' has no chunks.", updateMarker, cut(op.Path))
			if op.MoveTo != "" {
				// A move alone, which Codex's apply_patch refuses too
				// ("Update file hunk for path 'a' is empty"): mv makes it.
				ends := ""
				if strings.HasPrefix(op.Path, "-") || strings.HasPrefix(op.MoveTo, "-") {
					ends = "-- " // a path, not a flag
				}
				return op, 0, e.WithHint("a patch moves a file only with a change to it, as Codex's apply_patch: move it with agentfs mv %s%s %s (or add a chunk: '@@', then its lines)", ends, shellWord(cut(op.Path)), shellWord(cut(op.MoveTo)))
			}
			return op, 0, e.WithHint("after the header, give a chunk: '@@', then its lines prefixed with ' ' (context), '-' (removed) or '+' (added)")
		}
	}
	return op, i, nil
}

// unifiedRange is a unified diff's hunk header after "@@ ": its ranges,
// "@@", and the heading some diffs give (git's function line), the group.
var unifiedRange = regexp.MustCompile(`^-\d+(?:,\d+)? \+\d+(?:,\d+)? @@(?: (.*))?$`)

// chunk parses the chunk starting at line i, which must be "@@" or
// "@@ CONTEXT" unless it is the first chunk of its file.
func (p *parser) chunk(i, end int, first bool) (Chunk, int, error) {
	c := Chunk{Line: i + 1}
	if ctx, ok := chunkHeader(p.lines[i]); ok {
		c.Context = ctx
		i++
		// Further @@ lines before the chunk's first line narrow where it
		// is, outermost first ("@@ class B", "@@ def f"), as OpenAI's
		// apply_patch instructions teach models to write them.
		for ; i < end; i++ {
			ctx, ok := chunkHeader(p.lines[i])
			if !ok || ctx == "" {
				break
			}
			if c.Context != "" {
				c.Scopes = append(c.Scopes, c.Context)
			}
			c.Context = ctx
		}
	} else if !first {
		return c, 0, p.errorf(i, "a chunk must start with '@@', not %q.", cut(p.lines[i])).
			WithHint("start each chunk after the first with a line '@@' or '@@ CONTEXT', and every line in it with ' ', '-' or '+'")
	}
	for ; i < end; i++ {
		l := p.lines[i]
		if strings.TrimRight(l, " \t") == eofMarker {
			if len(c.Lines) == 0 {
				break
			}
			c.EOF = true
			i++
			break
		}
		if l == "" {
			// A blank line stands for an empty context line.
			c.Lines = append(c.Lines, Line{Op: ' '})
			continue
		}
		if op := l[0]; op == ' ' || op == '-' || op == '+' {
			c.Lines = append(c.Lines, Line{Op: op, Text: l[1:]})
			continue
		}
		if len(c.Lines) == 0 {
			return c, 0, p.errorf(i, "%q is not a line of a chunk.", cut(l)).
				WithHint("prefix every line of a chunk with ' ' (context), '-' (removed) or '+' (added); an empty line of the file is a line holding one space")
		}
		break
	}
	if len(c.Lines) == 0 {
		return c, 0, p.errorf(i, "the chunk at line %d has no lines.", c.Line).
			WithHint("after '@@', give the chunk's lines prefixed with ' ' (context), '-' (removed) or '+' (added)")
	}
	return c, i, nil
}

// chunkHeader reads a chunk's "@@" or "@@ CONTEXT" line l: ok is false
// for any other line, and ctx is empty for a bare "@@".
func chunkHeader(l string) (ctx string, ok bool) {
	switch {
	case strings.TrimRight(l, " \t") == chunkMarker:
		return "", true
	case !strings.HasPrefix(l, chunkMarker+" "):
		return "", false
	}
	ctx = l[len(chunkMarker)+1:]
	if m := unifiedRange.FindStringSubmatch(ctx); m != nil {
		// A unified diff's header, as diffs (agentfs's own too) print
		// it: its line numbers are not read, and the heading after
		// it, a line of the file, is the context.
		ctx = m[1]
	}
	// A blank context would match the first blank line: it is none.
	if strings.TrimSpace(ctx) == "" {
		return "", true
	}
	return ctx, true
}

// errorf is a PATCH_PARSE error at line index i.
func (p *parser) errorf(i int, format string, args ...any) *fault.Error {
	return fault.Errorf(fault.CodePatchParse, "line %d: "+format, append([]any{i + 1}, args...)...).WithDetail("line", i+1)
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// maxEcho bounds a line of the patch quoted in an error.
const maxEcho = 80

// cut shortens s for a message.
// shellWord is s as one word of a POSIX shell: as it is when nothing in
// it is special, else in single quotes.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/+-@%,:=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func cut(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	n := maxEcho
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
