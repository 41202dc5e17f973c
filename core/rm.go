package core

import (
	"context"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// RmRequest removes one file, link or directory.
type RmRequest struct {
	Path      string `json:"path" arg:"0" alias:"file_path,dir_path" required:"true" help:"file, link or directory to remove (a link itself, never its target)"`
	Recursive bool   `json:"recursive,omitempty" flagAlias:"r" help:"remove a directory with everything in it"`
	Precondition
}

// RmResult says whether something was removed: a missing path is not an
// error, only deleted false.
type RmResult struct {
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
	Deleted    bool   `json:"deleted"`
}

// Rm removes req.Path as a compare-and-swap of what it checked and, on a
// backend with locks, under the path's exclusive lock, so that no write
// below a directory being removed can interleave: each sees the other
// complete.
func (t *Tools) Rm(ctx context.Context, req RmRequest) (*RmResult, error) {
	m, err := t.mutableFS("rm")
	if err != nil {
		return nil, err
	}
	if err := Validate(req); err != nil {
		return nil, err
	}
	res := &RmResult{}
	res.Path, res.PathBase64 = fault.PathText(t.FS.Display(req.Path))
	if err := checkDotName(req.Path, res.Path, "removed"); err != nil {
		return nil, err
	}
	if n := jsonSize(res); n > t.maxBytes() {
		return nil, t.tooLarge(n, "the path does not fit").WithPath(res.Path).
			WithHint("raise --max-bytes to %d or more; nothing was removed", t.raiseTo(n))
	}
	return mutate(ctx, t, m, []string{req.Path}, func() (*RmResult, error) { return t.rmOnce(ctx, m, req, res) })
}

// rmOnce is one attempt of rm: check, then remove what was checked.
func (t *Tools) rmOnce(ctx context.Context, m backend.MutableFS, req RmRequest, res *RmResult) (*RmResult, error) {
	cur, err := currentOf(m.Lstat(ctx, req.Path))
	if err != nil {
		return nil, err
	}
	// A precondition comes from a read, which follows a final link: a link
	// is checked against its target, as read reported it.
	checked := cur
	if req.Set() && cur.exists && cur.info.Type == backend.TypeSymlink {
		if fi, err := m.Stat(ctx, req.Path); err == nil {
			checked.info = fi
		}
	}
	sum := func() (string, error) {
		if checked.info.Type != backend.TypeFile {
			return "", fault.InvalidArgument("expectedSha256 applies to a file; the path is a %s.", checked.info.Type.Noun()).
				WithPath(res.Path).WithHint("drop the precondition to remove a %s", checked.info.Type.Noun())
		}
		s, _, err := t.digest(ctx, req.Path, checked, nil, true)
		return s, err
	}
	if req.Set() && req.Recursive && cur.exists && checked.info.Type == backend.TypeDir {
		// A directory's version changes with its own entries only: a file
		// rewritten or added below them would be removed unseen. A sha256
		// is a file's alone.
		msg := "a directory's version covers its own entries, not what lies below them, so a recursive removal cannot be conditional on it."
		if req.ExpectedVersion == "" {
			msg = "expectedSha256 applies to a file, and a recursive removal of a directory cannot be conditional on one."
		}
		return nil, fault.InvalidArgument("%s", msg).
			WithPath(res.Path).WithHint("drop the precondition, or remove the files whose versions you read one by one; nothing was removed")
	}
	if err := req.Check(req.Path, checked.info, cur.exists, sum); err != nil {
		return nil, err
	}
	if !cur.exists {
		// Nothing removed rests on the file's absence, which a removal
		// not yet committed may yet undo.
		if err := t.settledRead(ctx, req.Path, ""); err != nil {
			return nil, err
		}
		return res, nil
	}
	if err := checkFinalSlash(req.Path, res.Path, checked.info.Type); err != nil {
		return nil, err
	}
	if cur.info.Type == backend.TypeDir {
		// A directory has no version to remove it against: what lies
		// below it may be a transaction's changes, not yet committed.
		if err := t.settledRead(ctx, req.Path, ""); err != nil {
			return nil, err
		}
	}
	ctx, done, err := t.beginCommit(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	// Stated: the Lstat above found a file of that version, or a
	// directory, which an object store then needs not ask again.
	stated := cur.info.Type == backend.TypeDir && cur.info.Version == "" || cur.info.Type == backend.TypeFile && cur.info.Version != ""
	opts := backend.RemoveOptions{Recursive: req.Recursive, IfVersion: cur.info.Version, Stated: stated, Checked: req.Set()}
	res.Deleted, err = m.Remove(ctx, req.Path, opts)
	if err != nil {
		return nil, conflictOf(err, backend.WriteOptions{IfVersion: opts.IfVersion}, false)
	}
	return res, nil
}
