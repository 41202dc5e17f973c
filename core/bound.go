package core

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"strings"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// Every result fits the bound (Tools.MaxBytes): its JSON as the CLI writes
// it, compact and without HTML escaping, with its final newline, is at
// most that many bytes. Each tool sizes its result as it builds it: the
// fields around its items first (a skeleton, with the largest values they
// can take), then each item as it is added. An item that does not fit an
// empty page cannot be returned at any offset, and is TOO_LARGE naming the
// bound that would hold it.

// jsonSize is the length of v as the CLI writes it, newline included.
func jsonSize(v any) int {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // results are plain data: a failure is a bug
	}
	return b.Len()
}

// itemSize is the length of v as an element of a JSON array: its JSON and
// the comma that may follow it (one byte, as jsonSize's newline).
func itemSize(v any) int { return jsonSize(v) }

// unknownSha256 stands for what a result will carry once read to the
// end (or written), at its largest.
var unknownSha256 = strings.Repeat("0", sha256.Size*2)

// unknownVersion stands for the version a file will have once written, at
// its largest on t's backend.
func (t *Tools) unknownVersion() string { return strings.Repeat("v", backend.VersionBytes(t.FS)) }

// tooLarge is TOO_LARGE for a result that cannot fit the bound whatever
// is cut from it: what (a sentence without its final stop) names the part
// that does not fit, and needed is the size of the least result; the
// error names the least --max-bytes that holds it (Tools.raiseTo).
func (t *Tools) tooLarge(needed int, what string) *fault.Error {
	needed = t.raiseTo(needed)
	return fault.Errorf(fault.CodeTooLarge, "%s: the result needs %d bytes, over --max-bytes %d.", what, needed, t.bound()).
		WithDetail("maxBytes", t.bound()).WithDetail("needed", needed).
		WithHint("raise --max-bytes to %d or more", needed)
}

// fitted is the last step of each tool that reads: it returns res when
// res, sized as it was built, fits the bound. That holds by construction
// and is checked all the same, so that a result over the bound is never a
// success.
func fitted[R any](t *Tools, res *R) (*R, error) {
	if n := jsonSize(res); n > t.maxBytes() {
		return nil, t.tooLarge(n, "the result does not fit")
	}
	return res, nil
}
