package subcommands

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentfs/agentfs/assets"
	"github.com/agentfs/agentfs/assets/localdir"
	"github.com/agentfs/agentfs/assets/s3store"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/registry"
	"github.com/urfave/cli/v2"
)

func publishCommand() subcommand {
	return tool[core.PublishRequest, *core.PublishResult]{
		Def:       registry.Publish,
		argsUsage: "FILE",
	}
}

// publishTarget is the target of --assets, loc, opened at each publish.
type publishTarget struct {
	c   *cli.Context
	loc string
}

// Check refuses the variables of the settings a publish to the target
// uses, before the publish does any work: those of publish, for a publish
// of batch or mcp, whose other tools do not use them (the command publish
// checked them already), and the S3 settings of an s3:// target.
func (p publishTarget) Check() error {
	if err := checkUsed(p.c, "publish"); err != nil {
		return err
	}
	if strings.HasPrefix(p.loc, s3store.Scheme) {
		return checkUsed(p.c, useStore)
	}
	return nil
}

func (p publishTarget) Open() (assets.Store, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	return openAssets(p.c, p.loc)
}

// openAssets is the store --assets names: a bucket for s3://, else a local
// folder whose links are signed with the state directory's key.
func openAssets(c *cli.Context, loc string) (assets.Store, error) {
	if strings.HasPrefix(loc, s3store.Scheme) {
		if err := checkUsed(c, useStore); err != nil {
			return nil, err
		}
		s, err := s3store.New(s3store.Config{Location: loc, Endpoint: c.String("s3-endpoint"), IdleTimeout: c.Duration("s3-idle-timeout")})
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	key, err := signingKey()
	if err != nil {
		return nil, err
	}
	s, err := localdir.New(loc, c.String("base-url"), key, c.Duration("lock-timeout"))
	if err != nil {
		return nil, err
	}
	return s, nil
}

func signingKey() ([]byte, error) {
	state, err := localfs.StateDir()
	if err != nil {
		return nil, err
	}
	return localdir.LoadKey(state)
}

// progressMinBytes is the smallest upload that shows a progress bar: a
// smaller one is over before a person could read it.
const progressMinBytes = 8 << 20

// progressBar draws an upload's progress on the terminal w, one line
// rewritten in place, ended when the upload is.
func progressBar(w io.Writer) func(done, total int64) {
	const width = 30
	last := -1
	return func(done, total int64) {
		if total < progressMinBytes {
			return
		}
		pct := int(done * 100 / total)
		if pct == last {
			return
		}
		last = pct
		bar := strings.Repeat("=", pct*width/100) + strings.Repeat(" ", width-pct*width/100)
		fmt.Fprintf(w, "\rpublishing [%s] %3d%% %d/%d MiB", bar, pct, done>>20, total>>20)
		if done >= total {
			fmt.Fprintln(w)
		}
	}
}
