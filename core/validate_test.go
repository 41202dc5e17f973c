package core

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/agentfs/agentfs/fault"
)

type itemLike struct {
	Name  string  `json:"name" required:"true" help:"a name"`
	Value *string `json:"value" required:"true" help:"a value"`
}

type constrained struct {
	Path  string     `json:"path" required:"true" help:"a path"`
	Limit int        `json:"limit,omitempty" min:"1" max:"10" default:"5" help:"a limit"`
	Kind  string     `json:"kind,omitempty" enum:"file|f,dir" default:"file" help:"a kind"`
	Back  int64      `json:"back,omitempty" min:"0" help:"a position"`
	Items []itemLike `json:"items,omitempty" help:"items"`
	Code  string     `json:"code,omitempty" pattern:"^[a-z]{2}$" patternIs:"two small letters" help:"a code"`
}

// TestValidate: a field with a flag is named by it (--limit), which the
// command line respells as the JSON field for a caller who sent JSON; a
// nested one by its JSON path (items[1].value).
func TestValidate(t *testing.T) {
	empty := ""
	cases := []struct {
		name string
		req  constrained
		msg  string // "" when valid
	}{
		{name: "valid", req: constrained{Path: "a", Limit: 10, Kind: "dir", Back: 0}},
		{name: "left out is the default", req: constrained{Path: "a"}},
		{name: "other spelling", req: constrained{Path: "a", Kind: "f"}},
		{name: "required", req: constrained{}, msg: "--path is required."},
		{name: "below min", req: constrained{Path: "a", Limit: -1}, msg: "--limit must be at least 1, not -1."},
		{name: "above max", req: constrained{Path: "a", Limit: 11}, msg: "--limit must be at most 10, not 11."},
		{name: "int64", req: constrained{Path: "a", Back: -1}, msg: "--back must be at least 0, not -1."},
		{name: "enum", req: constrained{Path: "a", Kind: "pipe"}, msg: `--kind must be file or dir, not "pipe".`},
		{name: "pattern", req: constrained{Path: "a", Code: "en"}},
		{name: "not the pattern", req: constrained{Path: "a", Code: "eng"}, msg: `--code "eng" is not two small letters.`},
		{name: "nested", req: constrained{Path: "a", Items: []itemLike{{Name: "x", Value: &empty}, {Name: "y"}}},
			msg: "items[1].value is required."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(&tc.req)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e := fault.AsError(err)
			if err == nil || e.Code != fault.CodeInvalidArgument || e.Message != tc.msg || e.Hint == "" {
				t.Fatalf("got %+v, want INVALID_ARGUMENT %q with a hint", e, tc.msg)
			}
		})
	}
	if err := Validate(constrained{Path: "a", Limit: 11}); err == nil {
		t.Error("a request given by value is not checked")
	}
	e := fault.AsError(Validate(constrained{Path: "a", Limit: 11}))
	if want := "give --limit between 1 and 10, or leave it out for the default 5; --limit: a limit"; e.Hint != want {
		t.Errorf("hint %q, want %q", e.Hint, want)
	}
}

// TestFindTypeSpellings: every spelling the type tag admits has its filter,
// since the filter relies on Validate.
func TestFindTypeSpellings(t *testing.T) {
	for _, f := range Fields(reflect.TypeFor[FindRequest]()) {
		if f.JSON != "type" {
			continue
		}
		for s := range f.spellings {
			if typeFilters[s] == nil {
				t.Errorf("type %q has no filter", s)
			}
		}
		if len(typeFilters) != len(f.spellings)+1 {
			t.Errorf("typeFilters has spellings the type tag does not admit")
		}
	}
}

// TestDefaultsAgree: the default a schema states is the one the tool uses.
func TestDefaultsAgree(t *testing.T) {
	want := map[reflect.Type]map[string]string{
		reflect.TypeFor[ReadRequest](): {"limit": strconv.Itoa(ReadMaxLines), "lineTruncation": "chars:" + strconv.Itoa(ReadLineChars)},
		reflect.TypeFor[LsRequest]():   {"limit": strconv.Itoa(LsDefaultLimit)},
		reflect.TypeFor[FindRequest](): {"limit": strconv.Itoa(FindDefaultLimit)},
		reflect.TypeFor[GrepRequest](): {"limit": strconv.Itoa(GrepDefaultLimit), "timeout": GrepDefaultTimeout.String(),
			"mode": ModeContent},
	}
	for rt, fields := range want {
		for _, f := range Fields(rt) {
			if d, ok := fields[f.JSON]; ok && f.Default != d {
				t.Errorf("%s.%s: default tag %q, the tool uses %q", rt.Name(), f.JSON, f.Default, d)
			}
		}
	}
}

func TestRequestSchema(t *testing.T) {
	got, err := json.Marshal(RequestSchema(reflect.TypeFor[constrained]()))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"a path","minLength":1},` +
		`"limit":{"type":"integer","description":"a limit","minimum":1,"maximum":10,"default":5},` +
		`"kind":{"type":"string","description":"a kind","enum":["file","dir"],"default":"file"},` +
		`"back":{"type":"integer","description":"a position","minimum":0},` +
		`"items":{"type":"array","description":"items","items":{"type":"object","properties":{` +
		`"name":{"type":"string","description":"a name","minLength":1},"value":{"type":"string","description":"a value"}},"required":["name","value"]}},` +
		`"code":{"type":"string","description":"a code","pattern":"^[a-z]{2}$"}},` +
		`"required":["path"]}`
	if string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}
