package subcommands

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"
)

// answerStream is standard output, whose write a signal gives up on once
// the reader has taken nothing of it for stuckAnswer: a reader that takes
// nothing (a pager left open, a full pipe) kept the process in write(2)
// after SIGINT or SIGTERM, exit 130 never coming. A write that completes,
// or goes on being read, a signal received or not, is the answer as ever:
// a mutation's commit gate still reports it.
type answerStream struct {
	w     io.Writer
	ctx   context.Context
	stuck bool
}

// stuckAnswer is how long the reader may take nothing of an answer, a
// signal received, before its write is given up: a reader that reads
// takes a part in microseconds.
var stuckAnswer = time.Second

// answerPart is what one write(2) of an answer sends: the reader's taking
// of each part proves it reads. A page: a full pipe takes a write's bytes
// a page at a time, as its reader frees them, and a write returns once
// all are taken; parts of 64 KiB were seen to progress only once the
// reader had taken 64 KiB, so that one reading 40 KB a second had its
// answer cut after a signal, "took nothing for a second".
const answerPart = 4 << 10

// errAnswerStuck is a write given up on (see answerStream).
var errAnswerStuck = errors.New("interrupted while the reader of standard output took nothing")

func (s *answerStream) Write(p []byte) (int, error) {
	if s.stuck {
		return 0, errAnswerStuck
	}
	if s.ctx.Done() == nil {
		return s.w.Write(p) // a context never cancelled
	}
	// A copy: given up, the write goes on with bytes the caller reuses.
	p = bytes.Clone(p)
	var written atomic.Int64
	done := make(chan error, 1)
	go func() {
		for off := 0; off < len(p); {
			n, err := s.w.Write(p[off:min(off+answerPart, len(p))])
			off += n
			written.Store(int64(off))
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	since := time.Now() // the last progress, or the write's start
	select {
	case err := <-done:
		return int(written.Load()), err
	case <-s.ctx.Done():
	}
	seen := written.Load()
	tick := time.NewTicker(stuckAnswer / 10)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return int(written.Load()), err
		case now := <-tick.C:
			if w := written.Load(); w != seen {
				seen, since = w, now
			} else if now.Sub(since) >= stuckAnswer {
				s.stuck = true
				return int(seen), errAnswerStuck
			}
		}
	}
}

// Fd is the descriptor of the stream wrapped, for isTerminal; none when it
// has none.
func (s *answerStream) Fd() uintptr {
	if f, ok := s.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}
