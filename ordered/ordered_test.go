package ordered

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
)

// The first item's work waits for the last's: results still come in
// listing order. (Few items: the pipeline holds a bounded number ahead of
// its taker, so the first could not wait for a far later one.)
func TestResultsInListingOrder(t *testing.T) {
	const n = 8
	lastDone := make(chan struct{})
	worker := func() func(int) int {
		return func(i int) int {
			switch i {
			case 0:
				<-lastDone
			case n - 1:
				close(lastDone)
			}
			return i * i
		}
	}
	order, wait := Start(context.Background(), 4, 1, worker, nil, func(add func(int) error) error {
		for i := range n {
			if err := add(i); err != nil {
				return err
			}
		}
		return nil
	})
	next := 0
	for b := range order {
		out, err := b.Results(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for k, it := range b.Items {
			if it != next || out[k] != it*it {
				t.Fatalf("item %d (result %d) where %d was next", it, out[k], next)
			}
			next++
		}
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if next != n {
		t.Fatalf("%d items came back, want %d", next, n)
	}
}

// Once the context is done, add says so and the list stops, yet every
// item listed is worked on: its work may hold a file to close.
func TestEveryListedItemIsWorkedOn(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var listed, worked atomic.Int64
	worker := func() func(int) struct{} {
		return func(int) struct{} { worked.Add(1); return struct{}{} }
	}
	order, wait := Start(ctx, 2, 3, worker, nil, func(add func(int) error) error {
		for i := 0; ; i++ {
			if i == 10 {
				cancel()
			}
			listed.Add(1)
			if err := add(i); err != nil {
				return err
			}
		}
	})
	taken := 0
	for b := range order {
		taken += len(b.Items) // taken, never waited for
	}
	if err := wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait: %v, want the list's context.Canceled", err)
	}
	if listed.Load() != worked.Load() {
		t.Fatalf("%d items listed, %d worked on", listed.Load(), worked.Load())
	}
	if taken > int(listed.Load()) || listed.Load() < 10 {
		t.Fatalf("%d listed, %d taken", listed.Load(), taken)
	}
}

// A taker that stops waiting for a batch whose work does not end gets
// its context's error, not a hang.
func TestResultsStopWithTheContext(t *testing.T) {
	release := make(chan struct{})
	worker := func() func(int) int {
		return func(i int) int { <-release; return i }
	}
	order, wait := Start(context.Background(), 1, 1, worker, nil, func(add func(int) error) error {
		return add(1)
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := <-order
	if _, err := b.Results(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Results: %v, want context.Canceled", err)
	}
	close(release)
	if out, err := b.Results(context.Background()); err != nil || out[0] != 1 {
		t.Fatalf("Results after the work ended: %v, %v", out, err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

// The list's own error is wait's.
func TestListErrorIsWaits(t *testing.T) {
	boom := errors.New("boom")
	order, wait := Start(context.Background(), 2, 4, func() func(int) int { return func(i int) int { return i } }, nil,
		func(add func(int) error) error {
			add(1)
			return boom
		})
	n := 0
	for b := range order {
		n += len(b.Items)
	}
	if err := wait(); err != boom || n != 1 {
		t.Fatalf("wait: %v after %d items, want boom after 1", err, n)
	}
}

// An item that ends its batch is handed on with the items before it, not
// held until the batch is full.
func TestItemEndsItsBatch(t *testing.T) {
	order, wait := Start(context.Background(), 2, 4, func() func(int) int { return func(i int) int { return i } },
		func(i int) bool { return i < 0 },
		func(add func(int) error) error {
			for _, i := range []int{1, 2, -3, 4, -5, -6, 7, 8, 9, 10, 11} {
				if err := add(i); err != nil {
					return err
				}
			}
			return nil
		})
	var sizes []int
	for b := range order {
		sizes = append(sizes, len(b.Items))
	}
	if err := wait(); err != nil || !slices.Equal(sizes, []int{3, 2, 1, 4, 1}) {
		t.Fatalf("batches of %v (%v), want [3 2 1 4 1]", sizes, err)
	}
}
