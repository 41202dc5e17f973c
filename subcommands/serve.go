package subcommands

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/agentfs/agentfs/assets/localdir"
	"github.com/agentfs/agentfs/assets/s3store"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"github.com/urfave/cli/v2"
)

// pruneEvery is how often serve removes the assets whose links have all
// expired.
const pruneEvery = time.Minute

func serveCommand() subcommand {
	return fixed{&cli.Command{
		Name:  "serve",
		Usage: "serve the links publish made into a local assets folder, over HTTP",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "the address to listen on"},
		},
		Action: serve,
	}}
}

// serveInfo is what serve prints once it listens.
type serveInfo struct {
	Addr   string `json:"addr"`
	Assets string `json:"assets"`
}

// serve listens on --addr and serves --assets until it is interrupted,
// which ends it with exit status 0: that is how a server is stopped.
func serve(c *cli.Context) error {
	if err := refusePaging(c, "serve", false, false); err != nil {
		return err
	}
	if err := checkUsed(c, "serve"); err != nil {
		return err
	}
	dir := c.String("assets")
	switch {
	case c.NArg() > 0:
		return fault.InvalidArgument("serve takes no arguments, not %q.", c.Args().First()).
			WithHint("give the folder as --assets DIR and the address as --addr HOST:PORT")
	case dir == "":
		return fault.Errorf(fault.CodeNotConfigured, "serve has no assets folder.").
			WithHint("give --assets DIR, the folder publish writes into (or set AGENTFS_ASSETS)")
	case strings.HasPrefix(dir, s3store.Scheme):
		return fault.InvalidArgument("serve serves a local folder; an S3 store serves its own links.").
			WithHint("give --assets DIR, or open the presigned URLs publish returns as they are")
	case c.Bool("readonly"):
		// It makes the folder and the key when missing, and removes the
		// expired assets: mutations, which --readonly refuses.
		return fault.Errorf(fault.CodeReadOnly, "serve is refused: it removes expired assets and makes its folder and key, and agentfs runs read-only.").
			WithHint("%s to serve", readOnlyFix(c))
	}
	state, err := localfs.StateDir()
	if err != nil {
		return err
	}
	// Made now if missing, so that a link published next is served; read
	// again at each request, so that removing it revokes every link.
	if _, err := localdir.LoadKey(state); err != nil {
		return err
	}
	srv, err := localdir.NewServer(dir, localdir.KeyReader(state))
	if err != nil {
		return err
	}
	defer srv.Close()
	o := outputOf(c)
	srv.KeyFault = func(err error) { o.note(fault.AsError(err)) }
	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return listenErr(c.String("addr"), err)
	}
	hs := &http.Server{
		Handler: progressDeadline{srv},
		// A connection that sends no request, or stays idle after one,
		// is closed: otherwise each holds a descriptor for ever, and
		// enough of them lock every link out.
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       time.Minute,
		// What the server logs (an accept that failed, such as with too
		// many open files, and is retried) goes on stderr as agentfs's
		// other errors do, not as a plain log line.
		ErrorLog: log.New(serverLog{o}, "", 0),
	}
	if err := o.result(serveInfo{Addr: ln.Addr().String(), Assets: dir}); err != nil {
		ln.Close()
		return err
	}
	ctx, stop := context.WithCancel(c.Context)
	defer stop()
	go prune(ctx, srv, o)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fault.Errorf(fault.CodeIOError, "the server stopped: %v.", err).WithCause(err)
	case <-c.Context.Done():
	}
	// Downloads in flight get a few seconds to end; then they are cut, and
	// the server has still stopped as asked.
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shut); errors.Is(err, context.DeadlineExceeded) {
		hs.Close()
	}
	return nil
}

// serverLog notes each line an http.Server logs as an IO_ERROR; the
// server goes on. An accept refused for want of descriptors is retried.
type serverLog struct{ o *output }

func (l serverLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	e := fault.Errorf(fault.CodeIOError, "%s.", msg)
	if strings.Contains(msg, syscall.EMFILE.Error()) {
		e = e.WithHint("raise serve's open-file limit (ulimit -n); it retries and serves on")
	}
	l.o.note(e)
	return len(p), nil
}

// writeStall is the longest one write to a client may take: a download
// goes on as long as the client reads, and one that stops reading is cut.
// (A WriteTimeout would cut a large download on a slow link.)
const writeStall = 30 * time.Second

// progressDeadline gives each write of a response its own deadline.
type progressDeadline struct{ h http.Handler }

func (p progressDeadline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.h.ServeHTTP(stallWriter{w, http.NewResponseController(w)}, r)
}

type stallWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (s stallWriter) Write(b []byte) (int, error) {
	s.rc.SetWriteDeadline(time.Now().Add(writeStall))
	return s.ResponseWriter.Write(b)
}

// prune removes expired assets now and every pruneEvery, noting a failure
// on stderr: serving goes on.
func prune(ctx context.Context, srv *localdir.Server, o *output) {
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		if _, err := srv.Prune(ctx); err != nil {
			o.note(fault.AsError(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// listenErr is the error of a listen on addr that failed: a port another
// process holds, or one below 1024 without the privilege, is no usage
// error (the same call succeeds once the port is free), only an address
// that is not one is.
func listenErr(addr string, err error) error {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fault.Errorf(fault.CodeIOError, "cannot listen on %s: another process listens there.", addr).
			WithHint("stop that process, or give --addr another port (port 0 picks a free one)").WithCause(err)
	case errors.Is(err, syscall.EACCES):
		return fault.Errorf(fault.CodePermissionDenied, "cannot listen on %s: a port below 1024 needs privilege.", addr).
			WithHint("give --addr a port of 1024 or more, such as 127.0.0.1:8080").WithCause(err)
	}
	return fault.Errorf(fault.CodeInvalidArgument, "cannot listen on %s: %v.", addr, err).
		WithHint("give --addr a HOST:PORT this machine has, such as 127.0.0.1:8080").WithCause(err)
}
