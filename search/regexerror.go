package search

import (
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/agentfs/agentfs/fault"
)

// RegexError is INVALID_REGEX for a query that RE2 refuses, with the
// position (1-based, in characters) and the fragment at fault, and, for the
// Perl constructs RE2 leaves out (lookaround, backreferences, atomic groups,
// possessive quantifiers), a message that says so.
func RegexError(query string, err error) *fault.Error {
	e := fault.Errorf(fault.CodeInvalidRegex, "the regex is not valid: %s.", strings.TrimSuffix(err.Error(), ".")).
		WithHint("fix the regex, or pass --regex=false to search for the text as it is")
	se, ok := err.(*syntax.Error)
	if !ok {
		return e
	}
	e.Message = "the regex is not valid: " + se.Code.String() + "."
	at := regexErrorOffset(query, se)
	if at < 0 {
		return e
	}
	pos := strconv.Itoa(utf8.RuneCountInString(query[:at]) + 1)
	fragment := se.Expr
	switch se.Code {
	case syntax.ErrMissingParen, syntax.ErrUnexpectedParen, syntax.ErrTrailingBackslash:
		fragment = query[at : at+1]
	}
	e.Message = "the regex is not valid: " + se.Code.String() + " at position " + pos + "."
	if se.Code == syntax.ErrMissingParen || se.Code == syntax.ErrMissingBracket {
		e.Message = "the regex is not valid: " + se.Code.String() + " for the " + query[at:at+1] + " at position " + pos + "."
	}
	if what, construct, hint := unsupportedSyntax(query[at:], se); what != "" {
		fragment = construct
		e.Message = "the regex is not valid: " + construct + " at position " + pos + " is " + what + ", which RE2 (Go's regexp) does not support."
		e.Hint = hint
		e.WithDetail("unsupported", what)
	}
	return e.WithDetail("position", utf8.RuneCountInString(query[:at])+1).WithDetail("fragment", fragment)
}

// regexErrorOffset is the byte offset in query of what a parse error is
// about, or -1 when it is about the whole regex (too large, too deep).
func regexErrorOffset(query string, se *syntax.Error) int {
	switch se.Code {
	case syntax.ErrTrailingBackslash:
		return len(query) - 1
	case syntax.ErrMissingParen, syntax.ErrUnexpectedParen:
		// Expr is the whole regex: find the parenthesis.
		return parenOffset(query, se.Code == syntax.ErrMissingParen)
	case syntax.ErrLarge, syntax.ErrNestingDepth:
		return -1
	}
	// Elsewhere Expr is the bad token, which the parser reports as a
	// slice of the text it parsed: its address says where it is. (The same
	// text may occur earlier, escaped or in a class, where it is fine, so a
	// search for it could point at the wrong place.)
	if se.Expr == "" || query == "" {
		return -1
	}
	at := int(uintptr(unsafe.Pointer(unsafe.StringData(se.Expr))) - uintptr(unsafe.Pointer(unsafe.StringData(query))))
	if at < 0 || at+len(se.Expr) > len(query) {
		return -1 // not a slice of query: no position rather than a wrong one
	}
	return at
}

// parenOffset is the offset of the innermost parenthesis left open
// (missing), or of the first one that closes nothing, skipping escapes,
// \Q...\E and character classes; -1 when there is none.
func parenOffset(q string, missing bool) int {
	var open []int
	for i := 0; i < len(q); i++ {
		switch q[i] {
		case '\\':
			if strings.HasPrefix(q[i:], `\Q`) {
				end := strings.Index(q[i+2:], `\E`)
				if end < 0 {
					i = len(q)
					break
				}
				i += 2 + end + 1
				break
			}
			i++ // the escaped character is not syntax
		case '[':
			i = classEnd(q, i)
		case '(':
			open = append(open, i)
		case ')':
			if len(open) > 0 {
				open = open[:len(open)-1]
			} else if !missing {
				return i
			}
		}
	}
	if missing && len(open) > 0 {
		return open[len(open)-1]
	}
	return -1
}

// classEnd is the offset of the ] that closes the class opened at i (or the
// end of q): a ] first in the class is literal, as are escaped characters
// and [:name:].
func classEnd(q string, i int) int {
	j := i + 1
	if j < len(q) && q[j] == '^' {
		j++
	}
	if j < len(q) && q[j] == ']' {
		j++
	}
	for ; j < len(q); j++ {
		switch {
		case q[j] == '\\':
			j++
		case strings.HasPrefix(q[j:], "[:"):
			if end := strings.Index(q[j+2:], ":]"); end >= 0 {
				j += 2 + end + 1
			}
		case q[j] == ']':
			return j
		}
	}
	return len(q)
}

// unsupportedSyntax names the Perl construct that rest (the regex from the
// error on) starts with and RE2 leaves out, with the construct and a hint;
// "" when it is an ordinary mistake.
func unsupportedSyntax(rest string, se *syntax.Error) (what, construct, hint string) {
	const (
		lookaround  = "rewrite without lookaround: match the neighbouring text as part of the regex (a(?=b) as ab), or search in two steps"
		backref     = "rewrite without backreferences: spell the repeated text out ((a)\\1 as aa), or search for the first part and read the lines"
		noBacktrack = "drop it: RE2 never backtracks, so (?>x) is (?:x) and x*+ is x*"
	)
	for _, c := range []struct{ prefix, what, hint string }{
		{"(?=", "lookahead", lookaround},
		{"(?!", "negative lookahead", lookaround},
		{"(?<=", "lookbehind", lookaround},
		{"(?<!", "negative lookbehind", lookaround},
		{"(?P=", "a backreference", backref},
		{`\k`, "a backreference", backref},
		{`\g`, "a backreference", backref},
		{"(?>", "an atomic group", noBacktrack},
	} {
		if strings.HasPrefix(rest, c.prefix) {
			return c.what, c.prefix, c.hint
		}
	}
	if len(rest) >= 2 && rest[0] == '\\' && rest[1] >= '1' && rest[1] <= '9' {
		return "a backreference", rest[:2], backref
	}
	if n := len(se.Expr); se.Code == syntax.ErrInvalidRepeatOp && n >= 2 && se.Expr[n-1] == '+' && strings.IndexByte("*+?}", se.Expr[n-2]) >= 0 {
		return "a possessive quantifier", se.Expr, noBacktrack
	}
	return "", "", ""
}
