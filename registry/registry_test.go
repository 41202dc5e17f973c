package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/assets"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// valid is a request each tool accepts on newTools' files.
var valid = map[string]string{
	"read":        `{"path":"a.txt"}`,
	"ls":          `{}`,
	"find":        `{}`,
	"grep":        `{"query":"a"}`,
	"write":       `{"path":"new.txt","content":"x"}`,
	"edit":        `{"path":"a.txt","oldText":"alpha","newText":"beta"}`,
	"rm":          `{"path":"gone.txt"}`,
	"mv":          `{"from":"a.txt","to":"b.txt"}`,
	"replace":     `{"query":"alpha","replacement":"beta"}`,
	"apply-patch": `{"patch":"*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+beta\n*** End Patch\n"}`,
	"publish":     `{"path":"a.txt"}`,
}

func newTools() *core.Tools {
	return &core.Tools{FS: memfs.New(map[string]string{"a.txt": "alpha\n", "d/b.txt": "bravo\n"}), Assets: linkStore{}}
}

// linkStore is a publish target that takes the content and gives a link.
type linkStore struct{}

func (linkStore) link(obj assets.Object) string {
	return "http://127.0.0.1:8080/" + obj.SHA256 + "/" + obj.Name
}

func (l linkStore) Open() (assets.Store, error) { return l, nil }

func (l linkStore) SampleLink(obj assets.Object) (string, error) { return l.link(obj), nil }

func (l linkStore) Put(_ context.Context, obj assets.Object, content io.Reader) (assets.Link, error) {
	_, err := io.Copy(io.Discard, content)
	return assets.Link{URL: l.link(obj), Expires: time.Now().Add(obj.Lifetime).Truncate(time.Second)}, err
}

func tool(t *testing.T, name string) Tool {
	t.Helper()
	for _, tl := range All() {
		if tl.Info().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// TestList: every tool is listed once, described for a model (never by
// its flags), with an object schema.
func TestList(t *testing.T) {
	var names []string
	for _, info := range List() {
		names = append(names, info.Name)
		if len(info.Description) < 100 || strings.Contains(info.Description, "--") {
			t.Errorf("%s: the description must say what the tool does, returns and is for, without flags: %q", info.Name, info.Description)
		}
		if info.InputSchema.Type != "object" || len(info.InputSchema.Properties) == 0 {
			t.Errorf("%s: input schema %+v", info.Name, info.InputSchema)
		}
	}
	if want := []string{"read", "ls", "find", "grep", "write", "edit", "rm", "apply-patch", "mv", "replace", "publish"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	if len(valid) != len(names) {
		t.Errorf("valid has %d requests for %d tools", len(valid), len(names))
	}
}

// TestSchemaDescribed fails when a field of a request, at any depth, has no
// description, names a flag (a model sends JSON), or states in words what
// belongs in its tags: a range, a bound or a default, which the schema and
// --help then state from them.
func TestSchemaDescribed(t *testing.T) {
	constraint := regexp.MustCompile(`\b(default|defaults|max|min|maximum|minimum|at most|at least)\b|\b\d+ to \d+\b`)
	var walk func(tool, at string, s *core.Schema)
	walk = func(tool, at string, s *core.Schema) {
		for _, p := range s.Properties {
			name := at + p.Name
			if strings.TrimSpace(p.Schema.Description) == "" {
				t.Errorf("%s: %s has no description", tool, name)
			}
			if m := constraint.FindString(p.Schema.Description); m != "" {
				t.Errorf("%s: %s states %q in its description; give it as a tag", tool, name, m)
			}
			if strings.Contains(p.Schema.Description, "--") {
				t.Errorf("%s: %s names a flag in its description; name the JSON field", tool, name)
			}
			walk(tool, name+".", p.Schema)
			if p.Schema.Items != nil {
				walk(tool, name+"[].", p.Schema.Items)
			}
		}
	}
	for _, info := range List() {
		walk(info.Name, "", info.InputSchema)
	}
}

// TestSchemaConstraints: required, enum, minimum, maximum and default
// appear in each schema where the request's tags declare them, including the
// constraints the tools used to check by hand.
func TestSchemaConstraints(t *testing.T) {
	props := map[string]*core.Schema{}
	required := map[string]bool{}
	var walk func(at string, s *core.Schema)
	walk = func(at string, s *core.Schema) {
		for _, r := range s.Required {
			required[at+r] = true
		}
		for _, p := range s.Properties {
			props[at+p.Name] = p.Schema
			if p.Schema.Items != nil {
				walk(at+p.Name+"[].", p.Schema.Items)
			}
		}
	}
	for _, info := range List() {
		walk(info.Name+".", info.InputSchema)
	}
	j := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	want := []struct{ field, keyword, value string }{
		{"read.path", "required", "true"},
		{"read.limit", "minimum", "1"},
		{"read.limit", "default", "2000"},
		{"read.byteOffset", "minimum", "0"},
		{"ls.limit", "minimum", "1"},
		{"ls.limit", "maximum", "1000"},
		{"ls.limit", "default", "200"},
		{"ls.offset", "minimum", "0"},
		{"ls.depth", "minimum", "1"},
		{"ls.depth", "maximum", "10"},
		{"find.type", "enum", `["file","dir","symlink","other","any"]`},
		{"find.type", "default", `"any"`},
		{"find.limit", "maximum", "1000"},
		{"find.offset", "minimum", "0"},
		{"grep.mode", "enum", `["content","files","count"]`},
		{"grep.context", "minimum", "0"},
		{"grep.context", "maximum", "10"},
		{"grep.limit", "maximum", "1000"},
		{"grep.offset", "minimum", "0"},
		{"grep.timeout", "default", `"30s"`},
		{"grep.timeout", "minimum", "0"},
		{"grep.timeout", "maximum", "86400"},
		{"publish.path", "required", "true"},
		{"publish.expiresIn", "default", `"1h"`},
		{"publish.expiresIn", "minimum", "1"},
		{"publish.expiresIn", "maximum", "604800"},
		{"write.path", "required", "true"},
		{"write.lineEnding", "enum", `["lf","crlf"]`},
		{"edit.path", "required", "true"},
		{"edit.edits[].oldText", "required", "true"},
		{"edit.edits[].newText", "required", "true"},
		{"rm.path", "required", "true"},
		// "" is refused (it passed the schema) where it is refused: a
		// required string's, and those the tool checks itself; not where
		// it is a value (a replacement or content that deletes).
		{"read.path", "minLength", "1"},
		{"mv.from", "minLength", "1"},
		{"mv.to", "minLength", "1"},
		{"replace.query", "minLength", "1"},
		{"replace.replacement", "minLength", "null"},
		{"grep.query", "minLength", "1"},
		{"apply-patch.patch", "minLength", "1"},
		{"edit.oldText", "minLength", "1"},
		{"edit.newText", "minLength", "null"},
		{"edit.edits[].oldText", "minLength", "1"},
		{"edit.edits[].newText", "minLength", "null"},
		{"write.content", "minLength", "null"},
		{"write.expectedVersion", "minLength", "1"},
	}
	for _, w := range want {
		p := props[w.field]
		if p == nil {
			t.Errorf("%s: no such property", w.field)
			continue
		}
		var got string
		switch w.keyword {
		case "required":
			got = fmt.Sprint(required[w.field])
		case "enum":
			got = j(p.Enum)
		case "minimum":
			got = j(p.Minimum)
		case "maximum":
			got = j(p.Maximum)
		case "default":
			got = j(p.Default)
		case "minLength":
			got = j(p.MinLength)
		}
		if got != w.value {
			t.Errorf("%s: %s is %s, want %s", w.field, w.keyword, got, w.value)
		}
	}
	// And the other way round: every tag of every request is in its schema.
	for _, tl := range All() {
		d := reflect.ValueOf(tl).Elem().FieldByName("Run").Type().In(2)
		info := tl.Info()
		for _, f := range core.Fields(d) {
			p := props[info.Name+"."+f.JSON]
			ranged := f.Min != nil || f.Max != nil // else the type's own range, if any
			if f.Required != required[info.Name+"."+f.JSON] || !slices.Equal(f.Enum, p.Enum) ||
				ranged && (!reflect.DeepEqual(f.Min, p.Minimum) || !reflect.DeepEqual(f.Max, p.Maximum)) || (f.Default != "") != (p.Default != nil) {
				t.Errorf("%s.%s: the schema %s does not state the tags %+v", info.Name, f.JSON, j(p), f)
			}
		}
	}
}

// TestSchemaViolationsRefused: a request that breaks its schema is refused
// by the tool with INVALID_ARGUMENT, whichever constraint it breaks, and a
// value at a bound is accepted. (A zero, as a client filling in every field
// sends it, is the field left out, whatever the minimum.) The cases are the hand-written ones below
// and, for every tool, one per required field, enum, minimum and maximum
// of its schema.
func TestSchemaViolationsRefused(t *testing.T) {
	type tc struct{ tool, request string }
	refused := []tc{
		{"read", `{}`},
		{"read", `{"path":""}`},
		{"read", `{"path":"a.txt","limit":-1}`},
		{"read", `{"path":"a.txt","byteOffset":-1,"offset":1}`},
		{"read", `{"path":"a.txt","lineTruncation":{"chars":-1}}`},
		{"ls", `{"depth":11}`},
		{"ls", `{"depth":-1}`},
		{"ls", `{"limit":1001}`},
		{"ls", `{"offset":-1}`},
		{"find", `{"type":"fifo"}`},
		{"find", `{"limit":0.5}`},
		{"find", `{"limit":-3}`},
		{"grep", `{"query":"a","mode":"lines"}`},
		{"grep", `{"query":"a","context":11}`},
		{"grep", `{"query":"a","context":-1}`},
		{"grep", `{"query":"a","timeout":"soon"}`},
		{"grep", `{"query":"a","limit":"10"}`},
		{"write", `{"content":"x"}`},
		{"write", `{"path":"new.txt","content":"x","lineEnding":"cr"}`},
		{"edit", `{"oldText":"alpha","newText":"beta"}`},
		{"edit", `{"path":"a.txt","edits":[{"oldText":"alpha"}]}`},
		{"edit", `{"path":"a.txt","edits":[{"newText":"beta"}]}`},
		{"edit", `{"path":"a.txt","edits":[{"oldText":"alpha","newText":"beta","replaceAll":"yes"}]}`},
		{"rm", `{}`},
		{"rm", `{"path":"gone.txt","recursive":1}`},
		{"publish", `{}`},
		{"publish", `{"path":"a.txt","expiresIn":"169h"}`},
		{"publish", `{"path":"a.txt","expiresIn":604801}`},
		{"publish", `{"path":"a.txt","expiresIn":0.5}`},
		{"publish", `{"path":"a.txt","expiresIn":"-1h"}`},
	}
	accepted := []tc{
		{"read", `{"path":"a.txt","limit":1,"byteOffset":0}`},
		{"ls", `{"depth":10,"limit":1000,"offset":0}`},
		{"ls", `{"depth":1,"limit":1}`},
		{"find", `{"type":"f"}`},
		{"find", `{"type":"other","limit":1000}`},
		{"grep", `{"query":"a","context":10,"mode":"count"}`},
		{"grep", `{"query":"a","context":0,"mode":"files","limit":1}`},
		{"write", `{"path":"new.txt","content":"x","lineEnding":"crlf"}`},
		{"publish", `{"path":"a.txt","expiresIn":604800}`},
		{"publish", `{"path":"a.txt","expiresIn":"168h"}`},
		{"publish", `{"path":"a.txt","expiresIn":"1s"}`},
	}
	for _, info := range List() {
		for _, p := range info.InputSchema.Properties {
			var base map[string]any
			if err := json.Unmarshal([]byte(valid[info.Name]), &base); err != nil {
				t.Fatal(err)
			}
			with := func(v any) string {
				m := map[string]any{}
				for k, x := range base {
					m[k] = x
				}
				if v == nil {
					delete(m, p.Name)
				} else {
					m[p.Name] = v
				}
				b, _ := json.Marshal(m)
				return string(b)
			}
			if slices.Contains(info.InputSchema.Required, p.Name) {
				refused = append(refused, tc{info.Name, with(nil)})
			}
			if p.Schema.Enum != nil {
				refused = append(refused, tc{info.Name, with("zzz")})
				for _, e := range p.Schema.Enum {
					accepted = append(accepted, tc{info.Name, with(e)})
				}
			}
			// "" is refused where the schema says minLength, and only
			// there (an enum's "" is left out): {"path":""} passed the
			// schema, then was refused as "path is required".
			if p.Schema.Type == "string" && p.Schema.Enum == nil {
				if p.Schema.MinLength != nil {
					refused = append(refused, tc{info.Name, with("")})
				} else {
					accepted = append(accepted, tc{info.Name, with("")})
				}
			}
			if p.Schema.Minimum != nil {
				// 0 is no value below 1: a zero is the field left out.
				below := *p.Schema.Minimum - 1
				if below == 0 {
					below = -1
				}
				refused = append(refused, tc{info.Name, with(below)})
				accepted = append(accepted, tc{info.Name, with(*p.Schema.Minimum)})
			}
			if p.Schema.Maximum != nil {
				refused = append(refused, tc{info.Name, with(*p.Schema.Maximum + 1)})
				accepted = append(accepted, tc{info.Name, with(*p.Schema.Maximum)})
			}
		}
	}
	for _, c := range refused {
		_, err := tool(t, c.tool).Call(context.Background(), newTools(), []byte(c.request))
		if e := fault.AsError(err); err == nil || e.Code != fault.CodeInvalidArgument {
			t.Errorf("%s %s: %v, want INVALID_ARGUMENT", c.tool, c.request, err)
		}
	}
	for _, c := range accepted {
		// Accepted by the schema: the tool may still answer otherwise (a
		// replace whose expectedCount is not the count found is STALE).
		_, err := tool(t, c.tool).Call(context.Background(), newTools(), []byte(c.request))
		if e := fault.AsError(err); e != nil && e.Code == fault.CodeInvalidArgument {
			t.Errorf("%s %s: %v, want it accepted", c.tool, c.request, err)
		}
	}
}

// TestMutates: a tool that declares it changes nothing runs read-only, and
// one that declares it mutates is refused there.
func TestMutates(t *testing.T) {
	for _, tl := range All() {
		info := tl.Info()
		tools := newTools()
		tools.ReadOnly = true
		_, err := tl.Call(context.Background(), tools, []byte(valid[info.Name]))
		readOnly := fault.AsError(err) != nil && fault.AsError(err).Code == fault.CodeReadOnly
		if readOnly == info.Annotations.ReadOnlyHint {
			t.Errorf("%s: readOnlyHint %v, but read-only mode answers %v", info.Name, info.Annotations.ReadOnlyHint, err)
		}
	}
}
