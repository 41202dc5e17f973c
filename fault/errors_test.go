package fault

import (
	"encoding/base64"
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

// A base64 twin is whole or dropped, never cut: a path of 800 bytes, one
// of them not UTF-8, is whole as text, and its twin (1,068 bytes) was cut
// to the echo bound, which is no base64 and could not be passed back. A
// path cut as text has no twin.
func TestTwinsAreWholeOrDropped(t *testing.T) {
	whole := strings.Repeat("a", 799) + "\x80"
	cut := strings.Repeat("b", MaxEchoBytes+10) + "\x80"
	e := Errorf(CodeNotFound, "no such file or directory.").WithPath(whole)
	e.Suggestions = []string{strings.ToValidUTF8(whole, "\uFFFD"), strings.ToValidUTF8(cut, "\uFFFD")}
	e.SuggestionsBase64 = []string{base64.StdEncoding.EncodeToString([]byte(whole)), base64.StdEncoding.EncodeToString([]byte(cut))}
	j, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		PathBase64        string
		SuggestionsBase64 []string
	}
	if err := json.Unmarshal(j, &out); err != nil {
		t.Fatal(err)
	}
	for name, twin := range map[string]string{"pathBase64": out.PathBase64, "suggestionsBase64[0]": out.SuggestionsBase64[0]} {
		if b, err := base64.StdEncoding.DecodeString(twin); err != nil || string(b) != whole {
			t.Errorf("%s is not the whole path's base64 (%d bytes, %v)", name, len(twin), err)
		}
	}
	if out.SuggestionsBase64[1] != "" {
		t.Errorf("the twin of a cut suggestion is kept: %d bytes", len(out.SuggestionsBase64[1]))
	}
}

// Under a small bound an error keeps the start of its message before its
// details, the largest dropped first: a list of 50 lines stayed whole
// while the message was cut to nothing.
func TestWithinKeepsTheMessageBeforeDetails(t *testing.T) {
	lines := make([]int, 50)
	for i := range lines {
		lines[i] = i + 1
	}
	e := Errorf(CodeAmbiguousMatch, "oldText matches 50 places, at lines 1, 2, 3 and more: give more context so that it matches one, or set replaceAll.").
		WithPath("sub/b.txt").WithDetail("lines", lines).WithDetail("edit", 0).WithHint("add lines around the place meant")
	b := e.Within(300)
	j, err := b.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if len(j) > 300 || !strings.HasPrefix(b.Message, "oldText matches 50 places") || b.Details["lines"] != nil || b.Details["edit"] != 0 {
		t.Fatalf("within 300 bytes: %s", j)
	}
}
