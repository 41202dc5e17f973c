package core

import "encoding/json"

// walkPage cuts a walk's entries into the page a request asked for, as ls
// and find page: entries are counted in walk order, those before offset
// are skipped, and the page ends at limit entries or before an entry that
// would overrun the byte budget (truncated). Either way next is where the
// following page starts; it stays nil when the walk ends first.
type walkPage struct {
	offset, limit, budget int
	seen, taken           int
	next                  *int
	truncated             bool
}

// newWalkPage leaves 512 bytes of the bound for the result's other fields.
func (t *Tools) newWalkPage(offset, limit int) *walkPage {
	return &walkPage{offset: offset, limit: limit, budget: t.maxBytes() - 512}
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
// page. The first entry always does, so that paging makes progress.
func (p *walkPage) fits(v any) bool {
	b, _ := json.Marshal(v)
	if p.budget -= len(b) + 1; p.budget < 0 && p.taken > 0 {
		p.stop(true)
		return false
	}
	p.taken++
	return true
}

func (p *walkPage) stop(truncated bool) {
	n := p.offset + p.taken
	p.next, p.truncated = &n, truncated
}
