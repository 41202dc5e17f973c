package search

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// A fixed string's words found as bytes (literalIndex) are the
// expression's: the same first match in every line, bytes that are not
// UTF-8 around it included, which both read as U+FFFD.
func TestLiteralWordsAgreeWithTheExpression(t *testing.T) {
	tokens := []string{"err", "Err", "ERR", "eRr", "error", "\u212Aelvin", "Kelvin", "kelvin", "_err", "err_", "erré", "éerr", "err1", "\u0663err", "err\u0301",
		" ", ".", "(", "\t", "\xe9", "\xc3", "\xe2\x82", "\x80", "é", "\u203f", "\uFFFD", "ab"}
	lits := []string{"err", "é", "err(", "(err", "e", "ab err", "\u0663", "ERR", "kelvin"}
	var fast, slow []*Words
	var names []string
	for _, lit := range lits {
		for _, fold := range []bool{false, true} {
			f, err := NewLiteralWords(lit, fold)
			if err != nil {
				t.Fatal(err)
			}
			flags := ""
			if fold {
				flags = "(?i)"
			}
			s, _ := NewWords(flags, regexp.QuoteMeta(lit))
			fast, slow, names = append(fast, f), append(slow, s), append(names, flags+lit)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	found := 0
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(7) {
			b.WriteString(tokens[rng.IntN(len(tokens))])
		}
		line := []byte(b.String())
		for k, lit := range names {
			fast, slow := fast[k], slow[k]
			got, want := fast.Index(line), slow.Index(line)
			if got != want || fast.Match(line) != slow.Match(line) {
				t.Fatalf("%q as a word in %q: at %d as bytes, %d by the expression", lit, line, got, want)
			}
			if got >= 0 {
				found++
			}
		}
	}
	if found == 0 {
		t.Fatal("no word found: the test proves too little")
	}
}

// FindAll finds the words next to one another, and sees the character
// before where it resumes.
func TestWordsFindAll(t *testing.T) {
	w, err := NewWords("", `a`)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.FindAll([]byte("a a ab a")); len(got) != 3 || got[0][0] != 0 || got[1][0] != 2 || got[2][0] != 7 {
		t.Fatalf("a as a word in %q: %v", "a a ab a", got)
	}
	w, _ = NewWords("", `x\.|^\.y`)
	if got := w.FindAll([]byte("x..y")); len(got) != 1 || got[0][0] != 0 {
		t.Fatalf(`x\.|^\.y as a word in x..y: %v, want x. alone`, got)
	}
}
