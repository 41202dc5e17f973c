// Package ordered runs work on a pool of goroutines and hands the results
// back in the order the work was listed: a search or an index build reads
// files in parallel, yet pages and numbers them in walk order.
//
// Items go in batches rather than one by one, so that channel hand-offs,
// and the thread wake-ups they cost, stay off the per-item path. Every
// item listed is worked on, even once the context is done: the work may
// hold something to release, such as a file a walk opened for it.
package ordered

import (
	"context"
	"sync"
	"sync/atomic"
)

// Batch is a run of items in listing order, and their results once a
// worker is done with them.
type Batch[In, Out any] struct {
	Items []In
	out   chan []Out
	// res holds the results as the worker makes them, and made how many
	// of them, from the first, it has made.
	res  []Out
	made atomic.Int64
}

// Results waits for the batch's results, one per item, or for ctx to be
// done: it then returns ctx's error with the results of the batch's first
// items that the worker had made by then, so that a search cut short
// keeps the files it went through before the one it was inside.
func (b *Batch[In, Out]) Results(ctx context.Context) ([]Out, error) {
	select {
	case out := <-b.out:
		return out, nil
	case <-ctx.Done():
		// Capped: the worker goes on writing the slots past them.
		n := b.made.Load()
		return b.res[:n:n], ctx.Err()
	}
}

// Start runs list and a pool of workers. list calls add for each item in
// order; add returns ctx's error once it is done, and list should then
// stop. newWorker makes each worker's function, which may keep state
// from item to item. Start returns the batches in order, closed once list
// returns, and wait, which waits for list and the workers and returns
// list's error. A caller that stops taking batches cancels ctx first: the
// batches not taken are then dropped, still worked on. An item for which
// ends (when set) is true ends its batch: an item that stands for many
// (a run of files known without work) is handed on at once, not after
// the items listed behind it.
func Start[In, Out any](ctx context.Context, workers, size int, newWorker func() func(In) Out, ends func(In) bool, list func(add func(In) error) error) (<-chan *Batch[In, Out], func() error) {
	jobs := make(chan *Batch[In, Out], workers*2)
	order := make(chan *Batch[In, Out], workers*4)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			work := newWorker()
			for b := range jobs {
				for i, it := range b.Items {
					b.res[i] = work(it)
					b.made.Store(int64(i + 1))
				}
				b.out <- b.res
			}
		})
	}
	var listErr error
	wg.Go(func() {
		defer close(order)
		defer close(jobs)
		cur := &Batch[In, Out]{}
		flush := func() error {
			b := cur
			cur = &Batch[In, Out]{}
			if len(b.Items) == 0 {
				return nil
			}
			b.out = make(chan []Out, 1) // a worker never waits for the taker
			b.res = make([]Out, len(b.Items))
			var err error
			select {
			case order <- b:
			case <-ctx.Done():
				err = ctx.Err()
			}
			jobs <- b // never blocks for long: workers drain jobs until it closes
			return err
		}
		listErr = list(func(it In) error {
			cur.Items = append(cur.Items, it)
			if len(cur.Items) == size || ends != nil && ends(it) {
				return flush()
			}
			return nil
		})
		if err := flush(); listErr == nil {
			listErr = err
		}
	})
	return order, func() error {
		wg.Wait()
		return listErr
	}
}
