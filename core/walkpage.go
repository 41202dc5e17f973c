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
	// last is the cursor that resumes after the last entry taken.
	last string
	// from is the entry a resumed page starts at, whose items earlier
	// pages took.
	from resumed
}

// resumed is where a page resumed by a cursor starts: its items before
// the cursor's entry were counted by earlier pages, and so were skip items
// of the entry itself, unless it is gone.
type resumed struct {
	rel  string
	skip int
	sum  string
}

// resumeAt starts a page at the cursor c: seen is the page's count of items.
func (r *resumed) resumeAt(c cursor, seen *int) {
	r.rel, r.skip, r.sum = c.From, c.Skip, c.Sum
	*seen = c.Offset - c.Skip
}

// arrive is called with each entry that holds items: the first one is the
// cursor's entry, or, when that is gone, the next, none of whose items an
// earlier page took. taken gives the digest of the entry's first n items
// (or "" where items have none) and whether it still holds n; it is nil
// where an entry is its one item (ls, find).
func (r *resumed) arrive(rel string, seen *int, taken func(n int) (string, bool)) {
	if r.rel == "" {
		return
	}
	changed := false
	if rel == r.rel && taken != nil {
		sum, ok := taken(r.skip)
		changed = !ok || r.sum != "" && sum != r.sum
	}
	if rel != r.rel || changed {
		// Gone, or changed in the items earlier pages took: its items
		// are all this page's, and no other entry's are skipped in their
		// stead (a file that shrank lost the next files' matches).
		*seen += r.skip
	}
	r.rel = ""
}

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
// page, with next, the cursor that resumes after it (or none), which then
// becomes the page's; an entry that does not fit an empty page never will, and is
// TOO_LARGE (path names it), as is every entry when the result's own path
// is over the bound. That is known at the first entry, so that a missing
// directory is NOT_FOUND whatever the bound; the result of an empty
// directory is sized as every result is, at the end.
func (p *walkPage) fits(v any, path, next string) (bool, error) {
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
		p.last = next
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
	n := p.offset + p.taken
	p.next, p.truncated = &n, truncated
}
