package registry

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/core"
)

// rendered is a tool list as a client reads it: JSON, decoded.
func rendered(t *testing.T, format string, readOnly bool) []map[string]any {
	t.Helper()
	list, err := ListIn(format, readOnly)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Tools []map[string]any }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	return got.Tools
}

// at is the value at a path of keys in decoded JSON, nil when absent.
func at(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// inputSchema is a rendered tool's name and request schema, wherever its
// format puts them.
func inputSchema(format string, tool map[string]any) (string, map[string]any) {
	switch format {
	case "openai":
		s, _ := at(tool, "function", "parameters").(map[string]any)
		name, _ := at(tool, "function", "name").(string)
		return name, s
	case "anthropic":
		s, _ := tool["input_schema"].(map[string]any)
		return tool["name"].(string), s
	}
	s, _ := tool["inputSchema"].(map[string]any)
	return tool["name"].(string), s
}

// properties are the properties of an object schema, or of its object
// branch, or of its items, whichever the format writes.
func properties(s map[string]any) map[string]any {
	if p, ok := s["properties"].(map[string]any); ok {
		return p
	}
	if items, ok := s["items"].(map[string]any); ok {
		return properties(items)
	}
	branches, _ := s["anyOf"].([]any)
	for _, b := range branches {
		if p := properties(b.(map[string]any)); p != nil {
			return p
		}
	}
	return nil
}

// requestFields checks that schema has a property for every JSON field of
// the request struct rt, at any depth (edit's edits).
func requestFields(t *testing.T, what string, rt reflect.Type, schema map[string]any) {
	t.Helper()
	props := properties(schema)
	for _, f := range core.Fields(rt) {
		p, ok := props[f.JSON].(map[string]any)
		if !ok {
			t.Errorf("%s: the request field %s is not in the schema", what, f.JSON)
			continue
		}
		elem := f.Type
		for elem.Kind() == reflect.Pointer || elem.Kind() == reflect.Slice {
			elem = elem.Elem()
		}
		if elem.Kind() == reflect.Struct && elem.PkgPath() == rt.PkgPath() && len(core.Fields(elem)) > 0 {
			requestFields(t, what+"."+f.JSON, elem, p)
		}
	}
}

// TestFormatsListEveryField: a field added to a request struct is in every
// format's schema of its tool, and a field added to a result in its output
// schema; the names are agentfs's own or agentfs_ ones.
func TestFormatsListEveryField(t *testing.T) {
	for _, format := range Formats {
		tools := rendered(t, format, false)
		if len(tools) != len(All()) {
			t.Fatalf("%s: %d tools, the registry has %d", format, len(tools), len(All()))
		}
		for i, tl := range All() {
			req, _ := tl.Types()
			name, schema := inputSchema(format, tools[i])
			want := ToolName(tl.Info().Name)
			if format == "agentfs" {
				want = tl.Info().Name
			}
			if name != want {
				t.Errorf("%s: tool %d is named %q, want %q", format, i, name, want)
			}
			if schema == nil || schema["type"] != "object" {
				t.Errorf("%s %s: input schema %v", format, name, schema)
				continue
			}
			requestFields(t, format+" "+name, req, schema)
		}
	}
	for i, tl := range rendered(t, "mcp", false) {
		_, res := All()[i].Types()
		var walk func(what string, rt reflect.Type, s map[string]any)
		walk = func(what string, rt reflect.Type, s map[string]any) {
			for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice || rt.Kind() == reflect.Map {
				rt = rt.Elem()
			}
			if rt.Kind() != reflect.Struct {
				return
			}
			props := properties(s)
			for j := range rt.NumField() {
				f := rt.Field(j)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if f.Anonymous && name == "" {
					walk(what, f.Type, s)
					continue
				}
				if name == "" || name == "-" {
					continue
				}
				p, ok := props[name].(map[string]any)
				if !ok {
					t.Errorf("%s: the result field %s is not in the output schema", what, name)
					continue
				}
				walk(what+"."+name, f.Type, p)
			}
		}
		walk(tl["name"].(string), res, tl["outputSchema"].(map[string]any))
	}
}

// TestStrictForm: in the openai format every object, at any depth, lists
// all its properties as required and allows no others, an optional
// property takes null, and no keyword strict mode lacks (default) is left.
func TestStrictForm(t *testing.T) {
	var check func(what string, s map[string]any, optional bool)
	check = func(what string, s map[string]any, optional bool) {
		if _, ok := s["default"]; ok {
			t.Errorf("%s: default is not in strict mode", what)
		}
		// Nor are the string lengths (a precondition's minLength 1).
		for _, k := range []string{"minLength", "maxLength"} {
			if _, ok := s[k]; ok {
				t.Errorf("%s: %s is not in strict mode", what, k)
			}
		}
		if optional && !takesNull(s) {
			t.Errorf("%s: optional, but does not take null: %v", what, s)
		}
		if props, ok := s["properties"].(map[string]any); ok {
			var required []string
			for _, r := range s["required"].([]any) {
				required = append(required, r.(string))
			}
			if !slices.Equal(slices.Sorted(slices.Values(required)), slices.Sorted(maps.Keys(props))) {
				t.Errorf("%s: required %v, properties %v", what, required, slices.Sorted(maps.Keys(props)))
			}
			if s["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties %v, want false", what, s["additionalProperties"])
			}
			for name, p := range props {
				check(what+"."+name, p.(map[string]any), false)
			}
		} else if s["type"] == "object" {
			t.Errorf("%s: an object without properties", what)
		}
		if items, ok := s["items"].(map[string]any); ok {
			check(what+"[]", items, false)
		}
		if branches, ok := s["anyOf"].([]any); ok {
			for _, b := range branches {
				check(what+"|", b.(map[string]any), false)
			}
		}
	}
	for i, tl := range rendered(t, "openai", false) {
		if tl["type"] != "function" || at(tl, "function", "strict") != true || at(tl, "function", "description") == "" {
			t.Errorf("tool %d: %v", i, tl)
		}
		name, schema := inputSchema("openai", tl)
		check(name, schema, false)
		// Which properties are optional is the request's say, not the
		// strict schema's (where all are required).
		info := All()[i].Info()
		props := properties(schema)
		for _, p := range info.InputSchema.Properties {
			if !slices.Contains(info.InputSchema.Required, p.Name) {
				check(name+"."+p.Name, props[p.Name].(map[string]any), true)
			}
		}
	}
}

func takesNull(s map[string]any) bool {
	switch typ := s["type"].(type) {
	case []any:
		return slices.Contains(typ, any("null")) && s["enum"] == nil
	}
	branches, _ := s["anyOf"].([]any)
	for _, b := range branches {
		if at(b, "type") == "null" {
			return true
		}
	}
	return false
}

// TestNullIsLeftOut: a strict-form call sends null for each optional field
// it does not use; every tool takes that as the field left out.
func TestNullIsLeftOut(t *testing.T) {
	extra := map[string]string{
		"edit": `{"path":"a.txt","edits":[{"oldText":"alpha","newText":"beta","replaceAll":null}],"oldText":null,"newText":null}`,
		"read": `{"path":"a.txt","lineTruncation":{"chars":3,"bytes":null}}`,
	}
	for _, tl := range All() {
		info := tl.Info()
		var req map[string]any
		if err := json.Unmarshal([]byte(valid[info.Name]), &req); err != nil {
			t.Fatal(err)
		}
		for _, p := range info.InputSchema.Properties {
			if _, given := req[p.Name]; !given {
				req[p.Name] = nil
			}
		}
		b, _ := json.Marshal(req)
		requests := []string{string(b)}
		if e, ok := extra[info.Name]; ok {
			requests = append(requests, e)
		}
		for _, r := range requests {
			if _, err := tl.Call(context.Background(), newTools(), []byte(r)); err != nil {
				t.Errorf("%s %s: %v", info.Name, r, err)
			}
		}
	}
}

// TestOutputSchemaHolds: each tool's result, as JSON, follows its output
// schema: every required field is there, every field is a property of the
// schema, of the type it states.
func TestOutputSchemaHolds(t *testing.T) {
	for _, tl := range All() {
		info := tl.Info()
		res, err := tl.Call(context.Background(), newTools(), []byte(valid[info.Name]))
		if err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		b, _ := json.Marshal(res)
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		for _, problem := range violations(info.Name, info.OutputSchema, v) {
			t.Error(problem)
		}
	}
}

// violations checks v against s in the keywords an output schema uses:
// type, properties (no others), required, items, additionalProperties.
func violations(at string, s *core.Schema, v any) []string {
	var out []string
	types, ok := s.Type.([]string)
	if !ok {
		types = []string{s.Type.(string)}
	}
	var typ string
	switch x := v.(type) {
	case nil:
		typ = "null"
	case bool:
		typ = "boolean"
	case string:
		typ = "string"
	case float64:
		typ = "number"
		if x == float64(int64(x)) && !slices.Contains(types, "number") {
			typ = "integer"
		}
	case []any:
		typ = "array"
		for i, item := range x {
			out = append(out, violations(at+"["+strconv.Itoa(i)+"]", s.Items, item)...)
		}
	case map[string]any:
		typ = "object"
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				out = append(out, at+": required "+r+" is missing")
			}
		}
		for k, fv := range x {
			var ps *core.Schema
			for _, p := range s.Properties {
				if p.Name == k {
					ps = p.Schema
				}
			}
			if ps == nil {
				ps, _ = s.AdditionalProperties.(*core.Schema)
			}
			if ps == nil {
				out = append(out, at+": "+k+" is not in the schema")
				continue
			}
			out = append(out, violations(at+"."+k, ps, fv)...)
		}
	}
	if !slices.Contains(types, typ) {
		out = append(out, at+": a "+typ+", the schema says "+strings.Join(types, " or "))
	}
	return out
}

// TestReadOnlyList: the read-only list is the tools that change no file,
// and the annotations say what each tool does to files and beyond.
func TestReadOnlyList(t *testing.T) {
	var names []string
	for _, tl := range Listed(true) {
		names = append(names, tl.Info().Name)
	}
	if want := []string{"read", "ls", "find", "grep"}; !slices.Equal(names, want) {
		t.Errorf("read-only tools %v, want %v", names, want)
	}
	for _, format := range Formats {
		if n := len(rendered(t, format, true)); n != len(names) {
			t.Errorf("%s read-only: %d tools, want %d", format, n, len(names))
		}
	}
	for _, tl := range rendered(t, "mcp", false) {
		a := tl["annotations"].(map[string]any)
		name := tl["name"].(string)
		readOnly := slices.Contains(names, strings.TrimPrefix(name, "agentfs_"))
		// publish adds a link, which it hands outside the workspace.
		publish := name == "agentfs_publish"
		if a["readOnlyHint"] != readOnly || a["destructiveHint"] != (!readOnly && !publish) || a["idempotentHint"] == nil ||
			a["openWorldHint"] != publish {
			t.Errorf("%s: annotations %v", name, a)
		}
	}
	if _, err := ListIn("yaml", false); err == nil {
		t.Error("an unknown format was accepted")
	}
}

// TestStrictKeepsRanges: a strict-form property states the range of its
// request field, in its number branch when it takes several types too:
// grep's timeout (a string or seconds) and publish's expiresIn lost it,
// and a model held to the schema could send -1 or a week and a second.
func TestStrictKeepsRanges(t *testing.T) {
	for i, tl := range rendered(t, "openai", false) {
		name, schema := inputSchema("openai", tl)
		props := properties(schema)
		for _, p := range All()[i].Info().InputSchema.Properties {
			if p.Schema.Minimum == nil && p.Schema.Maximum == nil {
				continue
			}
			var numbers []map[string]any
			var find func(s map[string]any)
			find = func(s map[string]any) {
				switch typ := s["type"].(type) {
				case string:
					if typ == "integer" || typ == "number" {
						numbers = append(numbers, s)
					}
				case []any:
					if slices.Contains(typ, any("integer")) || slices.Contains(typ, any("number")) {
						numbers = append(numbers, s)
					}
				}
				branches, _ := s["anyOf"].([]any)
				for _, b := range branches {
					find(b.(map[string]any))
				}
			}
			find(props[p.Name].(map[string]any))
			if len(numbers) == 0 {
				t.Errorf("%s.%s: no number branch", name, p.Name)
			}
			for _, n := range numbers {
				for key, want := range map[string]*int64{"minimum": p.Schema.Minimum, "maximum": p.Schema.Maximum} {
					if want == nil {
						continue
					}
					if got, _ := n[key].(float64); n[key] == nil || int64(got) != *want {
						t.Errorf("%s.%s: %s %v, want %d", name, p.Name, key, n[key], *want)
					}
				}
			}
		}
	}
}
