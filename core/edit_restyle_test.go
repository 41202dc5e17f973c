package core

import (
	"testing"

	"github.com/agentfs/agentfs/internal/editcases"
)

// TestRestyle: a match of the unicode rung writes newText in the file's
// typography; other rungs write it as given.
func TestRestyle(t *testing.T) {
	for _, tc := range editcases.Restyles {
		t.Run(tc.Name, func(t *testing.T) {
			n := tc.New
			out, oc, err := planBoth(t, tc.Src, []EditOp{{OldText: tc.Old, NewText: &n}})
			if err != nil || out != tc.Want || oc[0].Restyled != tc.Restyled {
				t.Fatalf("got %q %+v %v; want %q, restyled %v", out, oc, err, tc.Want, tc.Restyled)
			}
		})
	}
	n := "“y”"
	out, oc, err := planBoth(t, "s = \"x\"; t = 'x'\n", []EditOp{{OldText: "“x”", NewText: &n, ReplaceAll: true}})
	if err != nil || out != "s = \"y\"; t = 'x'\n" || !oc[0].Restyled {
		t.Fatalf("replaceAll: %q %+v %v", out, oc, err)
	}
}
