package core_test

import (
	"context"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
)

// TestGlobRepeatedDotSlash: a glob that starts with ./ more than once
// (././x, .//x) is the glob with one ./, as git's pathspec takes it
// (git ls-files ././x lists x) and as a path is cleaned, in every tool
// and field (grep's and replace's include and exclude, find's pattern and
// exclude). One ./ was taken off, the rest refused as a "." segment, and
// the message quoted the glob with one ./ less, ./x, which is valid.
func TestGlobRepeatedDotSlash(t *testing.T) {
	cases := []struct{ glob, same, path string }{
		{"././top.go", "./top.go", "."},
		{"./././top.go", "./top.go", "."},
		{".//top.go", "./top.go", "."},
		{".//.//top.go", "./top.go", "."},
		{"././*.go", "./*.go", "."},
		{"././src/*.go", "./src/*.go", "."},
		{"././**/src/*.go", "./**/src/*.go", "."},
		{"././**/src/*.go", "./**/src/*.go", "src"},
		{"././x/*.go", "./x/*.go", "src"},
		{"././src/main.go", "./src/main.go", "src"}, // INVALID_GLOB: it starts with the path
		{"././src/./x", "./src/./x", "."},           // INVALID_GLOB: a . segment inside
	}
	// answers are the files each tool and field gives for glob below
	// path, or the code of its error.
	answers := func(tl *core.Tools, glob, path string) map[string]string {
		ctx := context.Background()
		out := map[string]string{}
		record := func(what string, files []string, err error) {
			if err != nil {
				out[what] = "error " + string(fault.AsError(err).Code)
				return
			}
			sameFiles(t, "", files, files) // sorts
			out[what] = fmtFiles(files)
		}
		for _, field := range []string{"include", "exclude"} {
			req := core.GrepRequest{Query: "hello", Path: path, Mode: core.ModeFiles}
			if field == "include" {
				req.Include = core.Globs{glob}
			} else {
				req.Exclude = []string{glob}
			}
			g, err := tl.Grep(ctx, req)
			var got []string
			if err == nil {
				for _, f := range g.Files {
					got = append(got, f.Path)
				}
			}
			record("grep --"+field, got, err)
			dry := ""
			rreq := core.ReplaceRequest{Query: "hello", Replacement: &dry, Path: path, DryRun: true, Include: req.Include, Exclude: req.Exclude}
			r, err := tl.Replace(ctx, rreq)
			got = nil
			if err == nil {
				for _, f := range r.Files {
					got = append(got, f.Path)
				}
			}
			record("replace --"+field, got, err)
		}
		for _, req := range []core.FindRequest{{Pattern: glob, Path: path, Type: "file"}, {Path: path, Type: "file", Exclude: []string{glob}}} {
			res, err := tl.Find(ctx, req)
			var got []string
			if err == nil {
				for _, e := range res.Results {
					got = append(got, e.Path)
				}
			}
			what := "find pattern"
			if req.Pattern == "" {
				what = "find --exclude"
			}
			record(what, got, err)
		}
		return out
	}
	for name, tl := range globTreeTools(t) {
		t.Run(name, func(t *testing.T) {
			for _, c := range cases {
				got, want := answers(tl, c.glob, c.path), answers(tl, c.same, c.path)
				for what, w := range want {
					if got[what] != w {
						t.Errorf("%s %s below %s: %s, want %s (as %s)", what, c.glob, c.path, got[what], w, c.same)
					}
				}
			}
		})
	}
}

func fmtFiles(files []string) string {
	s := "["
	for i, f := range files {
		if i > 0 {
			s += " "
		}
		s += f
	}
	return s + "]"
}
