package core

import (
	"iter"
	"slices"
)

// walkPage cuts a walk's entries into the page a request asked for, as ls
// and find page: entries are counted in walk order, those before offset
// are skipped, and the page ends at limit entries or before an entry that
// would overrun the byte bound (truncated). Either way next is where the
// following page starts; it stays nil when the walk ends first.
type walkPage struct {
	t                     *Tools
	offset, limit, budget int
	// skeleton is the size of the result without its entries.
	skeleton    int
	seen, taken int
	// passed counts the entries of the page that are not listed (those
	// that cannot be described): counted all the same, as the offset of
	// a later page counts every entry it skips.
	passed    int
	next      *int
	truncated bool
	// last is the cursor that resumes after the last entry taken.
	last string
	// from is the entry a resumed page starts at, whose items earlier
	// pages took.
	from resumed
	// span and unread count the unreadable entries the page met.
	span   span
	unread []string
	// run counts the entries counted last that share the path runRel: a
	// store holds a file and a directory of one name (a and a/b), and a
	// cursor after the second, resuming at the first, skips both (it
	// skipped the first, and gave the second again, for ever).
	runRel string
	run    int
}

// span is where a page lies in walk order, for the unreadable entries it
// counts: those after the previous page's last entry (at the start on
// the first page) up to its own last entry, or to the walk's end on the
// last page. Counted as the walk met them, a page counted those it met
// looking past its end for the next page, which counts them again, and
// a page by offset those of the pages it skips, which one by cursor
// never meets.
type span struct {
	after, last      string
	hasAfter, hasEnd bool
}

// passed marks the item at rel as one of the pages before.
func (s *span) passed(rel string) { s.after, s.hasAfter = rel, true }

// holds reports whether rel, an entry the walk met, is within the span;
// end is called first when the page has a next page, whose last entry is
// the one at last.
func (s span) holds(rel string) bool {
	return (!s.hasAfter || WalkOrder(rel, s.after) > 0) && (!s.hasEnd || WalkOrder(rel, s.last) <= 0)
}

// end closes the span at its last entry, of a page with a next page.
func (s *span) end() { s.hasEnd = true }

// count is how many of rels the span holds.
func (s span) count(rels iter.Seq[string]) int {
	n := 0
	for rel := range rels {
		if s.holds(rel) {
			n++
		}
	}
	return n
}

// resumed is where a page resumed by a cursor starts: its items before
// the cursor's entry were counted by earlier pages, and so were skip items
// of the entry itself, unless it is gone.
type resumed struct {
	rel  string
	skip int
	sum  string
	// again is set when an earlier page took the entry's items again from
	// its first, having found it changed.
	again bool
	// shift is what arrive added to the page's count for items earlier
	// pages took that are gone or taken again: the continuations the page
	// gives count items as a walk from the start finds them, so that its
	// nextOffset goes where its nextCursor goes (it went past the items
	// taken again, or an entry after one that went).
	shift int
}

// resumeAt starts a page at the cursor c: seen is the page's count of items.
func (r *resumed) resumeAt(c cursor, seen *int) {
	r.rel, r.skip, r.sum, r.again = c.From, c.Skip, c.Sum, c.Again
	*seen = c.Offset - c.Skip
}

// pending reports that the page has not yet come to an entry that tells
// where it starts: the cursor's entry, or the next one when that is gone.
func (r *resumed) pending() bool { return r.rel != "" }

// held is what an entry holds of the n items a cursor says earlier pages
// took: the digest of its first ones (or "" where items have none), how
// many it holds, at most n, and cut, set when the timeout cut the entry's
// search short, so that holding fewer than n tells nothing of a change.
type held func(n int) (sum string, count int, cut bool)

// arrive is called with each entry that holds items: the first one is the
// cursor's entry, or, when that is gone, the next, none of whose items an
// earlier page took. taken is nil where an entry is its one item (ls,
// find). It reports whether the items of the entry, the cursor's, were
// taken again from its first, by this page or an earlier one; it leaves
// the page pending when the timeout cut the entry's search short before
// its skip items.
func (r *resumed) arrive(rel string, seen *int, taken held) (again bool) {
	if r.rel == "" {
		return false
	}
	if rel != r.rel {
		// Gone: none of the next entry's items are skipped in its stead.
		r.pass(seen, r.skip)
		r.rel = ""
		return false
	}
	again = r.again
	if taken != nil {
		switch sum, n, cut := taken(r.skip); {
		case n < r.skip && cut:
			// Cut short before them: no evidence of a change.
			return again
		case n == r.skip && (r.sum == "" || sum == r.sum):
			// Unchanged in the items earlier pages took.
		case again:
			// Changed again: the page goes on by count (past the items
			// the entry still holds, none of the next entries'), so that
			// paging moves forward while the entry keeps changing.
			r.pass(seen, r.skip-n)
		default:
			// Changed in the items earlier pages took: its items are all
			// this page's, and no other entry's are skipped in their
			// stead (a file that shrank lost the next files' matches).
			r.pass(seen, r.skip)
			again = true
		}
	}
	r.rel = ""
	return again
}

// pass counts n items earlier pages took that are no longer where they
// were, which the page's count goes past.
func (r *resumed) pass(seen *int, n int) {
	*seen += n
	r.shift += n
}

// fromStart is the page's count n as a walk from the start counts the
// items now: every offset a page gives (nextOffset, a cursor's) is one.
func (r *resumed) fromStart(n int) int { return n - r.shift }

// newWalkPage sizes a page whose result, with no entries, is skeleton: a
// truncated result with the largest nextOffset, offset+limit. Its budget
// for entries is what the bound leaves.
func (t *Tools) newWalkPage(offset, limit int, skeleton any) *walkPage {
	size := jsonSize(skeleton)
	return &walkPage{t: t, offset: offset, limit: limit, budget: t.maxBytes() - size, skeleton: size}
}

// skip counts one more entry, at rel, and reports whether it comes before
// the page.
func (p *walkPage) skip(rel string) bool {
	p.from.arrive(rel, &p.seen, nil)
	p.seen++
	if rel == p.runRel {
		p.run++
	} else {
		p.runRel, p.run = rel, 1
	}
	if p.seen <= p.offset {
		p.span.passed(rel)
		return true
	}
	return false
}

// resumeAt starts the page at the cursor c.
func (p *walkPage) resumeAt(c cursor) {
	p.from.resumeAt(c, &p.seen)
	p.span.passed(c.From)
}

// unreadable notes the entry at rel, which could not be read.
func (p *walkPage) unreadable(_, rel string) { p.unread = append(p.unread, rel) }

// unreadableCount is how many of the unreadable entries met are the
// page's; called once the page has ended.
func (p *walkPage) unreadableCount() int { return p.span.count(slices.Values(p.unread)) }

// uncount takes back the count of an entry found gone since the listing.
func (p *walkPage) uncount() { p.seen--; p.run-- }

// pass counts the entry just counted, at rel, as one of the page that is
// not listed, and reports whether it is on the page: the cursor that
// resumes after it (of the request digest) must fit as well, so that a
// page by cursor starts after it as one by offset does. Resumed after the
// last entry listed, the next page met it again, and counted it again.
func (p *walkPage) pass(rel, digest string) bool {
	// The skeleton's nextOffset, offset+limit, may then be a digit short.
	most := p.offset + p.limit + p.passed + 1
	grow := digits(most) - digits(most-1)
	next := p.cursorAfter(rel, digest)
	if grow+cursorCost(next) > p.budget {
		if p.taken+p.passed > 0 {
			p.stop(true)
			return false
		}
		next = "" // the page's one entry goes without a cursor
	}
	p.passed++
	p.budget -= grow
	p.last, p.span.last = next, rel
	return true
}

// full reports that the page already holds limit entries, so that an entry
// past it proves there is a next page.
func (p *walkPage) full() bool {
	if p.taken < p.limit {
		return false
	}
	p.stop(false)
	return true
}

// fits charges v's JSON to the budget and reports whether v, the entry
// at rel, goes on the page, with next, the cursor that resumes after it (or none), which then
// becomes the page's; an entry that does not fit an empty page never will, and is
// TOO_LARGE (path names it), as is every entry when the result's own path
// is over the bound. That is known at the first entry, so that a missing
// directory is NOT_FOUND whatever the bound; the result of an empty
// directory is sized as every result is, at the end.
func (p *walkPage) fits(v any, path, rel, next string) (bool, error) {
	if p.skeleton > p.t.maxBytes() {
		return false, p.t.tooLarge(p.skeleton, "the path of the directory does not fit")
	}
	n := itemSize(v)
	if n+cursorCost(next) > p.budget && p.taken == 0 {
		next = "" // the page's one entry goes without a cursor
	}
	if n+cursorCost(next) <= p.budget {
		p.budget -= n
		p.taken++
		p.last, p.span.last = next, rel
		return true, nil
	}
	if p.taken == 0 {
		at := p.seen - 1
		return false, p.t.tooLarge(p.skeleton+n, "entry "+itoa(at)+" does not fit").WithPath(path).
			WithDetail("offset", at).
			WithHint("raise --max-bytes to %d or more, or pass --offset %d to skip the entry", p.t.raiseTo(p.skeleton+n), at+1)
	}
	p.stop(true)
	return false, nil
}

func (p *walkPage) stop(truncated bool) {
	n := p.from.fromStart(p.offset + p.taken + p.passed)
	p.next, p.truncated = &n, truncated
	p.span.end()
}

// cursorAfter is the cursor that resumes after the entry at rel, the last
// counted, of the request digest.
func (p *walkPage) cursorAfter(rel, digest string) string {
	skip := 1
	if rel == p.runRel {
		skip = p.run
	}
	return cursor{Offset: p.from.fromStart(p.seen), From: rel, Skip: skip, Request: digest}.encode()
}
