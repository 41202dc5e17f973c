// Package patch is the pure half of apply-patch: it parses the patch format
// of OpenAI Codex's apply_patch tool and plans its changes in memory.
//
// It touches no file system. Parse turns the patch text into a Patch, and
// Plan computes every resulting file from contents its caller reads,
// verifying every chunk before it returns anything. The tool in core then
// only reads the files, plans, and commits the changes as one transaction:
// a patch is applied whole or not at all, and the grammar and the matching
// are tested here on strings, without a disk.
package patch
