package fault

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// An echoed string is cut to MaxEchoBytes, marker included, and the marker
// counts the bytes of the original left out, however often the error is
// bounded: Within bounds it, and its MarshalJSON bounds it again.
func TestCutEchoCountsTheOriginal(t *testing.T) {
	for _, n := range []int{MaxEchoBytes + 1, 5000, 100000} {
		e := InvalidArgument("mode must be content, not %q.", strings.Repeat("a", n))
		j, err := e.Within(4 << 10).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ Message string }
		if err := json.Unmarshal(j, &out); err != nil {
			t.Fatal(err)
		}
		kept, marker, ok := strings.Cut(out.Message, "…[")
		if !ok || len(out.Message) > MaxEchoBytes {
			t.Fatalf("%d bytes: message of %d bytes %q", n, len(out.Message), out.Message[max(0, len(out.Message)-40):])
		}
		want := len(e.Message) - len(kept)
		if marker != strconv.Itoa(want)+" more bytes]" {
			t.Errorf("%d bytes: marker %q, want %d more bytes", n, marker, want)
		}
	}
}
