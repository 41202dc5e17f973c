package core

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentfs/agentfs/fault"
)

// A request is a plain struct whose tags are the single source for its JSON
// field names, CLI flags, positional arguments, schema and validation:
//
//	json:"byteOffset,omitempty"  the JSON name; the flag is its kebab twin
//	flag:"-"                     JSON only: no flag
//	flagAlias:"old"              another, shorter spelling of the flag
//	arg:"0"                      also taken from positional argument 0
//	standsFor:"query"            given, it takes that argument field's place:
//	                             the positional arguments go to the others
//	alias:"file_path"            other JSON names accepted (other agents' tools)
//	help:"..."                   the description, for --help and schemas: what
//	                             the field means, never its range or default
//	required:"true"              refused when left out (or empty)
//	notEmpty:"true"              refused when given as "" (a flag or a JSON
//	                             field): left out, it would drop what it asks
//	refusesEmpty:"true"          the tool's own check refuses "", which the
//	                             schema states (as for a required string)
//	enum:"dir|d,file"            the closed set of values; | adds spellings
//	                             accepted beside the first, which schemas name
//	min:"1" max:"1000"           the range of an integer
//	pattern:"^[0-9a-f]+$"        the form of a string, as a regular expression
//	patternIs:"hexadecimal"      what that form is, in words, for its refusal
//	default:"200"                what a field left out means
//
// FieldSpec is that metadata for one field.
type FieldSpec struct {
	Index []int
	JSON  string
	Flag  string // "" when the field has no flag
	// FlagAliases are other spellings of the flag (-r for --recursive).
	FlagAliases []string
	Arg         int // -1 when not positional
	// StandsFor is the JSON name of the argument field this one replaces.
	StandsFor string
	Aliases   []string
	Help      string
	Type      reflect.Type
	Required  bool
	// NotEmpty refuses the field given as "" (notEmpty).
	NotEmpty bool
	// RefusesEmpty says the tool refuses "" for the field (refusesEmpty).
	RefusesEmpty bool
	// Enum holds the first spelling of each value; spellings all of them,
	// each to its value's first.
	Enum      []string
	spellings map[string]string
	Min, Max  *int64
	// Pattern is the form a given string must have; PatternIs says it.
	Pattern   *regexp.Regexp
	PatternIs string
	Default   string // "" when the field has none
}

var fieldCache sync.Map // reflect.Type -> []FieldSpec

// Fields lists the request fields of a struct type (nested structs are not
// flattened: they are JSON-only values such as the edits list).
func Fields(t reflect.Type) []FieldSpec {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v, ok := fieldCache.Load(t); ok {
		return v.([]FieldSpec)
	}
	var out []FieldSpec
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("json") == "" {
			// An embedded struct (Precondition) contributes its fields, as in JSON.
			for _, inner := range Fields(f.Type) {
				inner.Index = append([]int{i}, inner.Index...)
				out = append(out, inner)
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		spec := FieldSpec{Index: f.Index, JSON: name, Arg: -1, Help: f.Tag.Get("help"), Type: f.Type}
		if f.Tag.Get("flag") != "-" {
			spec.Flag = kebab(name)
		}
		if a := f.Tag.Get("flagAlias"); a != "" {
			spec.FlagAliases = strings.Split(a, ",")
		}
		if a := f.Tag.Get("arg"); a != "" {
			spec.Arg = int(a[0] - '0')
		}
		if a := f.Tag.Get("alias"); a != "" {
			spec.Aliases = strings.Split(a, ",")
		}
		spec.StandsFor = f.Tag.Get("standsFor")
		spec.constraints(f.Tag)
		out = append(out, spec)
	}
	fieldCache.Store(t, out)
	return out
}

// ownDecoding is the refusal, named by the field at name, of val (a
// string or a number) by the type t that decodes its own JSON (a
// duration): the decoder hands on the type's error as it is, and "a
// duration must be from 0 to 24h0m0s, not 86401." named no field, where
// the flag form names its flag.
func ownDecoding(val any, t reflect.Type, name string) error {
	switch val.(type) {
	case string, json.Number:
	default:
		return nil // an object's keys are checked as a request's, with suggestions
	}
	u, ok := reflect.New(t).Interface().(json.Unmarshaler)
	if !ok {
		return nil
	}
	raw, err := json.Marshal(val)
	if err != nil {
		return nil // the decoder says what is wrong
	}
	var fe *fault.Error
	if err := u.UnmarshalJSON(raw); errors.As(err, &fe) && fe.Code == fault.CodeInvalidArgument {
		named := *fe
		if !strings.HasPrefix(fe.Message, name+" ") {
			// Unless it names the field itself: "lineTruncation:
			// lineTruncation must be".
			named.Message = name + ": " + fe.Message
		}
		return &named
	}
	return nil
}

// GivenEmpty is the error of the field given as "" under the name name
// when it is NotEmpty: --expected-version "$V" with V empty (its lookup
// failed) taken as left out made the change whatever the file was.
func (s FieldSpec) GivenEmpty(name string) *fault.Error {
	return fault.InvalidArgument("%s is given empty.", name).
		WithHint("pass the value an earlier read returned, or leave it out (a file read with version \"\", an object its store gives no ETag, has none to check); nothing was changed")
}

// constraints reads the tags a schema states and Validate checks. A
// malformed tag is a bug of the request type, so it panics: any test that
// touches the type finds it.
func (s *FieldSpec) constraints(tag reflect.StructTag) {
	s.Required = tag.Get("required") == "true"
	s.NotEmpty = tag.Get("notEmpty") == "true"
	s.RefusesEmpty = tag.Get("refusesEmpty") == "true"
	s.Default = tag.Get("default")
	if e := tag.Get("enum"); e != "" {
		s.spellings = map[string]string{}
		for _, v := range strings.Split(e, ",") {
			alts := strings.Split(v, "|")
			s.Enum = append(s.Enum, alts[0])
			for _, a := range alts {
				s.spellings[a] = alts[0]
			}
		}
	}
	bound := func(key string) *int64 {
		text := tag.Get(key)
		if text == "" {
			return nil
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			panic("core: field " + s.JSON + ": " + key + " tag " + strconv.Quote(text) + " is not an integer")
		}
		return &n
	}
	s.Min, s.Max = bound("min"), bound("max")
	if p := tag.Get("pattern"); p != "" {
		s.Pattern, s.PatternIs = regexp.MustCompile(p), tag.Get("patternIs")
	}
}

// kebab turns a camelCase JSON name into its flag twin: byteOffset -> byte-offset.
func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('-')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// DecodeJSON decodes one JSON object into req (a pointer to a request
// struct) strictly: an unknown field is INVALID_ARGUMENT naming the closest
// valid one, aliases are renamed to their field, and a type mismatch names the
// field and the type it wants.
func DecodeJSON(data []byte, req any) error {
	raw, err := parseStrict(data)
	if err != nil {
		return err
	}
	if _, ok := raw.(map[string]any); !ok {
		return fault.InvalidArgument("the request must be a JSON object.").
			WithHint(`send one JSON object, for example {"path":"main.go"}`)
	}
	binary, err := takeBase64Fields(raw.(map[string]any), reflect.TypeOf(req))
	if err != nil {
		return err
	}
	norm, err := normalise(raw, reflect.TypeOf(req), "")
	if err != nil {
		return err
	}
	var aside []setAside
	norm = putAside(norm, reflect.TypeOf(req), func(v reflect.Value) reflect.Value { return v }, &aside)
	clean, _ := json.Marshal(norm)
	d := json.NewDecoder(bytes.NewReader(clean))
	d.DisallowUnknownFields()
	if err := d.Decode(req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := jsonField(te.Field)
			if n, ok := strings.CutPrefix(te.Value, "number "); ok && isInteger(te.Type) && pastInt64(n) {
				return fault.InvalidArgument("field %q is out of range: %s is past what a %d-bit integer holds.", field, n, te.Type.Bits()).
					WithHint("fix the value of %q", field)
			}
			return wrongType(field, te.Type, te.Value)
		}
		var ae *fault.Error
		if errors.As(err, &ae) {
			return ae
		}
		return fault.InvalidArgument("the request could not be decoded: %s.", jsonErrorText(err))
	}
	v := reflect.ValueOf(req).Elem()
	for _, b := range binary {
		v.FieldByIndex(b.index).SetString(b.value)
	}
	for _, a := range aside {
		f := a.at(v)
		if f.Kind() == reflect.Pointer {
			f = f.Elem()
		}
		f.SetString(a.value)
	}
	return nil
}

// bigString is the length past which DecodeJSON gives a string field
// its value itself, around the round trip through encoding/json: a 50 MB
// content was marshalled (its buffer grown a quarter at a time) and
// decoded again, 870 MB allocated and 861 MB of RSS to refuse a write.
const bigString = 64 << 10

// setAside is a string put aside by putAside: the field of the decoded
// request it goes to, found from the request's value, and the string.
type setAside struct {
	at    func(reflect.Value) reflect.Value
	value string
}

// putAside replaces each string over bigString in v, the normalised
// request (or a value in it) for the type t, that goes to a field of
// kind string or a pointer to one, with "", and adds it to aside, at
// reached from the request's value by at. A type that decodes itself,
// a map and an interface are left as they are.
func putAside(v any, t reflect.Type, at func(reflect.Value) reflect.Value, aside *[]setAside) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return v
	}
	deref := func(v reflect.Value) reflect.Value {
		for v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		return v
	}
	switch x := v.(type) {
	case string:
		if len(x) > bigString && t.Kind() == reflect.String {
			*aside = append(*aside, setAside{at, x})
			return ""
		}
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return v
		}
		for _, f := range Fields(t) {
			if val, ok := x[f.JSON]; ok {
				x[f.JSON] = putAside(val, f.Type, func(v reflect.Value) reflect.Value { return deref(at(v)).FieldByIndex(f.Index) }, aside)
			}
		}
	case []any:
		if t.Kind() != reflect.Slice {
			return v
		}
		for i := range x {
			x[i] = putAside(x[i], t.Elem(), func(v reflect.Value) reflect.Value { return deref(at(v)).Index(i) }, aside)
		}
	}
	return v
}

// jsonField is encoding/json's path of a field as the request spells
// it: without the Go names of the structs it is embedded in
// (Precondition.expectedVersion), which no request has. Request fields
// start in lower case, Go's exported names in upper case.
func jsonField(path string) string {
	var kept []string
	for p := range strings.SplitSeq(path, ".") {
		if p != "" && !unicode.IsUpper(rune(p[0])) {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return path
	}
	return strings.Join(kept, ".")
}

// pastInt64 reports whether the JSON number n is an integer literal that
// int64 cannot hold.
func pastInt64(n string) bool {
	_, err := strconv.ParseInt(n, 10, 64)
	return errors.Is(err, strconv.ErrRange)
}

// CheckJSON refuses the JSON text data as DecodeJSON would: bytes that are
// not UTF-8, an unpaired surrogate escape, a key given twice in one
// object, data after the value. For the envelopes that encoding/json
// decodes (a batch line, an MCP message), where the last of two keys would
// silently win: {"tool":"read","tool":"rm"} must not remove a file.
func CheckJSON(data []byte) error {
	if checkJSONText(data) == nil && json.Valid(data) && uniqueKeys(data) {
		// Valid without a tree: parseStrict's held each string twice
		// over (a 50 MB batch line took 4 copies more than its own).
		return nil
	}
	_, err := parseStrict(data)
	return err
}

// uniqueKeys reports whether data, valid JSON, nests its objects and
// arrays at most maxNesting deep and gives no key twice in one object,
// as decodeValue would find it, without decoding any value.
func uniqueKeys(data []byte) bool {
	type level struct {
		object, key bool // an object; its next string is a key
		keys        map[string]bool
	}
	var stack []level
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '{', '[':
			if len(stack) == maxNesting {
				return false
			}
			stack = append(stack, level{object: c == '{', key: c == '{'})
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if top := &stack[len(stack)-1]; top.object {
				top.key = true
			}
		case '"':
			start, escaped := i, false
			for i++; data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
					escaped = true
				}
			}
			if len(stack) == 0 || !stack[len(stack)-1].key {
				continue
			}
			top := &stack[len(stack)-1]
			top.key = false
			k := string(data[start+1 : i])
			if escaped && json.Unmarshal(data[start:i+1], &k) != nil {
				return false
			}
			if top.keys == nil {
				top.keys = map[string]bool{}
			}
			if top.keys[k] {
				return false
			}
			top.keys[k] = true
		}
	}
	return true
}

// parseStrict decodes one JSON value with CheckJSON's checks.
func parseStrict(data []byte) (any, error) {
	if err := checkJSONText(data); err != nil {
		return nil, err
	}
	if json.Valid(data) && uniqueKeys(data) {
		// Read in place: a json.Decoder copied data into its buffer,
		// grown by doubling (32 MB to decode a 15 MB request), while
		// data and the strings read from it were held too.
		p := treeReader{data: data}
		return p.value(), nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	raw, err := decodeValue(dec, nil)
	if err != nil {
		var e *fault.Error
		if errors.As(err, &e) {
			return nil, e
		}
		if len(bytes.Trim(data, " \t\r\n")) == 0 {
			return nil, fault.InvalidArgument("the request is empty: it holds no JSON object.").
				WithHint(`send one JSON object, for example {"path":"main.go"}`)
		}
		return nil, fault.InvalidArgument("the request is not valid JSON: %s%s.", jsonErrorText(err), syntaxWhere(data, err)).
			WithHint(`send one JSON object, for example {"path":"main.go"}`)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fault.InvalidArgument("the request has data after its JSON object.").
			WithHint("send exactly one JSON object per request")
	}
	return raw, nil
}

// treeReader reads the value of valid JSON text whose objects give no
// key twice, as decodeValue does (numbers as json.Number, objects as
// map[string]any, arrays as []any, none of them nil), without a copy
// of the text.
type treeReader struct {
	data []byte
	i    int
}

func (r *treeReader) space() {
	for r.i < len(r.data) && (r.data[r.i] == ' ' || r.data[r.i] == '\t' || r.data[r.i] == '\r' || r.data[r.i] == '\n') {
		r.i++
	}
}

func (r *treeReader) value() any {
	r.space()
	switch c := r.data[r.i]; c {
	case '{':
		m := map[string]any{}
		r.i++
		for r.space(); r.data[r.i] != '}'; r.space() {
			if r.data[r.i] == ',' {
				r.i++
				r.space()
			}
			k := r.str()
			r.space()
			r.i++ // the colon
			m[k] = r.value()
		}
		r.i++
		return m
	case '[':
		a := []any{}
		r.i++
		for r.space(); r.data[r.i] != ']'; r.space() {
			if r.data[r.i] == ',' {
				r.i++
			}
			a = append(a, r.value())
		}
		r.i++
		return a
	case '"':
		return r.str()
	case 't':
		r.i += len("true")
		return true
	case 'f':
		r.i += len("false")
		return false
	case 'n':
		r.i += len("null")
		return nil
	}
	start := r.i
	for r.i < len(r.data) && strings.IndexByte("+-0123456789.eE", r.data[r.i]) >= 0 {
		r.i++
	}
	return json.Number(r.data[start:r.i])
}

// str reads a string, decoded by encoding/json when it holds an escape.
func (r *treeReader) str() string {
	start, escaped := r.i, false
	for r.i++; r.data[r.i] != '"'; r.i++ {
		if r.data[r.i] == '\\' {
			r.i++
			escaped = true
		}
	}
	r.i++
	if !escaped {
		return string(r.data[start+1 : r.i-1])
	}
	var s string
	_ = json.Unmarshal(r.data[start:r.i], &s)
	return s
}

// checkJSONText refuses what encoding/json would silently turn into U+FFFD:
// bytes that are not UTF-8 and \u escapes of unpaired surrogates. A path or
// an edit's text changed behind the caller's back is worse than an error.
func checkJSONText(data []byte) error {
	if utf16Text(data) {
		return fault.InvalidArgument("the request is UTF-16, not UTF-8.").WithCause(ErrUTF16Request).
			WithHint("send the requests as UTF-8 (in PowerShell: $OutputEncoding = [Text.UTF8Encoding]::new($false) before a pipe, or Out-File -Encoding utf8)")
	}
	if !utf8.Valid(data) {
		return fault.InvalidArgument("the request is not valid UTF-8 (byte %d).", invalidUTF8At(data)).
			WithHint("send text as UTF-8; give bytes that are not text as base64 in the field's Base64 twin (pathBase64)")
	}
	inString := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(data):
			if data[i+1] != 'u' {
				i++
				continue
			}
			r1 := hexRune(data[i+2:])
			if utf16.IsSurrogate(r1) {
				r2 := rune(-1)
				if i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
					r2 = hexRune(data[i+8:])
				}
				if utf16.DecodeRune(r1, r2) == utf8.RuneError {
					return fault.InvalidArgument("the request has an unpaired UTF-16 surrogate escape at byte %d.", i).
						WithHint("escape a character outside the BMP as a surrogate pair, or send it as UTF-8")
				}
				i += 6
			}
			i += 5
		}
	}
	return nil
}

// invalidUTF8At is the offset of the first byte of data that is not UTF-8.
func invalidUTF8At(data []byte) int {
	at := 0
	for at < len(data) {
		r, size := utf8.DecodeRune(data[at:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		at += size
	}
	return at
}

// ErrUTF16Request is the cause of a request refused as UTF-16 text,
// whose hint a caller framing requests keeps.
var ErrUTF16Request = errors.New("a request in UTF-16")

// utf16Text reports whether data looks like UTF-16: it begins with a
// UTF-16 byte-order mark, or a third of its first bytes are NULs, which
// JSON never holds raw and UTF-16 puts beside each ASCII character (a
// line split at a newline of UTF-16LE begins with the newline's NUL).
func utf16Text(data []byte) bool {
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return true
	}
	// Text of Latin letters in UTF-16 has a NUL in every other byte and a
	// letter in the others: NULs alone are no UTF-16.
	head := data[:min(len(data), 64)]
	nuls := bytes.Count(head, []byte{0})
	return nuls*3 >= len(head) && nuls < len(head)
}

// hexRune reads the four hex digits of a \u escape, -1 when they are not.
func hexRune(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(v)
}

// decodeValue reads one JSON value token by token, so that a key given twice
// in one object is refused instead of the last one silently winning.
func decodeValue(dec *json.Decoder, at []string) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	if len(at) == maxNesting {
		return nil, fault.InvalidArgument("the request is nested more than %d deep.", maxNesting).
			WithHint("send each field at its own depth: a request is an object of strings, numbers and short lists")
	}
	switch d {
	case '{':
		m := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k := kt.(string)
			if _, dup := m[k]; dup {
				return nil, fault.InvalidArgument("field %q is given twice.", fieldPath(append(at, k))).
					WithHint("give each field once")
			}
			if m[k], err = decodeValue(dec, append(at, k)); err != nil {
				return nil, err
			}
		}
		_, err := dec.Token()
		return m, err
	case '[':
		a := []any{}
		for dec.More() {
			v, err := decodeValue(dec, append(at, "["+itoa(len(a))+"]"))
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	}
	return nil, errors.New("unexpected " + d.String())
}

// maxNesting bounds the objects and arrays a request nests: its deepest
// field is a few levels down. The path to a value grows with the depth,
// and 20,000 levels (40 KB) took 6 s and 640 MB to refuse.
const maxNesting = 64

// fieldPath names the value at the keys and indexes at: edits[0].oldText.
func fieldPath(at []string) string {
	var b strings.Builder
	for i, s := range at {
		if i > 0 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

type binaryField struct {
	index []int
	value string
}

// takeBase64Fields removes each top-level "xBase64" key whose "x" is a string
// field and returns its decoded bytes: the pathBase64 of an output names a
// non-UTF-8 path losslessly, which JSON text cannot.
func takeBase64Fields(m map[string]any, t reflect.Type) ([]binaryField, error) {
	var out []binaryField
	for _, f := range Fields(t) {
		k := f.JSON + "Base64"
		val, present := m[k]
		if !present || f.Type.Kind() != reflect.String {
			continue
		}
		s, isStr := val.(string)
		raw, err := base64.StdEncoding.DecodeString(s)
		if !isStr || err != nil {
			return nil, fault.InvalidArgument("field %q must be standard base64.", k).
				WithHint("pass the %s value of an earlier result unchanged", k)
		}
		if _, both := m[f.JSON]; both {
			return nil, fault.InvalidArgument("field %q is given twice (once as %q).", f.JSON, k).
				WithHint("give either %s or %s", f.JSON, k)
		}
		delete(m, k)
		out = append(out, binaryField{f.Index, string(raw)})
	}
	return out, nil
}

// normalise renames aliases and refuses unknown keys, recursively through
// nested objects and arrays of objects.
func normalise(v any, t reflect.Type, at string) (any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if at != "" {
		if err := kindMismatch(v, t, strings.TrimSuffix(at, ".")); err != nil {
			return nil, err
		}
	}
	switch x := v.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return v, nil
		}
		fields := Fields(t)
		byName := map[string]FieldSpec{}
		// flagNamed: the field of each long flag alias (--old for
		// oldText); a key spelled as one (old) is no field but says which.
		flagNamed := map[string]string{}
		var names []string
		for _, f := range fields {
			byName[f.JSON] = f
			names = append(names, f.JSON)
			for _, a := range f.Aliases {
				byName[a] = f
			}
			for _, a := range f.FlagAliases {
				if len(a) > 1 {
					flagNamed[a] = f.JSON
				}
				// As Claude Code's Grep spells its keys: "-i", "-C".
				flagNamed["-"+a] = f.JSON
			}
		}
		out := map[string]any{}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		// The field each key not taken asks for, if any can be told:
		// another agent's spelling, a flag's, a prefix, then a spelling
		// distance.
		meant := func(k string) string {
			return cmp.Or(flagNamed[k], flagNamed[kebab(k)], OnlyPrefixed(k, names), foreignField(k, names), Closest(k, names))
		}
		// Claude Code's Grep asks for line numbers so; they always come.
		numbersAsked := func(k string) bool { return k == "-n" && t == reflect.TypeFor[GrepRequest]() }
		var unknown []string
		for _, k := range keys {
			if _, ok := byName[k]; !ok {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 1 {
			// All at once: one at a time, an agent that sent Claude
			// Code's {"-n": true, "output_mode": ...} took a call for each.
			var clauses, suggested []string
			for _, k := range unknown {
				switch c := meant(k); {
				case c != "":
					clauses = append(clauses, fmt.Sprintf("%s (did you mean %s?)", strconvQuote(at+k), strconvQuote(at+c)))
					suggested = append(suggested, c)
				case numbersAsked(k):
					clauses = append(clauses, fmt.Sprintf("%s (drop it: every matching line comes with its number)", strconvQuote(at+k)))
				default:
					clauses = append(clauses, strconvQuote(at+k))
				}
			}
			e := fault.InvalidArgument("unknown fields %s.", strings.Join(clauses, ", ")).
				WithHint("valid fields: %s", strings.Join(names, ", "))
			e.Suggestions = suggested
			return nil, e
		}
		for _, k := range keys {
			f, ok := byName[k]
			val := x[k]
			if !ok {
				e := fault.InvalidArgument("unknown field %q.", at+k)
				if c := meant(k); c != "" {
					e.WithClosest(c, strconvQuote(at+c))
				} else if numbersAsked(k) {
					return nil, e.WithHint("drop \"-n\": every matching line comes with its number; valid fields: %s", strings.Join(names, ", "))
				}
				return nil, e.WithHint("valid fields: %s", strings.Join(names, ", "))
			}
			if _, dup := out[f.JSON]; dup {
				return nil, fault.InvalidArgument("field %q is given twice (once under an alias).", at+f.JSON).
					WithHint("give each field once")
			}
			if n, ok := val.(json.Number); ok && isZero(n) && f.Min != nil && *f.Min > 0 {
				// A 0 given is out of range, not the default that a field
				// left out takes (the zero value, to Validate).
				return nil, f.BelowMin(at+f.JSON, 0)
			}
			if val == "" && f.NotEmpty {
				return nil, f.GivenEmpty(at + f.JSON)
			}
			if f.Type == reflect.TypeFor[Globs]() {
				// Here, where the field's name is known: Globs's own
				// UnmarshalJSON does not know which it decodes.
				if raw, _ := json.Marshal(val); new(Globs).UnmarshalJSON(raw) != nil {
					return nil, globsRefused(at+f.JSON, raw)
				}
			}
			if err := ownDecoding(val, f.Type, at+f.JSON); err != nil {
				return nil, err
			}
			nv, err := normalise(val, f.Type, at+f.JSON+".")
			if err != nil {
				return nil, err
			}
			out[f.JSON] = nv
		}
		return out, nil
	case []any:
		if t.Kind() != reflect.Slice {
			return v, nil
		}
		for i, e := range x {
			nv, err := normalise(e, t.Elem(), strings.TrimSuffix(at, ".")+"["+itoa(i)+"].")
			if err != nil {
				return nil, err
			}
			x[i] = nv
		}
	case json.Number:
		return integral(x, t), nil
	}
	return v, nil
}

// kindMismatch is the error of the JSON value v given for the field
// named name, of type t, when no value of v's kind decodes into t. Here,
// not from encoding/json, whose error names an element of an array
// without its index (edits.oldText for edits[1].oldText). A type that
// decodes itself, and a number's range, are left to the decoder.
func kindMismatch(v any, t reflect.Type, name string) error {
	if t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return nil
	}
	var kind string
	var fits bool
	switch v.(type) {
	case nil:
		return nil
	case string:
		kind, fits = "string", t.Kind() == reflect.String
	case bool:
		kind, fits = "bool", t.Kind() == reflect.Bool
	case json.Number:
		kind, fits = "number", isInteger(t) || t.Kind() == reflect.Float64
	case map[string]any:
		kind, fits = "object", t.Kind() == reflect.Struct || t.Kind() == reflect.Map
	case []any:
		kind, fits = "array", t.Kind() == reflect.Slice
	default:
		return nil
	}
	if fits {
		return nil
	}
	return wrongType(name, t, kind)
}

// wrongType is the error of a JSON value (its kind, "number 1.5") given
// for the field named name, of type t.
func wrongType(name string, t reflect.Type, value string) *fault.Error {
	e := fault.InvalidArgument("field %q must be %s, not a JSON %s.", name, typeName(t), value)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	example := exampleOf(t, 0)
	if k := t.Kind(); example == "" || k != reflect.Slice && k != reflect.Struct && (k != reflect.String || value != "array") {
		return e.WithHint("fix the value of %q", name)
	}
	// The shape wanted and the fix: {"old":...} given for edits, an
	// array of them, was told only to "fix the value of edits".
	shape := typeName(t)
	switch t.Kind() {
	case reflect.Slice:
		if elem := t.Elem(); elem.Kind() == reflect.Struct {
			shape = "an array of objects {" + strings.Join(fieldNames(elem), ", ") + "}"
		} else {
			shape = "an array of " + strings.TrimPrefix(strings.TrimPrefix(typeName(elem), "a "), "an ") + "s"
		}
		if wanted := typeName(t.Elem()); wanted == "an object" && value == "object" || wanted == "a string" && value == "string" {
			return e.WithHint("%q is %s: put the %s in [ ], as %s", name, shape, value, example)
		}
	case reflect.Struct:
		shape = "an object {" + strings.Join(fieldNames(t), ", ") + "}"
	case reflect.String:
		return e.WithHint("%q is one string: give one, and send a request for each of the others", name)
	}
	return e.WithHint("%q is %s, as %s", name, shape, example)
}

// fieldNames are the JSON names of the fields of the struct t.
func fieldNames(t reflect.Type) []string {
	var out []string
	for _, f := range Fields(t) {
		out = append(out, f.JSON)
	}
	return out
}

// exampleOf is a short JSON value of type t, its required fields for a
// struct ({"oldText":"...","newText":"..."}), "" for a type that decodes
// itself or one it cannot show.
func exampleOf(t reflect.Type, depth int) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if depth > 2 || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return ""
	}
	switch {
	case isInteger(t):
		return "1"
	case t.Kind() == reflect.String:
		return `"..."`
	case t.Kind() == reflect.Bool:
		return "true"
	case t.Kind() == reflect.Slice:
		if e := exampleOf(t.Elem(), depth+1); e != "" {
			return "[" + e + "]"
		}
	case t.Kind() == reflect.Struct:
		var parts []string
		for _, f := range Fields(t) {
			if !f.Required {
				continue
			}
			e := exampleOf(f.Type, depth+1)
			if e == "" {
				return ""
			}
			parts = append(parts, strconv.Quote(f.JSON)+":"+e)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return ""
}

// integral is n as an integer literal when t is an integer type and n an
// integer written otherwise (200.0, 2e2): JSON Schema's "integer", which
// the tools' schemas say, holds such numbers, and a client that checks
// its arguments against the schema sends them. Past 2^53 a float64 is no
// longer exact: such a number stays as it is, and is refused.
// maxIntegralDigits bounds the length of a number taken as an integer
// when written otherwise (3.0, 3e1): math/big parses it in time that grows
// with the square of its length, and a line of a million digits held a
// batch or MCP session for 9 s (4 million: 3 minutes).
const maxIntegralDigits = 64

func integral(n json.Number, t reflect.Type) json.Number {
	if !isInteger(t) {
		return n
	}
	if _, err := n.Int64(); err == nil {
		return n
	}
	// Exactly, as a rational: through a float64, 0.99999999999999999 was
	// 1 and 9007199254740993.0 was 9007199254740992. An exponent past
	// float64's is no integer here, and not computed (1e-999999999 is a
	// denominator of a billion digits).
	if f, err := n.Float64(); err != nil || math.Abs(f) > 1<<53 || len(n) > maxIntegralDigits {
		return n
	}
	if _, exp, ok := strings.Cut(strings.ToLower(string(n)), "e"); ok {
		if e, err := strconv.Atoi(exp); err != nil || e < -400 || e > 400 {
			return n
		}
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() || r.Num().CmpAbs(big.NewInt(1<<53)) > 0 {
		return n
	}
	return json.Number(r.Num().String())
}

// foreignFields are keys of other agents' tools that are not taken here
// (their meaning or shape differs), each with the fields that say what
// it asks, of which a request's first is suggested: no spelling distance
// finds them.
var foreignFields = map[string][]string{
	// Claude Code's Grep.
	"-A": {"context"}, "-B": {"context"}, "-n": {"lineNumbers"},
	"output_mode": {"mode"}, "head_limit": {"limit"}, "type": {"include"},
	// The text editor tool (str_replace_editor), Cursor, OpenCode.
	"old_str": {"oldText"}, "new_str": {"newText"}, "file_text": {"content"},
	"filePath": {"path"}, "target_file": {"path"}, "absolute_path": {"path"},
	"view_range": {"offset"}, "start_line": {"offset"}, "end_line": {"limit"},
}

// foreignField is the field of names that the foreign key k asks for, or "".
func foreignField(k string, names []string) string {
	for _, c := range foreignFields[k] {
		if slices.Contains(names, c) {
			return c
		}
	}
	return ""
}

// OnlyPrefixed is the one name that starts with k (old: oldText), else
// "", which a spelling distance misses for a short k.
func OnlyPrefixed(k string, names []string) string {
	found := ""
	for _, n := range names {
		if len(k) >= 3 && strings.HasPrefix(n, k) {
			if found != "" {
				return ""
			}
			found = n
		}
	}
	return found
}

func typeName(t reflect.Type) string {
	if t == reflect.TypeFor[Duration]() || t == reflect.TypeFor[Lifetime]() {
		return "a duration such as \"30s\", or a number of seconds"
	}
	if isInteger(t) {
		return "an integer"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return typeName(t.Elem())
	}
	return t.String()
}

// isInteger reports whether t is one of the integer types requests use.
func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64:
		return true
	}
	return false
}

func jsonErrorText(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		// Go's words, "EOF", for a request cut short (a shell quote
		// lost, a line cut in two).
		return "it ends before its value does (a closing quote, ] or } is missing)"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// syntaxWhere says where in data the syntax error err lies: ", at byte N"
// (from 0, as the byte of a request that is not UTF-8 is counted) and,
// for a request on one line, what stands there: the bytes before it and
// from it, at most excerptSide of each, so that a caller finds its
// mistake in a long line (Go's words name a character, not where). ""
// for another error (a request cut short has no such byte).
func syntaxWhere(data []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return ""
	}
	// The decoder counts from where it last read; Unmarshal's check of
	// the whole text finds the byte itself, and stops there.
	var skip struct{}
	if !errors.As(json.Unmarshal(data, &skip), &se) || se.Offset < 1 || se.Offset > int64(len(data)) {
		return ""
	}
	at := int(se.Offset) - 1
	where := fmt.Sprintf(", at byte %d", at)
	if bytes.ContainsAny(bytes.TrimRight(data, "\r\n"), "\r\n") {
		return where
	}
	from, to := max(0, at-excerptSide), min(len(data), at+excerptSide)
	for from > 0 && !utf8.RuneStart(data[from]) {
		from++
	}
	for to < len(data) && !utf8.RuneStart(data[to]) {
		to--
	}
	before, after := string(data[from:at]), strings.TrimRight(string(data[at:to]), "\r\n")
	if from > 0 {
		before = "…" + before
	}
	if to < len(data) && strings.TrimRight(string(data[to:]), "\r\n") != "" {
		after += "…"
	}
	if before == "" {
		return fmt.Sprintf("%s, where it starts with %s", where, after)
	}
	return fmt.Sprintf("%s, where %s is followed by %s", where, before, after)
}

// excerptSide bounds each side of a syntax error's excerpt, in bytes.
const excerptSide = 20

// isZero reports whether n is an integer 0, -0 included.
func isZero(n json.Number) bool {
	f, err := n.Float64() // 0.0 and 0e5 too, which integral makes 0
	return err == nil && f == 0
}
