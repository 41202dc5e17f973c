package patch

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
)

// FuzzParse checks the parser's promises: it never panics; an error is
// PATCH_PARSE on a line of the text, with a hint; a patch has sections,
// paths and chunks with lines, on lines of the text in order; and the patch
// rendered back by String parses to the same patch (line numbers aside).
// A rendering can only spell a text ending in CR when its lines end in
// CRLF, as Parse takes one CR off each line; that rendering is checked
// always, the plain one otherwise.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		lines("*** Begin Patch", "*** Add File: a", "+x", "*** Delete File: b", "*** Update File: c", "*** Move to: d", "@@ ctx", " a", "-b", "+c", "", "*** End of File", "*** End Patch"),
		lines("<<'EOF'", " *** Begin Patch", "  *** Update File: a", " x", "+y", "\t", "@@", "-z", "*** End Patch ", "EOF"),
		"*** Begin Patch\r\n*** Update File: a\r\n@@ \r\n-x\r\r\n*** End Patch",
		lines("*** Begin Patch", "*** Update File: a", "@@", "*** End Patch"),
		lines("*** Begin Patch", "*** Frobnicate File: a", "*** End Patch"),
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		n := strings.Count(text, "\n") + 1
		p, err := Parse(text)
		if err != nil {
			fe := fault.AsError(err)
			line, _ := fe.Details["line"].(int)
			if fe.Code != fault.CodePatchParse || line < 1 || line > n || fe.Hint == "" {
				t.Fatalf("error %+v", fe)
			}
			return
		}
		if len(p.Ops) == 0 {
			t.Fatal("no sections")
		}
		last := 0
		for _, op := range p.Ops {
			if op.Path == "" || op.Line <= last || op.Line > n || (op.Kind == Update) != (len(op.Chunks) > 0) {
				t.Fatalf("section %+v", op)
			}
			last = op.Line
			for _, c := range op.Chunks {
				if len(c.Lines) == 0 || c.Line <= last || c.Line > n {
					t.Fatalf("chunk %+v", c)
				}
				last = c.Line
			}
		}
		want := withoutLines(p)
		render := p.String()
		crlf := strings.ReplaceAll(render, "\n", "\r\n")
		for _, r := range []string{crlf, render} {
			q, err := Parse(r)
			if err != nil {
				t.Fatalf("%q does not parse: %v", r, err)
			}
			if got := withoutLines(q); !reflect.DeepEqual(got, want) {
				t.Fatalf("%q parses to\n%+v\nnot\n%+v", r, got, want)
			}
			if endsInCR(p) {
				break
			}
		}
	})
}

// withoutLines is p with its line numbers zeroed.
func withoutLines(p *Patch) *Patch {
	q := &Patch{Ops: make([]Op, len(p.Ops))}
	for i, op := range p.Ops {
		op.Line = 0
		op.Chunks = append([]Chunk(nil), op.Chunks...)
		for k := range op.Chunks {
			op.Chunks[k].Line = 0
		}
		q.Ops[i] = op
	}
	return q
}

// endsInCR reports whether a text of p ends in CR.
func endsInCR(p *Patch) bool {
	for _, op := range p.Ops {
		if strings.Contains(op.Content, "\r\n") {
			return true
		}
		for _, c := range op.Chunks {
			cr := strings.HasSuffix(c.Context, "\r")
			for _, l := range c.Lines {
				cr = cr || strings.HasSuffix(l.Text, "\r")
			}
			if cr {
				return true
			}
		}
	}
	return false
}

// FuzzPlan checks Plan's promises on a chunk made of lines of the file
// itself: it never panics; a chunk of context only changes nothing but a
// missing final line ending; a chunk that replaces n lines by others
// leaves every line before and after the place it reports as it was, the
// byte-order mark included, and every line ended.
func FuzzPlan(f *testing.F) {
	for _, s := range []struct {
		src  string
		from uint
		n    uint
		repl string
	}{
		{"a\nb\nc\n", 1, 1, "B"},
		{"\uFEFFa\r\nb\r\nc", 2, 1, "x\ny"},
		{"a\n\n\nb  \n", 0, 3, ""},
		{"x\nx\nx", 1, 2, "y"},
		{"\u201cq\u201d\n", 0, 1, "q"},
	} {
		f.Add(s.src, s.from, s.n, s.repl)
	}
	f.Fuzz(func(t *testing.T, src string, from, n uint, repl string) {
		body, bom := strings.CutPrefix(src, "\uFEFF")
		orig := splitFile(body)
		if len(orig) == 0 {
			return
		}
		at := int(from % uint(len(orig)))
		k := 1 + int(n%uint(len(orig)-at))
		read := func(string) (string, bool, error) { return src, true, nil }

		same := Chunk{}
		for _, l := range orig[at : at+k] {
			same.Lines = append(same.Lines, Line{' ', l.text})
		}
		changes, err := (&Patch{Ops: []Op{{Kind: Update, Path: "f", Chunks: []Chunk{same}}}}).Plan(read, nil)
		if err != nil {
			t.Fatalf("context only: %v", err)
		}
		// Context alone changes no byte: not even a missing final newline.
		if got := changes[0].Content; got != src {
			t.Fatalf("context only: %q, want %q", got, src)
		}

		if l := orig[len(orig)-1]; l.eol == "" && strings.HasSuffix(l.text, "\r") {
			return // once ended, a last line ending in CR reads back as CRLF
		}
		c := Chunk{}
		for _, l := range orig[at : at+k] {
			c.Lines = append(c.Lines, Line{'-', l.text})
		}
		added := strings.Split(repl, "\n")
		if repl == "" {
			added = nil
		}
		for i, l := range added {
			// A line of a patch never ends in CR: that is its line ending.
			added[i] = strings.TrimRight(l, "\r")
			c.Lines = append(c.Lines, Line{'+', added[i]})
		}
		changes, err = (&Patch{Ops: []Op{{Kind: Update, Path: "f", Chunks: []Chunk{c}}}}).Plan(read, nil)
		if fe := fault.AsError(err); fe != nil && fe.Details["newAt"] != nil {
			// Refused: what it writes stands before its old lines, as a
			// retry's would ("0\n1", -1 +0). It must truly stand there.
			newAt, oldAt := fe.Details["newAt"].(int)-1, fe.Details["oldAt"].(int)-1
			if newAt >= oldAt || newAt+len(added) > len(orig) || oldAt > at {
				t.Fatalf("replace: %v", err)
			}
			texts := make([]string, len(orig))
			for i, l := range orig {
				texts[i] = l.text
			}
			if got, _, ok := Ladder.Seek(texts, added, newAt); !ok || got != newAt {
				t.Fatalf("replace: %v, but its added lines are not at line %d", err, newAt+1)
			}
			return
		}
		if err != nil {
			t.Fatalf("replace: %v", err)
		}
		got := changes[0].Content
		s := changes[0].Chunks[0].Line - 1
		if s == 0 && len(added) > 0 && strings.HasPrefix(added[0], "\uFEFF") {
			return // one the patch puts first is dropped: TestWithoutNewMarks
		}
		gotBody, gotBOM := strings.CutPrefix(got, "\uFEFF")
		if !bom && s == 0 && len(added) == 0 && k < len(orig) && strings.HasPrefix(orig[k].text, "\uFEFF") {
			// The line after those deleted begins with its own U+FEFF,
			// now the file's first bytes: kept as they are.
			gotBody, gotBOM = got, false
		}
		if gotBOM != bom {
			t.Fatalf("BOM lost or added: %q", got)
		}
		out := splitFile(gotBody)
		if len(out) != len(orig)-k+len(added) || s < 0 || s+k > len(orig) {
			t.Fatalf("%d lines at %d, from %d lines, %d replaced by %d", len(out), s, len(orig), k, len(added))
		}
		for i, l := range out {
			var w fileLine
			switch {
			case i < s:
				w = orig[i]
			case i < s+len(added):
				w = fileLine{text: added[i-s], eol: l.eol}
			default:
				w = orig[i-len(added)+k]
			}
			// Only an untouched last line keeps having no ending.
			lastKept := i == len(out)-1 && i >= s+len(added) && w.eol == ""
			if l.eol == "" && !lastKept || l.text != w.text || (w.eol != "" && l.eol != w.eol) {
				t.Fatalf("line %d is %q, want %q", i+1, l.text+l.eol, w.text+w.eol)
			}
		}
	})
}
