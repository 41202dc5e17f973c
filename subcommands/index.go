package subcommands

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/index"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/s3fs"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"
)

// indexResult is what agentfs index prints.
type indexResult struct {
	// Path is the directory as JSON prints it, PathBase64 its bytes when
	// they are not UTF-8; dir is the directory itself, which errors name.
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
	dir        string
	// Dropped is set by --drop.
	Dropped bool `json:"dropped,omitempty"`
	*index.Status
	// AgeSeconds is how long ago the index was built.
	AgeSeconds *float64 `json:"ageSeconds,omitempty"`
	// BuildSeconds is how long the build took.
	BuildSeconds *float64 `json:"buildSeconds,omitempty"`
	// WatcherStopped says that --drop ended the index's watcher.
	WatcherStopped bool `json:"watcherStopped,omitempty"`
	// Swept is how many index files the build removed from the state
	// directory: of trees gone or replaced, or unreadable (index.Sweep).
	Swept int `json:"swept,omitempty"`
	// AlreadyWatched says that --detach found a watcher answering for
	// the index, and left it to keep the index fresh.
	AlreadyWatched bool `json:"alreadyWatched,omitempty"`
	// starting says that the result is a new watcher's, which ends when
	// the result cannot be written.
	starting bool
}

// describe sets the index's description and its age.
func (r *indexResult) describe(st index.Status) {
	age := time.Since(st.Built).Seconds()
	r.Status, r.AgeSeconds = &st, &age
}

// detachedIdle is how long a watcher started by --detach waits for a
// search before it ends, unless --idle says otherwise.
const detachedIdle = 30 * time.Minute

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
			&cli.BoolFlag{Name: "detach", Usage: "as --watch, with the watcher in the background: exit once it answers searches (or at once when one already does)"},
			&cli.DurationFlag{Name: "idle", Usage: "with --watch or --detach, end the watcher once no search has asked it for this long (0: never; --detach's default is 30m)"},
		},
		Action: runIndex,
	}}
}

func runIndex(c *cli.Context) error {
	if c.NArg() > 1 {
		return fault.InvalidArgument("index takes one directory, not %d.", c.NArg()).WithHint("index one tree at a time")
	}
	if err := refusePaging(c, "index", false, false); err != nil {
		return err
	}
	watch := c.Bool("watch") || c.Bool("detach")
	if n := countTrue(c.Bool("status"), c.Bool("drop"), watch); n > 1 {
		return fault.InvalidArgument("more than one of --status, --drop and --watch (or --detach) is given.").WithHint("give one of them")
	}
	switch idle := c.Duration("idle"); {
	case c.IsSet("idle") && !watch:
		return fault.InvalidArgument("--idle is for a watcher.").WithHint("give it with --watch or --detach")
	case idle < 0:
		return fault.InvalidArgument("--idle %s is negative.", cmp.Or(givenText(c, "idle"), idle.String())).WithHint("give a duration such as 30m, or 0 for never")
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
	t, err := indexTargetOf(c, tl, path)
	if err != nil {
		return err
	}
	abs, roots := t.abs, t.roots
	res := indexResult{dir: tl.FS.Display(path)}
	res.Path, res.PathBase64 = fault.PathText(res.dir)
	if watch && t.opts.Config != "" && t.config != t.opts.Config {
		// Such a build's list serves no search (see index.BuildOptions.View):
		// a watcher of it would keep nothing fast.
		real, _ := filepath.EvalSymlinks(abs)
		return fault.InvalidArgument("the directory is reached through a link: a watcher of it would serve no search.").WithPath(res.dir).
			WithHint("give its real path, %s", real)
	}
	switch {
	case c.Bool("status"):
		st, err := index.StatusOf(abs, roots)
		if err != nil {
			return indexErr(err, res.dir)
		}
		st.BuiltUnder(t.config)
		res.describe(st)
	case c.Bool("drop"):
		stopped, err := index.Drop(c.Context, abs, roots, c.Duration("lock-timeout"))
		if err != nil {
			return indexErr(err, res.dir)
		}
		res.Dropped, res.WatcherStopped = true, stopped
	case c.Bool("detach") && !isDetachedWatcher():
		st, ok, err := index.WatchedStatus(c.Context, abs, t.config)
		if err != nil {
			return indexErr(runAgain(err, "index --detach", res.dir), res.dir)
		}
		if ok {
			res.describe(st)
			res.AlreadyWatched = true
			break
		}
		return startDetached(c)
	default:
		var endProgress func()
		t.opts.Progress, endProgress = buildProgress(streamsOf(c).Stderr)
		defer endProgress() // before an error is printed
		start := time.Now()
		if watch {
			return watchIndex(c, t, res, start, endProgress)
		}
		st, err := index.Build(c.Context, t.walker, path, abs, t.opts)
		endProgress()
		if err != nil {
			return indexErr(runAgain(err, "index", res.dir), res.dir)
		}
		took := time.Since(start).Seconds()
		res.Status, res.BuildSeconds = &st, &took
		res.Swept = index.Sweep()
	}
	return res.print(c)
}

// print writes the result. One over --max-bytes (a path near PATH_MAX)
// is TOO_LARGE as any answer, but the work is done: the error says so,
// so that the caller does not take the index as unbuilt or undropped.
func (r indexResult) print(c *cli.Context) error {
	err := outputOf(c).result(r)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.CodeTooLarge {
		return err
	}
	done := "the index is built"
	switch {
	case r.Dropped:
		done = "the index is dropped"
	case r.Status != nil && r.BuildSeconds == nil:
		done = "the index is unchanged"
	case r.starting:
		done = "the index is built, and its watcher stopped with this error"
	}
	// The seconds are as long as they come: the need holds them at their
	// longest (a rerun at the need failed about 1 time in 8).
	longest := -1.2345678901234567e-300
	worst := r
	for _, f := range []**float64{&worst.AgeSeconds, &worst.BuildSeconds} {
		if *f != nil {
			*f = &longest
		}
	}
	if worst.Status != nil && worst.Status.WatcherIdle != nil {
		st := *worst.Status
		st.WatcherIdle = &longest
		worst.Status = &st
	}
	needed := fe.Details["needed"]
	if b, err := compactJSON(worst); err == nil {
		needed = len(b) + 1
		fe.Message = fmt.Sprintf("the result is up to %d bytes, over --max-bytes %d.", needed, outputOf(c).maxBytes)
	}
	return fe.WithDetail("done", true).WithDetail("needed", needed).WithHint("%s; raise --max-bytes to %d to read its description", done, needed)
}

// watchIndex builds the index and keeps it proven fresh until the call
// is interrupted, which ends it with exit status 0, as serve ends, or
// until it is idle (--idle) or dropped: the result is printed once the
// watcher answers searches. A result that cannot be written (a closed
// pipe) ends the watcher with that error: nothing runs unreported.
func watchIndex(c *cli.Context, t indexTarget, res indexResult, start time.Time, endProgress func()) error {
	idle := c.Duration("idle")
	if c.Bool("detach") && !c.IsSet("idle") {
		idle = detachedIdle
	}
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	var printErr error
	cmd := "index --watch"
	if c.Bool("detach") {
		cmd = "index --detach"
	}
	faultOf := func(err error) error { return indexErr(runAgain(err, cmd, res.dir), res.dir) }
	err := index.Watch(ctx, t.walker, t.path, t.abs, index.WatchOptions{BuildOptions: t.opts, Idle: idle, Fault: faultOf, Ready: func(st index.Status) {
		endProgress() // the watcher's builds again are not shown: the result follows the first
		took := time.Since(start).Seconds()
		res.Status, res.BuildSeconds, res.starting = &st, &took, true
		res.Swept = index.Sweep()
		if printErr = res.print(c); printErr != nil {
			cancel()
			return
		}
		if c.Bool("detach") {
			releaseParent()
		}
	}})
	if printErr != nil {
		return printErr
	}
	var fe *fault.Error
	if c.Bool("detach") && errors.As(err, &fe) && fe.Code == fault.CodeExists {
		// Another --detach of the tree won the race, or the watcher was
		// installing a build when asked: wait for it, as for a lock.
		st, ok, werr := awaitWatcher(c.Context, t.abs, t.config, true, watcherAnswerPoll, c.Duration("lock-timeout"))
		if werr != nil {
			return indexErr(runAgain(werr, cmd, res.dir), res.dir)
		}
		if ok {
			res.describe(st)
			res.AlreadyWatched = true
			return res.print(c)
		}
	}
	if err != nil {
		return indexErr(runAgain(err, cmd, res.dir), res.dir)
	}
	return nil
}

// runAgain names, in the hint of a watcher's EXISTS under other settings,
// the command to run once it is dropped: agentfs cmd, the one the caller
// ran; in that of a watcher already serving the directory dir, the
// command that stops it.
func runAgain(err error, cmd, dir string) error {
	var fe *fault.Error
	switch {
	case !errors.As(err, &fe):
	case errors.Is(err, index.ErrOtherSettings):
		return fe.WithHint("drop it with agentfs index --drop, then run agentfs %s again", cmd)
	case errors.Is(err, index.ErrWatched):
		pid, _ := fe.Details["watcherPid"].(int)
		return fe.WithHint("%s", index.WatchedHint(pid, dir))
	case errors.Is(err, index.ErrOtherVersionWatcher):
		pid, _ := fe.Details["watcherPid"].(int)
		return fe.WithHint("stop it with agentfs index --drop %s (or kill %d), then run agentfs %s %s again", dir, pid, cmd, dir)
	}
	return err
}

// awaitWatcher asks every so often, up to timeout, whether a watcher
// answers for the index of the directory at abs (see
// index.WatchedStatus), until the answer is answering; the last answer,
// and ok when it came to be so in time.
func awaitWatcher(ctx context.Context, abs, config string, answering bool, every, timeout time.Duration) (st index.Status, ok bool, err error) {
	deadline := time.Now().Add(timeout)
	for {
		st, watched, err := index.WatchedStatus(ctx, abs, config)
		if watched == answering || err != nil {
			return st, ctx.Err() == nil, err
		}
		if time.Now().After(deadline) {
			return st, false, nil
		}
		select {
		case <-ctx.Done():
			return st, false, nil
		case <-time.After(every):
		}
	}
}

// watchRoots keeps the index of each local root proven fresh while the
// call serves (mcp --watch): the watchers build in the background, and
// the searches meanwhile prove freshness by the stat pass, as after a
// watcher's failure, which is noted on stderr (one already watching a
// root serves it instead, noted only when under other settings). stop
// ends them and waits.
func watchRoots(c *cli.Context, tl *core.Tools) (stop func(), err error) {
	var targets []indexTarget
	var paths []string
	roots := pathsOf(c, "root")
	for _, r := range roots {
		if strings.HasPrefix(r, s3fs.Scheme) {
			continue
		}
		if r, err = filepath.Abs(r); err != nil {
			return nil, err
		}
		paths = append(paths, r)
	}
	if len(roots) == 0 {
		paths = []string{"."}
	}
	o := outputOf(c)
	for _, p := range paths {
		t, err := indexTargetOf(c, tl, p)
		if err != nil {
			o.note(fault.AsError(err)) // a root that cannot be indexed is searched without
			continue
		}
		targets = append(targets, t)
	}
	ctx, cancel := context.WithCancel(c.Context)
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Go(func() {
			for {
				display := tl.FS.Display(t.path)
				err := index.Watch(ctx, t.walker, t.path, t.abs, index.WatchOptions{BuildOptions: t.opts,
					Fault: func(err error) error { return indexErr(err, display) }})
				if err == nil || ctx.Err() != nil {
					return
				}
				e := fault.AsError(indexErr(err, display))
				if e.Code != fault.CodeExists && e.Code != fault.CodeLockTimeout {
					o.note(e)
					return
				}
				// Another watcher serves the root (or builds for it): said
				// only when it serves an index this session's searches
				// cannot use, which is known once it answers (one still
				// building does not). Once it ends (--idle, SIGTERM), this
				// session's own starts: relied on, the session was left
				// without one, and said nothing.
				if _, ok, werr := awaitWatcher(ctx, t.abs, t.config, true, watcherAnswerPoll, sessionLife); werr != nil {
					o.note(fault.AsError(indexErr(runAgain(werr, "mcp --watch", display), display)))
					return
				} else if !ok {
					return // the session ended first
				}
				if relyingHook != nil {
					relyingHook()
				}
				if _, gone, _ := awaitWatcher(ctx, t.abs, t.config, false, watcherGonePoll, sessionLife); !gone {
					return
				}
			}
		})
	}
	return func() {
		cancel()
		wg.Wait()
	}, nil
}

// relyingHook, when set (by tests), runs as an mcp session starts relying
// on another process's watcher of a root.
var relyingHook func()

// watcherAnswerPoll is how often a call waiting for a watcher to answer
// (one building) asks again.
const watcherAnswerPoll = 50 * time.Millisecond

// watcherGonePoll is how often an mcp session looks whether the watcher
// it relies on still answers, as a watcher looks at the rules files.
const watcherGonePoll = 2500 * time.Millisecond

// sessionLife bounds how long an mcp session waits for another watcher of
// a root to answer: in effect, as long as the session lasts.
const sessionLife = 24 * time.Hour

// indexTarget is a directory to index, as the backend reaches it.
type indexTarget struct {
	walker backend.Walker
	path   string // as the caller spelled it
	abs    string
	roots  []string
	opts   index.BuildOptions
	// config is the fingerprint its build records (opts.ConfigOf): only
	// the credentials when the path is spelled through a link.
	config string
}

// indexTargetOf checks that path is a local directory that can be indexed,
// and gives what a build of it takes.
func indexTargetOf(c *cli.Context, tl *core.Tools, path string) (indexTarget, error) {
	info, err := tl.FS.Stat(c.Context, path)
	if err != nil {
		return indexTarget{}, err
	}
	if info.Type != backend.TypeDir {
		// Named as it is (a FIFO or a device was "a file").
		return indexTarget{}, fault.Errorf(fault.CodeNotADirectory, "the path is a %s, not a directory.", info.Type.Noun()).WithPath(tl.FS.Display(path)).
			WithHint("index the directory that holds it")
	}
	// Only a local tree is indexed; in a mixed workspace, the local member
	// takes the workspace's spelling of its paths (mixfs.Member).
	owner := backend.At(tl.FS, path)
	placer, ok := owner.(interface{ Abs(string) string })
	w, walks := owner.(backend.Walker)
	if !ok || !walks {
		return indexTarget{}, fault.Errorf(fault.CodeNotSupported, "this backend cannot be indexed.").WithHint("index a local directory")
	}
	t := indexTarget{walker: w, path: path, abs: placer.Abs(path), opts: index.BuildOptions{LockTimeout: c.Duration("lock-timeout")}}
	if r, ok := owner.(interface{ Roots() []string }); ok {
		t.roots = r.Roots()
	}
	if fp, ok := owner.(interface {
		Fingerprint() string
		WalkView(string) (string, bool, error)
	}); ok {
		t.opts.Config, t.opts.Roots, t.opts.View = fp.Fingerprint(), t.roots, fp.WalkView
	}
	t.config = t.opts.ConfigOf(path)
	return t, nil
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
	case errors.As(err, &unusable) && unusable.WatcherPid != 0:
		return fault.Errorf(fault.CodeNotFound, "no usable index covers this directory (%s), and a watcher of that version (pid %d) runs for it: it builds the index again in its own format over any this version builds.", unusable.Reason, unusable.WatcherPid).WithPath(path).
			WithDetail("watcherPid", unusable.WatcherPid).
			WithHint("stop it with agentfs index --drop %s (or kill %d), then build it with agentfs index %s; searches read every file until then", path, unusable.WatcherPid, path)
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
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// The tree went (removed, renamed) under a build or a watcher.
		return fault.Errorf(fault.CodeNotFound, "the index failed: %s.", err).WithPath(path).WithCause(err).
			WithHint("the directory, or one in it, is gone; run agentfs index again once it is back")
	case errors.Is(err, index.ErrWatchLimit):
		return fault.Errorf(fault.CodeIOError, "the watcher failed: %s.", err).WithPath(path).WithCause(err).
			WithHint("raise fs.inotify.max_user_watches (sysctl), or end other watchers; the index is built, and searches prove its freshness without a watcher")
	case errors.Is(err, index.ErrWatchInstances):
		return fault.Errorf(fault.CodeIOError, "the index failed: %s.", err).WithPath(path).WithCause(err).
			WithHint("raise fs.inotify.max_user_instances (sysctl), or end other watchers; searches prove freshness without one meanwhile")
	}
	// The rest failed where the build writes: in the state directory.
	code, hint := localfs.StateDirFault(err)
	return fault.Errorf(code, "the index failed: %s.", err).WithPath(path).WithCause(err).WithHint("%s", hint)
}

// detachedEnv marks the watcher that index --detach starts: the same
// command, which once its result is printed lets go of its parent. Its
// value is the inode of the pipe the parent gave as descriptor 3, so that
// the variable set by hand, or inherited, is not taken for it.
const detachedEnv = "AGENTFS_DETACHED_WATCHER"

// startDetached runs this invocation again as a watcher in a session of
// its own, and answers as it does: with its result once it answers
// searches (then exit 0, the watcher left running), or with its error and
// exit status when it ends before that. Its output reaches the caller
// through pipes that it lets go of when ready, and it inherits no other
// descriptor, so a caller reading to end of file (a shell tool, $(...))
// is not held by the watcher, nor a lock the caller holds.
func startDetached(c *cli.Context) error {
	exe := "/proc/self/exe" // this very binary, even if replaced on disk since
	if _, err := os.Stat(exe); err != nil {
		if exe, err = os.Executable(); err != nil {
			return fault.Errorf(fault.CodeIOError, "cannot find the agentfs binary to start the watcher: %s.", err).
				WithHint("run agentfs index --watch in the background instead")
		}
	}
	if err := closeOnExec(); err != nil {
		return fault.Errorf(fault.CodeIOError, "cannot keep the caller's descriptors from the watcher: %s.", err).WithCause(err).
			WithHint("run agentfs index --watch in the background instead")
	}
	var pipes [3]struct{ r, w *os.File }
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			return fault.Errorf(fault.CodeIOError, "cannot start the watcher: %s.", err).WithCause(err).
				WithHint("raise the limit on open files (ulimit -n) and retry")
		}
		defer r.Close()
		defer w.Close() // the parent's copy: closed once the watcher has its own
		pipes[i].r, pipes[i].w = r, w
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(pipes[2].w.Fd()), &st); err != nil {
		return fault.Errorf(fault.CodeIOError, "cannot start the watcher: %s.", err).WithCause(err).
			WithHint("retry")
	}
	// As parsed, under the name this process was called by: "agentfs"
	// for all, the watcher of a binary installed under another name
	// escaped pkill -f and pgrep -f by that name, and pkill -f agentfs
	// aimed at one install hit every binary's watchers.
	args := slices.Clone(argsOf(c))
	args[0] = cmp.Or(os.Args[0], args[0])
	cmd := &exec.Cmd{
		Path:   exe,
		Args:   args,
		Env:    append(os.Environ(), fmt.Sprintf("%s=%d", detachedEnv, st.Ino)),
		Stdout: pipes[0].w,
		Stderr: pipes[1].w,
		// Descriptor 3: a byte once the watcher is ready.
		ExtraFiles:  []*os.File{pipes[2].w},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	err := cmd.Start()
	for _, p := range pipes {
		p.w.Close() // end of file comes when the watcher's copies close
	}
	if err != nil {
		return fault.Errorf(fault.CodeIOError, "cannot start the watcher: %s.", err).WithCause(err).
			WithHint("run agentfs index --watch in the background instead")
	}
	// Interrupted before it is ready, the watcher is ended too; once
	// ready, it is left alone: never both.
	var mu sync.Mutex
	ready, killed := false, false
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-c.Context.Done():
			mu.Lock()
			if !ready {
				killed = true
				cmd.Process.Signal(syscall.SIGTERM)
			}
			mu.Unlock()
		case <-done:
		}
	}()
	// Its output is held until the outcome is known: a watcher that
	// printed its result as the call was interrupted is not reported both
	// ready and interrupted. (One result, bounded like any.)
	s := streamsOf(c)
	told := make(chan bool, 1)
	go func() { told <- relayProgress(pipes[2].r, s.Stderr) }()
	var stderr []byte
	copied := make(chan struct{})
	go func() {
		stderr = held(pipes[1].r)
		close(copied)
	}()
	stdout := held(pipes[0].r)
	<-copied
	saidReady := <-told
	mu.Lock()
	ready = saidReady && !killed
	mu.Unlock()
	if killed {
		cmd.Wait()
		return context.Canceled // the call's own interruption, whatever the watcher said
	}
	out := stdout
	var indented bytes.Buffer
	if isTerminal(s.Stdout) && json.Indent(&indented, out, "", "  ") == nil {
		out = indented.Bytes() // as a result is printed on a terminal: the watcher's went to a pipe
	}
	if _, err := s.Stdout.Write(out); err != nil {
		if !ready {
			cmd.Wait()
			return answerNotWritten(err) // no watcher was left running
		}
		cmd.Process.Signal(syscall.SIGTERM) // unreported, it would run on: ended with the failure
		cmd.Wait()
		if errors.Is(err, errAnswerStuck) {
			return fault.Errorf(fault.CodeInterrupted, "interrupted while the answer was being written: the reader of standard output took nothing for a second, and the watcher was stopped.").
				WithHint("run it again").WithCause(err)
		}
		return fault.Errorf(fault.CodeIOError, "the answer cannot be written to standard output: %v; the watcher was stopped (the index it built stands).", err).
			WithHint("run it again with standard output read to its end").WithCause(err)
	}
	s.Stderr.Write(stderr)
	if ready {
		return cmd.Process.Release()
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		outputOf(c).code = exit.ExitCode() // its error is printed
		return nil
	}
	return fault.Errorf(fault.CodeIOError, "the watcher ended before it answered searches (%s).", err).
		WithHint("run agentfs index --watch to see why")
}

// maxWatcherOutput bounds what startDetached holds of the watcher's
// output: its one result or error, which --max-bytes bounds far below.
const maxWatcherOutput = 16 << 20

// held reads r to its end, keeping up to maxWatcherOutput bytes.
func held(r io.Reader) []byte {
	b, _ := io.ReadAll(io.LimitReader(r, maxWatcherOutput))
	io.Copy(io.Discard, r)
	return b
}

// closeOnExec marks every descriptor of this process past the standard
// three close-on-exec: those it inherited are the caller's (a $(...)
// pipe, a lock a CI job holds), which a watcher must not keep for its
// life. agentfs opens its own so already.
func closeOnExec() error {
	entries, err := os.ReadDir("/dev/fd")
	if err != nil {
		// A /dev without it (a container's, a namespace's): Linux's proc.
		var perr error
		if entries, perr = os.ReadDir("/proc/self/fd"); perr != nil {
			return err
		}
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
			return err // EBADF: the listing's own descriptor, closed since
		}
	}
	return nil
}

// isDetachedWatcher reports whether this process is the watcher that
// index --detach started: descriptor 3 is the pipe its parent named.
func isDetachedWatcher() bool {
	v := os.Getenv(detachedEnv)
	var st unix.Stat_t
	return v != "" && unix.Fstat(3, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO &&
		strconv.FormatUint(st.Ino, 10) == v
}

// parentPipe is descriptor 3 of the watcher that index --detach started:
// its first build's progress goes there as lines "FILES BYTES", then
// "ready" once it answers searches. Nil in any other process. One
// *os.File, closed once ready, so that no later write reaches the file
// that takes the number 3 next.
var parentPipe = sync.OnceValue(func() *os.File {
	if !isDetachedWatcher() {
		return nil
	}
	return os.NewFile(3, "parent")
})

// readyLine is the watcher's last line to its parent.
const readyLine = "ready"

// releaseParent, in the watcher that --detach started, tells its parent
// that it is ready and lets go of the parent's pipes: standard output and
// error go to /dev/null from now on.
func releaseParent() {
	p := parentPipe()
	if p == nil {
		return
	}
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		unix.Dup2(int(null.Fd()), 1)
		unix.Dup2(int(null.Fd()), 2)
		null.Close()
	}
	fmt.Fprintln(p, readyLine)
	p.Close()
}

// relayProgress reads what the watcher tells its parent until it closes
// the pipe: the progress of its build, shown on stderr when that is a
// terminal, and whether it said it is ready.
func relayProgress(r io.Reader, stderr io.Writer) (ready bool) {
	tty, shown := isTerminal(stderr), false
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		var files int
		var size int64
		if lines.Text() == readyLine {
			ready = true
		} else if _, err := fmt.Sscanf(lines.Text(), "%d %d", &files, &size); err == nil && tty {
			showProgress(stderr, files, size)
			shown = true
		}
	}
	if shown {
		fmt.Fprint(stderr, clearLine)
	}
	return ready
}

// progressEvery is the least time between two reports of a build's progress.
const progressEvery = 200 * time.Millisecond

// clearLine takes a line shown by showProgress off the terminal.
const clearLine = "\r\033[K"

// showProgress shows a build's progress on a terminal, as one line
// rewritten in place.
func showProgress(w io.Writer, files int, bytes int64) {
	fmt.Fprintf(w, "\rindexing: %d files, %d MB", files, bytes>>20)
}

// buildProgress gives the report a build calls with its files and bytes
// so far, and end, which stops the reports and takes their line off the
// terminal. The reports go, at most every progressEvery and the first at
// once, to stderr when it is a terminal, or from the watcher that
// --detach started to its parent, which shows them so. report is nil
// where there is no one to show them to.
func buildProgress(stderr io.Writer) (report func(files int, bytes int64), end func()) {
	var show func(files int, bytes int64)
	switch p := parentPipe(); {
	case p != nil:
		show = func(files int, bytes int64) { fmt.Fprintf(p, "%d %d\n", files, bytes) }
	case isTerminal(stderr):
		show = func(files int, bytes int64) { showProgress(stderr, files, bytes) }
	default:
		return nil, func() {}
	}
	var (
		mu           sync.Mutex
		last         time.Time
		shown, ended bool
	)
	report = func(files int, bytes int64) {
		mu.Lock()
		defer mu.Unlock()
		if !ended && time.Since(last) >= progressEvery {
			last, shown = time.Now(), true
			show(files, bytes)
		}
	}
	end = func() {
		mu.Lock()
		defer mu.Unlock()
		if shown && !ended && parentPipe() == nil {
			fmt.Fprint(stderr, clearLine)
		}
		ended = true
	}
	return report, end
}
