package search

import "regexp/syntax"

// classRun decides a line for a regex that is a sequence of ASCII byte
// classes, each taken once or repeated (+), with no assertion: a
// bit-parallel simulation (shift-and) of its position automaton, a table
// lookup and a few word operations per byte, where Go's backtracker costs
// tens of nanoseconds per byte. Such a regex cannot match a non-ASCII byte
// (the classes are ASCII), a line end or a CR, so a byte-level run over the
// line finds a match exactly when regexp does.
type classRun struct {
	masks [256]uint64 // bit j: the byte belongs to position j's class
	loop  uint64      // positions that may repeat
	final uint64      // the last position
}

// newClassRun returns nil when re is not such a sequence or has more than
// 64 positions.
func newClassRun(re *syntax.Regexp) *classRun {
	c := &classRun{}
	n := 0
	add := func(set *byteSet, repeat bool) bool {
		if set == nil || set['\n'] || set['\r'] || n == 64 {
			return false
		}
		for b := range set {
			if set[b] {
				c.masks[b] |= 1 << n
			}
		}
		if repeat {
			c.loop |= 1 << n
		}
		n++
		return true
	}
	var walk func(re *syntax.Regexp) bool
	walk = func(re *syntax.Regexp) bool {
		switch re.Op {
		case syntax.OpCapture:
			return walk(re.Sub[0])
		case syntax.OpConcat:
			for _, s := range re.Sub {
				if !walk(s) {
					return false
				}
			}
			return true
		case syntax.OpLiteral:
			for _, r := range re.Rune {
				set, _ := classSet(&syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{r}, Flags: re.Flags})
				if !add(set, false) {
					return false
				}
			}
			return true
		case syntax.OpPlus:
			set, _ := classSet(re.Sub[0])
			return add(set, true)
		}
		set, _ := classSet(re)
		return add(set, false)
	}
	if !walk(re) || n == 0 {
		return nil
	}
	c.final = 1 << (n - 1)
	return c
}

// match reports whether line holds a match.
func (c *classRun) match(line []byte) bool {
	var d uint64
	for _, b := range line {
		d = (d<<1 | 1 | d&c.loop) & c.masks[b]
		if d&c.final != 0 {
			return true
		}
	}
	return false
}
