package core

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentfs/agentfs/fault"
)

// cursor is where a page of a walk (find, grep) ended, so that the next page
// resumes the walk there (backend.WalkOptions.From) instead of walking the
// tree from its start, which a numeric offset must: the last of many pages
// then costs what the first costs. It travels as an opaque string.
type cursor struct {
	// Offset is the nextOffset the cursor stands for.
	Offset int `json:"o"`
	// From is the entry the next page starts at, relative to the walk's
	// start, and Skip the items of it that earlier pages took (the matching
	// lines of a file a page ended in). A From that is not UTF-8 travels
	// as bytes (base64 in JSON): as a JSON string it came back with
	// U+FFFD, and the next page skipped or repeated entries.
	From      string `json:"-"`
	FromText  string `json:"f,omitempty"`
	FromBytes []byte `json:"p,omitempty"`
	Skip      int    `json:"k,omitempty"`
	// Sum is a digest of the Skip matching lines of From that earlier
	// pages took (grep's content mode): when they are no longer those
	// lines, the file changed before the cursor, and the next page takes
	// all of its matches, never skipping others' in their stead.
	Sum string `json:"h,omitempty"`
	// Again is set when a page took From's matches again from its first,
	// having found it changed: changed again, the next page goes on by
	// Skip, so that paging moves forward while the file keeps changing.
	Again bool `json:"a,omitempty"`
	// Request is a digest of what the request asks (all but its paging),
	// so that a cursor is never applied to another search. It travels
	// sealed with the cursor's other fields (seal).
	Request string `json:"r"`
}

// seal is the r a cursor travels with: a digest of its request's digest
// and of its other fields, so that a cursor changed on its way back (a
// character of it mistyped or dropped by the agent copying it) is refused
// as one of another request is. Unsealed, such a cursor named another
// entry, offset or skip, and the page it gave was wrong with exit 0: an
// empty last page, or the walk resumed in another directory.
func (c cursor) seal() string {
	digest := c.Request
	c.Request = ""
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(append([]byte(digest+"\x00"), b...))
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// maxCursorBytes is the room a page keeps for its nextCursor; a cursor that
// would take more (an entry with a path of kilobytes) is left out, and
// nextOffset still continues the search.
const maxCursorBytes = 512

// requestDigest identifies a request by everything but its paging, by
// what it asks rather than how it is spelled: a field left out and one
// given its default, an enum's value by any of its spellings, and a list
// with or without empty globs (which filter nothing) are the same, so
// that a cursor holds for a page asked with path "." as its result says,
// or with --depth 1.
func requestDigest(req any) string {
	v := reflect.New(reflect.TypeOf(req)).Elem()
	v.Set(reflect.ValueOf(req))
	for _, f := range Fields(v.Type()) {
		fv := v.FieldByIndex(f.Index)
		switch {
		case fv.Kind() == reflect.String:
			if fv.String() == "" {
				fv.SetString(f.Default)
			}
			if canon, ok := f.spellings[fv.String()]; ok {
				fv.SetString(canon)
			}
		case fv.Kind() == reflect.Int && fv.Int() == 0 && f.Default != "":
			n, _ := strconv.Atoi(f.Default)
			fv.SetInt(int64(n))
		case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.String:
			kept := reflect.MakeSlice(fv.Type(), 0, fv.Len())
			for i := range fv.Len() {
				if fv.Index(i).String() != "" {
					kept = reflect.Append(kept, fv.Index(i))
				}
			}
			if kept.Len() == 0 {
				kept = reflect.Zero(fv.Type())
			}
			fv.Set(kept)
		}
	}
	b, _ := json.Marshal(v.Interface())
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// entryPath reports whether p can be a cursor's entry, a path below the
// walk's start: relative, each element a name, no NUL. An edited cursor
// (/etc/passwd, ../x) started the walk at a place no page ends at.
func entryPath(p string) bool {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	for elem := range strings.SplitSeq(p, "/") {
		if elem == "" || elem == "." || elem == ".." {
			return false
		}
	}
	return true
}

// displayedPath is a request's path as display spells it in output ("."
// when left out): a cursor holds for the path as the result spells it
// ("a" for ./a/), which the agent passes back.
func displayedPath(p string, display func(string) string) string {
	return display(cmp.Or(p, "."))
}

// encode returns the cursor's text, "" when it is over maxCursorBytes.
func (c cursor) encode() string {
	if utf8.ValidString(c.From) {
		c.FromText = c.From
	} else {
		c.FromBytes = []byte(c.From)
	}
	c.Request = c.seal()
	b, _ := json.Marshal(c)
	s := base64.RawURLEncoding.EncodeToString(b)
	if len(s) > maxCursorBytes {
		return ""
	}
	return s
}

// resume decodes text, the cursor a request passes (none when empty), for
// the request whose digest is digest and whose offset is *offset (0 or the
// cursor's own), which it then sets to the cursor's.
func resume(text, digest string, offset *int) (cursor, error) {
	if text == "" {
		return cursor{}, nil
	}
	bad := func(why string) error {
		return fault.InvalidArgument("cursor %s.", why).
			WithHint("pass the nextCursor of the previous page of the same request, unchanged, or page with --offset")
	}
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(text)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	c.From = cmp.Or(c.FromText, string(c.FromBytes))
	if err != nil || c.Offset < 0 || c.Skip < 0 || c.Skip > c.Offset || !entryPath(c.From) {
		return cursor{}, bad("is not a cursor agentfs gave")
	}
	sealed := c.Request
	if c.Request = digest; c.seal() != sealed {
		return cursor{}, bad("belongs to another request (the query, path or options differ), or was changed since agentfs gave it")
	}
	if *offset != 0 && *offset != c.Offset {
		return cursor{}, fault.InvalidArgument("offset %d and the cursor's offset %d differ.", *offset, c.Offset).
			WithHint("pass the cursor alone, or with the nextOffset of the same page")
	}
	*offset = c.Offset
	return c, nil
}
