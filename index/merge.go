package index

import (
	"context"
	"runtime"
	"slices"
	"sort"

	"github.com/agentfs/agentfs/ordered"
)

// mergedList is one trigram's posting list as it is written: a piece of
// its segment's buffer, or an old list as the old index's mapping holds it.
type mergedList struct {
	trigram uint32
	list    []byte
	crc     uint32
	// from and to are where an encoded list is in its segment's buffer
	// until the segment is done (list is nil until then).
	from, to int
}

// segment is the merged lists of a run of trigrams, or why they could
// not be merged.
type segment struct {
	lists []mergedList
	err   error
}

// segmentTrigrams is how many trigrams a worker merges at a time: a few
// hundred KB of lists.
var segmentTrigrams = 4096

// mergeWorkers bounds the goroutines merging segments, so the segments
// merged ahead of the write (a few per worker) stay a few MB.
const mergeWorkers = 4

// merge joins each trigram's posting list from the runs (and, in an
// update, the old index) and hands the lists to write in trigram order.
// Segments of trigrams are merged on goroutines of their own while write
// writes: on one, the kernel's copy of the index into its page cache was
// half of the merge's time. An update merges on one goroutine: the old
// index records which blocks of its table it checked as it reads them.
func (b *builder) merge(trigrams []uint32, write func(mergedList) error) error {
	// In an update that changed files in place, every file of the old
	// index that stays keeps its number: an old list that names none of
	// those read again (dropped) stands as it was written.
	sameIDs, dropped := b.sameIDs()
	workers := 1
	if b.old == nil {
		workers = min(runtime.GOMAXPROCS(0), mergeWorkers)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	newWorker := func() func([]uint32) segment {
		var m merger
		return func(ts []uint32) segment { return m.segment(b, ts, sameIDs, dropped) }
	}
	order, wait := ordered.Start(ctx, workers, 1, newWorker, nil, func(add func([]uint32) error) error {
		for ts := trigrams; len(ts) > 0; ts = ts[min(len(ts), segmentTrigrams):] {
			if err := add(ts[:min(len(ts), segmentTrigrams)]); err != nil {
				return err
			}
		}
		return nil
	})
	err := func() error {
		for batch := range order {
			segs, err := batch.Results(ctx)
			if err != nil {
				return err
			}
			for _, seg := range segs {
				if seg.err != nil {
					return seg.err
				}
				for _, l := range seg.lists {
					if err := write(l); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}()
	cancel()
	wait()
	return err
}

// merger merges segments, keeping its scratch buffers from one to the
// next.
type merger struct {
	ids    []uint32
	pieces []piece
}

// segment merges the lists of trigrams ts, ascending. Each segment's
// buffer is its own: its lists are written after the next is merged.
func (m *merger) segment(b *builder, ts []uint32, sameIDs bool, dropped bitset) segment {
	cur := newCursorAt(b.post.sorted, ts[0])
	// Room for the lists of the runs at once (an update's old lists may
	// grow it): grown by doubling, the buffers were copied over and over,
	// 1.5% of a build.
	enc := make([]byte, 0, cur.listBytes(ts[len(ts)-1]))
	lists := make([]mergedList, 0, len(ts))
	for _, t := range ts {
		m.pieces = cur.pieces(t, m.pieces[:0])
		m.ids = m.ids[:0]
		// kept: the old list stands as it was written, and checked: it
		// names no file read again, every file keeps its number, and
		// the files read add none.
		kept := false
		var old []byte
		var oldCRC uint32
		if b.old != nil {
			list, crc, err := b.old.list(t)
			if err == nil && sameIDs && len(m.pieces) == 0 && len(list) > 0 {
				kept, err = namesNone(list, len(b.old.files), dropped)
			}
			if err == nil && !kept {
				err = decodePostings(list, len(b.old.files), func(oid uint32) {
					if id := b.repOfOld[oid]; id >= 0 {
						m.ids = append(m.ids, uint32(id))
					}
				})
			}
			if err != nil {
				return segment{err: err}
			}
			old, oldCRC = list, crc
		}
		from := len(enc)
		switch {
		case kept:
			// The old list itself, mapped read-only: never a buffer to
			// append to.
			lists = append(lists, mergedList{trigram: t, list: old, crc: oldCRC})
			continue
		case len(m.ids) == 0 && len(m.pieces) == 0:
			continue
		case len(m.ids) == 0:
			// The files read alone: their runs joined, mostly copied.
			enc = appendPieces(enc, m.pieces)
		default:
			m.ids = appendIDs(m.ids, m.pieces)
			slices.Sort(m.ids)
			enc = appendPostings(enc, m.ids)
		}
		lists = append(lists, mergedList{trigram: t, crc: checksum(enc[from:]), from: from, to: len(enc)})
	}
	for i := range lists {
		if l := &lists[i]; l.list == nil {
			l.list = enc[l.from:l.to]
		}
	}
	return segment{lists: lists}
}

// newCursorAt is a cursor over the runs whose first trigram asked is t
// or above.
func newCursorAt(rs []run, t uint32) *cursor {
	c := newCursor(rs)
	for i := range rs {
		ru := &rs[i]
		c.next[i] = sort.Search(ru.len(), func(j int) bool { return ru.entry(j).trigram >= t })
	}
	return c
}
