package registry

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Palette colours a text rendering for a terminal; the zero Palette leaves
// it plain, byte for byte, which is what a pipe or NO_COLOR gets.
type Palette struct {
	Path, Line, Dir, Link, Added, Removed, Hunk, Header string
	// Terminal is set when the text goes to a terminal, where a control
	// character of a name is shown escaped (as ls quotes it), so that a
	// file named with an escape sequence cannot set the window's title
	// or clear the screen; a pipe gets the name's bytes, to pass back.
	Terminal bool
}

// Colors is the palette of a terminal, in the colours its users know:
// ripgrep's for paths (magenta) and line numbers (green), ls's for
// directories (bold blue) and links (cyan), git's for diffs.
var Colors = Palette{
	Path:    "\x1b[35m",
	Line:    "\x1b[32m",
	Dir:     "\x1b[1;34m",
	Link:    "\x1b[36m",
	Added:   "\x1b[32m",
	Removed: "\x1b[31m",
	Hunk:    "\x1b[36m",
	Header:  "\x1b[1m",
}

// paint wraps s in the colour code, and a reset after it.
func paint(code, s string) string {
	if code == "" || s == "" {
		return s
	}
	return code + s + "\x1b[0m"
}

// entryName paints a listed name by its type, as ls --color does.
func (p Palette) entryName(name, typ string) string {
	name = p.Shown(name)
	switch typ {
	case "dir":
		return paint(p.Dir, name)
	case "symlink":
		return paint(p.Link, name)
	}
	return name
}

// Shown is name as the text shows it: on a terminal, each control
// character (C0, DEL, C1) and each byte that is not UTF-8 as \xNN or
// \u00NN; elsewhere as it is.
func (p Palette) Shown(name string) string {
	if !p.Terminal || utf8.ValidString(name) && !strings.ContainsFunc(name, unicode.IsControl) {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRuneInString(name[i:])
		switch {
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		case r == utf8.RuneError && n == 1:
			// A byte that is not UTF-8: a lone 0x9B is CSI to an 8-bit
			// terminal.
			fmt.Fprintf(&b, "\\x%02x", name[i])
		case r != utf8.RuneError && unicode.IsControl(r):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(name[i : i+n])
		}
		i += n
	}
	return b.String()
}

// diff paints a unified diff as git does: file headers bold, hunk headers
// cyan, added lines green, removed lines red.
func (p Palette) diff(d string) string {
	if p.Header == "" {
		return d
	}
	var b strings.Builder
	for line := range strings.Lines(d) {
		text, nl := strings.CutSuffix(line, "\n")
		switch {
		case strings.HasPrefix(text, "+++ "), strings.HasPrefix(text, "--- "):
			text = paint(p.Header, text)
		case strings.HasPrefix(text, "@@"):
			text = paint(p.Hunk, text)
		case strings.HasPrefix(text, "+"):
			text = paint(p.Added, text)
		case strings.HasPrefix(text, "-"):
			text = paint(p.Removed, text)
		}
		b.WriteString(text)
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
