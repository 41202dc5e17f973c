package core

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
	next        *int
	truncated   bool
}

// newWalkPage sizes a page whose result, with no entries, is skeleton: a
// truncated result with the largest nextOffset, offset+limit. Its budget
// for entries is what the bound leaves.
func (t *Tools) newWalkPage(offset, limit int, skeleton any) *walkPage {
	size := jsonSize(skeleton)
	return &walkPage{t: t, offset: offset, limit: limit, budget: t.maxBytes() - size, skeleton: size}
}

// skip counts one more entry and reports whether it comes before the page.
func (p *walkPage) skip() bool {
	p.seen++
	return p.seen <= p.offset
}

// uncount takes back the count of an entry found gone since the listing.
func (p *walkPage) uncount() { p.seen-- }

// full reports that the page already holds limit entries, so that an entry
// past it proves there is a next page.
func (p *walkPage) full() bool {
	if p.taken < p.limit {
		return false
	}
	p.stop(false)
	return true
}

// fits charges v's JSON to the budget and reports whether v goes on the
// page; an entry that does not fit an empty page never will, and is
// TOO_LARGE (path names it), as is every entry when the result's own path
// is over the bound. That is known at the first entry, so that a missing
// directory is NOT_FOUND whatever the bound; the result of an empty
// directory is sized as every result is, at the end.
func (p *walkPage) fits(v any, path string) (bool, error) {
	if p.skeleton > p.t.maxBytes() {
		return false, p.t.tooLarge(p.skeleton, "the path of the directory does not fit")
	}
	n := itemSize(v)
	if n <= p.budget {
		p.budget -= n
		p.taken++
		return true, nil
	}
	if p.taken == 0 {
		at := p.seen - 1
		return false, p.t.tooLarge(p.skeleton+n, "entry "+itoa(at)+" does not fit").WithPath(path).
			WithDetail("offset", at).
			WithHint("raise --max-bytes to %d or more, or pass --offset %d to skip the entry", p.skeleton+n, at+1)
	}
	p.stop(true)
	return false, nil
}

func (p *walkPage) stop(truncated bool) {
	n := p.offset + p.taken
	p.next, p.truncated = &n, truncated
}
