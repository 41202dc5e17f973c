package core

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestTreeReaderAgrees: parseStrict's reading in place gives the tree the
// token decoder gives, for valid JSON of every kind of value.
func TestTreeReaderAgrees(t *testing.T) {
	inputs := []string{
		`{}`, `[]`, `""`, `0`, `-1.5e+3`, `true`, `false`, `null`, ` {"a" : [ 1 , {"b":null} , [] ] } `,
		`{"k\u00e9y":"v\n\"q\"\\ \ud83d\ude00 é","e":""}`, `{"a":{"b":{"c":[true,false,null,"x"]}}}`,
		`[1e400, 12345678901234567890123, -0, 0.000001]`, "\t[\r\n\"a\"\n]\n",
	}
	r := rand.New(rand.NewSource(1))
	for range 300 {
		inputs = append(inputs, string(randomJSON(r, 0)))
	}
	for _, in := range inputs {
		data := []byte(in)
		if !json.Valid(data) || !uniqueKeys(data) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		want, err := decodeValue(dec, nil)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		p := treeReader{data: data}
		if got := p.value(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", in, got, want)
		}
	}
}

func randomJSON(r *rand.Rand, depth int) []byte {
	space := func() string { return []string{"", " ", "\n\t"}[r.Intn(3)] }
	str := func() string {
		s := []string{"a", "é", "\\n", "\\\"", "\\\\", "\\u00e9", "\\ud83d\\ude00", "/", "\\/", " "}
		var b strings.Builder
		for range r.Intn(4) {
			b.WriteString(s[r.Intn(len(s))])
		}
		return `"` + b.String() + `"`
	}
	switch k := r.Intn(8); {
	case k == 0 && depth < 4:
		var parts []string
		for i := range r.Intn(4) {
			parts = append(parts, space()+`"k`+strconv.Itoa(i)+`"`+space()+":"+string(randomJSON(r, depth+1)))
		}
		return []byte("{" + strings.Join(parts, ",") + space() + "}")
	case k == 1 && depth < 4:
		var parts []string
		for range r.Intn(4) {
			parts = append(parts, string(randomJSON(r, depth+1)))
		}
		return []byte("[" + strings.Join(parts, ",") + space() + "]")
	case k == 2:
		return []byte(space() + str() + space())
	case k == 3:
		return []byte([]string{"true", "false", "null"}[r.Intn(3)])
	}
	return []byte([]string{"0", "-7", "3.25", "1e9", "-2E-3", "123456789012345678901"}[r.Intn(6)])
}

// TestDecodeBigStringOnce: a request decodes with its big string copied
// once, not also through a decoder's buffer grown by doubling (before,
// 4 MiB of content allocated about 13 MiB).
func TestDecodeBigStringOnce(t *testing.T) {
	content := strings.Repeat("x", 4<<20)
	in, _ := json.Marshal(map[string]any{"path": "a", "content": content})
	var req WriteRequest
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := DecodeJSON(in, &req)
	runtime.ReadMemStats(&after)
	if err != nil || req.Content == nil || *req.Content != content {
		t.Fatalf("decoded %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 2*uint64(len(content)) {
		t.Fatalf("decoding %d bytes allocated %d", len(in), n)
	}
}
