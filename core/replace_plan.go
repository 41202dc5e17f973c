package core

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"slices"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// plannedFile is a file a replace would change, as its plan names it: its
// path, its version when read under the lock (or, on a backend that gives
// none, the sha256 of what was read), and its matches.
type plannedFile struct {
	path, version, sum string
	count              int
}

// replacePlan is the plan token of a replace that would change files and
// count count matches in all: a digest, never a concatenation, so that no
// other set of files, versions or request gives it but by a collision of
// sha256 (128 bits of it are kept). The request's query, replacement and
// flags are part of it, so that the plan of a dry run does not pass a
// replace it never showed. A path is the backend's, not the display's:
// the same from any working directory, on any backend.
func replacePlan(req ReplaceRequest, files []plannedFile, count int) string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	number := func(v int) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(v))
		h.Write(n[:])
	}
	field("agentfs replace plan 1")
	field(req.Query)
	field(deref(req.Replacement))
	flags := 0
	for i, on := range []bool{req.Regex, req.Word, req.IgnoreCase} {
		if on {
			flags |= 1 << i
		}
	}
	number(flags)
	number(count)
	number(len(files))
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b plannedFile) int { return cmp.Compare(a.path, b.path) })
	for _, f := range files {
		field(f.path)
		field(f.version)
		field(f.sum)
		number(f.count)
	}
	return planToken(h)
}

// planToken is the token of a plan's digest: plan- and 32 hexadecimal
// digits, a form no version nor sha256 has.
func planToken(h hash.Hash) string {
	return "plan-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// planPath is where p lies, as a plan names it: absolute on a backend
// that places paths from a working directory (the local one), so that a
// dry run and the replace agree from any directory; a store's path is
// its own either way.
func (t *Tools) planPath(p string) string {
	if placer, ok := backend.At(t.FS, p).(interface{ Abs(string) string }); ok {
		return placer.Abs(p)
	}
	return p
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// settlePlan gives a dry run's result its plan, and refuses a replace
// whose plan is not the one expected (checkPlan).
func (t *Tools) settlePlan(req ReplaceRequest, files []plannedFile, res *ReplaceResult) error {
	plan := replacePlan(req, files, res.Replacements)
	if req.DryRun {
		res.Plan = plan
	}
	return checkPlan(req, plan, res)
}

// checkPlan refuses a replace whose plan is not the one the caller's dry
// run gave: a file changed since, or one now changes that would not then,
// or the reverse, or the request is another.
func checkPlan(req ReplaceRequest, plan string, res *ReplaceResult) error {
	if req.ExpectedPlan == "" || req.ExpectedPlan == plan {
		return nil
	}
	return fault.Errorf(fault.CodeStale, "the replace would not make the change its dry run showed (plan %s): a file changed since, a file gained or lost a match, or the query, replacement or flags differ.", req.ExpectedPlan).
		WithDetail("count", res.Replacements).WithDetail("filesChanged", res.FilesChanged).
		WithHint("run the replace with --dry-run again, check its diffs, and pass its plan as --expected-plan; nothing was changed")
}
