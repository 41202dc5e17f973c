package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/internal/allocs"
)

type editLike struct {
	OldText    string `json:"oldText" alias:"old_string"`
	NewText    string `json:"newText" alias:"new_string"`
	ReplaceAll bool   `json:"replaceAll,omitempty" alias:"replace_all"`
}

type requestLike struct {
	Path   string     `json:"path" arg:"0" alias:"file_path"`
	Offset int        `json:"offset,omitempty"`
	Bytes  *int64     `json:"byteOffset,omitempty"`
	Edits  []editLike `json:"edits,omitempty" flag:"-"`
	Wait   Duration   `json:"wait,omitempty"`
	Precondition
}

func TestDecodeJSON(t *testing.T) {
	cases := []struct {
		name, in string
		want     requestLike
		code     fault.Code
		msg      string
	}{
		{name: "plain", in: `{"path":"a","offset":3}`, want: requestLike{Path: "a", Offset: 3}},
		{name: "alias", in: `{"file_path":"a"}`, want: requestLike{Path: "a"}},
		{name: "nested aliases", in: `{"path":"a","edits":[{"old_string":"x","new_string":"y","replace_all":true}]}`,
			want: requestLike{Path: "a", Edits: []editLike{{"x", "y", true}}}},
		{name: "embedded", in: `{"path":"a","expectedVersion":"v1"}`,
			want: requestLike{Path: "a", Precondition: Precondition{ExpectedVersion: "v1"}}},
		{name: "typo", in: `{"path":"a","ofset":3}`, code: fault.CodeInvalidArgument, msg: `did you mean "offset"`},
		{name: "nested typo", in: `{"edits":[{"oldTxt":"x"}]}`, code: fault.CodeInvalidArgument, msg: `"edits[0].oldText"`},
		{name: "unknown far", in: `{"zzzzzzzzzz":1}`, code: fault.CodeInvalidArgument, msg: `unknown field "zzzzzzzzzz"`},
		{name: "twice via alias", in: `{"path":"a","file_path":"b"}`, code: fault.CodeInvalidArgument, msg: "twice"},
		{name: "wrong type", in: `{"offset":"3"}`, code: fault.CodeInvalidArgument, msg: `"offset" must be an integer`},
		// An element's field is named with the element's index, as a
		// typo is: encoding/json's own error said edits.oldText.
		{name: "wrong type in an element", in: `{"edits":[{"oldText":"x"},{"oldText":5}]}`, code: fault.CodeInvalidArgument, msg: `"edits[1].oldText" must be a string, not a JSON number`},
		{name: "bool in an element", in: `{"edits":[{"replaceAll":"yes"}]}`, code: fault.CodeInvalidArgument, msg: `"edits[0].replaceAll" must be true or false, not a JSON string`},
		{name: "an element not an object", in: `{"edits":[{"oldText":"x"},"y"]}`, code: fault.CodeInvalidArgument, msg: `"edits[1]" must be an object, not a JSON string`},
		{name: "an object for an array", in: `{"edits":{"oldText":"x"}}`, code: fault.CodeInvalidArgument, msg: `"edits" must be an array, not a JSON object`},
		{name: "an array for a string", in: `{"path":["a"]}`, code: fault.CodeInvalidArgument, msg: `"path" must be a string, not a JSON array`},
		{name: "null is left out", in: `{"path":null,"edits":[null]}`, want: requestLike{Edits: []editLike{{}}}},
		// JSON Schema's integer: what a client that checks against the
		// tool's schema sends.
		{name: "an integer written 3.0", in: `{"offset":3.0}`, want: requestLike{Offset: 3}},
		{name: "an integer written 3e1", in: `{"offset":3e1}`, want: requestLike{Offset: 30}},
		{name: "no integer", in: `{"offset":3.5}`, code: fault.CodeInvalidArgument, msg: `"offset" must be an integer`},
		{name: "past 2^53", in: `{"offset":1e300}`, code: fault.CodeInvalidArgument, msg: `"offset" must be an integer`},
		// Exactly: through a float64, these were taken as 1 and 2^53.
		{name: "a fraction near 1", in: `{"offset":0.99999999999999999}`, code: fault.CodeInvalidArgument, msg: `"offset" must be an integer`},
		{name: "2^53+1 as a decimal", in: `{"offset":9007199254740993.0}`, code: fault.CodeInvalidArgument, msg: `"offset" must be an integer`},
		{name: "a long mantissa", in: `{"offset":3.000000000000000000000000000000}`, want: requestLike{Offset: 3}},
		{name: "an exponent past float64", in: `{"offset":1e-999999999}`, code: fault.CodeInvalidArgument, msg: `"offset" must be an integer`},
		// Not parsed (in time that grows with the square of its length).
		{name: "a million digits", in: `{"offset":1.` + strings.Repeat("0", 1e6) + `}`, code: fault.CodeInvalidArgument, msg: `"offset" must be an integer`},
		{name: "a key twice, deep", in: `{"edits":[{"oldText":"x"},{"oldText":"x","oldText":"y"}]}`, code: fault.CodeInvalidArgument, msg: `"edits[1].oldText" is given twice`},
		{name: "nested too deep", in: `{"path":"a","x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, code: fault.CodeInvalidArgument, msg: "nested more than 64 deep"},
		{name: "nested 64 deep", in: `{"path":"a","x":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`, code: fault.CodeInvalidArgument, msg: `unknown field "x"`},
		{name: "not an object", in: `[1]`, code: fault.CodeInvalidArgument, msg: "JSON object"},
		{name: "trailing data", in: `{"path":"a"} {}`, code: fault.CodeInvalidArgument, msg: "after"},
		{name: "broken", in: `{"path":`, code: fault.CodeInvalidArgument, msg: "not valid JSON"},
		{name: "empty", in: ``, code: fault.CodeInvalidArgument, msg: "the request is empty"},
		// Saved by PowerShell 5 (Out-File, >): it was "not valid UTF-8
		// (byte 0)", and the lines after its first "invalid character
		// '\x00'", neither saying why.
		{name: "UTF-16LE with a BOM", in: "\xff\xfe{\x00}\x00", code: fault.CodeInvalidArgument, msg: "UTF-16"},
		{name: "UTF-16BE with a BOM", in: "\xfe\xff\x00{\x00}", code: fault.CodeInvalidArgument, msg: "UTF-16"},
		{name: "a UTF-16LE line after the first", in: "\x00{\x00\"\x00a\x00\"\x00:\x001\x00}\x00", code: fault.CodeInvalidArgument, msg: "UTF-16"},
		// NULs alone were called UTF-16 too.
		{name: "a NUL", in: "\x00", code: fault.CodeInvalidArgument, msg: "not valid JSON"},
		{name: "NULs", in: "\x00\x00\x00", code: fault.CodeInvalidArgument, msg: "not valid JSON"},
		{name: "a NUL in a string", in: "{\"path\":\"a\x00b\"}", code: fault.CodeInvalidArgument, msg: "not valid JSON"},
		{name: "base64 path", in: `{"pathBase64":"YmFk/y50eHQ="}`, want: requestLike{Path: "bad\xff.txt"}},
		{name: "base64 and path", in: `{"path":"a","pathBase64":"YQ=="}`, code: fault.CodeInvalidArgument, msg: "twice"},
		{name: "bad base64", in: `{"pathBase64":"%%"}`, code: fault.CodeInvalidArgument, msg: "base64"},
		{name: "int64 pointer", in: `{"byteOffset":0}`, want: requestLike{Bytes: new(int64)}},
		// A type that decodes itself is refused under the field's name,
		// as the flag form names the flag.
		{name: "duration", in: `{"wait":"2s"}`, want: requestLike{Wait: Duration(2 * time.Second)}},
		{name: "bad duration", in: `{"wait":"soon"}`, code: fault.CodeInvalidArgument, msg: `wait: "soon" is not a duration`},
		{name: "duration out of range", in: `{"wait":86401}`, code: fault.CodeInvalidArgument, msg: "wait: a duration must be"},
		{name: "empty precondition", in: `{"expectedVersion":""}`, code: fault.CodeInvalidArgument, msg: "expectedVersion is given empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got requestLike
			err := DecodeJSON([]byte(tc.in), &got)
			if tc.code != "" {
				var e *fault.Error
				if !errors.As(err, &e) || e.Code != tc.code || !strings.Contains(e.Message, tc.msg) {
					t.Fatalf("err = %v, want %s containing %q", err, tc.code, tc.msg)
				}
				if e.Hint == "" {
					t.Errorf("error without a hint: %v", e)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A request nested deep is refused in memory that grows with its length:
// the path to each value was built anew at every level, and 20,000
// levels (40 KB) took 640 MB and 6 s to refuse.
func TestDeepRequestCostsItsLength(t *testing.T) {
	in := []byte(`{"path":"a","x":` + strings.Repeat("[", 1e6) + strings.Repeat("]", 1e6) + `}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := DecodeJSON(in, &requestLike{})
	runtime.ReadMemStats(&after)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidArgument {
		t.Fatalf("err = %v, want INVALID_ARGUMENT", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4*uint64(len(in)) {
		t.Fatalf("refusing %d bytes allocated %d", len(in), n)
	}
}

func TestFieldsFlagsAndArgs(t *testing.T) {
	got := map[string]FieldSpec{}
	for _, f := range Fields(reflect.TypeFor[requestLike]()) {
		got[f.JSON] = f
	}
	if got["byteOffset"].Flag != "byte-offset" || got["path"].Arg != 0 || got["edits"].Flag != "" {
		t.Fatalf("flags: %+v", got)
	}
	if got["expectedSha256"].Flag != "expected-sha256" || len(got["expectedSha256"].Index) != 2 {
		t.Fatalf("embedded fields: %+v", got["expectedSha256"])
	}
}

func TestAsError(t *testing.T) {
	if e := fault.AsError(errors.New("boom")); e.Code != fault.CodeIOError || e.Hint == "" {
		t.Errorf("AsError of a plain error: %+v", e)
	}
}

func TestNearest(t *testing.T) {
	names := []string{"README.md", "main.go", "Main.go", "mian.go", "other.txt", "readme.txt"}
	got := Nearest("main.go", names, 5)
	if len(got) == 0 || got[0] != "Main.go" {
		t.Fatalf("Nearest = %v, want Main.go first (same name, other case)", got)
	}
	for _, g := range got {
		if g == "other.txt" {
			t.Fatalf("Nearest suggested an unrelated name: %v", got)
		}
	}
	for _, tc := range []struct{ name, want string }{
		{"limt", "limit"},
		{"qqqqqqq", ""},
		{"lss", "ls"},
		// One letter is one edit from any other: no typo to point at.
		{"x", ""},
		{"ab", ""},
		{"la", "ls"},
	} {
		if got := Closest(tc.name, []string{"limit", "offset", "ls", "q", "i"}); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// FuzzDecodeJSON: any input decodes or gives INVALID_ARGUMENT, never a panic
// or an untyped error.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"path":"a"}`, `{"edits":[{"old_string":"x"}]}`, `{"offset":1e99}`, `{"byteOffset":-1}`, `null`, `{"a":{"b":[]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r requestLike
		err := DecodeJSON(data, &r)
		if err != nil {
			var e *fault.Error
			if !errors.As(err, &e) || e.Code != fault.CodeInvalidArgument {
				t.Fatalf("untyped error %v for %q", err, data)
			}
			return
		}
		// The oracle: what DecodeJSON accepts, encoding/json decodes to the
		// same value once aliases and base64 twins are spelled as their
		// fields, which re-encoding the decoded value does.
		if !utf8.Valid(data) {
			t.Fatalf("bytes that are not UTF-8 were accepted: %q", data)
		}
		canon, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var again, std requestLike
		same := func(a, b requestLike) bool {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			return bytes.Equal(ja, jb) // an empty and a nil list are one value here
		}
		if err := DecodeJSON(canon, &again); err != nil || !same(again, r) {
			t.Fatalf("%q decoded to %+v; its re-encoding %s decodes to %+v, %v", data, r, canon, again, err)
		}
		if !bytes.Contains(data, []byte("_path")) && !bytes.Contains(data, []byte("Base64")) && !bytes.Contains(data, []byte("_string")) {
			err := json.Unmarshal(data, &std)
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") {
				return // an integer written otherwise (3e1, 0e99), which DecodeJSON takes (integral)
			}
			if err != nil || !same(std, r) {
				t.Fatalf("%q: DecodeJSON gives %+v, encoding/json %+v (%v)", data, r, std, err)
			}
		}
	})
}

// TestLineTruncationAsRequested: lineTruncation given as "" counts as left
// out, as any string does (it was INVALID_ARGUMENT), and so does an object
// whose units are both null, as OpenAI's strict form sends one left out;
// its errors name the field once ("lineTruncation: lineTruncation: want").
func TestLineTruncationAsRequested(t *testing.T) {
	for _, tc := range []struct {
		value   string
		set     bool
		message string // a prefix of the error's, "" for none
	}{
		{`""`, false, ""},
		{`null`, false, ""},
		{`{}`, false, ""},
		{`{"chars":null,"bytes":null}`, false, ""},
		{`"chars:5"`, true, ""},
		{`{"chars":5,"bytes":null}`, true, ""},
		{`"bogus"`, false, "lineTruncation: want chars:N"},
		{`{"chars":5,"bytes":5}`, false, "lineTruncation takes exactly one"},
	} {
		var req ReadRequest
		err := DecodeJSON([]byte(`{"path":"a","lineTruncation":`+tc.value+`}`), &req)
		switch e := fault.AsError(err); {
		case tc.message == "" && err != nil, tc.message != "" && (e == nil || !strings.HasPrefix(e.Message, tc.message)):
			t.Errorf("%s: %v, want %q", tc.value, err, tc.message)
		case err == nil && req.LineTruncation.set() != tc.set:
			t.Errorf("%s: %+v, set %v", tc.value, req.LineTruncation, tc.set)
		}
	}
}

// TestIntegerPastInt64: an integer JSON number past int64 is refused as
// out of range; it was "must be an integer, not a JSON number".
func TestIntegerPastInt64(t *testing.T) {
	for _, n := range []string{"100000000000000000000", "-99999999999999999999"} {
		var req ReadRequest
		err := DecodeJSON([]byte(`{"path":"a","offset":`+n+`}`), &req)
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidArgument || strings.Contains(e.Message, "must be an integer") || !strings.Contains(e.Message, "out of range") {
			t.Errorf("offset %s: %v, want INVALID_ARGUMENT saying it is out of range", n, err)
		}
	}
}

// TestTypeErrorNamesTheJSONField: a wrong type names the field as the
// request spells it; it named the Go struct it is embedded in
// ("Precondition.expectedVersion"), which a caller copying it then sent.
func TestTypeErrorNamesTheJSONField(t *testing.T) {
	var req WriteRequest
	err := DecodeJSON([]byte(`{"path":"a","content":"x","expectedVersion":5}`), &req)
	if e := fault.AsError(err); e == nil || !strings.Contains(e.Message, `field "expectedVersion" must be`) || strings.Contains(e.Hint, "Precondition") {
		t.Errorf("expectedVersion 5: %v, want the field named expectedVersion", err)
	}
}

// TestOwnDecodingNamesTheFieldOnce: a field's own decoding error that names
// the field is not prefixed with it again ("lineTruncation:
// lineTruncation must be").
func TestOwnDecodingNamesTheFieldOnce(t *testing.T) {
	var req ReadRequest
	err := DecodeJSON([]byte(`{"path":"a","lineTruncation":5}`), &req)
	if e := fault.AsError(err); e == nil || !strings.HasPrefix(e.Message, "lineTruncation must be") {
		t.Errorf("lineTruncation 5: %v, want the field named once", err)
	}
}

// TestForeignFieldSuggested: the fields other agents' tools name, which
// are not taken (their meaning or shape differs), are refused with the
// field to send instead, where a spelling distance found none and the
// hint only listed every field (Claude Code's Grep, the text editor
// tool's str_replace, OpenCode's filePath).
func TestForeignFieldSuggested(t *testing.T) {
	cases := []struct {
		req  any
		in   string
		want string
	}{
		{&GrepRequest{}, `{"pattern":"x","-i":true}`, "ignoreCase"},
		{&GrepRequest{}, `{"pattern":"x","-A":2}`, "context"},
		{&GrepRequest{}, `{"pattern":"x","-C":2}`, "context"},
		{&GrepRequest{}, `{"pattern":"x","output_mode":"count"}`, "mode"},
		{&GrepRequest{}, `{"pattern":"x","head_limit":5}`, "limit"},
		{&GrepRequest{}, `{"pattern":"x","type":"go"}`, "include"},
		{&EditRequest{}, `{"path":"f","old_str":"a","newText":"b"}`, "oldText"},
		{&EditRequest{}, `{"path":"f","oldText":"a","new_str":"b"}`, "newText"},
		{&EditRequest{}, `{"path":"f","edits":[{"old_str":"a","newText":"b"}]}`, "oldText"},
		{&WriteRequest{}, `{"path":"f","file_text":"x"}`, "content"},
		{&ReadRequest{}, `{"filePath":"f"}`, "path"},
		{&ReadRequest{}, `{"target_file":"f"}`, "path"},
		{&ReadRequest{}, `{"path":"f","view_range":[1,2]}`, "offset"},
		{&ReadRequest{}, `{"path":"f","-n":true}`, "lineNumbers"},
	}
	for _, tc := range cases {
		err := DecodeJSON([]byte(tc.in), tc.req)
		var e *fault.Error
		if !errors.As(err, &e) || e.Code != fault.CodeInvalidArgument {
			t.Errorf("%s: err = %v, want INVALID_ARGUMENT", tc.in, err)
			continue
		}
		if len(e.Suggestions) != 1 || e.Suggestions[0] != tc.want {
			t.Errorf("%s: suggestions %q (%s), want [%s]", tc.in, e.Suggestions, e.Message, tc.want)
		}
	}
}

// TestGrepLineNumbersKey: Claude Code's Grep sends "-n": true, which grep
// has no field for (its lines come numbered): the hint says to drop it.
func TestGrepLineNumbersKey(t *testing.T) {
	err := DecodeJSON([]byte(`{"pattern":"x","-n":true}`), &GrepRequest{})
	var e *fault.Error
	if !errors.As(err, &e) || !strings.HasPrefix(e.Hint, `drop "-n": every matching line comes with its number`) {
		t.Fatalf("err = %v, want a hint to drop -n", err)
	}
}

// Every unknown field of an object is named in one error, each with the
// field it asks for: one at a time, an agent that sent Claude Code's
// Grep keys took a call for each.
func TestUnknownFieldsNamedAtOnce(t *testing.T) {
	cases := []struct {
		req     any
		in      string
		message string
		want    []string
	}{
		{&GrepRequest{}, `{"pattern":"x","-n":true,"output_mode":"content","-i":true}`,
			`unknown fields "-i" (did you mean "ignoreCase"?), "-n" (drop it: every matching line comes with its number), "output_mode" (did you mean "mode"?).`,
			[]string{"ignoreCase", "mode"}},
		{&EditRequest{}, `{"path":"f","edits":[{"old_str":"a","new_str":"b"}]}`,
			`unknown fields "edits[0].new_str" (did you mean "edits[0].newText"?), "edits[0].old_str" (did you mean "edits[0].oldText"?).`,
			[]string{"newText", "oldText"}},
		{&ReadRequest{}, `{"path":"f","zzzzzzzz":1,"qqqqqqqq":2}`,
			`unknown fields "qqqqqqqq", "zzzzzzzz".`, nil},
	}
	for _, tc := range cases {
		err := DecodeJSON([]byte(tc.in), tc.req)
		var e *fault.Error
		if !errors.As(err, &e) || e.Code != fault.CodeInvalidArgument {
			t.Errorf("%s: err = %v, want INVALID_ARGUMENT", tc.in, err)
			continue
		}
		if e.Message != tc.message || !slices.Equal(e.Suggestions, tc.want) {
			t.Errorf("%s: %q, suggestions %q; want %q, %q", tc.in, e.Message, e.Suggestions, tc.message, tc.want)
		}
	}
}

// A long string goes to its field around DecodeJSON's round trip through
// encoding/json, in a field, a pointer, a list's element and under an
// alias, the short ones beside it as they were: a 50 MB content
// allocated 870 MB (861 MB of RSS) to be refused as over write's 2 MiB.
func TestDecodeJSONHandsOnLongStrings(t *testing.T) {
	long := strings.Repeat("a\"b\\c\nd é \u2028", 100<<10)
	data, _ := json.Marshal(map[string]any{"file_path": "f", "edits": []any{
		map[string]any{"old_string": long + "1", "newText": long + "2"},
		map[string]any{"oldText": "x", "new_string": long + "3", "replaceAll": true},
		map[string]any{"oldText": long[:100], "newText": ""},
	}, "expectedVersion": "v"})
	var req EditRequest
	var err error
	n := allocs.Bytes(func() { err = DecodeJSON(data, &req) })
	if err != nil {
		t.Fatal(err)
	}
	e := req.Edits
	if req.Path != "f" || req.ExpectedVersion != "v" || len(e) != 3 || e[0].OldText != long+"1" || *e[0].NewText != long+"2" ||
		e[1].OldText != "x" || *e[1].NewText != long+"3" || !e[1].ReplaceAll || e[2].OldText != long[:100] || *e[2].NewText != "" {
		t.Fatalf("decoded %q, %d edits", req.Path, len(e))
	}
	if n > 6*uint64(len(data)) {
		t.Errorf("allocated %d MiB to decode %d MiB", n>>20, len(data)>>20)
	}
	var w WriteRequest
	data, _ = json.Marshal(map[string]any{"path": "f", "content": long})
	n = allocs.Bytes(func() { err = DecodeJSON(data, &w) })
	if err != nil || w.Content == nil || *w.Content != long {
		t.Fatalf("write: %v", err)
	}
	if n > 6*uint64(len(data)) {
		t.Errorf("allocated %d MiB to decode a write of %d MiB", n>>20, len(data)>>20)
	}
}

// CheckJSON, which no longer builds a tree for a request it passes,
// refuses what parseStrict refuses, and passes a long line allocating
// a fraction of it: a 50 MB batch line was decoded whole to be checked,
// then again for its tool.
func TestCheckJSONAsParseStrict(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, in := range []string{
		`{"a":1,"b":2}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a\\":1,"a":2}`, `{"a\\":1,"a\\\\":2}`,
		`{"x":{"a":1},"y":{"a":1}}`, `[{"a":1},{"a":1}]`, `{"a":[{"b":1,"b":2}]}`, `{"a":"\"a\":1,","a":2}`,
		`{"s":"{[\"\\","t":"}]"}`, `{"a":{}, "a":[]}`, `"a"`, `1`, `{"a":1} x`, `{"a":1`, `{"a":"\ud800"}`,
		`{"k":` + deep(63) + `}`, `{"k":` + deep(64) + `}`, deep(64), deep(65), `{"é":1,"\u00e9":2}`, `{"":1,"":2}`,
	} {
		_, want := parseStrict([]byte(in))
		if got := CheckJSON([]byte(in)); (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Errorf("%.60s: %v, parseStrict %v", in, got, want)
		}
	}
	line, _ := json.Marshal(map[string]any{"tool": "write", "args": map[string]any{"path": "f", "content": strings.Repeat("a\"b\n", 1<<20)}})
	var err error
	if n := allocs.Bytes(func() { err = CheckJSON(line) }); err != nil || n > uint64(len(line))/4 {
		t.Errorf("%v, allocated %d KiB to check %d KiB", err, n>>10, len(line)>>10)
	}
}
