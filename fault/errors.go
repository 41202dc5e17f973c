package fault

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Code is a stable, UPPER_SNAKE error code from the contract. Callers switch
// on it, so a code is never renamed; a new one is added to the contract first.
type Code string

// The codes of contract.md, in its order.
const (
	CodeInvalidArgument  Code = "INVALID_ARGUMENT"
	CodeNotFound         Code = "NOT_FOUND"
	CodeNotAFile         Code = "NOT_A_FILE"
	CodeNotADirectory    Code = "NOT_A_DIRECTORY"
	CodeNotRegular       Code = "NOT_REGULAR"
	CodeOutsideRoot      Code = "OUTSIDE_ROOT"
	CodeDenied           Code = "DENIED"
	CodeSymlink          Code = "SYMLINK"
	CodeHardlink         Code = "HARDLINK"
	CodePermissionDenied Code = "PERMISSION_DENIED"
	CodeReadOnly         Code = "READ_ONLY"
	CodeNoSpace          Code = "NO_SPACE"
	CodeTooLarge         Code = "TOO_LARGE"
	CodeNotText          Code = "NOT_TEXT"
	CodeInvalidRegex     Code = "INVALID_REGEX"
	CodeInvalidGlob      Code = "INVALID_GLOB"
	CodeNoMatch          Code = "NO_MATCH"
	CodeAmbiguousMatch   Code = "AMBIGUOUS_MATCH"
	CodeOverlap          Code = "OVERLAP"
	CodeStale            Code = "STALE"
	CodeExists           Code = "EXISTS"
	CodeLockTimeout      Code = "LOCK_TIMEOUT"
	CodeNotEmpty         Code = "NOT_EMPTY"
	CodePatchParse       Code = "PATCH_PARSE"
	CodePatchVerify      Code = "PATCH_VERIFY"
	CodeNotConfigured    Code = "NOT_CONFIGURED"
	CodeNotSupported     Code = "NOT_SUPPORTED"
	CodeIOError          Code = "IO_ERROR"
	CodeInterrupted      Code = "INTERRUPTED"
)

// Error is the one error type every tool and backend returns to callers. It
// is serialised as the "error" object of the contract; Details carries the
// code-specific fields (the current version on STALE, match lines on
// AMBIGUOUS_MATCH) so that a caller never has to parse the message.
type Error struct {
	Code        Code     `json:"code"`
	Message     string   `json:"message"`
	Path        string   `json:"path,omitempty"`
	PathBase64  string   `json:"pathBase64,omitempty"`
	Hint        string   `json:"hint,omitempty"`
	Suggestions []string `json:"suggestions,omitempty"`
	// SuggestionsBase64, when a suggestion is not UTF-8, is each one's
	// bytes in base64 ("" for one that is UTF-8), as pathBase64 is the
	// path's: the text replaced its bytes with U+FFFD.
	SuggestionsBase64 []string       `json:"suggestionsBase64,omitempty"`
	Details           map[string]any `json:"details,omitempty"`
	// Err is the underlying cause, kept for errors.Is and never serialised:
	// OS messages are not part of the contract.
	Err error `json:"-"`
}

func (e *Error) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Path)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// MaxEchoBytes bounds each string of a serialised error: a message, path or
// suggestion may echo the caller's input, and a 5 MB path must not come back
// as a 5 MB error.
const MaxEchoBytes = 1024

// MarshalJSON writes the error with every string cut to MaxEchoBytes, and
// without HTML escaping (a path "a<b" stays as it is, as in results): an
// encoder's SetEscapeHTML(false) does not undo what json.Marshal escaped.
func (e *Error) MarshalJSON() ([]byte, error) {
	type plain Error
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode((*plain)(e.Bounded())); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Bounded is a copy of e with every string cut to MaxEchoBytes, but a
// base64 twin, which is whole when its text is (at most 4/3 of the bound)
// and dropped when its text is cut: a cut twin is no base64, and could
// not be passed back.
func (e *Error) Bounded() *Error {
	c := *e
	c.Message, c.Hint = cutEcho(c.Message), cutEcho(c.Hint)
	if p := cutEcho(c.Path); p != c.Path {
		// A cut path cannot be passed back: its base64 twin would only add
		// bytes.
		c.Path, c.PathBase64 = p, ""
	}
	if c.Suggestions != nil {
		c.Suggestions = make([]string, len(e.Suggestions))
		for i, s := range e.Suggestions {
			c.Suggestions[i] = cutEcho(s)
		}
	}
	if c.SuggestionsBase64 != nil {
		c.SuggestionsBase64 = make([]string, len(e.SuggestionsBase64))
		for i, s := range e.SuggestionsBase64 {
			if i < len(c.Suggestions) && c.Suggestions[i] == e.Suggestions[i] {
				c.SuggestionsBase64[i] = s
			}
		}
	}
	if c.Details != nil {
		c.Details = make(map[string]any, len(e.Details))
		for k, v := range e.Details {
			if s, ok := v.(string); ok {
				v = cutEcho(s)
			}
			c.Details[k] = v
		}
	}
	return &c
}

// Within is e bounded (see Bounded) so that its JSON takes at most n bytes,
// as --max-bytes bounds every answer. What goes first is what echoes the
// input: the path is cut (then dropped), the suggestions dropped, and the
// message cut to its first withinMessage bytes; then the details, the
// largest first (a list of 50 lines took the whole bound while the
// message went), the hint, and the rest of the message. n of 0 or less
// bounds nothing more than Bounded.
func (e *Error) Within(n int) *Error {
	b := e.Bounded()
	size := func() int { j, _ := b.MarshalJSON(); return len(j) }
	if n <= 0 || size() <= n {
		return b
	}
	b.PathBase64 = ""
	b.Path = CutTo(b.Path, len(b.Path)-(size()-n))
	if size() > n {
		b.Path = ""
	}
	b.Suggestions, b.SuggestionsBase64 = nil, nil
	if over := size() - n; over > 0 {
		b.Message = CutTo(b.Message, max(len(b.Message)-over, min(len(b.Message), withinMessage)))
	}
	for size() > n && len(b.Details) > 0 {
		largest, most := "", -1
		for k, v := range b.Details {
			j, _ := json.Marshal(v)
			if len(j) > most || len(j) == most && k < largest {
				largest, most = k, len(j)
			}
		}
		delete(b.Details, largest)
	}
	if size() > n {
		b.Hint = ""
	}
	if over := size() - n; over > 0 {
		b.Message = CutTo(b.Message, len(b.Message)-over)
	}
	return b
}

// withinMessage is how much of an error's message Within keeps before it
// drops details: the sentence a caller acts on.
const withinMessage = 120

// CutTo cuts s to about n bytes, marked, at a character boundary; "" when
// nothing of it would be left.
func CutTo(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n -= len("…"); n <= 0 {
		return ""
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// cutEcho cuts s to MaxEchoBytes at a character boundary, saying how much
// was left out; the marker included, so that a string cut once is not cut
// again (an error is bounded, then marshalled, which bounds it too: the
// second cut counted only the first's marker, "…[20 more bytes]").
func cutEcho(s string) string {
	if len(s) <= MaxEchoBytes {
		return s
	}
	cut := MaxEchoBytes - len("…[ more bytes]") - len(strconv.Itoa(len(s)))
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…[" + strconv.Itoa(len(s)-cut) + " more bytes]"
}

// Errorf builds an Error with a formatted one-sentence message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithPath sets the display path (and its base64 twin when it is not UTF-8).
func (e *Error) WithPath(p string) *Error {
	e.Path, e.PathBase64 = PathText(p)
	return e
}

// WithClosest ends the message with "; did you mean SPELLED?" and
// suggests s: the name closest to one the caller got wrong.
func (e *Error) WithClosest(s, spelled string) *Error {
	e.Message = strings.TrimSuffix(e.Message, ".") + "; did you mean " + spelled + "?"
	e.Suggestions, e.SuggestionsBase64 = []string{s}, nil
	return e
}

// WithHint sets what the caller should do next.
func (e *Error) WithHint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// WithDetail adds one code-specific field.
func (e *Error) WithDetail(key string, v any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = v
	return e
}

// WithPlaceOf takes o's path and details: e reports o in other words (a
// summary of several failures, o the first).
func (e *Error) WithPlaceOf(o *Error) *Error {
	e.Path, e.PathBase64 = o.Path, o.PathBase64
	for k, v := range o.Details {
		e.WithDetail(k, v)
	}
	return e
}

// WithCause keeps the underlying error for errors.Is.
func (e *Error) WithCause(err error) *Error {
	e.Err = err
	return e
}

// AsError returns err as an *Error, wrapping anything else as IO_ERROR so
// that no caller ever sees an unstructured failure.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeIOError, Message: err.Error(), Err: err,
		Hint: "retry; if it persists, check the file system"}
}

// Interrupted is nil while ctx is live, else the INTERRUPTED error of a call
// stopped (SIGINT, SIGTERM) before it changed anything: mutations check it
// last, just before they commit.
func Interrupted(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	return Errorf(CodeInterrupted, "the operation was interrupted before it changed anything.").
		WithHint("run it again; nothing was changed").WithCause(ctx.Err())
}

// InvalidArgument is the common usage error.
func InvalidArgument(format string, args ...any) *Error {
	return Errorf(CodeInvalidArgument, format, args...)
}

// NotADirectory is the error of a listing or a walk asked for a file or
// a special file (a FIFO was called a file), which every backend gives
// alike.
func NotADirectory(path string) *Error {
	return Errorf(CodeNotADirectory, "the path is not a directory (a file, or a FIFO, socket or device).").WithPath(path).
		WithHint("pass a directory; use read to read a file")
}

// FullDestination is the error of a move with overwrite onto a directory
// that holds something, which every backend gives alike: EXISTS, a
// conflict as an occupied destination is, whose hint does not say to pass
// the overwrite already given.
func FullDestination(path string) *Error {
	return Errorf(CodeExists, "the destination is a directory that is not empty; a move replaces an empty one only.").
		WithPath(path).WithHint("empty or remove the destination first (rm -r), or choose another destination; nothing was moved")
}

// DirectoryDestination is the error of a move of a file onto a directory,
// which every backend gives alike: a file never replaces a directory, and
// the move does not put it inside one, as mv(1) does. name is the file's
// name, or a placeholder, for the hint.
func DirectoryDestination(path, name string) *Error {
	return Errorf(CodeNotAFile, "the destination is a directory, which a file does not replace; mv does not move into a directory.").
		WithPath(path).WithHint("name the new path of the file itself, such as %s/%s; nothing was moved", path, name)
}

// ErrNoWorkspace is the cause of a NOT_FOUND about the workspace itself
// (an object store's bucket missing), which no path in it can mend: it
// fails the call, where a missing path is an answer (rm's deleted false).
var ErrNoWorkspace = errors.New("the workspace does not exist")

// ErrSealed is the cause of an error about a file whose bytes no
// credentials agentfs holds can read as it is stored (an object encrypted
// with a key of its writer's, SSE-C, or archived by its storage class
// until it is restored): a search passes over it and counts it
// unreadable, as a file it may not read, where a read of it alone fails.
var ErrSealed = errors.New("the file cannot be read as it is stored")

// Unreadable reports whether err is a file's or a directory's that a
// search skips and counts as unreadable: denied to the caller, or sealed
// (ErrSealed).
func Unreadable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodePermissionDenied || errors.Is(err, ErrSealed)
}

// MissingPath reports whether err is a NOT_FOUND of the path asked, not
// of the workspace that would hold it (ErrNoWorkspace).
func MissingPath(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeNotFound && !errors.Is(err, ErrNoWorkspace)
}

// RootRefused is the error of a mutation that would move, replace or
// remove a workspace's root, which every backend gives alike.
func RootRefused(path string) *Error {
	return InvalidArgument("the path is a workspace root; agentfs never moves, replaces or removes a root.").WithPath(path).
		WithHint("name a file or directory inside the root; nothing was changed")
}

// RootHeld is RootRefused for a directory that holds a root (spelled as
// the caller would name it): the directory itself is none, and "the path
// is a workspace root" left the caller looking for one.
func RootHeld(path, root string) *Error {
	return InvalidArgument("the directory holds a workspace root (%s); agentfs never moves, replaces or removes a root.", root).WithPath(path).
		WithDetail("root", root).WithHint("name the files and directories beside the root one by one; nothing was changed")
}

// DotDotRefused is the error of a path with a ".." after a name that is
// not a directory (a file, or nothing) on a store, whose keys would
// resolve it by the names alone where a disk's kernel fails it.
func DotDotRefused(path string) *Error {
	return InvalidArgument("the path has \"..\" after a name that is not a directory, which a disk would not resolve.").
		WithPath(path).WithHint("name the path without that \"..\"; nothing was changed")
}

// DirOntoFile is a move's error for a directory moved over a file (or a
// link), which rename(2) refuses (ENOTDIR), worded by what is wrong.
func DirOntoFile(dst string) *Error {
	return Errorf(CodeNotADirectory, "the destination is a file, and the source a directory.").WithPath(dst).
		WithHint("choose another destination")
}

// OntoItself is a move's error for a destination that names the source
// itself (spelled alike, or through a link to its directory), which every
// backend gives alike: not EXISTS, whose hint (overwrite) would only lead
// to another refusal.
func OntoItself(path string) *Error {
	return InvalidArgument("the destination is the source itself.").WithPath(path).
		WithHint("choose another destination; nothing was moved")
}

// PathText returns p for JSON output and, when p is not valid UTF-8, its
// base64 twin, so that no two names collide after JSON's replacement runes.
func PathText(p string) (text, b64 string) {
	if utf8.ValidString(p) {
		return p, ""
	}
	return strings.ToValidUTF8(p, "\uFFFD"), base64.StdEncoding.EncodeToString([]byte(p))
}

// PathBytes is PathText the other way: the path's own bytes, those of its
// base64 twin when it has one (text when the twin does not decode).
func PathBytes(text, b64 string) string {
	if b64 == "" {
		return text
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return text
	}
	return string(raw)
}

// ShellWord is p as one word of a POSIX shell, for a command a hint gives:
// as it is when it needs no quoting, else in single quotes.
func ShellWord(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
