package registry

import (
	"context"

	"github.com/agentfs/agentfs/core"
)

// Read reads a window of a text file, or an image or PDF.
var Read = &Def[core.ReadRequest, *core.ReadResult]{
	Name: "read",
	Description: "Read a window of whole lines of a text file, or an image or PDF as base64 data. " +
		"A window holds at most 2000 lines and fits the result's byte bound. " +
		"Returns content with startLine, endLine and totalLines; when the window stops before the end (truncated), " +
		"pass nextOffset as offset and nextByteOffset as byteOffset to read on. A negative offset reads the last lines, as tail does. " +
		"Lines longer than 2000 characters are cut with a marker (linesCut counts them); never write such content back. " +
		"version and sha256 go to a later write, edit or rm as expectedVersion or expectedSha256. " +
		"Use it instead of cat, head or tail; read a file before editing it.",
	Run: func(ctx context.Context, t *core.Tools, req *core.ReadRequest) (*core.ReadResult, error) {
		return t.Read(ctx, *req)
	},
	Text:       readText,
	Untextable: readUntextable,
}

// Ls lists a directory, or a bounded tree.
var Ls = &Def[core.LsRequest, *core.LsResult]{
	Name: "ls",
	Description: "List a directory, or a tree of it a few levels deep, a page at a time. " +
		"Entries come in walk order, each directory's in name order. " +
		"Returns entries, each with name, size and type (left out for a regular file), a link's target, " +
		"path below the directory when depth is over 1, mtime and mode when long is true; " +
		"entries that ignore files leave out are listed with ignored: true. " +
		"When there are more, pass nextCursor as cursor to continue. " +
		"Use it to see what a directory holds; use find to search a whole tree by name.",
	Run: func(ctx context.Context, t *core.Tools, req *core.LsRequest) (*core.LsResult, error) {
		return t.Ls(ctx, *req)
	},
	Text: lsNotes,
}

// Find finds paths by glob.
var Find = &Def[core.FindRequest, *core.FindResult]{
	Name: "find",
	Description: "Find paths by glob below a directory, a page at a time. " +
		"Paths that ignore files (.gitignore, .ignore, .agentfsignore) name are left out, and so is .git. " +
		"A pattern without a slash matches names at any depth (*_test.go), one with a slash the path below the directory (cmd/*/main.go). " +
		"Returns results, each a path with its type (left out for a regular file), in walk order; " +
		"when there are more, pass nextCursor as cursor to continue. " +
		"Use it to locate files by name; use grep to search their contents.",
	Run: func(ctx context.Context, t *core.Tools, req *core.FindRequest) (*core.FindResult, error) {
		return t.Find(ctx, *req)
	},
	Text: findNotes,
}

// Grep searches file contents.
var Grep = &Def[core.GrepRequest, *core.GrepResult]{
	Name: "grep",
	Description: "Search file contents below a path for a fixed string or a regular expression, a page at a time. " +
		"Files that ignore files (.gitignore, .ignore, .agentfsignore) name are skipped, as rg skips them, and so are binary files. " +
		"Returns files, each with its path and blocks of consecutive lines (start, lines, and with context the matching line numbers); " +
		"with mode files only the paths, with mode count the counts and totals. " +
		"When there are more, pass nextCursor as cursor to continue; timedOut says the page is partial. " +
		"Use it instead of grep or rg to find where something is used or defined.",
	Run: func(ctx context.Context, t *core.Tools, req *core.GrepRequest) (*core.GrepResult, error) {
		return t.Grep(ctx, *req)
	},
	Text: grepText,
}

// Write replaces or creates a whole file.
var Write = &Def[core.WriteRequest, *core.WriteResult]{
	Name: "write",
	Description: "Create or replace a whole file atomically (at most 2 MiB), creating missing parent directories. " +
		"An existing text file keeps its line endings, byte-order mark and UTF-16 encoding; " +
		"to write back a file read with encoding, give write the same encoding. " +
		"Returns bytesWritten, created, noChange (the file already had this content), version and sha256. " +
		"Use edit to change part of an existing file; give expectedVersion from a read so that a change you have not seen is never overwritten (STALE).",
	Mutates: true,
	Run: func(ctx context.Context, t *core.Tools, req *core.WriteRequest) (*core.WriteResult, error) {
		return t.Write(ctx, *req)
	},
	Text: dataOnly(writeText),
}

// Edit replaces text in a file.
var Edit = &Def[core.EditRequest, *core.EditResult]{
	Name: "edit",
	Description: "Replace exact text in a file, one edit or a batch applied all or nothing. " +
		"Give oldText and newText, or edits, each matched against the original content; " +
		"each oldText must match exactly one place unless replaceAll, and differences of trailing whitespace, indentation and typography are tolerated and reported. " +
		"Returns a unified diff, each edit's outcome, version and sha256. " +
		"Use it for changes to part of a file, with oldText copied from a read. A retried edit is reported alreadyApplied, not repeated, when its newText stands whole where it put it; one that only adds text within a line, or lines too slight to tell (a blank line, a lone brace), applies again.",
	Mutates: true,
	Run: func(ctx context.Context, t *core.Tools, req *core.EditRequest) (*core.EditResult, error) {
		return t.Edit(ctx, *req)
	},
	Text: dataOnly(editText),
}

// Rm removes a file, a link or a directory.
var Rm = &Def[core.RmRequest, *core.RmResult]{
	Name: "rm",
	Description: "Remove a file, a link (never its target) or, with recursive, a directory and everything in it. " +
		"A missing path is not an error: deleted is false. Returns deleted.",
	Mutates:    true,
	Idempotent: true,
	Run: func(ctx context.Context, t *core.Tools, req *core.RmRequest) (*core.RmResult, error) {
		return t.Rm(ctx, *req)
	},
	Text: dataOnly(rmText),
}

// ApplyPatch applies a multi-file patch, all or nothing.
var ApplyPatch = &Def[core.ApplyPatchRequest, *core.ApplyPatchResult]{
	Name: "apply-patch",
	Description: "Apply a patch in the apply_patch format (*** Begin Patch, *** Add File:, *** Delete File:, *** Update File: with *** Move to: and @@ chunks of context, - and + lines, *** End Patch) to several files, all or nothing. " +
		"Every chunk is located in its file, tolerating differences of trailing whitespace, indentation and typography, before anything is written; " +
		"then every change is committed at once, and an interrupted commit is undone. Line endings, byte-order marks and modes are kept. " +
		"Returns files, each with path, action (add, update, delete or move, with from), and but for a delete a unified diff and the new version. " +
		"Use it for changes that span files; use edit for one file.",
	Mutates: true,
	Run: func(ctx context.Context, t *core.Tools, req *core.ApplyPatchRequest) (*core.ApplyPatchResult, error) {
		return t.ApplyPatch(ctx, *req)
	},
	Text: dataOnly(applyPatchText),
}

// Mv moves a file, a link or a directory.
var Mv = &Def[core.MvRequest, *core.MvResult]{
	Name: "mv",
	Description: "Move or rename a file, a link (never its target) or a whole directory within the workspace, in one atomic step, creating missing parent directories. " +
		"to is the new path itself: unlike mv, it never moves into a directory (name dir/NAME). " +
		"An existing destination is refused (EXISTS) unless overwrite, which replaces a file or an empty directory. " +
		"Returns path (the new place), from, overwritten, and a file's version where it went (for the next change's expectedVersion). " +
		"Use it instead of mv; to change a file's content use write, edit or apply-patch.",
	Mutates: true,
	Run: func(ctx context.Context, t *core.Tools, req *core.MvRequest) (*core.MvResult, error) {
		return t.Mv(ctx, *req)
	},
	Text: dataOnly(mvText),
}

// Replace replaces a query in many files at once.
var Replace = &Def[core.ReplaceRequest, *core.ReplaceResult]{
	Name: "replace",
	Description: "Replace every match of a fixed string or regular expression in every file below a path, as one all-or-nothing change: sed -i over a tree, done safely. " +
		"Ignore files are honoured and binary files skipped (binaryMatches names those that grep shows a match in, left unchanged); word matches whole words only; with regex, $1 and ${name} in the replacement are the groups. " +
		"Line endings, byte-order marks and modes are kept. expectedCount, when given, must equal the number of matches or nothing changes. " +
		"A dryRun returns a plan token; passed back as expectedPlan, the replace makes exactly the change the dry run showed, or nothing (STALE: a file changed since). " +
		"Returns replacements and filesChanged, and each file's count and diff (not with expectedPlan: diffsInDryRun, the dry run showed them). " +
		"Use dryRun first to see what would change; use edit for a change in one place.",
	Mutates: true,
	Run: func(ctx context.Context, t *core.Tools, req *core.ReplaceRequest) (*core.ReplaceResult, error) {
		return t.Replace(ctx, *req)
	},
	Text: replaceText,
}

// Publish publishes a file as an expiring link.
var Publish = &Def[core.PublishRequest, *core.PublishResult]{
	Name: "publish",
	Description: "Publish a workspace file (a report, a plot, a build artifact) as a link a person can open, which expires (after an hour unless expiresIn says otherwise). " +
		"The file is copied to the configured assets target, a local folder served by agentfs serve or an S3-compatible bucket, unchanged. " +
		"Returns url, expiresAt, sha256, size and mimeType. " +
		"Use it to hand a generated file to a person; use read to look at a file yourself.",
	Mutates:   true,
	Additive:  true,
	OpenWorld: true,
	Run: func(ctx context.Context, t *core.Tools, req *core.PublishRequest) (*core.PublishResult, error) {
		return t.Publish(ctx, *req)
	},
	Text: publishText,
}
