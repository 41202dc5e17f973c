package core

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// MvRequest moves a file, a link or a directory within the roots.
type MvRequest struct {
	From      string `json:"from" arg:"0" alias:"source,src" required:"true" help:"file, link (itself, not its target) or directory to move"`
	To        string `json:"to" arg:"1" alias:"destination,dest" required:"true" help:"its new path itself, never a directory to move it into (name dir/NAME); missing parent directories are created"`
	Overwrite bool   `json:"overwrite,omitempty" help:"replace a file (or an empty directory) at the destination, instead of refusing with EXISTS"`
}

// MvResult is where the entry now is.
type MvResult struct {
	Path        string `json:"path"`
	PathBase64  string `json:"pathBase64,omitempty"`
	From        string `json:"from"`
	FromBase64  string `json:"fromBase64,omitempty"`
	Overwritten bool   `json:"overwritten,omitempty"`
	// Version is a moved file's version where it went, for the next
	// change's precondition: a move changes it (a rename its ctime, a
	// store's copy its ETag), and a version read before was STALE.
	Version string `json:"version,omitempty"`
}

// Mv moves req.From to req.To in one step, under the locks of both: an
// atomic rename on a backend that renames (a directory moves whole), else a
// file copied and removed in one transaction.
func (t *Tools) Mv(ctx context.Context, req MvRequest) (*MvResult, error) {
	if err := Validate(&req); err != nil {
		return nil, err
	}
	m, err := t.mutableFS("mv")
	if err != nil {
		return nil, err
	}
	res := &MvResult{}
	res.Path, res.PathBase64 = fault.PathText(t.FS.Display(req.To))
	res.From, res.FromBase64 = fault.PathText(t.FS.Display(req.From))
	if err := checkDotName(req.From, res.From, "moved"); err != nil {
		return nil, err
	}
	if res.Path == res.From && res.PathBase64 == res.FromBase64 {
		return nil, fault.OntoItself(res.Path)
	}
	// A root known by its name (a store's) is refused before checks that
	// would name another fault (EXISTS, NOT_A_DIRECTORY); localfs's lock
	// refuses every root, by its identity.
	if rn, ok := m.(backend.RootNamer); ok {
		for _, p := range []string{req.From, req.To} {
			if rn.IsRoot(p) {
				return nil, ontoRoot(fault.RootRefused(t.FS.Display(p)), res)
			}
		}
	}
	r, err := mutate(ctx, t, m, []string{req.From, req.To}, func() (*MvResult, error) {
		return t.mvOnce(ctx, m, req, *res)
	})
	return r, ontoRoot(err, res)
}

// ontoRoot gives the refusal of a root as the destination (mv sub/f .,
// which mv(1) takes for a move into it) the hint of the path inside it.
func ontoRoot(err error, res *MvResult) error {
	e := fault.AsError(err)
	if e == nil || e.Code != fault.CodeInvalidArgument || e.Path != res.Path || res.Path == res.From ||
		e.Message != fault.RootRefused("").Message {
		return err
	}
	if h, ok := intoHint(res, false); !ok {
		e.WithHint("%s; nothing was moved", h)
	} else {
		e.WithHint("mv does not move into a directory: name the new path inside the root, such as %s; nothing was moved", path.Join(res.Path, path.Base(res.From)))
	}
	return err
}

// intoHint begins the hint of a move onto the directory res.Path (or a
// link to one), which mv(1) makes into it: the path inside to name, ok,
// unless that is the source itself (mv d/f d: it is there already) or,
// for a directory, lies inside it; then the hint says so, and no hint to
// replace or remove the destination (which holds the source) may follow.
func intoHint(res *MvResult, dirSource bool) (hint string, ok bool) {
	into := path.Join(res.Path, path.Base(res.From))
	switch {
	case into == res.From:
		return fmt.Sprintf("%s is in %s already", res.From, res.Path), false
	case dirSource && strings.HasPrefix(res.Path+"/", res.From+"/"):
		return "move the directory somewhere outside itself", false
	}
	return "to move it inside, name " + into, true
}

// directoryDestination is fault.DirectoryDestination of a file onto the
// directory res.Path, whose hint does not name the source's own path.
func directoryDestination(res *MvResult) error {
	e := fault.DirectoryDestination(res.Path, path.Base(res.From))
	if h, ok := intoHint(res, false); !ok {
		e.WithHint("%s; nothing was moved", h)
	}
	return e
}

// mvOnce is one attempt of mv.
func (t *Tools) mvOnce(ctx context.Context, m backend.MutableFS, req MvRequest, res MvResult) (*MvResult, error) {
	src, err := m.Lstat(ctx, req.From)
	if err != nil {
		return nil, t.WithSuggestions(ctx, req.From, t.settledMissing(ctx, req.From, err))
	}
	if src.Type == backend.TypeDir {
		// As rm -r: a directory has no version to move it against, and a
		// removal below it not yet committed, undone once the rest had
		// moved, put its files back at the source, beside their copies.
		if err := t.settledRead(ctx, req.From, ""); err != nil {
			return nil, err
		}
	}
	if err := checkFinalSlash(req.From, res.From, src.Type); err != nil {
		return nil, err
	}
	dst, err := currentOf(m.Lstat(ctx, req.To))
	if err != nil {
		return nil, err
	}
	name := path.Base(res.From)
	if backend.NamesDirectory(req.To) && src.Type != backend.TypeDir {
		// mv(1) would move into a directory there; agentfs names the
		// destination whole, and a file is not renamed to a directory's name.
		// The hint names the path inside: without the slash, the file
		// would be renamed to the directory's name.
		if dst.exists && dst.info.Type == backend.TypeDir {
			return nil, directoryDestination(&res)
		}
		e := fault.Errorf(fault.CodeNotADirectory, "the destination names a directory (a final slash, . or ..), but the source is a %s.", src.Type.Noun()).WithPath(res.Path)
		if dst.exists {
			return nil, e.WithHint("give the destination's whole path, without the final slash (mv does not move into a directory)")
		}
		return nil, e.WithHint("name the new path of the %s itself, such as %s/%s (its missing parents are created); mv does not move into a directory; nothing was moved", src.Type.Noun(), res.Path, name)
	}
	// A refusal over the destination rests on it and on the source as
	// found, either of which may be a change of a transaction not yet
	// committed (a move's copies), which may yet be undone.
	refuse := func(refusal error) (*MvResult, error) {
		if err := t.settledRead(ctx, req.From, src.Version); err != nil {
			return nil, err
		}
		if err := t.settledRead(ctx, req.To, dst.info.Version); err != nil {
			return nil, err
		}
		return nil, refusal
	}
	if dst.exists {
		if err := checkFinalSlash(req.To, res.Path, dst.info.Type); err != nil {
			return refuse(err)
		}
	}
	if dst.exists && dst.info.Type == backend.TypeDir && src.Type != backend.TypeDir {
		// Whether or not --overwrite is given: its hint would lead to this.
		return refuse(directoryDestination(&res))
	}
	if dst.exists && sameEntry(ctx, m, req.From, req.To) {
		if path.Base(res.From) == path.Base(res.Path) {
			// Before EXISTS, whose hint (--overwrite) led to this refusal.
			return nil, fault.OntoItself(res.Path)
		}
		// README for readme where the file system ignores case (macOS):
		// one entry, whose spelling the move changes, as mv(1) there
		// does. No destination is replaced: it was EXISTS, whose
		// --overwrite was refused as onto itself, and a directory's hint
		// named a path inside itself (mv Dir dir: name dir/Dir).
		dst = current{}
	}
	if dst.exists && src.Type == backend.TypeDir && dst.info.Type != backend.TypeDir {
		// Whether or not --overwrite is given: its hint led to this.
		// Worded alike on every backend: a disk's ENOTDIR said "a
		// component of the path is not a directory".
		if linksToDir(ctx, m, req.To, dst) {
			h, _ := intoHint(&res, false)
			return refuse(fault.Errorf(fault.CodeNotADirectory, "the destination is a link to a directory, which a directory does not replace; mv does not move into a directory.").
				WithPath(res.Path).WithHint("%s; nothing was moved", h))
		}
		return refuse(fault.DirOntoFile(res.Path))
	}
	dirOntoDir := dst.exists && src.Type == backend.TypeDir && dst.info.Type == backend.TypeDir
	if dirOntoDir && !req.Overwrite {
		// mv(1) would move the directory inside this one: the hint says
		// where, before the --overwrite that replaces this one (and only
		// when it is empty, which a hint leading to rm -r must not hide).
		e := fault.Errorf(fault.CodeExists, "the destination is a directory that exists; mv does not move into a directory.").WithPath(res.Path)
		h, ok := intoHint(&res, true)
		if ok {
			h += fmt.Sprintf("; --overwrite replaces %s itself, and only when it is empty", res.Path)
		}
		return refuse(e.WithHint("%s; nothing was moved", h))
	}
	if !req.Overwrite && linksToDir(ctx, m, req.To, dst) {
		// mv(1) would move into the directory the link leads to;
		// --overwrite replaces the link.
		e := fault.Errorf(fault.CodeExists, "the destination is a link to a directory; mv does not move into a directory.").WithPath(res.Path)
		h, ok := intoHint(&res, false)
		if ok {
			h += "; --overwrite replaces the link itself, never its target"
		}
		return refuse(e.WithHint("%s; nothing was moved", h))
	}
	if dst.exists && !req.Overwrite {
		return refuse(fault.Errorf(fault.CodeExists, "the destination already exists.").WithPath(res.Path).
			WithHint("pass --overwrite to replace it, or choose another destination"))
	}
	// The result as it will be: overwritten only when a file is there, and
	// a file's version at its largest.
	res.Overwritten = dst.exists
	if src.Type == backend.TypeFile {
		res.Version = t.unknownVersion()
	}
	if n := jsonSize(&res); n > t.maxBytes() {
		return nil, t.tooLarge(n, "the paths do not fit").WithHint("raise --max-bytes to %d or more; nothing was moved", t.raiseTo(n))
	}
	ctx, done, err := t.beginCommit(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	// Stated: the Lstats above found the source a file of that version,
	// or a directory, and without --overwrite nothing at the destination
	// (no directory there nor a file above it), which an object store
	// then needs not ask again.
	stated := src.Type == backend.TypeDir && src.Version == "" || src.Type == backend.TypeFile && src.Version != ""
	opts := backend.WriteOptions{IfAbsent: !req.Overwrite, IfVersion: src.Version, Stated: stated}
	// Whether the move is a rename is a question of the backend holding
	// From; m spells the paths for it.
	_, renames := backend.At(m, req.From).(backend.Renamer)
	var moved backend.FileInfo
	if rn, ok := m.(backend.Renamer); ok && renames {
		moved, err = rn.Rename(ctx, req.From, req.To, opts)
	} else {
		moved, err = t.moveByCopy(ctx, m, req, src, dst)
	}
	if e := fault.AsError(err); dirOntoDir && e != nil && e.Code == fault.CodeExists {
		// A directory that is not empty (fault.FullDestination), whose
		// hint to remove it would lose what it holds where mv(1) would
		// have moved the source inside it.
		h, ok := intoHint(&res, true)
		if ok {
			h += "; to replace it, empty or remove it first"
		}
		e.WithHint("%s; nothing was moved", h)
	}
	if err != nil {
		return nil, raced(err, fault.CodeStale)
	}
	if src.Type == backend.TypeFile {
		res.Version = moved.Version
	}
	return &res, nil
}

// linksToDir reports whether dst, the destination as found at to, is a
// link that leads to a directory, into which mv(1) would move.
func linksToDir(ctx context.Context, m backend.MutableFS, to string, dst current) bool {
	if !dst.exists || dst.info.Type != backend.TypeSymlink {
		return false
	}
	fi, err := m.Stat(ctx, to)
	return err == nil && fi.Type == backend.TypeDir
}

// sameEntry reports whether from and to name one entry, on a backend
// that can tell (backend.EntryComparer).
func sameEntry(ctx context.Context, m backend.MutableFS, from, to string) bool {
	ec, ok := m.(backend.EntryComparer)
	return ok && ec.SameEntry(ctx, from, to)
}

// moveByCopy moves a file on a backend that cannot rename: its bytes
// written at the destination and the source removed, in one transaction.
func (t *Tools) moveByCopy(ctx context.Context, m backend.MutableFS, req MvRequest, src backend.FileInfo, dst current) (backend.FileInfo, error) {
	tx, ok := m.(backend.Transactor)
	if !ok || src.Type != backend.TypeFile {
		return backend.FileInfo{}, fault.Errorf(fault.CodeNotSupported, "this backend cannot move a %s.", src.Type.Noun()).WithPath(t.FS.Display(req.From)).
			WithHint("copy the files with read and write, then remove the old ones")
	}
	data, err := t.readWhole(ctx, req.From, MaxWriteBytes)
	if err != nil {
		return backend.FileInfo{}, err
	}
	write := swapOn(dst, backend.WriteOptions{Executable: src.Mode&0o111 != 0})
	infos, err := tx.Commit(ctx, []backend.Op{
		{Path: req.To, Data: data, Write: write},
		{Path: req.From, Remove: true, Write: backend.WriteOptions{IfVersion: src.Version}},
	})
	if err != nil {
		return backend.FileInfo{}, err
	}
	return infos[0], nil
}
