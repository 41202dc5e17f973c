package core_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
)

func tools(t *testing.T) (*core.Tools, string) {
	t.Helper()
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	dir := t.TempDir()
	fsys, err := localfs.New(localfs.Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return &core.Tools{FS: fsys, LockTimeout: time.Second}, dir
}

func code(err error) fault.Code {
	var e *fault.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func ptr(s string) *string { return &s }

// The version a write returns is the one a later stat sees, so it works as
// the precondition of the next mutation; an older one is STALE.
func TestWriteVersionChain(t *testing.T) {
	tl, _ := tools(t)
	ctx := context.Background()
	first, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("one")})
	if err != nil {
		t.Fatal(err)
	}
	second, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("two"),
		Precondition: core.Precondition{ExpectedVersion: first.Version, ExpectedSha256: first.Sha256}})
	if err != nil {
		t.Fatalf("write with the current version: %v", err)
	}
	_, err = tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("three"),
		Precondition: core.Precondition{ExpectedVersion: first.Version}})
	if code(err) != fault.CodeStale {
		t.Fatalf("write with an old version: %v, want STALE", err)
	}
	var ce *fault.Error
	errors.As(err, &ce)
	if ce.Details["currentVersion"] != second.Version {
		t.Fatalf("STALE names version %v, want %s", ce.Details["currentVersion"], second.Version)
	}
	if _, err := tl.Rm(ctx, core.RmRequest{Path: "f", Precondition: core.Precondition{ExpectedVersion: second.Version}}); err != nil {
		t.Fatalf("rm with the current version: %v", err)
	}
}

// Identical content is noChange: the file is not touched, so its mtime and
// version stay; under a matching sha256 precondition too.
func TestWriteNoChangeKeepsFile(t *testing.T) {
	tl, dir := tools(t)
	ctx := context.Background()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("same"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, past, past); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(p)
	for _, pre := range []core.Precondition{{}, {ExpectedSha256: "0967115f2813a3541eaef77de9d9d5773f1c0c04314b0bbfe4ff3b3b1c55b5d5"}} {
		res, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("same"), Precondition: pre})
		if err != nil {
			t.Fatal(err)
		}
		after, _ := os.Stat(p)
		if !res.NoChange || res.BytesWritten != 0 || !after.ModTime().Equal(past) || !os.SameFile(before, after) {
			t.Fatalf("%+v: result %+v, mtime %v", pre, res, after.ModTime())
		}
	}
	res, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("diff")})
	if err != nil || res.NoChange {
		t.Fatalf("same size, other content: %+v %v", res, err)
	}
}

// A backend without the write side refuses mutations with NOT_SUPPORTED,
// and read-only mode with READ_ONLY before anything else.
func TestMutationGate(t *testing.T) {
	tl, _ := tools(t)
	ctx := context.Background()
	readOnly := &core.Tools{FS: readOnlyFS{tl.FS}}
	if _, err := readOnly.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("x")}); code(err) != fault.CodeNotSupported {
		t.Fatalf("write: %v", err)
	}
	if _, err := readOnly.Rm(ctx, core.RmRequest{Path: "f"}); code(err) != fault.CodeNotSupported {
		t.Fatalf("rm: %v", err)
	}
	tl.ReadOnly = true
	if _, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("x")}); code(err) != fault.CodeReadOnly {
		t.Fatalf("write: %v", err)
	}
}

// readOnlyFS hides the write side of a backend.
type readOnlyFS struct{ backend.FS }

// The content comes from exactly one source; none, two, or stdin's "-"
// outside the flags form are INVALID_ARGUMENT and leave the file as it was.
// A content file is read inside the roots, up to the same 2 MiB.
func TestWriteContentSources(t *testing.T) {
	tl, dir := tools(t)
	ctx := context.Background()
	outside := t.TempDir()
	for name, data := range map[string]string{
		filepath.Join(dir, "f"):       "keep\n",
		filepath.Join(dir, "src"):     "from a file\n",
		filepath.Join(dir, "big"):     strings.Repeat("a", core.MaxWriteBytes+1),
		filepath.Join(dir, "max"):     strings.Repeat("a", core.MaxWriteBytes),
		filepath.Join(outside, "out"): "outside\n",
	} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		req  core.WriteRequest
		code fault.Code
		want string
	}{
		{"none", core.WriteRequest{}, fault.CodeInvalidArgument, ""},
		{"content and file", core.WriteRequest{Content: ptr("x"), ContentFile: "src"}, fault.CodeInvalidArgument, ""},
		{"content and base64", core.WriteRequest{Content: ptr("x"), ContentBase64: "eA=="}, fault.CodeInvalidArgument, ""},
		{"file and base64", core.WriteRequest{ContentFile: "src", ContentBase64: "eA=="}, fault.CodeInvalidArgument, ""},
		{"stdin outside the flags form", core.WriteRequest{ContentFile: "-"}, fault.CodeInvalidArgument, ""},
		{"missing file", core.WriteRequest{ContentFile: "nope"}, fault.CodeNotFound, ""},
		{"file outside the roots", core.WriteRequest{ContentFile: filepath.Join(outside, "out")}, fault.CodeOutsideRoot, ""},
		{"file over 2 MiB", core.WriteRequest{ContentFile: "big"}, fault.CodeTooLarge, ""},
		{"content over 2 MiB", core.WriteRequest{Content: ptr(strings.Repeat("a", core.MaxWriteBytes+1))}, fault.CodeTooLarge, ""},
		{"a directory", core.WriteRequest{ContentFile: "."}, fault.CodeNotAFile, ""},
		{"file", core.WriteRequest{ContentFile: "src"}, "", "from a file\n"},
		{"file of 2 MiB", core.WriteRequest{ContentFile: "max"}, "", strings.Repeat("a", core.MaxWriteBytes)},
		{"empty content", core.WriteRequest{Content: ptr("")}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "f"), []byte("keep\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tc.req.Path = "f"
			_, err := tl.Write(ctx, tc.req)
			got, _ := os.ReadFile(filepath.Join(dir, "f"))
			if tc.code != "" {
				if code(err) != tc.code || string(got) != "keep\n" {
					t.Fatalf("err %v (want %s), file %q", err, tc.code, got)
				}
				if e := err.(*fault.Error); tc.req.ContentFile != "" && tc.code != fault.CodeInvalidArgument && !strings.HasPrefix(e.Message, "--content-file: ") {
					t.Errorf("message %q does not name --content-file", e.Message)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("err %v, file %q", err, got)
			}
		})
	}
}

// Writing back what read gave changes nothing, whatever the file's line
// endings, byte-order mark or UTF-16 encoding: noChange, the same bytes.
func TestReadThenWriteIsNoChange(t *testing.T) {
	tl, dir := tools(t)
	ctx := context.Background()
	for name, data := range map[string]string{
		"lf":        "a\nb\n",
		"crlf":      "a\r\nb\r\n",
		"crlf-bom":  "\xEF\xBB\xBFa\r\nb\r\n",
		"mixed":     "a\r\nb\nc\r\n",
		"cr-crlf":   "a\r\r\nb\r\r\n",
		"cr-no-eol": "a\r\r\nb\r",
		"utf16-cr":  "\xFF\xFEa\x00\r\x00\r\x00\n\x00",
		"no-eol":    "a\r\nb",
		"utf16le":   "\xFF\xFEa\x00\r\x00\n\x00",
		"utf16be":   "\xFE\xFF\x00a\x00\n",
		"one-line":  "x",
		"bom-alone": "\xEF\xBB\xBF",
		// A NUL past the binary sample is text to read: it was taken for
		// bytes by the write, CRLF, the mark and UTF-16 lost.
		"nul-late-crlf-bom": "\xEF\xBB\xBF" + strings.Repeat(strings.Repeat("l", 998)+"\r\n", 70) + "x\x00y\r\n",
		// In UTF-16 the sample is 64 KiB of text, as grep decodes it:
		// 40 such lines put the NUL past 64 KiB of bytes but within it.
		"nul-late-utf16le": "\xFF\xFE" + string(core.UTF16Bytes(strings.Repeat(strings.Repeat("l", 998)+"\r\n", 70)+"x\x00y\r\n", false)),
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := tl.Read(ctx, core.ReadRequest{Path: name})
		if err != nil {
			t.Fatalf("%s: read: %v", name, err)
		}
		res, err := tl.Write(ctx, core.WriteRequest{Path: name, Content: ptr(r.Content)})
		got, _ := os.ReadFile(p)
		if err != nil || !res.NoChange || string(got) != data || res.LineEnding != r.LineEnding {
			t.Errorf("%s: read %q (%s), then write: %+v %v, file %q", name, r.Content, r.LineEnding, res, err, got)
		}
	}
}

// An append past --append's bound is refused with a hint that can be
// followed: it said to write the whole content, which write's 2 MiB cap
// refuses for a file of 16 MiB.
func TestAppendPastItsBound(t *testing.T) {
	tl, dir := tools(t)
	f, err := os.Create(filepath.Join(dir, "big"))
	if err == nil {
		err = f.Truncate(core.MaxAppendBytes)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	_, err = tl.Write(context.Background(), core.WriteRequest{Path: "big", Content: ptr("x"), Append: true})
	var e *fault.Error
	if !errors.As(err, &e) || e.Code != fault.CodeTooLarge {
		t.Fatalf("append: %v, want TOO_LARGE", err)
	}
	if strings.Contains(e.Hint, "whole content") || !strings.Contains(e.Hint, "new file") {
		t.Errorf("hint %q: write cannot take the whole content", e.Hint)
	}
}

// Writing back what read gave in an encoding, in that encoding, is
// noChange, byte for byte: it rewrote the file as UTF-8.
func TestReadThenWriteInEncodingIsNoChange(t *testing.T) {
	tl, dir := tools(t)
	ctx := context.Background()
	every := make([]byte, 0, 255)
	for b := 1; b < 256; b++ {
		every = append(every, byte(b))
	}
	for _, tc := range []struct{ name, enc, data string }{
		{"shift_jis crlf", "shift_jis", "\x93\xfa\x96\x7b\x8c\xea\r\n\x83\x65\x83\x58\x83\x67\r\n"},
		{"latin1, every byte but NUL", "latin1", string(every)},
		{"windows-1252 quotes", "windows-1252", "\x93quoted\x94 \x96 caf\xe9\n"},
		{"euc-jp", "euc-jp", "\xc6\xfc\xcb\xdc\xb8\xec\n"},
		{"gbk", "gbk", "\xd6\xd0\xce\xc4\n"},
		{"iso-2022-jp", "iso-2022-jp", "\x1b$BF|K\\8l\x1b(B\n"},
		{"utf-16le without a mark", "utf-16le", "h\x00\xe9\x00\r\x00\n\x00"},
		{"utf-16be with its mark", "utf-16be", "\xfe\xff\x00h\x00\n"},
		{"utf-8 with its mark", "utf-8", "\xef\xbb\xbfh\xc3\xa9\n"},
	} {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := tl.Read(ctx, core.ReadRequest{Path: "f", Encoding: tc.enc})
		if err != nil {
			t.Fatalf("%s: read: %v", tc.name, err)
		}
		res, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr(r.Content), Encoding: tc.enc})
		got, _ := os.ReadFile(p)
		if err != nil || !res.NoChange || string(got) != tc.data || res.LineEnding != r.LineEnding {
			t.Errorf("%s: read %q (%s), then write: %+v %v, file %q", tc.name, r.Content, r.LineEnding, res, err, got)
		}
	}
}

// A character the encoding cannot hold is INVALID_ARGUMENT at its line,
// column and byte in the content; the file is left alone.
func TestWriteEncodingRefusesWhatItCannotHold(t *testing.T) {
	tl, dir := tools(t)
	ctx := context.Background()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("caf\xe9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		enc, content      string
		line, column, off int
	}{
		{"latin1", "ok\na \u65e5", 2, 3, 5},
		{"latin1", "\ufffd", 1, 1, 0},
		{"latin1", "\u0080", 1, 1, 0},
		{"shift_jis", "x\U0001F600", 1, 2, 1},
	} {
		_, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr(tc.content), Encoding: tc.enc})
		var e *fault.Error
		if !errors.As(err, &e) || e.Code != fault.CodeInvalidArgument || e.Details["line"] != tc.line ||
			e.Details["column"] != tc.column || e.Details["offset"] != tc.off {
			t.Errorf("%s %q: %v %+v, want INVALID_ARGUMENT at %d:%d (%d)", tc.enc, tc.content, err, e, tc.line, tc.column, tc.off)
		}
	}
	if got, _ := os.ReadFile(p); string(got) != "caf\xe9\n" {
		t.Errorf("file %q, want it unchanged", got)
	}
}

// GB18030 spells U+FEFF as a character (84 31 95 33), and has no
// byte-order mark: a file that begins with it, written back as read gave
// it, lost it (noChange false, the text changed), and a new file with it
// was INVALID_ARGUMENT for a --bom never passed.
func TestWriteEncodingWithoutAMarkKeepsALeadingFEFF(t *testing.T) {
	tl, dir := tools(t)
	ctx := context.Background()
	p := filepath.Join(dir, "f")
	const data = "\x84\x31\x95\x33a\n"
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := tl.Read(ctx, core.ReadRequest{Path: "f", Encoding: "gb18030"})
	if err != nil || r.Content != "\ufeffa\n" {
		t.Fatalf("read: %+v %v", r, err)
	}
	res, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr(r.Content), Encoding: "gb18030"})
	if got, _ := os.ReadFile(p); err != nil || !res.NoChange || string(got) != data {
		t.Errorf("written back: %+v %v, file %q", res, err, got)
	}
	for _, app := range []bool{false, true} {
		os.Remove(p)
		res, err = tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("\ufeffa\n"), Encoding: "gb18030", Append: app})
		if got, _ := os.ReadFile(p); err != nil || string(got) != data || *res.BOM {
			t.Errorf("new file, append %v: %+v %v, file %q", app, res, err, got)
		}
	}
	res, err = tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("\ufeffb\n"), Encoding: "gb18030", Append: true})
	if got, _ := os.ReadFile(p); err != nil || string(got) != data+"\x84\x31\x95\x33b\n" {
		t.Errorf("appended to the file: %+v %v, file %q", res, err, got)
	}
	_, err = tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("a\n"), Encoding: "gb18030", BOM: new(true)})
	if code(err) != fault.CodeInvalidArgument {
		t.Errorf("--bom for gb18030: %v, want INVALID_ARGUMENT", err)
	}
}

// ISO-2022-JP is stateful: a file whose last line ends shifted into JIS
// X 0208 read the ASCII appended after it as kanji ("ab" as 痰), exit 0.
func TestAppendISO2022JPAfterAShiftedLine(t *testing.T) {
	tl, dir := tools(t)
	ctx := context.Background()
	p := filepath.Join(dir, "f")
	for _, old := range []string{"\x1b$BF|", "x\n\x1b$BF|", "\x1b$BF|\x1b(B", "a", ""} {
		if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		before, err := tl.Read(ctx, core.ReadRequest{Path: "f", Encoding: "iso-2022-jp"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("ab\n"), Encoding: "iso-2022-jp", Append: true}); err != nil {
			t.Fatalf("%q: %v", old, err)
		}
		r, err := tl.Read(ctx, core.ReadRequest{Path: "f", Encoding: "iso-2022-jp"})
		got, _ := os.ReadFile(p)
		if err != nil || r.Content != before.Content+"ab\n" {
			t.Errorf("%q, ab appended: %q reads as %+v %v, want %q", old, got, r, err, before.Content+"ab\n")
		}
	}
}

// A file whose byte-order mark names its encoding takes no text appended
// in another: latin1 after a UTF-8 or UTF-16 mark (every byte is
// Latin-1, so the file passed as Latin-1 text) mixed two encodings, exit 0.
func TestAppendEncodingAgainstTheFilesMark(t *testing.T) {
	tl, dir := tools(t)
	ctx := context.Background()
	p := filepath.Join(dir, "f")
	for _, tc := range []struct{ old, enc string }{
		{"\xef\xbb\xbfcaf\xc3\xa9\n", "latin1"},
		{"\xff\xfe\x30\x04\x31\x04", "windows-1251"}, // "аб", no NUL
		{"\xfe\xff\x04\x30", "koi8-r"},
	} {
		if err := os.WriteFile(p, []byte(tc.old), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("b\n"), Encoding: tc.enc, Append: true})
		if got, _ := os.ReadFile(p); code(err) != fault.CodeNotText || string(got) != tc.old {
			t.Errorf("%q, appended in %s: %v, file %q", tc.old, tc.enc, err, got)
		}
	}
	// Its own encoding still takes the text.
	if err := os.WriteFile(p, []byte("\xef\xbb\xbfa\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("\u00e9\n"), Encoding: "utf-8", Append: true}); err != nil {
		t.Error(err)
	}
}

// The result names the encoding as write's does: utf-8 is left out, as
// the man page says, where --append named it and write did not.
func TestWriteEncodingUTF8ResultAlike(t *testing.T) {
	tl, _ := tools(t)
	ctx := context.Background()
	for _, app := range []bool{false, true} {
		res, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("a\n"), Encoding: "utf-8", Append: app})
		if err != nil || res.Encoding != "" {
			t.Errorf("append %v: %+v %v, want no encoding", app, res, err)
		}
	}
}

// An append to a file in an encoding agentfs cannot tell (Latin-1) follows
// its line endings, and its result names them as a UTF-8 append's does,
// the whole file as written: it left lineEnding and bom out.
func TestAppendLegacyResultNamesLineEnding(t *testing.T) {
	tl, dir := tools(t)
	ctx := context.Background()
	p := filepath.Join(dir, "f")
	for _, tc := range []struct{ old, ending, want string }{
		{"caf\xe9\r\nx\r\n", "crlf", "caf\xe9\r\nx\r\nmore\r\n"},
		{"caf\xe9\nx\n", "lf", "caf\xe9\nx\nmore\n"},
		{"caf\xe9\nx\r\n", "mixed", "caf\xe9\nx\r\nmore\n"},
	} {
		if err := os.WriteFile(p, []byte(tc.old), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("more\n"), Append: true})
		got, _ := os.ReadFile(p)
		if err != nil || string(got) != tc.want || res.LineEnding != tc.ending || res.BOM == nil || *res.BOM || res.Encoding != "" {
			t.Errorf("%q, more appended: %+v %v, file %q; want lineEnding %s, bom false, no encoding, file %q", tc.old, res, err, got, tc.ending, tc.want)
		}
	}
}

// write's 2 MiB holds for the bytes written, not only for the content
// given: 1,995,000 bytes of LF lines into a CRLF file made a file of
// 2,194,500, which edit, replace and apply-patch then refused (TOO_LARGE),
// from a write under the cap; UTF-16 doubles ASCII likewise. Such a write
// is TOO_LARGE, the file untouched; the same content into an LF file fits.
func TestWriteCapOnBytesWritten(t *testing.T) {
	tl, dir := tools(t)
	ctx := context.Background()
	content := strings.Repeat("xxxxxxxxx\n", 199500) // 1,995,000 bytes
	for name, old := range map[string]string{
		"crlf":  "a\r\nb\r\n",
		"utf16": "\xff\xfea\x00\n\x00",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := tl.Write(ctx, core.WriteRequest{Path: name, Content: ptr(content)})
		var e *fault.Error
		if !errors.As(err, &e) || e.Code != fault.CodeTooLarge {
			t.Errorf("%s: write of %d bytes: %+v %v, want TOO_LARGE", name, len(content), res, err)
			continue
		}
		if size, _ := e.Details["size"].(int64); size <= core.MaxWriteBytes {
			t.Errorf("%s: details.size %v, want the bytes as written", name, e.Details["size"])
		}
		if got, _ := os.ReadFile(p); string(got) != old {
			t.Errorf("%s: the file was changed to %d bytes", name, len(got))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "lf"), []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tl.Write(ctx, core.WriteRequest{Path: "lf", Content: ptr(content)}); err != nil {
		t.Errorf("lf: %v", err)
	}
}

// An append's 16 MiB holds for the file as written, after the content
// takes the file's CRLF endings.
func TestAppendCapOnBytesWritten(t *testing.T) {
	tl, dir := tools(t)
	p := filepath.Join(dir, "f")
	old := strings.Repeat("x\r\n", (core.MaxAppendBytes-core.MaxWriteBytes)/3) // 14,680,062 bytes
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	content := strings.Repeat("x\n", 1000000) // 3,000,000 bytes as written
	res, err := tl.Write(context.Background(), core.WriteRequest{Path: "f", Content: ptr(content), Append: true})
	if code(err) != fault.CodeTooLarge {
		t.Fatalf("append of %d bytes to %d: %+v %v, want TOO_LARGE", len(content), len(old), res, err)
	}
	if fi, _ := os.Stat(p); fi.Size() != int64(len(old)) {
		t.Errorf("the file is %d bytes, was %d", fi.Size(), len(old))
	}
}

// TestWriteRefusesLargeContentCopiedOnce: a content over 2 MiB is refused
// with one copy of it, its bytes, not again a string to look for read's
// cut markers in (8 MiB allocated for 4 MiB before).
func TestWriteRefusesLargeContentCopiedOnce(t *testing.T) {
	tl, _ := tools(t)
	content := strings.Repeat("x", 4<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := tl.Write(context.Background(), core.WriteRequest{Path: "f", Content: &content})
	runtime.ReadMemStats(&after)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeTooLarge {
		t.Fatalf("err = %v, want TOO_LARGE", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(content))*5/4 {
		t.Fatalf("refusing %d bytes allocated %d", len(content), n)
	}
}
