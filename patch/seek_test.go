package patch

import "testing"

func TestLadder(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		old   []string
		start int
		at    int
		rung  string
		ok    bool
	}{
		{"exact", []string{"a", "b", "c"}, []string{"b", "c"}, 0, 1, RungExact, true},
		{"from start", []string{"x", "y", "x"}, []string{"x"}, 1, 2, RungExact, true},
		{"trailing whitespace", []string{"a  ", "b\t"}, []string{"a", "b"}, 0, 0, RungTrailingWhitespace, true},
		{"whitespace", []string{"  a", "\tb "}, []string{"a", "b"}, 0, 0, RungWhitespace, true},
		{"unicode", []string{"a \u2013 b", "\u201cq\u201d\u00a0\u2019s"}, []string{"a - b", `"q" 's`}, 0, 0, RungUnicode, true},
		{"a stricter rung wins over an earlier window", []string{"a ", "a"}, []string{"a"}, 0, 1, RungExact, true},
		{"empty old is at start", []string{"a"}, nil, 1, 1, RungExact, true},
		{"longer than the file", []string{"a"}, []string{"a", "b"}, 0, 0, "", false},
		{"start past the end", []string{"a"}, []string{"a"}, 1, 0, "", false},
		{"absent", []string{"a", "b"}, []string{"c"}, 0, 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, rung, ok := Ladder.Seek(tt.lines, tt.old, tt.start)
			if at != tt.at || rung != tt.rung || ok != tt.ok {
				t.Errorf("got %d %q %v, want %d %q %v", at, rung, ok, tt.at, tt.rung, tt.ok)
			}
		})
	}
}
