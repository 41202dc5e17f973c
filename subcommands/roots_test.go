package subcommands

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
)

func TestApartStoreRoots(t *testing.T) {
	for _, tc := range []struct {
		roots   []string
		spelled []string
		overlap string // the outer root named, "" when apart
	}{
		{[]string{"/w", "s3://b/x/"}, []string{"", "s3://b/x"}, ""},
		{[]string{"s3://b/x", "s3://b/x"}, []string{"s3://b/x", "s3://b/x"}, ""},
		{[]string{"s3://b/w1", "s3://b/w10"}, []string{"s3://b/w1", "s3://b/w10"}, ""},
		{[]string{"s3://b/x", "s3://c/x/y"}, []string{"s3://b/x", "s3://c/x/y"}, ""},
		{[]string{"s3://b/w1", "s3://b/w1/keep/sub"}, nil, "s3://b/w1"},
		{[]string{"s3://b/w1/keep/sub", "/w", "s3://b/w1/"}, nil, "s3://b/w1"},
		{[]string{"s3://b", "s3://b/x"}, nil, "s3://b"},
	} {
		got, err := apartStoreRoots(tc.roots)
		if tc.overlap == "" {
			if err != nil || !reflect.DeepEqual(got, tc.spelled) {
				t.Errorf("%q: %q, %v; want %q", tc.roots, got, err, tc.spelled)
			}
			continue
		}
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidArgument || !strings.Contains(e.Message, tc.overlap+" and ") {
			t.Errorf("%q: %v, want INVALID_ARGUMENT naming %s", tc.roots, err, tc.overlap)
		}
	}
}
