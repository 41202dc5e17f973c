// Package backend is the file-system contract between the tools (package
// core) and where files live: the local directory (localfs), memory
// (memfs), an object store (s3fs), or several of them in one workspace
// (mixfs, a Mixed). A backend answers reads, listings and walks,
// and replaces or removes files atomically with compare-and-swap
// preconditions; locks and transactions are optional capabilities. It
// depends on nothing of agentfs but fault, so a backend never imports the
// tools.
package backend
