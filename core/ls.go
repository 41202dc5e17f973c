package core

import (
	"context"
	"encoding/json"
)

// LsRequest lists one directory.
type LsRequest struct {
	Path   string `json:"path" arg:"0" alias:"file_path,dir_path" help:"directory to list (default: the current directory)"`
	Limit  int    `json:"limit,omitempty" help:"entries per page (default 200, max 1000)"`
	Offset int    `json:"offset,omitempty" help:"entries to skip (pass the previous nextOffset)"`
}

// LsEntry is one directory entry; links are described, never followed.
type LsEntry struct {
	Name           string `json:"name"`
	NameBase64     string `json:"nameBase64,omitempty"`
	Size           int64  `json:"size"`
	Mtime          int64  `json:"mtime"`
	IsFile         bool   `json:"isFile"`
	IsDirectory    bool   `json:"isDirectory"`
	IsSymbolicLink bool   `json:"isSymbolicLink"`
}

// LsResult is one page of a listing. Truncated is set when the byte bound
// cut the page short of limit; nextOffset then continues exactly there.
type LsResult struct {
	Path       string    `json:"path"`
	PathBase64 string    `json:"pathBase64,omitempty"`
	Count      int       `json:"count"`
	Total      int       `json:"total"`
	Entries    []LsEntry `json:"entries"`
	Truncated  bool      `json:"truncated,omitempty"`
	NextOffset *int      `json:"nextOffset,omitempty"`
}

// Ls defaults and caps from the reference.
const (
	LsDefaultLimit = 200
	LsMaxLimit     = 1000
)

// Ls lists entries [offset, offset+limit) of a directory in name order,
// bounded in bytes as well as entries.
func (t *Tools) Ls(ctx context.Context, req LsRequest) (*LsResult, error) {
	limit, err := PageWindow(req.Offset, req.Limit, LsDefaultLimit, LsMaxLimit)
	if err != nil {
		return nil, err
	}
	path := req.Path
	if path == "" {
		path = "."
	}
	page, err := t.FS.ReadDir(ctx, path, req.Offset, limit)
	if err != nil {
		return nil, err
	}
	res := &LsResult{Entries: []LsEntry{}, Total: page.Total}
	res.Path, res.PathBase64 = PathText(t.FS.Display(path))
	budget := t.maxBytes() - 512
	for _, fi := range page.Entries {
		e := LsEntry{
			Size:           fi.Size,
			Mtime:          fi.ModTime.UnixMilli(),
			IsFile:         fi.Type == TypeFile,
			IsDirectory:    fi.Type == TypeDir,
			IsSymbolicLink: fi.Type == TypeSymlink,
		}
		e.Name, e.NameBase64 = PathText(fi.Name)
		b, _ := json.Marshal(e)
		if budget -= len(b) + 1; budget < 0 && len(res.Entries) > 0 {
			res.Truncated = true
			break
		}
		res.Entries = append(res.Entries, e)
	}
	res.Count = len(res.Entries)
	if next := req.Offset + res.Count; next < page.Total {
		res.NextOffset = &next
	}
	return res, nil
}
