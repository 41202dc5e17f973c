package subcommands

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/agentfs/agentfs/assets/localdir"
	"github.com/agentfs/agentfs/assets/s3store"
	"github.com/agentfs/agentfs/fault"
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
	dir := c.String("assets")
	switch {
	case dir == "":
		return fault.Errorf(fault.CodeNotConfigured, "serve has no assets folder.").
			WithHint("give --assets DIR, the folder publish writes into (or set AGENTFS_ASSETS)")
	case strings.HasPrefix(dir, s3store.Scheme):
		return fault.InvalidArgument("serve serves a local folder; an S3 store serves its own links.").
			WithHint("give --assets DIR, or open the presigned URLs publish returns as they are")
	}
	key, err := signingKey()
	if err != nil {
		return err
	}
	srv, err := localdir.NewServer(dir, key)
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return fault.Errorf(fault.CodeInvalidArgument, "cannot listen on %s: %v.", c.String("addr"), err).
			WithHint("give --addr a free HOST:PORT, such as 127.0.0.1:8080").WithCause(err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	if err := outputOf(c).result(serveInfo{Addr: ln.Addr().String(), Assets: dir}); err != nil {
		ln.Close()
		return err
	}
	ctx, stop := context.WithCancel(c.Context)
	defer stop()
	go prune(ctx, srv, outputOf(c))
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fault.Errorf(fault.CodeIOError, "the server stopped: %v.", err).WithCause(err)
	case <-c.Context.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fault.AsError(err)
	}
	return nil
}

// prune removes expired assets now and every pruneEvery, noting a failure
// on stderr: serving goes on.
func prune(ctx context.Context, srv *localdir.Server, o *output) {
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		if _, err := srv.Prune(); err != nil {
			o.note(fault.AsError(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
