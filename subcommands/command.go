package subcommands

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/registry"
	"github.com/urfave/cli/v2"
)

// maxRequestBytes bounds a JSON request read from stdin: the largest request
// (a 2 MiB write, JSON-escaped, or a patch) fits many times over.
const maxRequestBytes = 64 << 20

// tool is the subcommand of one registry tool: the declaration gives its
// name, summary, handler and text, its request type Req the flags,
// positional arguments and JSON fields; the rest is what only a command
// line has.
type tool[Req, Res any] struct {
	*registry.Def[Req, Res]
	argsUsage string
	// fromFlags, when set, completes a request given as flags (write takes
	// its content from stdin with --content-file -).
	fromFlags func(*cli.Context, *Req) error
	// found, when set, says whether a search found anything and whether its
	// answer is partial, for --exit-status.
	found func(Res) (matched, partial bool)
	// next, when set, moves req to the page after res and returns the flags
	// that name it, false when res is the last page: the continuation notice
	// of --format text, and --all.
	next func(req *Req, res Res) (flags string, ok bool)
	// paths, when set, are the raw paths of res, for --print0.
	paths func(Res) []string
	// pageBreak, when set, is what --all prints between the text of the
	// page prev and that of next, the page after it (grep's -- between
	// blocks with context, which a page prints only between its own).
	pageBreak func(prev, next Res) string
	// multi lets the last positional argument repeat: read a b c, grep Q
	// p1 p2, rm a b run once per path, in order, in one process.
	multi bool
}

// gateOf is what --exit-status makes of res, a result of t, in a batch:
// the exit status a call of its own would have had; ok is false for a
// tool --exit-status does not gate.
func (t tool[Req, Res]) gateOf(res any) (code int, ok bool) {
	r, isRes := res.(Res)
	if t.found == nil || !isRes {
		return 0, false
	}
	var o output
	o.gate(t.found(r))
	return o.code, true
}

// header is the command without its flags: what --help lists.
func (t tool[Req, Res]) header() *cli.Command {
	return &cli.Command{Name: t.Name, Usage: t.Summary(), ArgsUsage: t.argsUsage}
}

func (t tool[Req, Res]) command() *cli.Command {
	specs := core.Fields(reflect.TypeFor[Req]())
	flags := []cli.Flag{&cli.GenericFlag{Name: "json", Value: &onceString{}, Usage: "the request as a JSON object, or - to read it from stdin"}}
	for _, s := range specs {
		if f := flagFor(s); f != nil {
			flags = append(flags, f)
		}
	}
	return &cli.Command{
		Name:      t.Name,
		Usage:     t.Summary(),
		ArgsUsage: t.argsUsage,
		Flags:     flags,
		Action: func(c *cli.Context) error {
			outputOf(c).gating = t.found != nil && (c.Bool("exit-status") || c.Bool("quiet"))
			req := new(Req)
			more, repeated, err := t.decode(c, specs, req)
			if err != nil {
				return err
			}
			// The settings it alone uses (publish's), before any work.
			if err := checkUsed(c, t.Name); err != nil {
				return err
			}
			tl, err := tools(c)
			if err != nil {
				return err
			}
			if closer, ok := tl.FS.(io.Closer); ok {
				defer closer.Close()
			}
			if len(more) > 0 {
				return t.answerEach(c, tl, req, repeated, more)
			}
			return t.answer(c, tl, req, "")
		},
	}
}

// pagesAndPaths reports whether t has pages for --all and paths for
// --print0 (the shell completions offer each only then).
func (t tool[Req, Res]) pagesAndPaths() (pages, paths bool) {
	return t.next != nil, t.paths != nil
}

// refusePaging refuses --all for the command name unless it has pages,
// and --print0 unless it answers paths: taken silently, a caller would
// believe them applied.
func refusePaging(c *cli.Context, name string, pages, paths bool) error {
	if c.Bool("all") && !pages {
		return fault.InvalidArgument("%s has no pages for --all.", name).
			WithHint("--all pages read, ls, find and grep")
	}
	if c.Bool("print0") && !paths {
		return fault.InvalidArgument("%s answers no paths for --print0.", name).
			WithHint("--print0 prints the paths of find and grep")
	}
	return nil
}

// answer runs req and writes its result: one JSON object, its text, or
// with --all every page to the end; with --print0 the paths found. of is
// the path req is for when the call was given several (answerEach): its
// notice of more names it, since the notice's cursor goes on for that path
// alone (added to the call of several, it was refused as another's).
func (t tool[Req, Res]) answer(c *cli.Context, tl *core.Tools, req *Req, of string) error {
	o := outputOf(c)
	all, print0 := c.Bool("all"), c.Bool("print0")
	pages, paths := t.pagesAndPaths()
	if err := refusePaging(c, t.Name, pages, paths); err != nil {
		return err
	}
	if all && o.format != "text" && !print0 {
		return fault.InvalidArgument("--all prints every page as text, and JSON is one object per call.").
			WithHint("add --format text, or page with --offset set to nextOffset")
	}
	if o.format == "text" && t.Text != nil && !print0 {
		tl.TextLinePrefix = o.palette.GrepLinePrefix
	}
	lastPath := ""             // the last path --print0 printed, which a next page may start with
	noted := map[string]bool{} // the totals noted, once for --all
	for {
		res, err := runStoppable(c.Context, tl, func() (Res, error) { return t.Run(c.Context, tl, req) })
		if err != nil {
			return err
		}
		if t.found != nil && (c.Bool("exit-status") || c.Bool("quiet")) {
			o.gate(t.found(res))
		}
		if c.Bool("quiet") {
			return nil
		}
		var flags string
		more := false
		if t.next != nil {
			cur := *req
			flags, more = t.next(req, res)
			if !all {
				*req = cur
			}
			if of != "" {
				flags = fmt.Sprintf("for %s alone, %s", strconv.Quote(of), flags)
			}
		}
		switch {
		case print0:
			// A file whose matches two pages share is printed once, and
			// the notes (more to come, a timeout) go to stderr as text's.
			ps := t.paths(res)
			if len(ps) > 0 && ps[0] == lastPath {
				ps = ps[1:]
			}
			if len(ps) > 0 {
				lastPath = ps[len(ps)-1]
			}
			if err := o.paths(ps); err != nil {
				return readerGone(err, t.Mutates)
			}
			notes := ""
			if t.Text != nil {
				_, notes = t.Text(res, o.palette)
				notes = notesOf(of, notes)
			}
			if more && !all {
				notes += "... more: " + flags + "\n"
			}
			if err := o.text("", once(noted, notes)); err != nil {
				return readerGone(err, t.Mutates)
			}
		case o.format == "text" && t.Text != nil:
			if t.Untextable != nil {
				if err := t.Untextable(res); err != nil {
					return err
				}
			}
			data, notes := t.Text(res, o.palette)
			notes = notesOf(of, notes)
			if more && !all {
				notes += "... more: " + flags + "\n"
			}
			notes = once(noted, notes)
			// The last page that printed text data: this call's, or the
			// run's of the path before in a call given several, whose
			// blocks rg separates from this one's as from each other.
			if last, printed := o.lastPage.(Res); printed && data != "" && t.pageBreak != nil {
				data = t.pageBreak(last, res) + data
			}
			if data != "" {
				o.lastPage = res
			}
			if err := o.text(data, notes); err != nil {
				return readerGone(err, t.Mutates)
			}
		default:
			if err := o.result(res); err != nil {
				return err
			}
		}
		if !all || !more {
			return nil
		}
	}
}

// errReaderGone ends a call whose text or --print0 the reader of standard
// output stopped taking (closed its end: | head -1) quietly, with the
// status it had: the paged tools (read, ls, find, grep) change nothing,
// so the IO_ERROR saying that the call's change stands was noise, and its
// exit 1 failed set -o pipefail scripts, which rg's exit 0 does not. A
// mutation's lost answer, or JSON's, is still that IO_ERROR.
var errReaderGone = errors.New("the reader of standard output is gone")

// readerGone is err, an answer's write failing, as errReaderGone when its
// reader closed the pipe and the call changed nothing (mutates false); a
// full disk stays an error.
func readerGone(err error, mutates bool) error {
	if !mutates && errors.Is(err, syscall.EPIPE) {
		return errReaderGone
	}
	return err
}

// notesOf is notes with each line named for of, the path of one run
// among several ("a.txt": ... 2 line(s) cut), as the notice of more
// names it: a read of several files noted "[binary ...: not text]" for
// one of them, and nothing said which. A call of one path (of "") keeps
// its notes as they are.
func notesOf(of, notes string) string {
	if of == "" || notes == "" {
		return notes
	}
	var b strings.Builder
	for line := range strings.Lines(notes) {
		b.WriteString(strconv.Quote(of) + ": " + line)
	}
	return b.String()
}

// once is notes without a search's totals (grep's "... N matching lines
// in M file(s)", the whole search's on every page) when noted already,
// which it adds: --all printed them once a page. A page's own notes (lines
// cut, files skipped, a timeout) stay, each page's, though their text
// repeats.
func once(noted map[string]bool, notes string) string {
	var b strings.Builder
	for line := range strings.Lines(notes) {
		if strings.Contains(line, " matching lines in ") {
			if noted[line] {
				continue
			}
			noted[line] = true
		}
		b.WriteString(line)
	}
	return b.String()
}

// walkPage is next for a tool paged by offset and cursor (ls, find, grep):
// the next page resumes by cursor, so that --all walks the tree once, and
// the notice names the cursor too when there is one: an offset walks
// from the start, and a grep page cut by its timeout before its first
// match gives offset 0, which searched the same files again. A request
// given an offset has it named with the cursor: the notice's flags added
// to the command as it was run then override it, where the cursor alone
// beside the old offset was INVALID_ARGUMENT (the two differ).
func walkPage(offset *int, cursor *string, nextOffset *int, nextCursor string) (string, bool) {
	if nextOffset == nil {
		return "", false
	}
	given := *offset != 0
	*offset, *cursor = *nextOffset, nextCursor
	if nextCursor != "" && given {
		return fmt.Sprintf("--offset %d --cursor %s", *nextOffset, nextCursor), true
	}
	if nextCursor != "" {
		return "--cursor " + nextCursor, true
	}
	return fmt.Sprintf("--offset %d", *nextOffset), true
}

// pathsPerCall is the advice of a call given more paths than its bound
// holds: "at most 0 paths" was a hint at a bound too small for two.
func pathsPerCall(most int) string {
	if most < 2 {
		return "pass one path per call"
	}
	return fmt.Sprintf("pass at most %d paths per call", most)
}

// answerEach runs req once for its own value of the repeated argument and
// once for each of more, in order, in one process. Each result is bounded
// by an equal share of --max-bytes. JSON is one object {results: [...]}
// whose items are the results, or {path, error} for a run that failed; text
// and --print0 are each run's output in turn, an error on stderr. The exit
// status is that of the first failure, as cat's is; the others still run.
func (t tool[Req, Res]) answerEach(c *cli.Context, tl *core.Tools, req *Req, field core.FieldSpec, more []string) error {
	o := outputOf(c)
	n := 1 + len(more)
	// {"results":[...]} and a comma between items come out of the bound
	// too, so that the whole answer fits it.
	framing := len(`{"results":[]}`+"\n") + n - 1
	share := (tl.MaxBytes - framing) / n
	if share < minMaxBytes {
		return fault.InvalidArgument("%d paths leave %d bytes of --max-bytes %d to each result; each needs %d.", n, share, tl.MaxBytes, minMaxBytes).
			WithHint("%s, or raise --max-bytes to %d", pathsPerCall((tl.MaxBytes-16)/(minMaxBytes+1)), minMaxBytes*n+framing)
	}
	// A result's TOO_LARGE then names --max-bytes as given, and the bound
	// that holds the result in its share (it named the share).
	tl.Framing, tl.Share = framing, n
	reqs := []*Req{req}
	for _, p := range more {
		r := new(Req)
		*r = *req
		if err := setField(reflect.ValueOf(r).Elem().FieldByIndex(field.Index), p, field); err != nil {
			return err
		}
		reqs = append(reqs, r)
	}
	type item struct {
		res  Res
		err  *fault.Error
		path string
	}
	var items []item
	code := 0
	for _, r := range reqs {
		path := reflect.ValueOf(r).Elem().FieldByIndex(field.Index).String()
		var it item
		if o.format == "json" && !c.Bool("print0") {
			res, err := runStoppable(c.Context, tl, func() (Res, error) { return t.Run(c.Context, tl, r) })
			it = item{res: res, path: path}
			if err != nil {
				it.err = rangeTakenForPath(t.Name, path, fault.AsError(err))
				if c.Bool("quiet") {
					o.note(it.err) // no results object to carry it
				}
			}
			if t.found != nil && it.err == nil && (c.Bool("exit-status") || c.Bool("quiet")) {
				o.gate(t.found(res))
			}
		} else if err := t.answer(c, tl, r, path); errors.Is(err, errReaderGone) {
			// No later run is read: stop, keeping an earlier failure's status.
			if code != 0 {
				o.code = code
			}
			return err
		} else if err != nil {
			it.err = rangeTakenForPath(t.Name, path, fault.AsError(err))
			o.note(it.err)
		}
		if it.err != nil {
			if errors.Is(it.err, context.Canceled) || it.err.Code == fault.CodeInterrupted {
				return it.err
			}
			if code == 0 {
				code = o.exitCode(it.err.Code)
			}
		}
		items = append(items, it)
	}
	if o.format == "json" && !c.Bool("print0") && !c.Bool("quiet") {
		out := make([]any, len(items))
		for i, it := range items {
			if it.err != nil {
				out[i] = errorItem(it.path, it.err, share)
				continue
			}
			out[i] = it.res
		}
		if err := o.result(results{out}); err != nil {
			return err
		}
	}
	if code != 0 {
		o.code = code
	}
	return nil
}

// rangeTakenForPath is e, the error of the run of tool over path, with a
// hint naming --offset and --limit when path is not found and reads as a
// range of lines (read f 10:20, as an editor or sed writes them).
func rangeTakenForPath(tool, path string, e *fault.Error) *fault.Error {
	if tool != "read" || e.Code != fault.CodeNotFound {
		return e
	}
	if from, to, ok := lineRange(path); ok {
		e.WithHint("%s reads as lines %d to %d, not a path: pass --offset %d --limit %d with the file", path, from, to, from, to-from+1)
	}
	return e
}

// results is the answer of a run over several paths, one item a path.
type results struct {
	Results []any `json:"results"`
}

// errorItem is a failed run among several, {path, error}, within share
// bytes: when the error does not fit, the item's path is cut first, then
// the error bounded (fault.Error.Within).
func errorItem(path string, e *fault.Error, share int) map[string]any {
	item := map[string]any{}
	text, twin := fault.PathText(path)
	item["path"], item["pathBase64"] = text, twin
	if twin == "" {
		delete(item, "pathBase64")
	}
	rest, _ := json.Marshal(item)
	// The error's message, hint and details say what to do; the item's path
	// only echoes the request, whose order the results keep. A path that
	// leaves the error too little room is cut, as one path's error cuts its
	// own (TOO_LARGE once lost its need to a long path).
	core := e.Bounded()
	core.Path, core.PathBase64, core.Suggestions, core.SuggestionsBase64 = "", "", nil, nil
	if j, _ := core.MarshalJSON(); len(rest)+len(`"error":,`)+len(j) > share {
		delete(item, "pathBase64")
		item["path"] = fault.CutTo(text, len(text)-(len(rest)+len(`"error":,`)+len(j)-share))
		rest, _ = json.Marshal(item)
	}
	item["error"] = e.Within(max(1, share-len(rest)-len(`"error":,`)))
	return item
}

// runRequest runs a request of a long-lived session (batch, MCP) as
// runStoppable runs a call, once the backend is ready for it
// (Tools.BeginRequest), which it is not, for one, once a root's name leads
// elsewhere.
func runRequest(ctx context.Context, tl *core.Tools, run func() (any, error)) (any, error) {
	if tl.BeginRequest != nil {
		if err := tl.BeginRequest(ctx); err != nil {
			return nil, err
		}
	}
	return runStoppable(ctx, tl, run)
}

// interruptGrace is how long an interrupted tool that will not commit is
// given to return before it is abandoned: one taking its locks, or
// staging its copies, notices ctx at once and removes its lock files and
// staged copies on its way out. Abandoned at once, it left them, one lock
// file per file of a replace, until the day's sweep.
var interruptGrace = 200 * time.Millisecond

// runStoppable runs a tool and answers as soon as ctx is done (SIGINT,
// SIGTERM), even when the tool is inside work it cannot cancel (then after
// interruptGrace): the commit gate is closed first, so a change in
// progress is finished and reported, and a change not yet begun never
// happens. An abandoned tool dies with the process, and the kernel frees
// its locks.
func runStoppable[Res any](ctx context.Context, tl *core.Tools, run func() (Res, error)) (Res, error) {
	type outcome struct {
		res Res
		err error
	}
	tl.Commits = &core.CommitGate{}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			// A bug on this goroutine must answer as one on Main's does.
			if r := recover(); r != nil {
				o = outcome{err: internalError(r)}
			}
			done <- o
		}()
		o.res, o.err = run()
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
	}
	if tl.Commits.Close() {
		o := <-done
		return o.res, o.err
	}
	grace := time.NewTimer(interruptGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
	}
	var zero Res
	return zero, fault.Interrupted(ctx)
}

// onceString is the value of a flag given at most once: --json (or
// --edits) twice, the second silently won.
type onceString struct {
	v   string
	set bool
}

func (o *onceString) Set(v string) error {
	if o.set {
		return errors.New("given twice: give it once")
	}
	o.v, o.set = v, true
	return nil
}

func (o *onceString) String() string { return o.v }

// decode fills req from exactly one of the three request forms.
func (t tool[Req, Res]) decode(c *cli.Context, specs []core.FieldSpec, req *Req) (more []string, repeated core.FieldSpec, err error) {
	args := c.Args().Slice()
	// The flags set, from one visit of the parsed ones: urfave/cli's IsSet
	// scans every flag for each name asked, running a regexp on each.
	given := map[string]bool{}
	for _, n := range c.LocalFlagNames() {
		given[n] = true
	}
	var setFlags []string
	isSet := make([]bool, len(specs))
	for i, s := range specs {
		if s.Flag != "" && given[s.Flag] {
			isSet[i] = true
			setFlags = append(setFlags, "--"+s.Flag)
		}
	}
	jsonArg, fromStdin := c.Generic("json").(*onceString).String(), len(args) == 1 && args[0] == "-" && !outputOf(c).dashIsPath
	if c.IsSet("json") || fromStdin {
		if (c.IsSet("json") && len(args) > 0) || len(setFlags) > 0 {
			var extra []string
			if len(setFlags) > 0 {
				extra = append(extra, "flags "+strings.Join(setFlags, " "))
			}
			if c.IsSet("json") && len(args) > 0 {
				extra = append(extra, "arguments "+strings.Join(args, " "))
			}
			return nil, repeated, fault.InvalidArgument("a request is given as flags, as --json or as JSON on stdin, never mixed.").
				WithHint("put every field in the JSON object (extra: %s)", strings.Join(extra, "; "))
		}
		// Errors from here on speak of fields, not flags.
		outputOf(c).fields = specs
		data := []byte(jsonArg)
		if fromStdin || jsonArg == "-" {
			var err error
			if data, err = readStdin(c.Context, streamsOf(c).Stdin); err != nil {
				return nil, repeated, err
			}
		}
		// As batch reads a line: after a byte-order mark (a request file
		// saved so), and null as no fields (batch's args null).
		data = bytes.TrimPrefix(data, []byte("\uFEFF"))
		if string(bytes.TrimSpace(data)) == "null" {
			data = []byte("{}")
		}
		err := core.DecodeJSON(data, req)
		if e := fault.AsError(err); e != nil && rawInput[t.Name] != "" && (fromStdin || jsonArg == "-") && (strings.HasPrefix(e.Message, "the request is not valid JSON") || strings.HasPrefix(e.Message, "the request is empty")) {
			e.WithHint("- reads a JSON request from standard input; to pass %s", rawInput[t.Name])
			outputOf(c).fields = nil // the hint names a flag, as flags
		}
		return nil, repeated, err
	}
	v := reflect.ValueOf(req).Elem()
	// Positional arguments fill, in order, the argument fields that no flag
	// set: "find --pattern P DIR" puts DIR in path, not in pattern.
	var open []core.FieldSpec
	replaced := map[string]bool{} // argument fields a flag stands in for
	for i, s := range specs {
		if isSet[i] && s.StandsFor != "" {
			replaced[s.StandsFor] = true
		}
	}
	for i, s := range specs {
		if isSet[i] {
			if err := setFromFlag(c, v.FieldByIndex(s.Index), s); err != nil {
				return nil, repeated, err
			}
		} else if s.Arg >= 0 && !replaced[s.JSON] {
			open = append(open, s)
		}
	}
	sort.SliceStable(open, func(i, j int) bool { return open[i].Arg < open[j].Arg })
	if len(args) > len(open) {
		// Only the last argument field repeats: with it given by a flag
		// (grep Q a b --path c), the extra arguments were taken for more
		// runs of the one before it, the query.
		var byFlag []string
		last := -1
		for i, s := range specs {
			if s.Arg >= 0 && (last < 0 || s.Arg > specs[last].Arg) {
				last = i
			}
			if s.Arg >= 0 && s.Flag != "" && isSet[i] {
				byFlag = append(byFlag, fmt.Sprintf("--%s gives %s", s.Flag, s.JSON))
			}
		}
		if !t.multi || len(open) == 0 || open[len(open)-1].JSON != specs[last].JSON {
			e := fault.InvalidArgument("%s takes at most %d argument(s) here, not %d.", t.Name, len(open), len(args))
			if len(byFlag) > 0 {
				e = fault.InvalidArgument("%s takes at most %d argument(s) here, not %d, as %s.", t.Name, len(open), len(args), strings.Join(byFlag, " and "))
			}
			return nil, repeated, e.WithHint("usage: agentfs %s [flags] %s", t.Name, t.argsUsage)
		}
		// The last argument field repeats: its extra values are more runs.
		more = args[len(open):]
		args = args[:len(open)]
	}
	for i, a := range args {
		if err := setField(v.FieldByIndex(open[i].Index), a, open[i]); err != nil {
			return nil, repeated, err
		}
	}
	if t.fromFlags != nil {
		if err := t.fromFlags(c, req); err != nil {
			return nil, repeated, err
		}
	}
	if len(more) > 0 {
		repeated = open[len(open)-1]
	}
	return more, repeated, nil
}

// rawInput says, for a tool that takes raw text from a file, how to pass
// that text on standard input: a patch piped to apply-patch - was refused
// as a request that is not JSON, with a hint for {"path":...}.
var rawInput = map[string]string{
	"apply-patch": "the patch itself there, use --patch-file -",
	"write":       "the content itself there, use --content-file -",
}

func readStdin(ctx context.Context, r io.Reader) ([]byte, error) {
	data, err := readInput(ctx, r, maxRequestBytes)
	if err != nil {
		return nil, err
	}
	if len(data) > maxRequestBytes {
		return nil, fault.Errorf(fault.CodeTooLarge, "the request on stdin is over %d MiB.", maxRequestBytes>>20).
			WithHint("send a smaller request; a file over 2 MiB is written in parts: the first with write, the rest with write --append")
	}
	return data, nil
}

// readInput reads r to its end, or limit+1 bytes, whichever comes first. A
// read from a pipe cannot be cancelled, so it runs aside: SIGINT or SIGTERM
// answers INTERRUPTED at once instead of waiting for the writer, and nothing
// that arrived only in part is ever used.
func readInput(ctx context.Context, r io.Reader, limit int64) ([]byte, error) {
	if r == nil {
		return nil, fault.InvalidArgument("there is no standard input to read.").
			WithHint("pass the request or content as an argument instead")
	}
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(r, limit+1))
		done <- result{data, err}
	}()
	select {
	case <-ctx.Done():
		return nil, fault.Interrupted(ctx)
	case res := <-done:
		if res.err != nil {
			return nil, fault.Errorf(fault.CodeIOError, "standard input could not be read: %s.", res.err).
				WithHint("check the program writing to agentfs's standard input").WithCause(res.err)
		}
		return res.data, nil
	}
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// flagFor makes the urfave/cli flag of one request field, nil for a field
// without one.
func flagFor(s core.FieldSpec) cli.Flag {
	if s.Flag == "" {
		return nil
	}
	usage := flagUsage(s)
	t := s.Type
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return &cli.StringFlag{Name: s.Flag, Aliases: s.FlagAliases, Usage: usage, DefaultText: s.Default}
	}
	// A field that may be left out, with no default: left out, it is
	// absent (replace's expectedCount: no check; write's bom: the file's
	// own), not the zero value urfave/cli would show as its default.
	absent := t.Kind() == reflect.Pointer && s.Default == ""
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return &cli.StringFlag{Name: s.Flag, Aliases: s.FlagAliases, Usage: usage, DefaultText: s.Default}
	case reflect.Bool:
		return &cli.BoolFlag{Name: s.Flag, Aliases: s.FlagAliases, Usage: usage, DefaultText: s.Default, DisableDefaultText: absent}
	case reflect.Int:
		if absent {
			return absentInt{&cli.IntFlag{Name: s.Flag, Aliases: s.FlagAliases, Usage: usage}}
		}
		return &cli.IntFlag{Name: s.Flag, Aliases: s.FlagAliases, Usage: usage, DefaultText: s.Default}
	case reflect.Int64:
		return &cli.Int64Flag{Name: s.Flag, Aliases: s.FlagAliases, Usage: usage, DefaultText: s.Default}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return &cli.GenericFlag{Name: s.Flag, Aliases: s.FlagAliases, Usage: usage, Value: &repeated{}}
		}
	}
	// A field of structure (edit's edits): its JSON as the flag's text,
	// given once (a second would silently replace the first).
	return &cli.GenericFlag{Name: s.Flag, Aliases: s.FlagAliases, Usage: usage + " (as JSON)", Value: &onceString{}}
}

// absentInt is the flag of a number field that is absent when left out:
// --help shows no default for it.
type absentInt struct{ *cli.IntFlag }

// isIntFlag reports whether f takes an integer, which is decimal here
// (urfave/cli reads 010 as octal).
func isIntFlag(f cli.Flag) bool {
	switch f.(type) {
	case *cli.IntFlag, *cli.Int64Flag, absentInt:
		return true
	}
	return false
}

func (absentInt) GetDefaultText() string { return "" }

func (f absentInt) String() string { return cli.FlagStringer(f) }

// setFromJSONFlag sets v, a field of structure, from the JSON text of its
// flag, checked as a --json request's field is (unknown or repeated keys,
// aliases), so that errors name its fields the same way.
func setFromJSONFlag(v reflect.Value, text string, s core.FieldSpec) error {
	if !json.Valid([]byte(text)) {
		return fault.InvalidArgument("--%s takes JSON, and %q is not.", s.Flag, text).
			WithHint("%s, as JSON: --%s '[...]'", s.Help, s.Flag)
	}
	holder := reflect.New(reflect.StructOf([]reflect.StructField{{
		Name: "Field", Type: v.Type(), Tag: reflect.StructTag(`json:"` + s.JSON + `"`),
	}}))
	data, _ := json.Marshal(map[string]json.RawMessage{s.JSON: json.RawMessage(text)})
	if err := core.DecodeJSON(data, holder.Interface()); err != nil {
		return err
	}
	v.Set(holder.Elem().Field(0))
	return nil
}

// flagUsage is a field's description with what its tags say of it, as
// --help shows it: "entries per page (1 to 1000)"; urfave/cli adds the
// default, which flagFor gives it.
func flagUsage(s core.FieldSpec) string {
	var notes []string
	switch {
	case s.Required:
		notes = append(notes, "required")
	case s.Enum != nil:
		notes = append(notes, core.OrList(s.Enum))
	case s.Min != nil && s.Max != nil:
		notes = append(notes, fmt.Sprintf("%d to %d", *s.Min, *s.Max))
	case s.Min != nil:
		notes = append(notes, fmt.Sprintf("at least %d", *s.Min))
	case s.Max != nil:
		notes = append(notes, fmt.Sprintf("at most %d", *s.Max))
	}
	if s.Type.Kind() == reflect.Slice && s.Type.Elem().Kind() == reflect.String {
		notes = append(notes, "repeatable")
	}
	if len(notes) == 0 {
		return s.Help
	}
	return s.Help + " (" + strings.Join(notes, ", ") + ")"
}

// repeated is the value of a repeatable flag: each occurrence is one value,
// taken whole. urfave/cli's slice flags would split it at commas, and break
// a glob such as *.{go,md}.
type repeated []string

func (r *repeated) Set(s string) error {
	*r = append(*r, s)
	return nil
}

func (r *repeated) String() string { return strings.Join(*r, ", ") }

// setFromFlag copies one parsed flag into its field.
func setFromFlag(c *cli.Context, v reflect.Value, s core.FieldSpec) error {
	if reflect.PointerTo(v.Type()).Implements(textUnmarshaler) {
		return setField(v, c.String(s.Flag), s)
	}
	if v.Kind() == reflect.Pointer {
		v.Set(reflect.New(v.Type().Elem()))
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		if s.NotEmpty && c.String(s.Flag) == "" {
			return s.GivenEmpty("--" + s.Flag)
		}
		v.SetString(c.String(s.Flag))
	case reflect.Bool:
		v.SetBool(c.Bool(s.Flag))
	case reflect.Int, reflect.Int64:
		n := c.Int64(s.Flag)
		if n == 0 && s.Min != nil && *s.Min > 0 {
			// Given, 0 is out of range: left out, it is the default.
			return s.BelowMin("--"+s.Flag, 0)
		}
		v.SetInt(n)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.String {
			v.Set(reflect.ValueOf([]string(*c.Generic(s.Flag).(*repeated))))
			return nil
		}
		return setFromJSONFlag(v, c.Generic(s.Flag).(*onceString).String(), s)
	}
	return nil
}

// setField sets a field from one string: a positional argument, or a flag
// whose type parses its own text.
func setField(v reflect.Value, text string, s core.FieldSpec) error {
	if u, ok := v.Addr().Interface().(encoding.TextUnmarshaler); ok {
		if err := u.UnmarshalText([]byte(text)); err != nil {
			// The type's own error, with the flag named: its hint says
			// what to pass.
			e := fault.AsError(err)
			if e.Code == fault.CodeIOError {
				e = fault.InvalidArgument("%s.", strings.TrimSuffix(err.Error(), ".")).WithHint("%s", s.Help)
			}
			e.Message = "--" + s.Flag + ": " + e.Message
			return e
		}
		return nil
	}
	if v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.String {
		// A text given even when empty (replace's replacement "").
		v.Set(reflect.New(v.Type().Elem()))
		v = v.Elem()
	}
	if v.Kind() != reflect.String {
		return fault.InvalidArgument("argument for %q must be given as a flag.", s.JSON)
	}
	v.SetString(text)
	return nil
}

// reorderArgs lets flags come before or after positional arguments (urfave/cli
// stops at the first positional) and hoists global flags given after the
// subcommand. An unknown subcommand is refused here, naming the closest.
// It also reports whether the one positional argument is a "-" given
// after an explicit --: every argument after -- is a path (or a query),
// so "rm -- -" names the file "-", where a lone "-" asks for the request
// on stdin. The arguments it returns have a -- before their positionals
// either way.
func reorderArgs(args []string, cmds []*cli.Command, globals []cli.Flag) ([]string, bool, error) {
	lead, i := leadingGlobals(args, globals)
	out := append([]string{"agentfs"}, lead...)
	if i >= len(args) {
		for _, a := range lead {
			if isHelp(a) || a == "-v" || a == "--version" {
				return out, false, nil
			}
		}
		return nil, false, fault.InvalidArgument("no subcommand given.").
			WithHint("run agentfs --help to see the subcommands, for example agentfs read FILE")
	}
	name := args[i]
	if name == "help" {
		// "help ls" is "ls --help"; "help" alone is "--help"; "help
		// nosuch" is refused as "nosuch" is (it printed the general help,
		// exit 0).
		if i+1 >= len(args) {
			return append(out, "--help"), false, nil
		}
		i++
		name = args[i]
		if commandNamed(cmds, name) != nil {
			if i+1 < len(args) {
				// help read extra printed read's help, exit 0, the rest
				// ignored.
				return nil, false, fault.InvalidArgument("help takes one subcommand's name; %q is left over.", args[i+1]).
					WithHint("run agentfs help %s (or agentfs %s --help) alone", name, name)
			}
			return append(out, name, "--help"), false, nil
		}
	}
	cmd := commandNamed(cmds, name)
	if cmd == nil {
		for k := 0; k < len(lead); k++ {
			a := lead[k]
			if takesValue(globals, a) {
				k++ // its value, which may start with a dash
				continue
			}
			if isFlagArg(a) && lookupFlag(globals, a) == nil && !isHelp(a) && a != "-v" && a != "--version" {
				// --rooot /x ls: the misspelt flag, not its value taken
				// for the subcommand.
				name, _ := flagName(a)
				return nil, false, usageError(fmt.Errorf("flag provided but not defined: -%s", name), args, nil, nil, nil)
			}
		}
		var names []string
		for _, c := range cmds {
			names = append(names, c.Name)
		}
		e := fault.InvalidArgument("unknown subcommand %q.", name)
		if c := core.Closest(name, names); c != "" {
			e.WithClosest(c, strconv.Quote(c))
		}
		return nil, false, e.WithHint("subcommands: %s", strings.Join(names, ", "))
	}
	var cmdFlags, positional []string
	dashIsPath := false
	// afterHelp is the first positional given after --help, "" for none.
	afterHelp := ""
	rest := args[i+1:]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			dashIsPath = len(positional) == 0 && slices.Equal(rest[j+1:], []string{"-"})
			if afterHelp == "" && j+1 < len(rest) && slices.ContainsFunc(cmdFlags, isHelp) {
				afterHelp = rest[j+1]
			}
			positional = append(positional, rest[j+1:]...)
			break
		}
		if !isFlagArg(a) {
			if afterHelp == "" && slices.ContainsFunc(cmdFlags, isHelp) {
				afterHelp = a
			}
			positional = append(positional, a)
			continue
		}
		if flag, value, ok := attachedValue(cmd.Flags, a); ok {
			cmdFlags = append(cmdFlags, flag, value)
			continue
		}
		flags, dst := cmd.Flags, &cmdFlags
		if !hasFlag(cmd.Flags, a) && hasFlag(globals, a) {
			flags, dst = globals, &out
		}
		*dst = append(*dst, a)
		if takesValue(flags, a) {
			if j+1 == len(rest) {
				// Last, with no value: the -- put before the
				// positionals below would be taken for it (write f
				// --content wrote "--" into f).
				return nil, false, fault.InvalidArgument("%s needs a value.", a).
					WithHint("give it one: %s VALUE, or %s=VALUE for a value that begins with -", a, a)
			}
			j++
			*dst = append(*dst, rest[j])
		}
	}
	if err := valueArgs(out[1:], globals); err != nil {
		return nil, false, err
	}
	if err := valueArgs(cmdFlags, cmd.Flags); err != nil {
		return nil, false, err
	}
	out = append(out, name)
	out = append(out, cmdFlags...)
	if slices.ContainsFunc(cmdFlags, isHelp) {
		// urfave/cli takes a positional after --help as a help topic,
		// and read --help extra printed read's help, exit 0, the
		// argument ignored. One before it (ls sub --help) is the
		// command being written when help was asked, as git takes it.
		if afterHelp != "" {
			return nil, false, fault.InvalidArgument("--help takes no argument; %q is left over.", afterHelp).
				WithHint("run agentfs %s --help alone for its help; a text that is --help goes after --, as in: agentfs %s -- --help", name, name)
		}
		return out, false, nil
	}
	if len(positional) > 0 {
		out = append(append(out, "--"), positional...)
	}
	return out, dashIsPath, nil
}

// valueArgs checks the values of the number, duration and switch flags among
// args (flags and their values, as reorderArgs sorts them), and rewrites
// a number as a plain decimal: Go's flag package reads 010 as 8, 0x10 as
// 16 and 1_0 as 10, and --offset 010 read line 8, where the JSON twin (and
// every user of rg or sed) means 10. A value that is no decimal integer,
// no duration or no boolean, is INVALID_ARGUMENT saying what one looks
// like, where the parser's own words were "parse error".
func valueArgs(args []string, flags []cli.Flag) error {
	for j := 0; j < len(args); j++ {
		a := args[j]
		if !isFlagArg(a) {
			continue
		}
		f := lookupFlag(flags, a)
		name, eq := flagName(a)
		at := -1 // the value's place: in a (after =), or the next arg
		switch {
		case eq:
		case takesValue(flags, a) && j+1 < len(args):
			j++ // a string flag's value may look like a flag
			at = j
		default:
			continue
		}
		_, value, _ := strings.Cut(a, "=")
		if at >= 0 {
			value = args[at]
		}
		if _, ok := f.(*cli.BoolFlag); ok {
			if _, err := strconv.ParseBool(value); err != nil {
				return fault.InvalidArgument("--%s takes true or false, not %q.", name, value).
					WithHint("give --%s alone for true, or --%s=false", name, name)
			}
			continue
		}
		if isDurationFlag(f) {
			text, ok := durationText(value)
			if !ok {
				return durationError("--"+name, value)
			}
			if text != value {
				// A number of seconds, in the unit urfave/cli reads.
				if at >= 0 {
					args[at] = text
				} else {
					args[j] = a[:strings.IndexByte(a, '=')+1] + text
				}
			}
			continue
		}
		if !isIntFlag(f) {
			continue
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			// The flag's own range, narrower, is in its usage (and
			// checked after parsing): 64 bits told --limit 1e20 of
			// numbers up to 9223372036854775807, where 2000 is its most.
			return fault.InvalidArgument("--%s %s is out of range.", name, value).
				WithHint("pass a number within the range --help gives for --%s", name)
		}
		if err != nil { // base 10 takes no 0x, 0b or 1_0
			e := fault.InvalidArgument("--%s takes a decimal integer, not %q.", name, value)
			if from, to, ok := lineRange(value); ok && name == "offset" && hasFlag(flags, "--line-numbers") {
				// read's line range as sed -n 10,20p, a view_range or
				// an editor's 10:20 write it.
				return e.WithHint("for lines %d to %d pass --offset %d --limit %d", from, to, from, to-from+1)
			}
			return e.WithHint("write the number in decimal digits")
		}
		if at >= 0 {
			args[at] = strconv.FormatInt(n, 10)
		} else {
			args[j] = a[:strings.IndexByte(a, '=')+1] + strconv.FormatInt(n, 10)
		}
	}
	return nil
}

// lineRange reads a range of lines written 10,20, 10:20 or 10-20.
func lineRange(s string) (from, to int64, ok bool) {
	i := strings.IndexAny(s, ",:-")
	if i <= 0 || !isDigits(s[:i]) || !isDigits(s[i+1:]) {
		return 0, 0, false
	}
	from, err1 := strconv.ParseInt(s[:i], 10, 32)
	to, err2 := strconv.ParseInt(s[i+1:], 10, 32)
	return from, to, err1 == nil && err2 == nil && from >= 1 && to >= from
}

// durationError refuses value, given to what (a flag or an environment
// variable), as no duration, in the words of a request field's
// (core.NotADuration).
func durationError(what, value string) *fault.Error {
	e := core.NotADuration(value)
	e.Message = what + ": " + e.Message
	return e
}

// durationText is value, given to a duration flag or variable, as Go's
// time.ParseDuration reads it: as it is (30s, 1m30s), or a plain number
// as that many seconds (30 is 30s), as a request field's duration and
// JSON's numbers read it; false when it is neither.
func durationText(value string) (string, bool) {
	if _, err := time.ParseDuration(value); err == nil {
		return value, true
	}
	secs, ok := core.Seconds(value)
	if !ok {
		return "", false
	}
	text := strconv.FormatFloat(secs, 'f', -1, 64) + "s"
	if _, err := time.ParseDuration(text); err != nil {
		return "", false // past what a duration holds
	}
	return text, true
}

// isDurationFlag reports a flag that takes a duration.
func isDurationFlag(f cli.Flag) bool {
	switch f.(type) {
	case *cli.DurationFlag, *durationFlag:
		return true
	}
	return false
}

// givenText is the text of the value the subcommand's flag name was last
// given on the command line (argsOf), as the caller wrote it, for an
// error to quote: a duration normalised (-1h30m0s for -90m) is a text the
// caller cannot find in its command. It is "" when the flag was not given
// a value there.
func givenText(c *cli.Context, name string) string {
	args := argsOf(c)
	if len(args) == 0 {
		return ""
	}
	_, i := leadingGlobals(args[1:], globalFlags())
	text := ""
	for k := i + 2; k < len(args) && args[k] != "--"; k++ {
		a := args[k]
		if !isFlagArg(a) {
			continue
		}
		switch n, eq := flagName(a); {
		case n != name:
		case eq:
			_, text, _ = strings.Cut(a, "=")
		case k+1 < len(args):
			k++
			text = args[k]
		}
	}
	return text
}

// leadingGlobals returns the global flags (with their values) before the
// subcommand, and the index in args of the subcommand, len(args) if none.
func leadingGlobals(args []string, globals []cli.Flag) ([]string, int) {
	var lead []string
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !isFlagArg(a) {
			break
		}
		lead = append(lead, a)
		if takesValue(globals, a) && i+1 < len(args) {
			i++
			lead = append(lead, args[i])
		}
	}
	return lead, i
}

// calledName is the subcommand that args call ("help ls" calls ls), or "".
func calledName(args []string, globals []cli.Flag) string {
	_, i := leadingGlobals(args, globals)
	if i < len(args) && args[i] == "help" {
		i++
	}
	if i >= len(args) {
		return ""
	}
	return args[i]
}

func isFlagArg(a string) bool { return len(a) > 1 && a[0] == '-' }

func commandNamed(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// flagName is the name of a flag argument: --byte-offset=5 -> byte-offset.
func flagName(a string) (string, bool) {
	a = strings.TrimLeft(a, "-")
	name, _, eq := strings.Cut(a, "=")
	return name, eq
}

func lookupFlag(flags []cli.Flag, a string) cli.Flag {
	name, _ := flagName(a)
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func hasFlag(flags []cli.Flag, a string) bool { return lookupFlag(flags, a) != nil }

// attachedValue splits a one-letter flag from the value written against
// it, as getopt does and rg and fd take it: -C2 is -C 2, -tf is -t f. Only
// a number for a number flag, or one letter for another: more letters are
// a misspelt flag (-Context, -tpye), left whole for its "did you mean".
func attachedValue(flags []cli.Flag, a string) (flag, value string, ok bool) {
	if len(a) < 3 || a[1] == '-' || hasFlag(flags, a) || !takesValue(flags, a[:2]) {
		return "", "", false
	}
	if isIntFlag(lookupFlag(flags, a[:2])) {
		if _, err := strconv.Atoi(a[2:]); err != nil {
			return "", "", false
		}
	} else if len(a) != 3 {
		return "", "", false
	}
	return a[:2], a[2:], true
}

// takesValue reports whether flag argument a consumes the next argument.
func takesValue(flags []cli.Flag, a string) bool {
	if _, eq := flagName(a); eq {
		return false
	}
	f := lookupFlag(flags, a)
	if f == nil {
		return false
	}
	_, isBool := f.(*cli.BoolFlag)
	return !isBool && !isHelp(a)
}

func isHelp(a string) bool { return a == "-h" || a == "--help" }
