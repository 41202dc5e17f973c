// Package subcommands is the command-line face of agentfs: one file per
// subcommand, each turning flags or JSON into a core request, calling core,
// and writing one JSON result. It holds no file-system logic. The whole CLI
// is Main, a function of arguments and streams that returns the exit code, so
// tests drive it in memory and the process exit is decided in one place.
package subcommands

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/index"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/mixfs"
	"github.com/agentfs/agentfs/registry"
	"github.com/agentfs/agentfs/s3fs"
	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"
)

// Version is set at build time by goreleaser.
var Version = "dev"

// Commit is set at build time by goreleaser, so that a release names its
// commit where the toolchain recorded none (-buildvcs=false).
var Commit = ""

// Streams are the process's standard streams.
type Streams struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// subcommand makes one entry of commands: the whole command, or only its
// header (name and usage) for --help's list.
type subcommand interface {
	command() *cli.Command
	header() *cli.Command
}

// commands lists every subcommand, in the order of --help. Making a tool's
// flags reflects over its request type, work paid on every call, so only
// the subcommand called is made whole, or all of them when called is "".
func commands(called string) []*cli.Command {
	var cmds []*cli.Command
	for _, s := range subcommandList() {
		c := s.header()
		if called == "" || c.Name == called {
			c = s.command()
		}
		// No "help" (or "h") subcommand: a first argument spelled so is a
		// path or a query ("agentfs rm h" printed help and exited 0, the
		// file kept). --help stays.
		c.HideHelpCommand = true
		cmds = append(cmds, c)
	}
	return cmds
}

// subcommandList is every subcommand, in the order of --help.
func subcommandList() []subcommand {
	return []subcommand{
		readCommand(),
		lsCommand(),
		findCommand(),
		grepCommand(),
		writeCommand(),
		editCommand(),
		rmCommand(),
		applyPatchCommand(),
		mvCommand(),
		replaceCommand(),
		publishCommand(),
		serveCommand(),
		batchCommand(),
		mcpCommand(),
		indexCommand(),
		toolsCommand(),
		versionCommand(),
	}
}

// internalError is the contract's answer to a panic: a bug must still
// answer with an error object, not a Go stack trace a caller cannot parse.
func internalError(r any) *fault.Error {
	return fault.Errorf(fault.CodeIOError, "internal error: %v.", r).
		WithHint("this is a bug in agentfs; please report it with the request")
}

// Main runs one agentfs invocation and returns its exit code.
func Main(ctx context.Context, args []string, s Streams) (code int) {
	s.Stdout = &answerStream{w: s.Stdout, ctx: ctx}
	// The default bound until Before reads --max-bytes: --version and
	// the errors of parsing come before it.
	out := &output{streams: s, format: earlyFormat(args), maxBytes: core.DefaultMaxBytes}
	defer func() {
		// A bug must still answer with the contract's error object, not a
		// Go stack trace on stderr that a caller cannot parse.
		if r := recover(); r != nil {
			code = out.fail(internalError(r))
		}
	}()
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	globals := globalFlags()
	cmds := commands(calledName(args, globals))
	args, dashIsPath, err := reorderArgs(args, cmds, globals)
	if err != nil {
		return out.fail(err)
	}
	out.dashIsPath = dashIsPath
	if err := checkEnv(); err != nil {
		return out.fail(err)
	}
	app := &cli.App{
		Name:            "agentfs",
		Usage:           "bounded, confined, lossless file tools for AI agents",
		Version:         buildVersion().Version,
		Flags:           globalFlags(),
		Commands:        cmds,
		Reader:          s.Stdin,
		Writer:          &printedStream{w: s.Stdout, out: out},
		ErrWriter:       io.Discard,
		HideHelpCommand: true,
		// urfave/cli would print usage and exit by itself: every usage error
		// becomes one JSON error with exit code 2 instead.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError(err, args, nil, nil, nil)
		},
		Before: func(c *cli.Context) error {
			out.format = c.String("format")
			if colored(c.String("color"), s.Stdout) {
				out.palette = registry.Colors
			}
			out.palette.Terminal = isTerminal(s.Stdout)
			if err := checkGlobals(c); err != nil {
				return err // not cut to a --max-bytes it refuses
			}
			out.maxBytes, out.quiet = c.Int("max-bytes"), c.Bool("quiet")
			return nil
		},
		// args, "agentfs" first: index --detach starts itself again so.
		Metadata: map[string]any{"out": out, "streams": s, "args": args},
	}
	// --version prints what version prints.
	// urfave/cli returns nothing from it: its error is kept for the end.
	cli.VersionPrinter = func(c *cli.Context) {
		if o := outputOf(c); o.printErr == nil {
			o.printErr = o.result(buildVersion())
		}
	}
	for _, c := range app.Commands {
		cmdFlags, classic, valued := c.Flags, classicFlags[c.Name], classicValues[c.Name]
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return usageError(err, args, cmdFlags, classic, valued)
		}
	}
	err = app.RunContext(ctx, args)
	if err == nil {
		err = out.printErr
	}
	if errors.Is(err, errReaderGone) {
		return out.code
	} else if err != nil {
		return out.fail(variableNamed(args, err))
	}
	return out.code
}

// earlyFormat is the --format that args (up to a --) or AGENTFS_FORMAT
// ask for, the last one given, for the errors found before the flags are
// parsed (a misspelt subcommand or global flag, a bad environment
// variable): those of --format text were JSON while every other was text.
// Before sets the format the parsed flags give.
func earlyFormat(args []string) string {
	f := os.Getenv("AGENTFS_FORMAT")
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		switch {
		case name != "format" || !strings.HasPrefix(a, "-"):
		case hasValue:
			f = value
		case i+1 < len(args):
			i++
			f = args[i]
		}
	}
	if f == "text" {
		return "text"
	}
	return "json"
}

// usageError turns a urfave/cli parse error into INVALID_ARGUMENT, naming
// the closest flag on a typo, or what to pass instead of a classic tool's
// flag that the subcommand does not take (classic; valued says which of
// them take a value).
func usageError(err error, args []string, flags []cli.Flag, classic map[string]string, valued map[string]valueKind) error {
	msg := err.Error()
	// urfave/cli names every flag with one dash: a long one's is two.
	if before, name, ok := strings.Cut(msg, "for flag -"); ok && len(name) > 2 && name[1] != ':' {
		msg = before + "for flag --" + name
	}
	e := fault.InvalidArgument("%s.", strings.TrimSuffix(msg, "."))
	hint := "run with --help to see the flags"
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		name = strings.TrimPrefix(name, "-")
		var names []string
		for _, f := range append(flags, globalFlags()...) {
			names = append(names, f.Names()...)
		}
		typed := typedFlag(name, args)
		e = fault.InvalidArgument("unknown flag %s.", typed)
		letter, value := name[:1], name[1:]
		switch instead, ok := classic[name]; {
		case ok:
			hint = instead
		case name == "version":
			// Not taken after a subcommand: grep -v would print the
			// version and exit 0, an answer that looks like a search's.
			// (-v alone is rm's, mv's or ls's habit more often than a
			// version asked.)
			hint = "--version (-v) goes before the subcommand, as in: agentfs --version; or run agentfs version"
		case value != "" && valued[letter] == numberValue && isDigits(value):
			// -A3, -n20: getopt's flag with its number attached, no
			// bundle (-n0 is not -n -0) nor text to search for.
			hint = classic[letter]
		case strings.HasSuffix(name, "-base64") && slices.Contains(names, strings.TrimSuffix(name, "-base64")):
			// --path-base64, after the pathBase64 of an output: a twin
			// is a JSON field, never a flag, and the hint that text
			// goes after -- named a file called --path-base64.
			field := camelCase(name)
			hint = fmt.Sprintf(`%s is a field of a JSON request, not a flag: pass --json '{"%s":"..."}' (or - with the request on standard input), or the name's own bytes as the argument`, field, field)
		case !strings.HasPrefix(typed, "--") && isBundle(name, names, classic):
			// -lah, -il: getopt's bundle of one-letter flags, which a
			// spelling match would take for one long flag (-lah: --path).
			hint = bundleHint
		default:
			// A name that starts one flag's, and only one's, is that
			// flag cut short (--dry: --dry-run), before a spelling
			// match over every flag (--deny, global, takes a path).
			c := cmp.Or(core.OnlyPrefixed(name, names), core.Closest(name, names))
			switch {
			case len(c) == 1 && !strings.HasPrefix(typed, "--"):
				// -iv, -ltr: one flag of a bundle is no typo of it, and
				// the others would be dropped (-iv: -i, without -v).
				hint = bundleHint
			case c != "":
				e.WithClosest(flagSpelling(c), flagSpelling(c))
				// replace -old -new: -old is as like text as it is
				// like --word, and the suggestion alone led away from
				// the -- that text needs. A word after two dashes
				// is a flag misspelt.
				if !strings.HasPrefix(typed, "--") {
					hint += operandsHint(name, typed, args)
				}
			case value != "" && valued[letter] == textValue:
				// -g*.go, -efoo: the text given to a classic flag, which
				// after -- would be searched for as it is.
				hint = classic[letter]
			default:
				// replace -old -new: text, not flags.
				hint += operandsHint(name, typed, args)
			}
		}
	}
	return e.WithHint("%s", hint)
}

// operandsHint is the part of an unknown flag's hint that says where a
// text or path that starts with - goes, when typed (name without its
// dashes) may be one: a word given to a subcommand that takes text or
// paths; "" otherwise.
func operandsHint(name, typed string, args []string) string {
	if len(name) < 2 || len(args) < 2 {
		return ""
	}
	if cmd := calledName(args[1:], globalFlags()); takesOperands(cmd) {
		return fmt.Sprintf("; a text or path that starts with - goes after --, as in: agentfs %s -- %s", cmd, typed)
	}
	return ""
}

// takesOperands reports whether the subcommand cmd takes text or paths as
// arguments, which may start with -: a tool's (batch, mcp, tools take
// none).
func takesOperands(cmd string) bool {
	return slices.ContainsFunc(registry.All(), func(t registry.Tool) bool { return t.Info().Name == cmd })
}

// bundleHint is the hint for getopt's bundle of one-letter flags.
const bundleHint = "give each one-letter flag on its own (-i -C 2), and long flags with two dashes; run with --help to see the flags"

// isBundle reports whether name, given after one dash, is letters each of
// which is a one-letter flag here or a classic one (-lah, -il), rather
// than a misspelt long flag (-tpye).
func isBundle(name string, names []string, classic map[string]string) bool {
	if len(name) < 2 {
		return false
	}
	for _, c := range name {
		if _, ok := classic[string(c)]; !ok && !slices.Contains(names, string(c)) {
			return false
		}
	}
	return true
}

// typedFlag is the flag named name as args spell it: -la and --la are
// the same to the parser.
func typedFlag(name string, args []string) string {
	for _, a := range args {
		if f, _, _ := strings.Cut(a, "="); f == "-"+name || f == "--"+name {
			return f
		}
	}
	return flagSpelling(name)
}

// camelCase is the JSON field of a flag's name: path-base64 is pathBase64.
func camelCase(flag string) string {
	parts := strings.Split(flag, "-")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// flagSpelling is a flag as it is usually written: -i, --ignore-case.
func flagSpelling(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// classicFlags are, per subcommand, flags that rg, grep, ls and rm take and
// the subcommand does not, with what to pass instead: agents type them from
// habit, and a "did you mean" by spelling would name an unrelated flag.
var classicFlags = map[string]map[string]string{
	"grep": {
		"n": "drop -n: every matching line comes with its number",
		"H": "drop -H: every match comes with its path",
		"r": "drop -r: grep searches below its path",
		"R": "drop -R: grep searches below its path (a link is followed only into a root)",
		"F": "drop -F: the query is a fixed string unless --regex",
		"E": "pass --regex: the query is then a regular expression (RE2)",
		"P": "pass --regex: the query is then a regular expression (RE2, without lookaround or backreferences)",
		"e": "give the query as the first argument, or as --query",
		"l": "pass --mode files for the paths of the matching files",
		"c": "pass --mode count for the count per file",
		"A": "pass -C N (--context): N lines before and after each match",
		"B": "pass -C N (--context): N lines before and after each match",
		"g": "pass --include GLOB, or --exclude GLOB for what rg writes as -g '!GLOB'",
		"m": "pass --limit N: N matching lines a page",
		"v": "grep lists matching lines only; it has no -v: search for what the other lines hold, or read the file",
		"t": typeHint,
		"s": "drop -s: the search is case-sensitive unless -i",
		"S": "pass -i to ignore case; without it the search is case-sensitive",
		"o": "drop -o: grep answers each matching line whole",
		// rg's long spellings of the letters above.
		"type":               typeHint,
		"count":              "pass --mode count for the count per file",
		"files-with-matches": "pass --mode files for the paths of the matching files",
		"fixed-strings":      "drop --fixed-strings: the query is a fixed string unless --regex",
		"word-regexp":        "pass --word (-w): whole words only, as rg -w",
		"line-number":        "drop --line-number: every matching line comes with its number",
		"after-context":      "pass -C N (--context): N lines before and after each match",
		"before-context":     "pass -C N (--context): N lines before and after each match",
		"max-count":          "pass --limit N: N matching lines a page",
		"smart-case":         "pass -i to ignore case; without it the search is case-sensitive",
		"only-matching":      "drop --only-matching: grep answers each matching line whole",
		"hidden":             "drop --hidden: hidden files are searched too",
	},
	"ls": {
		"a":  "drop -a: ls lists hidden entries too",
		"h":  "drop -h: sizes are in bytes",
		"la": "pass -l (--long): ls lists hidden entries too",
		"al": "pass -l (--long): ls lists hidden entries too",
		"R":  "pass --depth N for N levels below the directory",
	},
	"read": {
		"n":    "pass --limit N for N lines (head -n), or --line-numbers to number them (cat -n)",
		"tail": "pass --offset -N for the last N lines (tail -n N)",
		"head": "pass --limit N for the first N lines (head -n N)",
	},
	"find": {
		"name":  "pass the glob as the first argument: find '*.go'",
		"iname": "pass the glob as the first argument; [Gg][Oo] matches either case",
		"e":     "pass the glob '*.EXT' as the first argument",
		"H":     "drop -H: find lists hidden entries too",
		"I":     "pass --no-ignore",
		"g":     "drop -g: the pattern is a glob",
	},
	"rm": {
		"f":     "drop -f: rm never asks, and a missing path already succeeds (deleted: false)",
		"force": "drop --force: rm never asks, and a missing path already succeeds (deleted: false)",
		"rf":    "pass -r: rm never asks, and a missing path already succeeds (deleted: false)",
		"fr":    "pass -r: rm never asks, and a missing path already succeeds (deleted: false)",
		"Rf":    "pass -r: rm never asks, and a missing path already succeeds (deleted: false)",
		"fR":    "pass -r: rm never asks, and a missing path already succeeds (deleted: false)",
		"R":     "pass -r (--recursive), in lower case",
		"i":     "drop -i: rm never asks",
		"I":     "drop -I: rm never asks",
		// --interactive=never, as scripts write it.
		"interactive": "drop --interactive: rm never asks",
		"v":           "drop -v: rm answers each path with deleted true or false",
		"verbose":     "drop --verbose: rm answers each path with deleted true or false",
		// -r would remove a directory that is not empty, which -d refuses.
		"d":                "drop -d: rm removes an empty directory without a flag (NOT_EMPTY for another)",
		"dir":              "drop --dir: rm removes an empty directory without a flag (NOT_EMPTY for another)",
		"no-preserve-root": "drop --no-preserve-root: agentfs never removes a root",
		"preserve-root":    "drop --preserve-root: agentfs never removes a root",
		"one-file-system":  "drop --one-file-system: rm -r never crosses a mount",
	},
	"replace": {
		"i": "drop -i: replace always changes the files in place; --ignore-case ignores case",
		// A bound on the matches changed (as grep's --limit bounds a
		// page, or sed's count): replace's bounds are these, and
		// --limit is no text to put after --.
		"limit":     replaceBounds,
		"max-count": replaceBounds,
		"m":         replaceBounds,
		"count":     replaceBounds,
		// rg's long spelling of -w, replace's as grep's.
		"word-regexp": "pass --word (-w): whole words only, as rg -w",
	},
}

// replaceBounds is for a bound on the matches replace changes, which it
// has not: the flags that bound a replace.
const replaceBounds = "replace changes every match it finds: --expected-count N changes nothing unless there are N (STALE), --path and --include narrow the files, and --dry-run shows the matches first"

// typeHint is for rg's -t (--type), a file type, which Claude Code's Grep
// tool takes too.
const typeHint = "pass --include '*.EXT': rg -t go is --include '*.go'"

// valueKind is what a classic flag takes: nothing, a number or a text.
type valueKind int

const (
	noValue valueKind = iota
	numberValue
	textValue
)

// classicValues are, per subcommand, the classicFlags that take a value,
// which getopt lets the letter carry (-A3, -n20, -g*.go): the value
// attached must get the letter's hint, not a hint to search for "-A3".
var classicValues = map[string]map[string]valueKind{
	"grep":    {"A": numberValue, "B": numberValue, "m": numberValue, "g": textValue, "e": textValue, "t": textValue},
	"replace": {"m": numberValue},
	"read":    {"n": numberValue},
	"find":    {"e": textValue},
}

// isDigits reports whether s is decimal digits only.
func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// output writes the one result or the one error of an invocation.
type output struct {
	streams Streams
	format  string
	// palette colours --format text for a terminal (see colored).
	palette registry.Palette
	code    int
	// matched and partial gather --exit-status over the runs of one call.
	matched, partial bool
	// lastPage is the last result whose text printed data, over the
	// runs of one call: where the next one's text starts (grep's --).
	lastPage any
	// fields are the request's fields when it came as JSON: an error then
	// names them as JSON fields where core spelled them as flags.
	fields []core.FieldSpec
	// maxBytes is --max-bytes, which bounds an error as any answer.
	maxBytes int
	// quiet is --quiet: no result on success, for the commands without a
	// tool's own handling of it too (index, version, tools, serve).
	quiet bool
	// gating is set for a search whose --exit-status (or -q) gates: its
	// failure exits gatedExitCode.
	gating bool
	// dashIsPath is set when the one positional argument, "-", came
	// after an explicit --, which makes it a path (or query), not the
	// request on stdin (see reorderArgs).
	dashIsPath bool
	// printErr is the failure of what urfave/cli printed, which it
	// drops: --version's answer, --help's text (see printedStream).
	printErr error
	// noteMu keeps the notes of serve's goroutines (its requests, its
	// accept loop, its prune) whole, one after the other.
	noteMu sync.Mutex
}

// errorWithin is e as an answer of at most --max-bytes bytes,
// {"error":...} and its newline.
func (o *output) errorWithin(e *fault.Error) *fault.Error {
	return e.Within(o.maxBytes - len(`{"error":}`+"\n"))
}

func outputOf(c *cli.Context) *output { return c.App.Metadata["out"].(*output) }

func streamsOf(c *cli.Context) Streams { return c.App.Metadata["streams"].(Streams) }

// argsOf is the command line as reorderArgs left it, global flags before
// the subcommand, args[0] the program's name.
func argsOf(c *cli.Context) []string { return c.App.Metadata["args"].([]string) }

// result writes v as one JSON object, indented on a terminal or with
// --format text (for a result that has no text rendering). The bound is
// checked here for every result, as compact JSON and its newline: a
// tool's result is sized as it is built, but the tool list, the index's
// answer (its paths) and the rest are not, and an answer over --max-bytes
// is never a success.
func (o *output) result(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	if n := b.Len(); n > o.maxBytes && !mediaData(v) {
		return fault.Errorf(fault.CodeTooLarge, "the result is %d bytes, over --max-bytes %d.", n, o.maxBytes).
			WithDetail("maxBytes", o.maxBytes).WithDetail("needed", n).
			WithHint("raise --max-bytes to %d or more", n)
	}
	if o.quiet {
		return nil
	}
	if o.format == "text" || isTerminal(o.streams.Stdout) {
		b.Reset()
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return o.write(b.Bytes())
}

// mediaData reports whether v is or holds read's image or PDF data, which
// has its own bound (core.ReadMaxMediaBytes), not --max-bytes: a model
// takes the whole image or none. A read of several paths bounds each
// other item by its share.
func mediaData(v any) bool {
	switch v := v.(type) {
	case *core.ReadResult:
		return v.Media != nil && v.Media.Data != ""
	case results:
		return slices.ContainsFunc(v.Results, mediaData)
	}
	return false
}

// write writes an answer on standard output. A call whose answer cannot
// be written (a full disk, a closed pipe) has run: its change stands, so
// its error says so, and that a retry would make it again (an append
// twice).
func (o *output) write(b []byte) error {
	if _, err := o.streams.Stdout.Write(b); err != nil {
		return answerNotWritten(err)
	}
	return nil
}

// printedStream is standard output as urfave/cli writes --help to it,
// which keeps the first failure in out.printErr: the help printer drops
// it, and a help that a full disk took none of exited 0. A reader gone
// (| head -1) ends the help quietly, as the text of read.
type printedStream struct {
	w   io.Writer
	out *output
}

func (p *printedStream) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if err != nil && p.out.printErr == nil {
		if p.out.printErr = readerGone(err, false); p.out.printErr != errReaderGone {
			p.out.printErr = answerNotWritten(err)
		}
	}
	return n, err
}

// answerNotWritten is the error of an answer that standard output did not
// take: the call it answers ran.
func answerNotWritten(err error) error {
	if errors.Is(err, errAnswerStuck) {
		return fault.Errorf(fault.CodeInterrupted, "interrupted while the answer was being written: the reader of standard output took nothing for a second.").
			WithHint("the call itself ran: any change it made stands, so check the files before running it again").WithCause(err)
	}
	return fault.Errorf(fault.CodeIOError, "the answer cannot be written to standard output: %v.", err).
		WithHint("the call itself ran: any change it made stands, so check the files before running it again").WithCause(err)
}

// exitCode is the exit code of an error of code c.
func (o *output) exitCode(c fault.Code) int {
	if o.gating {
		return gatedExitCode(c)
	}
	return exitCode(c)
}

// gate sets the --exit-status of a search, across the runs of one call:
// partial (4) if any run's answer was, else 0 if any run matched, else 1.
func (o *output) gate(matched, partial bool) {
	o.matched = o.matched || matched
	o.partial = o.partial || partial
	switch {
	case o.partial:
		o.code = ExitPartial
	case o.matched:
		o.code = ExitOK
	default:
		o.code = ExitNoMatch
	}
}

// text writes a text rendering: the data on standard output, the notes on
// standard error. Notes whose reader is gone (EPIPE) are dropped, as mcp
// drops its notes: read --all stopped after its first page, exit 0, and
// a replace whose diff was printed and whose change was made exited 1.
func (o *output) text(data, notes string) error {
	if err := o.write([]byte(data)); err != nil {
		return err
	}
	if _, err := io.WriteString(o.streams.Stderr, notes); err != nil && !errors.Is(err, syscall.EPIPE) {
		return err
	}
	return nil
}

// paths writes each path's raw bytes and a NUL, as find -print0 does; a
// path that starts with a dash as ./-x, as find and fd -0 print it, since
// xargs -0 rm took a bare -rf for its options.
func (o *output) paths(ps []string) error {
	var b []byte
	for _, p := range ps {
		if strings.HasPrefix(p, "-") {
			b = append(b, "./"...)
		}
		b = append(append(b, p...), 0)
	}
	return o.write(b)
}

// fail writes err as the contract's error object on stderr and returns the
// exit code it carries.
func (o *output) fail(err error) int {
	if errors.Is(err, context.Canceled) {
		err = fault.Errorf(fault.CodeInterrupted, "the operation was interrupted.").
			WithHint("run it again; nothing was left half-done").WithCause(err)
	}
	e := fault.AsError(err)
	if o.fields != nil {
		e = fieldSpelling(e, o.fields)
	}
	o.note(e)
	o.code = o.exitCode(e.Code)
	return o.code
}

// note writes e on stderr: the error object or, with --format text,
// agentfs: CODE: message, then its path, suggestions and hint on lines of
// their own; an error of one run among several too (its own line lost
// them).
func (o *output) note(e *fault.Error) {
	var buf bytes.Buffer
	if o.format != "text" {
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(map[string]any{"error": o.errorWithin(e)})
	} else {
		buf.WriteString(errorText(e.Bounded(), registry.Palette{Terminal: isTerminal(o.streams.Stderr)}))
	}
	o.noteMu.Lock()
	defer o.noteMu.Unlock()
	o.streams.Stderr.Write(buf.Bytes())
}

// errorText is the text rendering of the error b: agentfs: CODE: message,
// then its path, suggestions and hint on lines of their own, each name in
// them shown as p shows a listed one: its bytes (a path that is not UTF-8
// too, from its base64 twin), escaped on a terminal, so that a file named
// with an escape sequence cannot drive it from an error either.
func errorText(b *fault.Error, p registry.Palette) string {
	var buf strings.Builder
	fmt.Fprintf(&buf, "agentfs: %s: %s\n", b.Code, p.Shown(b.Message))
	if b.Path != "" {
		fmt.Fprintf(&buf, "  path: %s\n", p.Shown(fault.PathBytes(b.Path, b.PathBase64)))
	}
	// A suggestion is said once: a message that names it ("unknown field
	// "pth"; did you mean "path"?") needs no line of its own, and the
	// line makes a hint that only points to it ("did you mean f? (see
	// suggestions)", for JSON) say it a second time.
	hint := b.Hint
	if len(b.Suggestions) > 0 && strings.HasSuffix(hint, "(see suggestions)") {
		hint = ""
	}
	if len(b.Suggestions) > 0 && !strings.Contains(b.Message, "did you mean") {
		shown := make([]string, len(b.Suggestions))
		for i, s := range b.Suggestions {
			if i < len(b.SuggestionsBase64) {
				s = fault.PathBytes(s, b.SuggestionsBase64[i])
			}
			shown[i] = p.Shown(s)
		}
		fmt.Fprintf(&buf, "  did you mean: %s\n", strings.Join(shown, ", "))
	}
	if hint != "" {
		fmt.Fprintf(&buf, "  hint: %s\n", p.Shown(hint))
	}
	return buf.String()
}

// fieldSpelling returns e with each --flag of a request field in its
// message and hint spelled as the JSON field (--byte-offset as byteOffset),
// for a caller who sent JSON and has no flags.
func fieldSpelling(e *fault.Error, fields []core.FieldSpec) *fault.Error {
	var pairs, short []string
	for _, f := range fields {
		if f.Flag != "" {
			pairs = append(pairs, "--"+f.Flag, f.JSON)
		}
		for _, a := range f.FlagAliases {
			pairs = append(pairs, "--"+a, f.JSON)
			if len(a) == 1 && f.Flag != "" {
				// -r/--recursive, as a message names a flag with its
				// short form, is recursive.
				short = append(short, "-"+a+"/--"+f.Flag, "--"+f.Flag)
			}
		}
	}
	if len(pairs) == 0 {
		return e
	}
	c := *e
	respell := func(s string) string {
		return replaceFlags(strings.NewReplacer(short...).Replace(s), pairs)
	}
	c.Message, c.Hint = respell(c.Message), respell(c.Hint)
	return &c
}

// sessionHint returns e, an error of a long-lived session's call (batch,
// MCP), with a hint its caller can act on. A session's settings are its
// command line's: a call cannot "add a root with --root", "raise
// --max-bytes" or "give --assets DIR" (a model calling a tool cannot
// restart its server). So a remedy that names such a setting becomes the
// restart that changes it, after the remedies a call has (lineTruncation,
// a smaller file), and a path outside the roots is told to use one inside
// them: the roots are fixed for the session. The restart is said in few
// bytes: at a small --max-bytes, a longer hint cost the error its details.
func sessionHint(e *fault.Error) *fault.Error {
	var named []sessionSetting
	for _, s := range sessionSettings {
		if s.in(e.Hint) {
			named = append(named, s)
		}
	}
	if len(named) == 0 {
		return e
	}
	// A hint is sentences ("; "), each of alternatives (", or ").
	var kept []string
	said := map[string]bool{}
	rootAt := -1
	for _, sentence := range strings.Split(e.Hint, "; ") {
		var alts, with []string
		for _, alt := range strings.Split(sentence, ", or ") {
			s, ok := settingIn(alt, named)
			switch {
			case !ok, strings.Contains(alt, "start agentfs again"):
				// A remedy that already is a new session (the root
				// renamed while it ran) is the restart: left as it is.
				alts = append(alts, alt)
			case said[s.flag]:
			case s.flag == "root":
				said[s.flag], rootAt = true, len(kept)
			default:
				said[s.flag] = true
				value := ""
				if s.value != nil {
					if m := s.value.FindStringSubmatch(alt); m != nil {
						value = m[1]
					}
				}
				with = append(with, s.restart(value))
			}
		}
		if len(with) > 0 {
			alts = append(alts, "restart the session with "+strings.Join(with, " or "))
		}
		if len(alts) > 0 {
			kept = append(kept, strings.Join(alts, ", or "))
		}
	}
	if rootAt >= 0 {
		note := "this session's roots were set when it started, and a call cannot add one"
		if len(kept) == 0 {
			note = "use a path inside the roots; " + note
		}
		kept = slices.Insert(kept, min(rootAt+1, len(kept)), note)
	}
	c := *e
	c.Hint = strings.Join(kept, "; ")
	return &c
}

// A sessionSetting is a global setting a hint names as a remedy, which a
// session's call cannot change.
type sessionSetting struct {
	flag string // without its dashes
	env  string // its environment variable, which a hint may name instead
	// value, when set, is the value a hint asks for (raise --max-bytes to
	// 770), its first group.
	value *regexp.Regexp
	// restart is the setting a restart of the session takes ("--max-bytes
	// 770"): value is the one the hint asked for, "" when it gave none.
	restart func(value string) string
}

func (s sessionSetting) in(text string) bool {
	if s.env != "" && strings.Contains(text, s.env) {
		return true
	}
	// As a word (namesFlag): the letters of a path are no flag (the root
	// w--symlinks was told to restart with --symlinks within).
	return namesFlag(text, "--"+s.flag)
}

// settingIn returns the first of settings that text names.
func settingIn(text string, settings []sessionSetting) (sessionSetting, bool) {
	for _, s := range settings {
		if s.in(text) {
			return s, true
		}
	}
	return sessionSetting{}, false
}

// raise is the restart of a bound a session was started with.
func raise(flag string) func(string) string {
	return func(value string) string {
		if value == "" {
			return "a larger --" + flag
		}
		return "--" + flag + " " + value
	}
}

// restartWith is a restart with the setting given.
func restartWith(setting string) func(string) string {
	return func(string) string { return setting }
}

// sessionSettings are the settings a hint names as a remedy (grep WithHint
// for "--"), which a call of a session cannot change. --deny is named
// only to say why a path is refused (its remedy, work elsewhere, a call
// has), and --recover is a command of its own, run before a session; the
// others (--format, --quiet, --all, --print0) shape one command's output
// and are no remedy of an error.
var sessionSettings = []sessionSetting{
	{flag: "root"},
	{flag: "max-bytes", value: regexp.MustCompile(`--max-bytes to (\d+)`), restart: raise("max-bytes")},
	{flag: "publish-max-size", value: regexp.MustCompile(`--publish-max-size to (\d+)`), restart: raise("publish-max-size")},
	{flag: "assets", env: "AGENTFS_ASSETS", restart: restartWith("--assets DIR or --assets s3://bucket/prefix to publish: it was started without one")},
	{flag: "base-url", restart: restartWith("a shorter --base-url")},
	{flag: "lock-timeout", restart: restartWith("a longer --lock-timeout")},
	{flag: "symlinks", restart: restartWith("--symlinks within")},
}

// replaceFlags replaces whole flag tokens only: --offset is not the start
// of --offset-lines.
func replaceFlags(s string, pairs []string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "--")
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		j += i
		end := j + 2
		for end < len(s) && (s[end] == '-' || s[end] >= 'a' && s[end] <= 'z' || s[end] >= '0' && s[end] <= '9') {
			end++
		}
		b.WriteString(s[i:j])
		tok := s[j:end]
		for k := 0; k < len(pairs); k += 2 {
			if pairs[k] == tok {
				tok = pairs[k+1]
				break
			}
		}
		b.WriteString(tok)
		i = end
	}
	return b.String()
}

// colored says whether --format text is coloured: with --color always,
// or auto (the default) when stdout is a terminal and NO_COLOR is not set
// to something (no-color.org).
func colored(mode string, stdout any) bool {
	switch mode {
	case "always":
		return true
	case "auto":
		return os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && isTerminal(stdout)
	}
	return false
}

// isTerminal reports a stream (standard input or output) that is a
// terminal.
func isTerminal(stream any) bool {
	f, ok := stream.(interface{ Fd() uintptr })
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// tools builds the backend and settings from the global flags; urfave/cli
// finds a global flag from a subcommand's context.
func tools(c *cli.Context) (*core.Tools, error) {
	fsys, local, err := workspace(c)
	if err != nil {
		return nil, err
	}
	tl := &core.Tools{
		FS:             fsys,
		MaxBytes:       c.Int("max-bytes"),
		ReadOnly:       c.Bool("readonly"),
		ReadOnlyFix:    readOnlyFix(c),
		LockTimeout:    c.Duration("lock-timeout"),
		PublishMaxSize: int64(c.Int("publish-max-size")),
		LineCounts:     core.NewLineCounts(),
	}
	// The content index covers local trees (an object store has no cheap
	// proof of freshness: no inode, no ctime), in a mixed workspace only
	// the paths of its local roots.
	if local != nil {
		tl.BeginRequest = local.BeginRequest
		if err := reportLocalRecovery(c, local); err != nil {
			return nil, err
		}
	}
	switch {
	case local == nil:
	case fsys == backend.FS(local):
		tl.Index = index.Local(local)
	default:
		tl.Index = index.Within(fsys, local)
	}
	if loc := c.String("assets"); loc != "" {
		tl.Assets = publishTarget{c, loc}
	}
	if stderr := streamsOf(c).Stderr; isTerminal(stderr) {
		tl.Progress = progressBar(stderr)
	}
	return tl, nil
}

// reportLocalRecovery writes, with --recover, what the recovery of the
// local roots did as they opened on stderr, one JSON line,
// {"recovery": {rolledBack, finished, stuck}, "roots": [...]}: each
// journal it could not finish, with what it left and how to finish it.
func reportLocalRecovery(c *cli.Context, local *localfs.FS) error {
	if !c.Bool("recover") {
		return nil
	}
	enc := json.NewEncoder(streamsOf(c).Stderr)
	enc.SetEscapeHTML(false)
	return enc.Encode(map[string]any{"roots": local.Roots(), "recovery": local.Recovery()})
}

// recoverStore settles the journals of an object store: the transactions
// of dead processes rolled back before the call's first request to the
// store (one listing when there are none; nothing when the call never
// uses the store), or, with --recover, at once, the live ones waited for
// too, and what was done reported on stderr as one JSON line. --readonly
// makes no change, so it recovers nothing (and refuses --recover).
func recoverStore(c *cli.Context, root string, store *s3fs.FS) error {
	switch {
	case c.Bool("recover") && c.Bool("readonly"):
		return fault.Errorf(fault.CodeReadOnly, "--recover rolls back transactions, and %s refuses every change.", readOnlyNames(c)).
			WithHint("%s to recover", readOnlyFix(c))
	case c.Bool("readonly"):
		return nil
	case !c.Bool("recover"):
		store.RecoverFirst()
		return nil
	}
	rec, err := store.Settle(c.Context, c.Duration("lock-timeout"))
	if err != nil {
		return err
	}
	// Written as every other line of the output is, < and & as they are.
	enc := json.NewEncoder(streamsOf(c).Stderr)
	enc.SetEscapeHTML(false)
	return enc.Encode(map[string]any{"root": root, "recovery": rec})
}

// variableNamed returns err, the error of a call whose arguments are
// args, naming the variable that gave the roots (AGENTFS_ROOT) or the deny
// paths (AGENTFS_DENY) where it names their flag, which a script that only
// set the variable never passed: "pass an existing directory to --root"
// left it looking for a flag it did not give, and the variable unnamed,
// and "add a root with --root" of a path outside the roots left out that
// a --root given replaces the variable's roots. Any error of the call, not
// only the workspace's: a path outside a store's root is known only once
// it is asked for.
func variableNamed(args []string, err error) error {
	e := fault.AsError(err)
	given := givenGlobals(args)
	for _, v := range []struct{ flag, env, noun string }{{"root", "AGENTFS_ROOT", "root"}, {"deny", "AGENTFS_DENY", "deny path"}} {
		named := "--" + v.flag
		if _, flagged := given[v.flag]; flagged || os.Getenv(v.env) == "" || strings.Contains(e.Message, v.env) {
			continue
		}
		if !namesFlag(e.Message, named) && !namesFlag(e.Hint, named) {
			continue
		}
		n := *e
		if m, ok := strings.CutPrefix(e.Message, named+" "); ok {
			n.Message = v.env + " " + m
		}
		n.Hint = fmt.Sprintf("%s; this %s came from %s, which a %s given replaces: correct the variable or unset it", e.Hint, v.noun, v.env, named)
		return &n
	}
	return err
}

// namesFlag reports whether text names the flag (--root) as a word: at
// its start or after a space or a parenthesis, and before its end, a
// space or punctuation. The letters inside a path or a value quoted
// (the root site--deny-list, the deny path http://a/--root) are not the
// flag, and the hint blamed the variable of the other flag.
func namesFlag(text, flag string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], flag)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(flag)
		before := start == 0 || strings.ContainsRune(" (", rune(text[start-1]))
		after := end == len(text) || strings.ContainsRune(" :;,.)", rune(text[end]))
		if before && after {
			return true
		}
		i = end
	}
}

// workspace is the backend of the roots, and its local backend when it has
// local roots: local directories (one localfs), one s3://bucket/prefix
// (an s3fs, whose deny paths are keys below it), or a mix of them (a mixfs
// routing each path to its backend; see mixedWorkspace). Its errors name
// the flags (variableNamed names their variables).
func workspace(c *cli.Context) (backend.FS, *localfs.FS, error) {
	roots := pathsOf(c, "root")
	if slices.Contains(roots, "") {
		// "" is the working directory to a file system: a root added
		// beside the ones meant (--root "$WS" --root "$UNSET", or
		// AGENTFS_ROOT=ws, with its trailing comma).
		return nil, nil, fault.InvalidArgument("a --root is empty (an unset variable, or a trailing comma in AGENTFS_ROOT).").
			WithHint("remove the empty root; the working directory is --root .")
	}
	for _, p := range roots {
		if err := otherScheme("--root", p); err != nil {
			return nil, nil, err
		}
	}
	for _, p := range denied(c) {
		if err := otherScheme("--deny", p); err != nil {
			return nil, nil, err
		}
	}
	stores := 0
	for _, r := range roots {
		if strings.HasPrefix(r, s3fs.Scheme) {
			stores++
		}
	}
	switch {
	case stores == 0:
		lfs, err := localfs.New(localfs.Config{
			Roots:       roots,
			Deny:        denied(c),
			Symlinks:    localfs.SymlinkPolicy(c.String("symlinks")),
			LockTimeout: c.Duration("lock-timeout"),
		})
		if err != nil {
			return nil, nil, err
		}
		return lfs, lfs, nil
	case len(roots) == 1:
		store, err := objectStore(c, roots[0], denied(c))
		if err != nil {
			return nil, nil, err
		}
		return store, nil, nil
	}
	return mixedWorkspace(c, roots)
}

// urlScheme is the start of a URL: a scheme, then ://.
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// schemeTypo is the start of a value that is s3:// mistyped: a scheme
// and a colon without the two slashes (s3:/x, s3:x, http:x), or s3 and
// the slashes without the colon (s3//x).
var schemeTypo = regexp.MustCompile(`^(?:[A-Za-z][A-Za-z0-9+.-]*:|[sS]3//)`)

// otherScheme refuses p, given to flag, when it starts as a URL of a
// scheme other than s3:// as written (S3://, gs://), or as a mistyped
// one (s3:/x, s3:x, s3//x): read as a local path or a key, --deny
// S3://bucket/ws/secret denied nothing of the store, and its secret
// stayed readable, and publish with --assets s3:/x stored the file in a
// local folder s3:/x and exited 0. A local name that starts so (a:b) is
// written ./a:b, or absolute.
func otherScheme(flag, p string) error {
	if err := schemeError(flag, p); err != nil {
		return err
	}
	return nil
}

// schemeError is otherScheme's error, nil when p is s3://... or a local
// path that does not start as a URL.
func schemeError(flag, p string) *fault.Error {
	if filepath.IsAbs(p) || strings.HasPrefix(p, s3fs.Scheme) {
		return nil
	}
	if scheme := urlScheme.FindString(p); scheme != "" {
		return fault.InvalidArgument("%s %s starts as a URL, and agentfs takes no URL but s3:// (in lower case).", flag, p).
			WithHint("write an object store as s3://bucket/prefix; a local folder whose name ends in a colon as ./%s", p)
	}
	if schemeTypo.MatchString(p) {
		return fault.InvalidArgument("%s %s starts as a URL mistyped, and agentfs takes no URL but s3:// (in lower case, with its two slashes).", flag, p).
			WithHint("write an object store as s3://bucket/prefix; a local folder so named as ./%s", p)
	}
	return nil
}

// denied are the --deny paths, empty ones left out: "" denied the working
// directory, so that AGENTFS_DENY= (a CI template's blank) or a trailing
// comma refused every path.
func denied(c *cli.Context) []string {
	return slices.DeleteFunc(slices.Clone(pathsOf(c, "deny")), func(d string) bool { return d == "" })
}

// mixedWorkspace is the workspace of several roots, one an object store.
// Relative paths start in the working directory when it lies in a local
// root, else in the first root, which may be an object store's: then they
// are keys below it, and local paths are shown absolute. A deny path
// spelled s3://... counts in its store, an absolute one in the local roots,
// and a relative one wherever relative paths may start (the working
// directory, and the first root when it is a store), so that a deny is
// never lost to the ambiguity.
func mixedWorkspace(c *cli.Context, roots []string) (backend.FS, *localfs.FS, error) {
	var locals, storeDeny, localDeny, relDeny []string
	for _, r := range roots {
		if !strings.HasPrefix(r, s3fs.Scheme) {
			locals = append(locals, r)
		}
	}
	for _, d := range denied(c) {
		switch {
		case strings.HasPrefix(d, s3fs.Scheme):
			storeDeny = append(storeDeny, d)
		case filepath.IsAbs(d):
			localDeny = append(localDeny, d)
		default:
			relDeny = append(relDeny, d)
		}
	}
	storeFirst := strings.HasPrefix(roots[0], s3fs.Scheme)
	storeRoots, err := apartStoreRoots(roots)
	if err != nil {
		return nil, nil, err
	}
	var members []mixfs.Member
	var lfs *localfs.FS
	home := -1
	if len(locals) > 0 {
		lfs, err = localfs.New(localfs.Config{
			Roots:             locals,
			Deny:              append(localDeny, relDeny...),
			Symlinks:          localfs.SymlinkPolicy(c.String("symlinks")),
			RelativeElsewhere: storeFirst,
			OtherRoots:        slices.DeleteFunc(slices.Clone(storeRoots), func(r string) bool { return r == "" }),
			LockTimeout:       c.Duration("lock-timeout"),
		})
		if err != nil {
			return nil, nil, err
		}
		members = append(members, mixfs.Member{FS: lfs})
		if lfs.HoldsRelative() {
			home = 0
		}
	}
	for i, r := range roots {
		if !strings.HasPrefix(r, s3fs.Scheme) {
			continue
		}
		deny := storeDeny
		if home < 0 {
			home = len(members)
			deny = append(deny, relDeny...)
		}
		store, err := objectStore(c, r, deny)
		if err != nil {
			// Its recovery's: spelled as the workspace spells the
			// store's paths, "." naming the home root else.
			if home != len(members) {
				err = mixfs.SpellError(storeRoots[i], err)
			}
			return nil, nil, err
		}
		members = append(members, mixfs.Member{Root: storeRoots[i], FS: store})
	}
	mixed, err := mixfs.New(mixfs.Config{Members: members, Home: home})
	if err != nil {
		return nil, nil, err
	}
	return mixed, lfs, nil
}

// apartStoreRoots is each root of roots that is an object store's spelled
// s3://bucket/prefix, cleaned and without a final slash ("" for a local
// root). Two store roots one of which holds the other are refused: each
// is a backend of its own, with its own journals and deny paths, so a
// transaction, a deny or the inner root itself would be protected under
// one spelling and not the other (rm -r of the outer's folder removed
// the inner root). The outer root alone names every key of both.
func apartStoreRoots(roots []string) ([]string, error) {
	spelled := make([]string, len(roots))
	for i, r := range roots {
		if !strings.HasPrefix(r, s3fs.Scheme) {
			continue
		}
		bucket, prefix, err := s3fs.ParseRoot(r)
		if err != nil {
			return nil, err
		}
		spelled[i] = strings.TrimSuffix(s3fs.Scheme+bucket+"/"+prefix, "/")
		for _, q := range spelled[:i] {
			if q == "" || q == spelled[i] {
				continue
			}
			outer, inner := q, spelled[i]
			if len(outer) > len(inner) {
				outer, inner = inner, outer
			}
			if strings.HasPrefix(inner, outer+"/") {
				return nil, fault.InvalidArgument("the roots %s and %s overlap: an object store's roots must be apart.", outer, inner).
					WithHint("give %s alone and name the other's keys from it (%s)", outer, strings.TrimPrefix(inner, outer+"/"))
			}
		}
	}
	return spelled, nil
}

// objectStore is the backend of an s3://bucket/prefix root, reached as
// --s3-endpoint and the AWS_* variables say (the endpoint of
// --s3-endpoint, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, path-style; the
// region of AWS_REGION; credentials from AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, or AWS_PROFILE's), its journals settled
// (recoverStore) before any tool uses it.
func objectStore(c *cli.Context, root string, deny []string) (*s3fs.FS, error) {
	if err := checkUsed(c, useStore); err != nil {
		return nil, err
	}
	// --s3-endpoint was publish's only, and a root given with it went to AWS.
	// The first setting given, and its name for the hints; none is AWS,
	// whose hints name every setting that can change it.
	var endpoint, setting string
	for _, s := range [][2]string{
		{c.String("s3-endpoint"), "--s3-endpoint (AGENTFS_S3_ENDPOINT)"},
		{os.Getenv("AWS_ENDPOINT_URL_S3"), "AWS_ENDPOINT_URL_S3"},
		{os.Getenv("AWS_ENDPOINT_URL"), "AWS_ENDPOINT_URL"},
	} {
		if s[0] != "" {
			endpoint, setting = s[0], s[1]
			break
		}
	}
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = os.Getenv("AWS_DEFAULT_REGION")
	}
	store, err := s3fs.New(s3fs.Config{Root: root, Endpoint: endpoint, EndpointSetting: setting, Region: region, Deny: deny, IdleTimeout: c.Duration("s3-idle-timeout")})
	if err != nil {
		return nil, err
	}
	if err := recoverStore(c, root, store); err != nil {
		return nil, err
	}
	return store, nil
}
