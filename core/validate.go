package core

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// Validate checks a request (a request struct, or a pointer to one) against
// the constraints its tags declare (see FieldSpec): a required field is
// given, and a given value is one of its enum and within its range, in
// nested requests too (each of edit's edits). A field left at its zero value
// is left out, and its default applies. Every tool calls it before anything
// else it checks (a mutation after refusing read-only mode), so that a
// request given as flags, as JSON or from Go is refused alike, as its
// schema says, with INVALID_ARGUMENT.
func Validate(req any) error {
	return validateStruct(reflect.Indirect(reflect.ValueOf(req)), "")
}

func validateStruct(v reflect.Value, at string) error {
	for _, f := range Fields(v.Type()) {
		fv := v.FieldByIndex(f.Index)
		if err := f.check(fv, f.Spelled(at)); err != nil {
			return err
		}
		if fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct {
			for i := 0; i < fv.Len(); i++ {
				if err := validateStruct(fv.Index(i), at+f.JSON+"["+strconv.Itoa(i)+"]."); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Spelled is how a message names the field, found at at (a nested
// request's path, edits[0]., or "" at the top): by its flag (--byte-offset)
// when it has one and is no positional argument, which fieldSpelling
// respells as the JSON field (byteOffset) for a caller who sent JSON, so
// that each caller reads the name it gave; else by its JSON path
// (edits[0].oldText, which --edits takes as JSON too, and path, the
// argument).
func (f FieldSpec) Spelled(at string) string {
	if at == "" && f.Flag != "" && f.Arg < 0 {
		return "--" + f.Flag
	}
	return at + f.JSON
}

// Missing is the error of the required field name left out.
func (f FieldSpec) Missing(name string) *fault.Error {
	return fault.InvalidArgument("%s is required.", name).WithHint("give %s: %s", name, f.Help)
}

// check refuses v, the value of field name, when it breaks f's constraints.
func (f FieldSpec) check(v reflect.Value, name string) error {
	if v.IsZero() {
		if f.Required {
			return f.Missing(name)
		}
		return nil
	}
	v = reflect.Indirect(v)
	switch {
	case f.Enum != nil && v.Kind() == reflect.String && f.spellings[v.String()] == "":
		return fault.InvalidArgument("%s must be %s, not %q.", name, OrList(f.Enum), v.String()).
			WithHint("%s", f.allowed(name))
	case f.Min != nil && v.CanInt() && v.Int() < *f.Min:
		return f.BelowMin(name, v.Int())
	case f.Max != nil && v.CanInt() && v.Int() > *f.Max:
		return fault.InvalidArgument("%s must be at most %d, not %d.", name, *f.Max, v.Int()).
			WithHint("%s", f.allowed(name))
	case f.Pattern != nil && v.Kind() == reflect.String && !f.Pattern.MatchString(v.String()):
		return fault.InvalidArgument("%s %q is not %s.", name, v.String(), f.PatternIs).
			WithHint("give %s in that form; %s: %s", name, name, f.Help)
	}
	return nil
}

// BelowMin is the error of n, given for field name, below f's minimum.
func (f FieldSpec) BelowMin(name string, n int64) error {
	return fault.InvalidArgument("%s must be at least %d, not %d.", name, *f.Min, n).WithHint("%s", f.allowed(name))
}

// allowed is the hint of a value out of its set or range: what to give,
// what leaving the field out means, and what the field is.
func (f FieldSpec) allowed(name string) string {
	var b strings.Builder
	b.WriteString("give " + name + " ")
	switch {
	case f.Enum != nil:
		b.WriteString("as " + OrList(f.Enum))
	case f.Min != nil && f.Max != nil:
		fmt.Fprintf(&b, "between %d and %d", *f.Min, *f.Max)
	case f.Min != nil:
		fmt.Fprintf(&b, "at least %d", *f.Min)
	default:
		fmt.Fprintf(&b, "at most %d", *f.Max)
	}
	if f.Default != "" {
		b.WriteString(", or leave it out for the default " + f.Default)
	}
	b.WriteString("; " + name + ": " + f.Help)
	return b.String()
}

// OrList joins values as a sentence does: "a", "a or b", "a, b or c".
func OrList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// checkDotName refuses to remove or move a path whose last name is "." or
// "..", as rm(1) and mv(1) do: "build/.." removes the directory holding
// build, and "." from a subdirectory of the root the working directory,
// which is rarely what was meant. verb is the tool's past participle.
func checkDotName(p, display, verb string) error {
	dot := backend.DotName(p)
	if dot == "" {
		return nil
	}
	e := fault.InvalidArgument("the path ends in %q, which names a directory only by way of itself or of one below it; agentfs refuses it, as rm(1) and mv(1) do.", dot).WithPath(display)
	if display == "." {
		return e.WithHint("name the directory from its parent, or by its path from the root; nothing was %s", verb)
	}
	return e.WithHint("name the directory by its own path, %s, if it is the one meant; nothing was %s", display, verb)
}

// checkFinalSlash refuses "file.txt/": a final slash names a directory, as
// to open(2), rename(2) and rm(1), and the lexical clean that drops it must
// not turn it into a file's name (mv f archive/ made a file "archive").
func checkFinalSlash(p, display string, typ backend.FileType) error {
	if !backend.NamesDirectory(p) || typ == backend.TypeDir {
		return nil
	}
	return fault.Errorf(fault.CodeNotADirectory, "the path names a directory (a final slash, . or ..) but is a %s.", typ.Noun()).WithPath(display).
		WithHint("drop the final slash or /. to name the %s itself", typ.Noun())
}
