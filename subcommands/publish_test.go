package subcommands

import (
	"strings"
	"testing"
)

// TestProgressBar: a small upload draws nothing; a large one draws each
// percent once, on one line rewritten in place, ended at the total.
func TestProgressBar(t *testing.T) {
	for _, tc := range []struct {
		name  string
		total int64
		draws int
	}{
		{"small", progressMinBytes - 1, 0},
		{"large", 10 << 20, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			bar := progressBar(&b)
			for _, done := range []int64{0, 1, tc.total / 2, tc.total} {
				bar(done, tc.total)
			}
			out := b.String()
			if got := strings.Count(out, "\r"); got != tc.draws {
				t.Fatalf("%d draws, want %d: %q", got, tc.draws, out)
			}
			if tc.draws > 0 && !strings.HasSuffix(out, "100% 10/10 MiB\n") {
				t.Errorf("does not end at the total: %q", out)
			}
		})
	}
}
