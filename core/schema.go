package core

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Schema is a JSON Schema (draft 2020-12), in the subset that describes a
// request: type, properties, required, enum, minLength, pattern, minimum,
// maximum, default, description and items; and a result, with additionalProperties for a
// map. It is generated from a request's tags (see FieldSpec), so that a
// tool list states what Validate checks, and from a result's JSON tags.
type Schema struct {
	// Type is one JSON type, or a list of them for a field that takes
	// several forms (a duration as "30s" or as seconds).
	Type        any        `json:"type,omitempty"`
	Description string     `json:"description,omitempty"`
	Properties  Properties `json:"properties,omitempty"`
	Required    []string   `json:"required,omitempty"`
	Enum        []string   `json:"enum,omitempty"`
	MinLength   *int64     `json:"minLength,omitempty"`
	Pattern     string     `json:"pattern,omitempty"`
	Minimum     *int64     `json:"minimum,omitempty"`
	Maximum     *int64     `json:"maximum,omitempty"`
	Default     any        `json:"default,omitempty"`
	Items       *Schema    `json:"items,omitempty"`
	// AdditionalProperties is a map's value schema, or false where an
	// object allows no other properties (OpenAI's strict form).
	AdditionalProperties any `json:"additionalProperties,omitempty"`
	// AnyOf holds the alternatives of a value that takes several forms,
	// where one type list cannot say them (OpenAI's strict form).
	AnyOf []*Schema `json:"anyOf,omitempty"`
}

// Property is one property of an object schema.
type Property struct {
	Name   string
	Schema *Schema
}

// Properties are an object's properties in the order of the request's
// fields (path first), which a map would sort away.
type Properties []Property

// MarshalJSON writes the properties as one JSON object, in order.
func (ps Properties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(p.Name)
		s, err := json.Marshal(p.Schema)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(s)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// RequestSchema is the schema of a request struct type: one property per
// field (nested requests, such as edit's edits, as items), each described
// and constrained by its tags.
func RequestSchema(t reflect.Type) *Schema {
	s := &Schema{Type: "object"}
	for _, f := range Fields(t) {
		p := typeSchema(f.Type)
		p.Description, p.Enum = f.Help, f.Enum
		// A required string is refused empty too: Validate takes "" for
		// it left out.
		if f.NotEmpty || f.RefusesEmpty || f.Required && f.Type.Kind() == reflect.String {
			one := int64(1)
			p.MinLength = &one
		}
		if f.Pattern != nil {
			p.Pattern = f.Pattern.String()
		}
		if f.Min != nil || f.Max != nil {
			// The tags' range; a type may state its own (a Duration's).
			p.Minimum, p.Maximum = f.Min, f.Max
		}
		if f.Default != "" {
			p.Default = defaultValue(p.Type, f.Default)
		}
		s.Properties = append(s.Properties, Property{f.JSON, p})
		if f.Required {
			s.Required = append(s.Required, f.JSON)
		}
	}
	return s
}

// schemaType is a request type whose JSON takes other forms than its Go
// kind says (a Duration is text or seconds).
type schemaType interface{ jsonSchema() *Schema }

func typeSchema(t reflect.Type) *Schema {
	if st, ok := reflect.Zero(t).Interface().(schemaType); ok {
		return st.jsonSchema()
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int64:
		return &Schema{Type: "integer"}
	case reflect.Slice:
		return &Schema{Type: "array", Items: typeSchema(t.Elem())}
	case reflect.Struct:
		return RequestSchema(t)
	}
	panic("core: no schema for request field type " + t.String())
}

// defaultValue is a default tag's text as a value of the field's JSON type.
func defaultValue(typ any, text string) any {
	var v any = text
	var err error
	switch typ {
	case "integer":
		v, err = strconv.ParseInt(text, 10, 64)
	case "boolean":
		v, err = strconv.ParseBool(text)
	}
	if err != nil {
		panic("core: default tag " + strconv.Quote(text) + " is not a JSON " + typ.(string))
	}
	return v
}

func (Duration) jsonSchema() *Schema {
	// The range is a number's (seconds); a string's is the same, told by
	// the description, which a schema cannot check.
	least, most := int64(0), int64(maxDuration/time.Second)
	return &Schema{Type: []string{"string", "number"}, Minimum: &least, Maximum: &most}
}

func (Globs) jsonSchema() *Schema {
	return &Schema{Type: []string{"string", "array"}, Items: &Schema{Type: "string"}}
}

func (LineTruncation) jsonSchema() *Schema {
	zero := int64(0)
	return &Schema{Type: []string{"object", "string"}, Properties: Properties{
		{"chars", &Schema{Type: "integer", Minimum: &zero, Description: "cut at N characters; 0 keeps whole lines"}},
		{"bytes", &Schema{Type: "integer", Minimum: &zero, Description: "cut at N bytes of the file; 0 keeps whole lines"}},
	}}
}

// ResultSchema is the schema of a result struct type, read from its JSON
// tags as encoding/json writes it: a field without omitempty or omitzero
// is required, and nullable when it is a pointer, and described by its
// help tag where it has one (one whose name cannot say when it is set, as
// replace's diffsInDryRun); an embedded struct's
// fields are the object's own, optional when it is embedded by pointer
// (read's text window or media).
func ResultSchema(t reflect.Type) *Schema {
	s := &Schema{Type: "object"}
	resultFields(t, s, false)
	return s
}

func resultFields(t reflect.Type, s *Schema, optional bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			resultFields(f.Type, s, optional || f.Type.Kind() == reflect.Pointer)
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omitted := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		p := valueSchema(f.Type)
		p.Description = f.Tag.Get("help")
		if f.Type.Kind() == reflect.Pointer && !omitted {
			p.Type = []string{p.Type.(string), "null"}
		}
		s.Properties = append(s.Properties, Property{name, p})
		if !omitted && !optional {
			s.Required = append(s.Required, name)
		}
	}
}

var textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()

// valueSchema is the schema of a result field's Go type.
func valueSchema(t reflect.Type) *Schema {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// A type that writes itself as text (a time, a duration) is a string
	// in JSON, whatever its Go kind.
	if t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return &Schema{Type: "string"}
	}
	switch t.Kind() {
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint32, reflect.Uint64:
		return &Schema{Type: "integer"}
	case reflect.Float64:
		return &Schema{Type: "number"}
	case reflect.Slice:
		return &Schema{Type: "array", Items: valueSchema(t.Elem())}
	case reflect.Map:
		return &Schema{Type: "object", AdditionalProperties: valueSchema(t.Elem())}
	case reflect.Struct:
		return ResultSchema(t)
	}
	panic("core: no schema for result field type " + t.String())
}
