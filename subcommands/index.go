package subcommands

import (
	"errors"
	"fmt"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/index"
	"github.com/agentfs/agentfs/localfs"
	"github.com/urfave/cli/v2"
)

// indexResult is what agentfs index prints.
type indexResult struct {
	Path string `json:"path"`
	// Dropped is set by --drop.
	Dropped bool `json:"dropped,omitempty"`
	*index.Status
	// AgeSeconds is how long ago the index was built.
	AgeSeconds *float64 `json:"ageSeconds,omitempty"`
	// BuildSeconds is how long the build took.
	BuildSeconds *float64 `json:"buildSeconds,omitempty"`
}

// indexCommand is CLI-only, as batch is, not a tool a model calls: it is
// set-up work on the state directory that grep uses unasked, and a model
// gains nothing by deciding when to run it.
func indexCommand() subcommand {
	return fixed{&cli.Command{
		Name:      "index",
		Usage:     "build or update the trigram index of a directory that grep uses, or with --status describe it, with --drop remove it, with --watch keep it proven fresh",
		ArgsUsage: "[PATH]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "status", Usage: "describe the index (files, bytes, age, size) instead of building it"},
			&cli.BoolFlag{Name: "drop", Usage: "remove the index instead of building it"},
			&cli.BoolFlag{Name: "watch", Usage: "after building, keep running and watch the tree (Linux inotify), so that a search checks only what changed"},
		},
		Action: runIndex,
	}}
}

func runIndex(c *cli.Context) error {
	if c.NArg() > 1 {
		return fault.InvalidArgument("index takes one directory, not %d.", c.NArg()).WithHint("index one tree at a time")
	}
	if n := countTrue(c.Bool("status"), c.Bool("drop"), c.Bool("watch")); n > 1 {
		return fault.InvalidArgument("more than one of --status, --drop and --watch is given.").WithHint("give one of them")
	}
	path := c.Args().First()
	if path == "" {
		path = "."
	}
	if !c.Bool("status") && !c.Bool("drop") {
		// The state directory the build writes into exists before the
		// backend opens, which records it (a deny) by its identity: the
		// searches after the build find it as the build did.
		if _, err := localfs.StateDir(); err != nil {
			return err
		}
	}
	tl, err := tools(c)
	if err != nil {
		return err
	}
	info, err := tl.FS.Stat(c.Context, path)
	if err != nil {
		return err
	}
	if info.Type != backend.TypeDir {
		return fault.Errorf(fault.CodeNotADirectory, "the path is a file, not a directory.").WithPath(tl.FS.Display(path)).
			WithHint("index the directory that holds it")
	}
	// Only a local tree is indexed; in a mixed workspace, the local member
	// takes the workspace's spelling of its paths (mixfs.Member).
	owner := backend.At(tl.FS, path)
	placer, ok := owner.(interface{ Abs(string) string })
	w, walks := owner.(backend.Walker)
	if !ok || !walks {
		return fault.Errorf(fault.CodeNotConfigured, "this backend cannot be indexed.").WithHint("index a local directory")
	}
	abs := placer.Abs(path)
	res := indexResult{Path: tl.FS.Display(path)}
	var roots []string
	if r, ok := owner.(interface{ Roots() []string }); ok {
		roots = r.Roots()
	}
	switch {
	case c.Bool("status"):
		st, err := index.StatusOf(abs, roots)
		if err != nil {
			return indexErr(err, res.Path)
		}
		age := time.Since(st.Built).Seconds()
		res.Status, res.AgeSeconds = &st, &age
	case c.Bool("drop"):
		if err := index.Drop(c.Context, abs, roots, c.Duration("lock-timeout")); err != nil {
			return indexErr(err, res.Path)
		}
		res.Dropped = true
	default:
		opts := index.BuildOptions{LockTimeout: c.Duration("lock-timeout")}
		if fp, ok := owner.(interface {
			Fingerprint() string
			WalkView(string) (string, bool, error)
		}); ok {
			opts.Config, opts.Roots, opts.View = fp.Fingerprint(), roots, fp.WalkView
		}
		stderr := streamsOf(c).Stderr
		if isTerminal(stderr) {
			last := time.Now()
			opts.Progress = func(files int, bytes int64) {
				if time.Since(last) > 200*time.Millisecond {
					last = time.Now()
					fmt.Fprintf(stderr, "\rindexing: %d files, %d MB", files, bytes>>20)
				}
			}
			defer fmt.Fprint(stderr, "\r\033[K")
		}
		start := time.Now()
		if c.Bool("watch") {
			return watchIndex(c, w, path, abs, opts, res, start)
		}
		st, err := index.Build(c.Context, w, path, abs, opts)
		if err != nil {
			return indexErr(err, res.Path)
		}
		took := time.Since(start).Seconds()
		res.Status, res.BuildSeconds = &st, &took
	}
	return outputOf(c).result(res)
}

// watchIndex builds the index and keeps it proven fresh until the call
// is interrupted, which ends it with exit status 0, as serve ends: the
// result is printed once the watcher answers searches.
func watchIndex(c *cli.Context, w backend.Walker, path, abs string, opts index.BuildOptions, res indexResult, start time.Time) error {
	var printErr error
	err := index.Watch(c.Context, w, path, abs, index.WatchOptions{BuildOptions: opts, Ready: func(st index.Status) {
		took := time.Since(start).Seconds()
		st.Watched = true
		res.Status, res.BuildSeconds = &st, &took
		printErr = outputOf(c).result(res)
	}})
	if err != nil {
		return indexErr(err, res.Path)
	}
	return printErr
}

// countTrue counts the true values.
func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// indexErr gives an index error its stable code and a hint.
func indexErr(err error, path string) error {
	var fe *fault.Error
	var unusable index.UnusableError
	var covered index.CoveredError
	switch {
	case errors.As(err, &fe):
		if fe.Path == "" {
			fe = fe.WithPath(path)
		}
		return fe
	case index.IsNoIndex(err):
		return fault.Errorf(fault.CodeNotFound, "no index covers this directory.").WithPath(path).
			WithHint("build one with agentfs index %s", path)
	case errors.As(err, &covered):
		return fault.Errorf(fault.CodeNotFound, "this directory has no index of its own: the index of %s covers it, and its searches use that one.", covered.Root).WithPath(path).
			WithHint("drop that index with agentfs index --drop %s", covered.Root)
	case errors.As(err, &unusable):
		return fault.Errorf(fault.CodeNotFound, "no usable index covers this directory (%s).", unusable.Reason).WithPath(path).
			WithHint("rebuild it with agentfs index %s; searches read every file until then", path)
	case errors.Is(err, index.ErrTreeReplaced):
		return fault.Errorf(fault.CodeStale, "the directory was removed or replaced since agentfs opened it: nothing was indexed.").WithPath(path).
			WithHint("cd into the directory now at that path (a shell inside a removed one holds the old), then run agentfs index again")
	case errors.Is(err, index.ErrLocked):
		return fault.Errorf(fault.CodeLockTimeout, "another agentfs index of this directory is running.").WithPath(path).
			WithHint("wait for it, or raise --lock-timeout")
	}
	return fault.Errorf(fault.CodeIOError, "the index failed: %s.", err).WithPath(path).WithCause(err).
		WithHint("check that the state directory is writable (set AGENTFS_STATE_DIR)")
}
