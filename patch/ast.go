package patch

import "strings"

// The markers of the patch format.
const (
	beginMarker  = "*** Begin Patch"
	endMarker    = "*** End Patch"
	addMarker    = "*** Add File:"
	deleteMarker = "*** Delete File:"
	updateMarker = "*** Update File:"
	moveMarker   = "*** Move to:"
	eofMarker    = "*** End of File"
	chunkMarker  = "@@"
)

// Kind is what an operation does to its file.
type Kind string

// The kinds of operations, and of changes.
const (
	Add    Kind = "add"
	Delete Kind = "delete"
	Update Kind = "update"
)

// Patch is a parsed patch: its operations, in the order they apply.
type Patch struct {
	Ops []Op
}

// Op is one file section of a patch.
type Op struct {
	Kind Kind
	Path string
	// Line is the 1-based line of the section's header in the patch text.
	Line int
	// Content is an added file's content: its lines, each ended by "\n".
	Content string
	// MoveTo is where an updated file moves; empty when it stays.
	MoveTo string
	// Chunks are an update's changes, in the order they occur in the file.
	Chunks []Chunk
}

// Chunk is one change of an updated file.
type Chunk struct {
	// Context is the text after "@@ ": a line (a function's signature, say)
	// that the change follows; empty for a bare "@@".
	Context string
	// Scopes are the texts of the @@ lines before the chunk's own, outermost
	// first: each is sought after the one before it, and Context after the
	// last (a class, then a method in it).
	Scopes []string
	// Lines are the chunk's lines in order.
	Lines []Line
	// EOF is set by "*** End of File": the old lines end the file.
	EOF bool
	// Line is the 1-based line of the chunk's first line in the patch text
	// ("@@" or, in a first chunk without it, its first line).
	Line int
}

// Line is one line of a chunk.
type Line struct {
	// Op is ' ' for context, '-' for a removed line, '+' for an added one.
	Op   byte
	Text string
}

// Old is the run of lines the chunk expects in the file: context and
// removed lines.
func (c Chunk) Old() []string { return c.side('+') }

// New is what the chunk puts in their place: context and added lines.
func (c Chunk) New() []string { return c.side('-') }

func (c Chunk) side(skip byte) []string {
	out := make([]string, 0, len(c.Lines))
	for _, l := range c.Lines {
		if l.Op != skip {
			out = append(out, l.Text)
		}
	}
	return out
}

// String renders the patch in the format Parse reads: a chunk's "@@" line,
// after one for each of its scopes.
func (p *Patch) String() string {
	var b strings.Builder
	line := func(parts ...string) {
		for _, s := range parts {
			b.WriteString(s)
		}
		b.WriteByte('\n')
	}
	line(beginMarker)
	for _, op := range p.Ops {
		switch op.Kind {
		case Add:
			line(addMarker, " ", op.Path)
			for _, l := range strings.SplitAfter(op.Content, "\n") {
				if l != "" {
					line("+", strings.TrimSuffix(l, "\n"))
				}
			}
		case Delete:
			line(deleteMarker, " ", op.Path)
		case Update:
			line(updateMarker, " ", op.Path)
			if op.MoveTo != "" {
				line(moveMarker, " ", op.MoveTo)
			}
			for _, c := range op.Chunks {
				for _, s := range c.Scopes {
					line(chunkMarker, " ", s)
				}
				if c.Context != "" {
					line(chunkMarker, " ", c.Context)
				} else {
					line(chunkMarker)
				}
				for _, l := range c.Lines {
					line(string(l.Op), l.Text)
				}
				if c.EOF {
					line(eofMarker)
				}
			}
		}
	}
	line(endMarker)
	return b.String()
}
