package index

import "testing"

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		query         string
		isRegex, fold bool
		want          string
	}{
		{query: "hello", want: "hel ell llo"},
		{query: "he", want: "+"},
		{query: "a.b", want: "a.b"},
		{query: `foo\w+bar`, isRegex: true, want: "foo bar"},
		{query: `\w+`, isRegex: true, want: "+"},
		{query: `(abc|xyz)def`, isRegex: true, want: "(abc bcd cde def)|(xyz yzd zde def)"},
		{query: `ab?cd`, isRegex: true, want: "acd|(abc bcd)"},
		{query: `ab*cd`, isRegex: true, want: "+"},
		{query: `func\s+main`, isRegex: true, want: "fun unc mai ain"},
		{query: `[ab]cd`, isRegex: true, want: "acd|bcd"},
		{query: "abc", fold: true, want: "ABC|ABc|AbC|Abc|aBC|aBc|abC|abc"},
		{query: "k", fold: true, want: "+"},
		{query: `x.*y`, isRegex: true, want: "+"},
		{query: "(a", isRegex: true, want: "+"},
		// U+FFFD matches a byte that is not UTF-8 too, whose trigrams differ.
		{query: "caf\uFFFD noir", want: "caf  no noi oir"},
		// Bytes that are not UTF-8 (queryBase64) are sought as they are.
		{query: "caf\xe9 n", want: "caf af? f?  ? n"},
	} {
		got := Plan(tc.query, tc.isRegex, tc.fold).String()
		if got != tc.want {
			t.Errorf("Plan(%q, regex=%v, fold=%v) = %s, want %s", tc.query, tc.isRegex, tc.fold, got, tc.want)
		}
	}
}

// A folded literal too long to spell in every case still requires, for
// each window of three runes, one of its spellings.
func TestPlanLongFoldedLiteral(t *testing.T) {
	q := Plan("abcdefgh", false, true)
	if q.All() || q.op != opAnd || len(q.sub) != 6 {
		t.Fatalf("want six windows, got %s", q)
	}
}
