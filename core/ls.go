package core

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// LsRequest lists a directory, or with depth a bounded tree below it.
type LsRequest struct {
	Path   string `json:"path" arg:"0" alias:"file_path,dir_path" default:"." help:"directory to list"`
	Limit  int    `json:"limit,omitempty" min:"1" max:"1000" default:"200" help:"entries per page"`
	Offset int    `json:"offset,omitempty" min:"0" help:"entries to skip, in walk order: the previous page's nextOffset"`
	Cursor string `json:"cursor,omitempty" help:"the previous page's nextCursor: the listing resumes where that page ended instead of walking from the start"`
	Depth  int    `json:"depth,omitempty" min:"1" max:"10" default:"1" help:"levels to list: 1 the directory's entries, 2 theirs too, and so on; find lists a whole tree"`
	Long   bool   `json:"long,omitempty" flagAlias:"l" help:"add mtime (RFC 3339, UTC; none for a store's directory) and mode (octal; where the backend has modes)"`
}

// LsEntry is one entry; links are described, never followed. Type is left
// out for a regular file; Path (a display path, to pass back) is given
// when the depth is over 1.
type LsEntry struct {
	Name         string `json:"name"`
	NameBase64   string `json:"nameBase64,omitempty"`
	Path         string `json:"path,omitempty"`
	PathBase64   string `json:"pathBase64,omitempty"`
	Type         string `json:"type,omitempty"`
	Size         int64  `json:"size"`
	Target       string `json:"target,omitempty"`
	TargetBase64 string `json:"targetBase64,omitempty"`
	Mtime        string `json:"mtime,omitempty"`
	Mode         string `json:"mode,omitempty"`
	Ignored      bool   `json:"ignored,omitempty"`
}

// LsResult is one page of a listing. Truncated is set when the byte bound
// cut the page short of limit; nextOffset then continues exactly there.
type LsResult struct {
	Path       string    `json:"path"`
	PathBase64 string    `json:"pathBase64,omitempty"`
	Entries    []LsEntry `json:"entries"`
	Truncated  bool      `json:"truncated,omitempty"`
	// Unreadable counts the directories the listing could not look into
	// for want of permission (listed, with nothing under them that they
	// may hold) and the entries it could not describe (left out) in this
	// page; the answer is partial (--exit-status: 4), as find's.
	Unreadable int    `json:"unreadable,omitempty"`
	NextOffset *int   `json:"nextOffset,omitempty"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// LsDefaultLimit is the page of a request that gives no limit; the tags of
// LsRequest bound it and the depth (a depth past 10 is a whole-tree listing,
// which is find's job; paging bounds the output at any depth).
const LsDefaultLimit = 200

// Ls lists the entries of a directory, and with a depth over 1 those of
// its subdirectories, in walk order (depth-first, each directory in name
// order), entries [offset, offset+limit) of that order, bounded in bytes as
// well. Entries that find and grep leave out (ignore files, .git, a write's
// temporary files) are listed with ignored set, and not descended into.
func (t *Tools) Ls(ctx context.Context, req LsRequest) (*LsResult, error) {
	if err := Validate(req); err != nil {
		return nil, err
	}
	digest := req.digest(t.FS.Display)
	from, err := resume(req.Cursor, digest, &req.Offset)
	if err != nil {
		return nil, err
	}
	limit, depth := cmp.Or(req.Limit, LsDefaultLimit), cmp.Or(req.Depth, 1)
	w, err := t.walker()
	if err != nil {
		return nil, err
	}
	dir := req.Path
	if dir == "" {
		dir = "."
	}
	res := &LsResult{Entries: []LsEntry{}}
	res.Path, res.PathBase64 = fault.PathText(t.FS.Display(dir))
	pg := t.newWalkPage(req.Offset, limit, &LsResult{Path: res.Path, PathBase64: res.PathBase64,
		Entries: []LsEntry{}, Truncated: true, Unreadable: maxUnreadable, NextOffset: new(req.Offset + limit)})
	if from.From != "" {
		pg.resumeAt(from)
	}
	m, ok := backend.At(t.FS, dir).(backend.Moder)
	modes := ok && m.HasModes()
	opts := backend.WalkOptions{ShowIgnored: true, From: from.From, Unreadable: pg.unreadable}
	err = w.Walk(ctx, dir, opts, func(e backend.WalkEntry) error {
		// The walk goes below an entry at depth d (its Rel has d-1
		// slashes) only while d < depth.
		var next error
		if e.Type == backend.TypeDir && strings.Count(e.Rel, "/")+1 >= depth {
			next = backend.ErrSkipDir
		}
		if pg.skip(e.Rel) {
			return next
		}
		if pg.full() {
			return backend.ErrStopWalk
		}
		fi, err := e.Info()
		if err != nil {
			switch fault.AsError(err).Code {
			case fault.CodeNotFound:
				pg.uncount() // removed since the listing
				return next
			case fault.CodePermissionDenied:
				// Named by a directory that may be read but not searched
				// (r without x): what it is cannot be known. Counted, as
				// find counts such a directory, not the listing's end,
				// and in the offsets as every entry is, since a page
				// resumed by offset skips it without a look. The listed
				// directory being the one, nothing in it can be
				// described: an empty listing, exit 0, would hide it.
				if !strings.Contains(e.Rel, "/") {
					return fault.Errorf(fault.CodePermissionDenied, "the directory may be read but not searched (it has r without x): its entries can be named, not described.").
						WithPath(t.FS.Display(dir)).WithDetail("entry", fault.AsError(err).Path).
						WithHint("find lists their names; to list them here, the directory needs search (x) permission")
				}
				if !pg.pass(e.Rel, digest) {
					return backend.ErrStopWalk
				}
				pg.unreadable(e.Path, e.Rel)
				if e.Type == backend.TypeDir {
					return backend.ErrSkipDir // below it, nothing can be reached
				}
				return nil
			}
			return err
		}
		le := lsEntry(e, fi, depth > 1, req.Long, modes)
		after := pg.cursorAfter(e.Rel, digest)
		if ok, err := pg.fits(le, e.Path, e.Rel, after); !ok {
			return cmp.Or(err, backend.ErrStopWalk)
		}
		res.Entries = append(res.Entries, le)
		return next
	})
	if err != nil {
		return nil, t.WithSuggestions(ctx, dir, err)
	}
	res.NextOffset, res.Truncated, res.Unreadable = pg.next, pg.truncated, pg.unreadableCount()
	if pg.next != nil {
		res.NextCursor = pg.last
	}
	return fitted(t, res)
}

// digest identifies the request by all but its paging, its path by its
// spelling in output (display).
func (req LsRequest) digest(display func(string) string) string {
	req.Offset, req.Limit, req.Cursor = 0, 0, ""
	req.Path = displayedPath(req.Path, display)
	return requestDigest(req)
}

// lsEntry is the output of one walk entry.
func lsEntry(e backend.WalkEntry, fi backend.FileInfo, withPath, long, modes bool) LsEntry {
	le := LsEntry{Type: fi.Type.EntryType(), Size: fi.Size, Ignored: e.Ignored}
	le.Name, le.NameBase64 = fault.PathText(e.Name)
	if withPath {
		le.Path, le.PathBase64 = fault.PathText(e.Path)
	}
	if fi.Type == backend.TypeSymlink {
		le.Target, le.TargetBase64 = fault.PathText(fi.Target)
	}
	if long {
		if !fi.ModTime.IsZero() { // a store's directory has no time
			le.Mtime = fi.ModTime.UTC().Format(time.RFC3339)
		}
		if modes {
			le.Mode = fmt.Sprintf("%04o", fi.Mode)
		}
	}
	return le
}
