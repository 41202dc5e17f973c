package search

import (
	"testing"
)

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
