package editmatch

import (
	"testing"

	"github.com/agentfs/agentfs/internal/editcases"
)

// apply replaces every match of old in src with new, as an edit of one
// oldText does, and reports whether any was restyled.
func apply(t *testing.T, src, old, new string) (string, bool) {
	t.Helper()
	tx := New(src)
	ms := tx.Locate(old)
	if len(ms) == 0 {
		t.Fatalf("%q not found in %q", old, src)
	}
	rw := tx.Rewriter(old, new, ms[0].Rung)
	out, at, restyledAny := "", 0, false
	for _, m := range ms {
		repl, restyled, _, err := rw.Rewrite(m)
		if err != nil {
			t.Fatal(err)
		}
		out += src[at:m.Start] + repl
		at, restyledAny = m.End, restyledAny || restyled
	}
	return out + src[at:], restyledAny
}

// TestRestyle: a match of the unicode rung writes newText in the file's
// typography; other rungs write it as given. (core's TestRestyle checks
// the same through the edit plan.)
func TestRestyle(t *testing.T) {
	for _, tc := range editcases.Restyles {
		t.Run(tc.Name, func(t *testing.T) {
			out, restyled := apply(t, tc.Src, tc.Old, tc.New)
			if out != tc.Want || restyled != tc.Restyled {
				t.Fatalf("got %q, restyled %v; want %q, %v", out, restyled, tc.Want, tc.Restyled)
			}
		})
	}
	if out, restyled := apply(t, "s = \"x\"; t = 'x'\n", "“x”", "“y”"); out != "s = \"y\"; t = 'x'\n" || !restyled {
		t.Fatalf("every match: %q, restyled %v", out, restyled)
	}
}
