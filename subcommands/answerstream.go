package subcommands

import (
	"context"
	"errors"
	"io"
	"time"
)

// answerStream is standard output, whose write a signal gives up on once
// it has blocked for stuckAnswer: a reader that takes nothing (a pager left
// open, a full pipe) kept the process in write(2) after SIGINT or SIGTERM,
// exit 130 never coming. A write that completes, a signal received or not,
// is the answer as ever: a mutation's commit gate still reports it.
type answerStream struct {
	w     io.Writer
	ctx   context.Context
	stuck bool
}

// stuckAnswer is how long a write of the answer may block, a signal
// received, before it is given up: an answer is written in microseconds
// to a reader that reads.
var stuckAnswer = time.Second

// errAnswerStuck is a write given up on (see answerStream).
var errAnswerStuck = errors.New("interrupted while the reader took none of the answer")

func (s *answerStream) Write(p []byte) (int, error) {
	if s.stuck {
		return 0, errAnswerStuck
	}
	if s.ctx.Done() == nil {
		return s.w.Write(p) // a context never cancelled
	}
	type written struct {
		n   int
		err error
	}
	done := make(chan written, 1)
	start := time.Now()
	go func() {
		n, err := s.w.Write(p)
		done <- written{n, err}
	}()
	select {
	case r := <-done:
		return r.n, r.err
	case <-s.ctx.Done():
	}
	t := time.NewTimer(max(stuckAnswer-time.Since(start), 0))
	defer t.Stop()
	select {
	case r := <-done:
		return r.n, r.err
	case <-t.C:
	}
	s.stuck = true
	return 0, errAnswerStuck
}

// Fd is the descriptor of the stream wrapped, for isTerminal; none when it
// has none.
func (s *answerStream) Fd() uintptr {
	if f, ok := s.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}
