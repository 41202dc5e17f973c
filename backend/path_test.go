package backend

import "testing"

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a/./b/../c", "a/c"},
		{"/x//y/", "/x/y"},
		{"", "."},
		{"s3://b/p//x/./y", "s3://b/p/x/y"},
		{"s3://b/p/x/..", "s3://b/p"},
		{"s3://b/p/../../c/x", "s3://c/x"},
		{"s3://..", "s3://"},
		{"a/s3://b", "a/s3:/b"},
	} {
		if got := Clean(tc.in); got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ dir, name, want string }{
		{"", "x", "x"},
		{".", "x", "x"},
		{"s3://b/p", "x", "s3://b/p/x"},
		{"src", "../y", "y"},
	} {
		if got := Join(tc.dir, tc.name); got != tc.want {
			t.Errorf("Join(%q, %q) = %q, want %q", tc.dir, tc.name, got, tc.want)
		}
	}
}

func TestNamesDirectory(t *testing.T) {
	for p, want := range map[string]bool{
		"f.txt": false, "d/f.txt": false, "d/": true, "f.txt/": true, "f.txt/.": true, ".": true,
		"..": true, "d/..": true, "d/.f": false, "d/..f": false, "s3://b/k/": true, "s3://b/k": false,
	} {
		if got := NamesDirectory(p); got != want {
			t.Errorf("NamesDirectory(%q) = %v, want %v", p, got, want)
		}
	}
}
