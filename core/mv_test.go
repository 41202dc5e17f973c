package core

import (
	"context"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// withoutRename hides the Renamer capability, of a backend with
// transactions only: mv then copies and removes a file in one transaction.
type withoutRename struct {
	backend.MutableFS
	backend.Transactor
}

// mv moves by rename where the backend renames, and by a transaction of a
// copy and a removal where it does not; a directory then cannot move.
func TestMvWithAndWithoutRename(t *testing.T) {
	ctx := context.Background()
	for _, renames := range []bool{true, false} {
		m := memfs.New(map[string]string{"a": "alpha", "b": "bravo", "d/x": "x"})
		var fs backend.FS = m
		if !renames {
			fs = withoutRename{m, m}
		}
		tl := &Tools{FS: fs}
		if _, err := tl.Mv(ctx, MvRequest{From: "a", To: "b"}); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeExists {
			t.Errorf("renames %v: a move over a file without overwrite: %v", renames, err)
		}
		res, err := tl.Mv(ctx, MvRequest{From: "a", To: "b", Overwrite: true})
		if err != nil || !res.Overwritten || fileText(m, "b") != "alpha" || fileText(m, "a") != "<missing>" {
			t.Errorf("renames %v: %+v, %v; b is %q", renames, res, err, fileText(m, "b"))
		}
		_, err = tl.Mv(ctx, MvRequest{From: "d", To: "e"})
		if renames && (err != nil || fileText(m, "e/x") != "x") {
			t.Errorf("a directory's rename: %v", err)
		}
		if !renames && (fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeNotSupported || fileText(m, "d/x") != "x") {
			t.Errorf("a directory without rename: %v", err)
		}
	}
}
