package textfile

import (
	"bytes"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/internal/linediff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// The style of a text file is what read leaves out of its content: the
// byte-order mark (with the UTF-16 encoding a UTF-16 mark declares) and the
// line endings. write keeps an existing file's style unless the request sets
// lineEnding or bom, so that writing back what read gave changes nothing.

// The line endings a caller may ask for.
const (
	LineEndingLF   = "lf"
	LineEndingCRLF = "crlf"
)

// Style is the style of an existing text file.
type Style struct {
	// c is the file's codec: its byte-order mark (nil for none) and, for
	// UTF-16, its encoding.
	c Codec
	// text is the decoded content after the mark; for a file read only in
	// part, the part read, cut after its last line terminator.
	text string
	// crlf and lf count the terminators of text.
	crlf, lf int
}

// StyleOf learns the style of a file from its first bytes (all of them when
// whole); ok is false when they are not text, whose style is none.
func StyleOf(head []byte, whole bool) (st Style, ok bool) {
	c, marked := ByBOM(head)
	if !marked {
		c = Codec{name: "utf-8", unit: 1}
	}
	return StyleIn(c, head, whole)
}

// StyleIn is StyleOf for a file in the encoding of c (NamedEncoding, with
// the file's mark when it has one); ok is false when its bytes are not
// valid in c.
func StyleIn(c Codec, head []byte, whole bool) (st Style, ok bool) {
	body := head[len(c.bom):]
	if !whole {
		body = body[:c.Boundary(body, len(body))]
	}
	if c.unit == 1 && BinaryStart(body) {
		// Binary, as read has it; a NUL further on is in text that read
		// gives whole, which a write of it keeps in the file's style.
		return Style{}, false
	}
	text, err := c.Decode(body)
	if err != nil {
		return Style{}, false
	}
	if i := strings.LastIndexByte(text, '\n'); !whole && i >= 0 {
		text = text[:i+1]
	}
	return styleOfText(c, text), true
}

// styleOfText is the style of text, decoded by c: its line endings counted.
func styleOfText(c Codec, text string) Style {
	crlf := strings.Count(text, "\r\n")
	return Style{c: c, text: text, crlf: crlf, lf: strings.Count(text, "\n") - crlf}
}

// LegacyStyleOf is the style of a whole file that StyleOf does not take
// for text but that holds no NUL and no byte-order mark: text in an 8-bit
// or multi-byte legacy encoding (Latin-1, Shift_JIS...) as far as its
// line endings go, which every such encoding spells as ASCII does. Its
// encoding is not known: only ASCII may be added to it.
func LegacyStyleOf(whole []byte) (Style, bool) {
	if _, marked := ByBOM(whole); marked || bytes.IndexByte(whole, 0) >= 0 {
		return Style{}, false
	}
	return styleOfText(Codec{name: "utf-8", unit: 1}, string(whole)), true
}

// InvalidAfterMark finds, in a whole file with a byte-order mark, the
// first byte that is not valid in the encoding the mark names (a NUL is
// valid): at is its offset in the file, and name the mark's encoding. ok
// is false for a file without a mark, or valid after it. Text appended
// to such a file would follow bytes of some other encoding.
func InvalidAfterMark(whole []byte) (name string, at int, ok bool) {
	c, marked := ByBOM(whole)
	if !marked {
		return "", 0, false
	}
	body := whole[len(c.bom):]
	if c.unit == 1 {
		for i := 0; i < len(body); {
			r, n := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && n == 1 {
				return c.name, len(c.bom) + i, true
			}
			i += n
		}
		return "", 0, false
	}
	for i := 0; i < len(body); i += 2 {
		if i+1 == len(body) {
			return c.name, len(c.bom) + i, true
		}
		switch u := c.unitAt(body, i); {
		case highSurrogate(u):
			if i+3 < len(body) && lowSurrogate(c.unitAt(body, i+2)) {
				i += 2
				continue
			}
			return c.name, len(c.bom) + i, true
		case lowSurrogate(u):
			return c.name, len(c.bom) + i, true
		}
	}
	return "", 0, false
}

// Written is the style of what a write put in the file.
type Written struct {
	// LineEnding names the endings as read does: lf, crlf, mixed or none.
	LineEnding string
	BOM        bool
	Encoding   string // "" for UTF-8
}

// Written is the style of a whole file, as a write that made it names it.
func (st Style) Written() Written {
	w := Written{LineEnding: endingName(st.text, st.crlf, st.lf), BOM: st.c.bom != nil}
	if st.c.unit != 1 {
		w.Encoding = st.c.name
	}
	return w
}

// Styled is text content as write puts it in a file: with the line
// endings and byte-order mark the request sets (lineEnding, bom), else with
// those of the existing file; a new, empty or non-text file (file nil) takes
// the content as given. A leading U+FEFF of the content is its mark when
// the content begins with more of them than the file's text does: read
// gives the text after the mark (of a file that begins with two marks, one
// U+FEFF, which written back was taken for the mark and lost), and cat
// gives the mark too. A file marked as UTF-16 is written in UTF-16 while
// it keeps its mark. A file written without a mark (bom false, or a file
// that has none) drops the content's leading U+FEFF: it would be the mark.
func Styled(content string, file *Style, lineEnding string, bom *bool) ([]byte, Written, error) {
	return styled(nil, content, file, lineEnding, bom)
}

// StyledIn is Styled in the encoding of c that the caller named, with or
// without a mark, whatever the file's mark says: file is the existing
// file as StyleIn read it in c. Content c cannot hold is an error
// (CheckEncodable tells where).
func StyledIn(c Codec, content string, file *Style, lineEnding string, bom *bool) ([]byte, Written, error) {
	return styled(&c, content, file, lineEnding, bom)
}

func styled(named *Codec, content string, file *Style, lineEnding string, bom *bool) ([]byte, Written, error) {
	body, withBOM := strings.CutPrefix(content, "\uFEFF")
	c := Codec{name: "utf-8", unit: 1}
	if file != nil {
		withBOM, c = file.c.bom != nil, file.c
		if LeadingMarks(content) <= LeadingMarks(file.text) {
			body = content
		}
	}
	if named != nil {
		c = *named
	}
	// An encoding without a byte-order mark (GB18030 spells U+FEFF as
	// a character) takes a leading U+FEFF as text, never as its mark.
	markless := named != nil && named.dec != nil && named.unit == 1
	if markless {
		body, withBOM = content, false
	}
	if bom != nil {
		withBOM = *bom
	}
	if !withBOM && !markless {
		// Written first, a U+FEFF is the mark, whatever it was in the
		// content: a file written without one begins with none.
		if named == nil {
			c = Codec{name: "utf-8", unit: 1}
		}
		body = strings.TrimLeft(body, "\uFEFF")
	}
	body = toFileEndings(body, lineEnding, file, func(b string) string { return keepEndings(file, b) })
	crlf := strings.Count(body, "\r\n")
	ws := Written{LineEnding: endingName(body, crlf, strings.Count(body, "\n")-crlf), BOM: withBOM}
	if named != nil {
		return encodeNamed(c, body, withBOM, ws)
	}
	if !withBOM {
		return []byte(body), ws, nil
	}
	if c.unit == 1 {
		return append(append([]byte{}, bomUTF8...), body...), ws, nil
	}
	enc, err := encodeUTF16(body, c)
	if err != nil {
		return nil, ws, err.WithHint("pass --bom=false to write the file as UTF-8")
	}
	ws.Encoding = c.name
	return append(append([]byte{}, c.bom...), enc...), ws, nil
}

// encodeNamed is body in the encoding c a caller named, after c's mark
// when withBOM.
func encodeNamed(c Codec, body string, withBOM bool, ws Written) ([]byte, Written, error) {
	var mark []byte
	if withBOM {
		var err error
		if mark, err = c.mark(); err != nil {
			return nil, ws, err
		}
	}
	enc, err := c.encode(body)
	if err != nil {
		return nil, ws, fault.InvalidArgument("the content cannot be written in %s.", c.name)
	}
	if c.dec != nil {
		ws.Encoding = c.name
	}
	return append(append([]byte{}, mark...), enc...), ws, nil
}

// WithoutNewMarks is new, a change of the text old (after its file's
// mark), less the U+FEFF the change put at its start beyond those old
// begins with: on disk such a U+FEFF is a byte-order mark, a second one in
// a file with a mark, a new one in a file without. Whoever copies line 1
// from a diff, which shows the mark, gives one; write drops it likewise.
// put is how many of new's leading U+FEFF the change wrote: one of old's
// own lines brought to the start keeps its U+FEFF, as its bytes are.
func WithoutNewMarks(old, new string, put int) string {
	if extra := min(put, LeadingMarks(new)-LeadingMarks(old)); extra > 0 {
		return new[extra*len("\uFEFF"):]
	}
	return new
}

// LeadingMarks counts the U+FEFF at the start of s.
func LeadingMarks(s string) int {
	n := 0
	for strings.HasPrefix(s[n*3:], "\uFEFF") {
		n++
	}
	return n
}

// encodeUTF16 encodes text in the UTF-16 of c, without a byte-order mark.
func encodeUTF16(text string, c Codec) ([]byte, *fault.Error) {
	enc, err := c.dec.NewEncoder().Bytes([]byte(text))
	if err != nil {
		return nil, fault.InvalidArgument("the content cannot be encoded in %s, the file's encoding.", c.name)
	}
	return enc, nil
}

// endingName names the line endings of text, crlf CRLFs and lf bare LFs,
// as read does: lf, crlf, mixed (a CR before a CRLF too) or none.
func endingName(text string, crlf, lf int) string {
	switch {
	case crlf > 0 && (lf > 0 || strings.Contains(text, "\r\r\n")):
		return "mixed"
	case crlf > 0:
		return LineEndingCRLF
	case lf > 0:
		return LineEndingLF
	}
	return "none"
}

func toLF(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

func toCRLF(s string) string { return strings.ReplaceAll(toLF(s), "\n", "\r\n") }

// keepEndings gives content the line endings of a file that mixes CRLF and
// LF, line by line: a line the content keeps keeps its ending; changed and
// new lines take the usual ending of the lines they replace, else the file's
// usual one (as edit does), whatever endings the content came with.
func keepEndings(file *Style, content string) string {
	old, lines := splitAfterLF(file.text), splitAfterLF(toLF(content))
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = time.Second
	ra, rb, _ := dmp.DiffLinesToRunes(toLF(file.text), toLF(content))
	usual := "\n"
	if file.crlf > file.lf {
		usual = "\r\n"
	}
	var out strings.Builder
	out.Grow(len(content) + len(content)/8)
	diffs := linediff.Runes(dmp, ra, rb)
	i, j := 0, 0 // the next line of old, of lines
	for k := 0; k < len(diffs); {
		if diffs[k].Type == diffmatchpatch.DiffEqual {
			for range utf8.RuneCountInString(diffs[k].Text) {
				out.WriteString(old[i])
				i, j = i+1, j+1
			}
			k++
			continue
		}
		// One hunk: the deleted and inserted lines up to the next equal run.
		crlf, lf, from := 0, 0, j
		for ; k < len(diffs) && diffs[k].Type != diffmatchpatch.DiffEqual; k++ {
			n := utf8.RuneCountInString(diffs[k].Text)
			if diffs[k].Type == diffmatchpatch.DiffInsert {
				j += n
				continue
			}
			for _, l := range old[i : i+n] {
				switch {
				case strings.HasSuffix(l, "\r\n"):
					crlf++
				case strings.HasSuffix(l, "\n"):
					lf++
				}
			}
			i += n
		}
		eol := usual
		switch {
		case crlf > lf:
			eol = "\r\n"
		case lf > crlf:
			eol = "\n"
		}
		for _, l := range lines[from:j] {
			if s, ok := strings.CutSuffix(l, "\n"); ok {
				l = s + eol
			}
			out.WriteString(l)
		}
	}
	return out.String()
}

// splitAfterLF cuts s into lines, each with its terminator (the last one
// may have none).
func splitAfterLF(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// toFileEndings gives body the line endings asked for or, when none is,
// the file's own: all CRLF or all LF; a mixed file's are mixed's to decide.
func toFileEndings(body, lineEnding string, file *Style, mixed func(string) string) string {
	switch {
	case lineEnding == LineEndingLF:
		return toLF(body)
	case lineEnding == LineEndingCRLF:
		return toCRLF(body)
	case file == nil:
		return body
	case file.crlf > 0 && file.lf > 0:
		return mixed(body)
	case file.crlf > 0:
		return toCRLF(body)
	case file.lf > 0:
		return toLF(body)
	}
	return body
}

// Appended styles content to follow a file's own bytes: its line
// endings (a mixed file's majority) and its encoding (file nil: a file
// that is not text), without a byte-order mark, which stays at the start
// of the file. (A new or empty file takes content as Styled does.)
func Appended(content string, file *Style, lineEnding string) ([]byte, error) {
	if file == nil || file.c.dec == nil || file.c.unit == 2 {
		// A legacy encoding (GB18030) has no mark: its U+FEFF is text.
		content = strings.TrimPrefix(content, "\uFEFF")
	}
	// A file cut between a CR and its LF (a CRLF file appended in parts):
	// the content's first LF ends the file's last line as it is, where
	// styled it made CR CR LF.
	seam := ""
	if file != nil && strings.HasSuffix(file.text, "\r") && strings.HasPrefix(content, "\n") {
		seam, content = "\n", content[1:]
	}
	body := seam + toFileEndings(content, lineEnding, file, func(b string) string {
		if file.crlf > file.lf {
			return toCRLF(b)
		}
		return toLF(b)
	})
	if file == nil || file.c.dec == nil {
		return []byte(body), nil
	}
	enc, err := file.c.encode(body)
	if err != nil {
		return nil, fault.InvalidArgument("the content cannot be encoded in %s, the file's encoding.", file.c.name).
			WithHint("append text that %s can hold", file.c.name)
	}
	return enc, nil
}
