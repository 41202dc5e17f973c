package core

import (
	"regexp"
	"strconv"
	"sync"

	"github.com/agentfs/agentfs/fault"
)

// lineCutMarker ends a line that read cut: the line's whole length in the
// file's bytes, so that a caller knows what it was not shown.
func lineCutMarker(size int64) string {
	return " …[line cut: " + strconv.FormatInt(size, 10) + " bytes in all]"
}

// lineCutPattern is compiled on first use: only writes and edits check it,
// and start-up is paid on every call.
var lineCutPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(` …\[line cut: \d+ bytes in all\]`)
})

// lineCuts counts read's cut markers in text.
func lineCuts(text string) int { return len(lineCutPattern().FindAllStringIndex(text, -1)) }

// checkNoLineCut refuses text that holds more of read's cut markers than
// held, the text of the file it changes ("" for none): content read with
// lines cut and written back would destroy the rest of those lines, while
// a marker the file itself holds (a test's expected output, a man page)
// is its text, written back as it was.
func checkNoLineCut(field, text, held string) error {
	n := lineCuts(text)
	if n == 0 || lineCuts(held) >= n {
		return nil
	}
	return fault.InvalidArgument("%s holds a line that read cut (…[line cut: N bytes in all]), which the file does not hold; writing it would destroy the rest of that line.", field).
		WithHint("read the file again with --line-truncation chars:0 for whole lines, or change it with edit")
}
