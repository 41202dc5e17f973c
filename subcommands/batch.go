package subcommands

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/registry"
	"github.com/agentfs/agentfs/textfile"
	"github.com/urfave/cli/v2"
)

// batchLine is one request of a batch.
type batchLine struct {
	ID   json.RawMessage `json:"id,omitempty"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// decodeBatchLine reads a request by its exact keys. encoding/json matches
// a field's name in any case and lets the last key win:
// {"tool":"read","TOOL":"rm"} removed the file that a reader of the line
// (or a filter allowing reads) took for read.
func decodeBatchLine(data []byte) (batchLine, error) {
	if kind := jsonKind(data); kind != "an object" {
		return batchLine{}, fmt.Errorf("it is %s", kind)
	}
	fields, err := rawFields(data)
	if err != nil {
		// JSON nested past encoding/json's depth, or cut off: answered
		// under its id when one can be read before the fault or at the
		// line's end.
		return batchLine{ID: idOfLine(data, false)}, err
	}
	// The id first: a line refused for another field is answered under it.
	line := batchLine{ID: fields["id"]}
	for key, raw := range fields {
		var err error
		switch key {
		case "id":
		case "tool":
			if json.Unmarshal(raw, &line.Tool) != nil {
				err = errors.New(`field "tool" is not a string`)
			}
		case "args":
			line.Args = raw
		default:
			err = fmt.Errorf("unknown field %q (the fields are tool, args and id, in lower case)", key)
		}
		if err != nil {
			return batchLine{ID: line.ID}, err
		}
	}
	return line, nil
}

// rawFields are the values of the JSON object data by their exact keys,
// each the bytes of data it spans, not a copy: json.RawMessage copies
// itself, and a 50 MB line's args were held twice.
func rawFields(data []byte) (map[string]json.RawMessage, error) {
	var spans map[string]span
	if err := json.Unmarshal(data, &spans); err != nil || spans == nil {
		return nil, err // null is a nil map, as for json.RawMessage values
	}
	fields := make(map[string]json.RawMessage, len(spans))
	for k, v := range spans {
		fields[k] = json.RawMessage(v)
	}
	return fields, nil
}

// span is a JSON value as the bytes it spans in the text json.Unmarshal
// decodes, which hands an Unmarshaler its slice of that text.
type span []byte

func (s *span) UnmarshalJSON(data []byte) error {
	*s = data
	return nil
}

// jsonKind names the kind of the JSON value data holds (valid JSON, as
// core.CheckJSON found it), by its first byte: encoding/json names a Go
// type instead.
func jsonKind(data []byte) string {
	switch bytes.TrimLeft(data, " \t\r\n")[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// batchAnswer is one line of a batch's output: the request's id and its
// result or its error.
type batchAnswer struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Result any             `json:"result,omitempty"`
	Error  *fault.Error    `json:"error,omitempty"`
}

// maxIDBytes bounds a batch or MCP id, which every answer repeats beside
// a result bounded by --max-bytes.
const maxIDBytes = 256

func batchCommand() subcommand {
	return fixed{&cli.Command{
		Name:  "batch",
		Usage: "run JSON Lines requests from stdin, {\"tool\",\"args\",\"id\"} a line, and answer one JSON line each, in order",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return fault.InvalidArgument("batch takes no arguments: its requests come on standard input.").
					WithHint(`pipe lines like {"tool":"read","args":{"path":"a.go"},"id":1} to agentfs batch`)
			}
			tl, err := tools(c)
			if err != nil {
				return err
			}
			return runBatch(c, tl)
		},
	}}
}

// refuseOneCallShapes refuses the global flags that shape the output of
// one call (--quiet, --all, --print0) for a command that answers many:
// taken silently, a caller would believe them applied. answers says how
// the command answers, instead what to read.
func refuseOneCallShapes(c *cli.Context, answers, instead string) error {
	for _, name := range []string{"quiet", "all", "print0"} {
		if c.Bool(name) {
			return fault.InvalidArgument("--%s shapes the output of one call; %s.", name, answers).
				WithHint("drop --%s: %s", name, instead)
		}
	}
	return nil
}

// runBatch answers every line of stdin in order, in one process, so that a
// harness pays the start-up once. A bad line (not JSON, an unknown tool, an
// invalid request) gets its error, and the batch goes on; the exit status
// is that of the first failure, as for several paths. An interrupt ends
// the batch after the request in progress.
func runBatch(c *cli.Context, tl *core.Tools) error {
	// A tool by its name, or by the name a model sees (agentfs tools
	// --format mcp, openai, anthropic), which a harness passes on as is.
	byName := map[string]registry.Tool{}
	var names []string
	for _, t := range registry.All() {
		byName[t.Info().Name], byName[registry.ToolName(t.Info().Name)] = t, t
		names = append(names, t.Info().Name)
	}
	o := outputOf(c)
	if err := refuseOneCallShapes(c, "batch answers each request with a JSON line", "read each answer's result or error (--exit-status gates a batch's searches)"); err != nil {
		return err
	}
	// With --exit-status, a search that found nothing, or whose answer is
	// partial, is a failure of the batch as of a call of its own.
	gates := map[string]func(any) (int, bool){}
	if c.Bool("exit-status") {
		for _, s := range []subcommand{lsCommand(), findCommand(), grepCommand(), replaceCommand()} {
			g := s.(interface{ gateOf(any) (int, bool) })
			gates[s.header().Name] = g.gateOf
		}
	}
	lines := make(chan inputLine)
	go readLines(streamsOf(c).Stdin, maxRequestBytes, lines)
	enc := json.NewEncoder(o.streams.Stdout)
	enc.SetEscapeHTML(false)
	var st batchStatus
	for {
		var in inputLine
		select {
		case <-c.Context.Done():
			// Waiting for a line, as between requests: the batch ends.
			return fault.Interrupted(c.Context)
		case in = <-lines:
		}
		if in.err == io.EOF {
			break
		}
		if in.err != nil {
			return fault.Errorf(fault.CodeIOError, "standard input could not be read: %s.", in.err).
				WithHint("check what writes the requests")
		}
		if len(bytes.Trim(in.data, " \t\r")) == 0 && !in.tooLong {
			// A blank line, spaces a harness left too, as mcp skips them:
			// it was refused without an id, and the batch exited 2.
			continue
		}
		var line batchLine
		answer := batchAnswer{}
		err := core.CheckJSON(in.data)
		if err == nil {
			line, err = decodeBatchLine(in.data)
		} else if !in.tooLong {
			// Refused (a key twice, bytes not UTF-8, data after the
			// object), under its id when one can be read, as MCP does.
			line.ID = idOfLine(in.data, in.unended)
		}
		answer.ID = line.ID
		// fields are the tool's request fields: an error speaks of them,
		// not of flags (contentFile, not --content-file).
		var fields []core.FieldSpec
		switch t, known := byName[line.Tool]; {
		case in.tooLong:
			if id := idOfCut(in.head, in.tail); len(id) <= maxIDBytes {
				answer.ID = id
			}
			err = fault.Errorf(fault.CodeTooLarge, "the line is over %d MiB, the most a request may take.", maxRequestBytes>>20).
				WithHint("pass large content by file (contentFile, patchFile) instead of inline")
		case len(line.ID) > maxIDBytes:
			answer.ID = nil
			err = fault.InvalidArgument("the id is %d bytes, over %d.", len(line.ID), maxIDBytes).
				WithHint("use a short id (a number, or a short string)")
		case err != nil:
			e := fault.AsError(err)
			hint := `write one request a line: {"tool":"read","args":{"path":"a.go"},"id":1}`
			if errors.Is(err, core.ErrUTF16Request) {
				hint = e.Hint
			}
			err = fault.InvalidArgument("the line is not a JSON object {tool, args, id}: %s", strings.TrimSuffix(e.Message, ".")+".").
				WithHint("%s", hint)
		case line.Tool == "":
			err = fault.InvalidArgument("the line names no tool.").
				WithHint(`write one request a line: {"tool":"read","args":{"path":"a.go"},"id":1}`)
		case !known:
			e := fault.InvalidArgument("there is no tool %q.", line.Tool).
				WithHint("agentfs tools lists the tools and their arguments")
			if c := closestTool(line.Tool, names); c != "" {
				e.WithClosest(c, strconv.Quote(c))
			}
			err = e
		default:
			if len(line.Args) == 0 || string(line.Args) == "null" {
				// No arguments, as MCP takes null ones.
				line.Args = json.RawMessage(`{}`)
			}
			// The id and the frame, {"id":...,"result":}, take their bytes
			// of the bound too: a line of --max-bytes 512 was 517 bytes.
			// The result's size counts the line's newline already.
			req, _ := t.Types()
			fields = core.Fields(req)
			tl.Framing = len(answer.ID) + len(`{"id":,"result":}`)
			answer.Result, err = runRequest(c.Context, tl, func() (any, error) { return t.Call(c.Context, tl, line.Args) })
			if gate := gates[t.Info().Name]; err == nil && gate != nil {
				n, _ := gate(answer.Result)
				st.add(n, n == ExitNoMatch)
			}
		}
		if err != nil {
			e := sessionHint(fieldSpelling(fault.AsError(err), fields))
			// The id and the frame, {"id":...,"error":} and a newline,
			// take their bytes of the bound too.
			answer.Result, answer.Error = nil, e.Within(o.maxBytes-len(answer.ID)-len(`{"id":,"error":}`+"\n"))
			// Under --exit-status 1 is only "nothing matched", whatever
			// tool failed: a read's NOT_FOUND after a search that found
			// nothing passed the gate "must find nothing".
			n := exitCode(e.Code)
			if len(gates) > 0 {
				n = gatedExitCode(e.Code)
			}
			st.add(n, false)
		}
		if err := enc.Encode(answer); err != nil {
			// A full disk's retry hint would make the line's change again.
			return answerNotWritten(err)
		}
		if c.Context.Err() != nil {
			return fault.Interrupted(c.Context)
		}
	}
	o.code = st.code
	return nil
}

// inputLine is a line of a batch's input, without its newline: its bytes,
// or tooLong (its bytes dropped), or the error that ended the input
// (io.EOF at its end).
type inputLine struct {
	data    []byte
	tooLong bool
	// head and tail are the first and last bytes of a line too long,
	// where its id may be read (idOfCut).
	head, tail []byte
	// unended: the input closed before the line's newline.
	unended bool
	err     error
}

// cutEnds is how much of each end of a line too long is kept.
const cutEnds = 4 << 10

// readLines sends the lines of r, each of at most max bytes, until r ends.
// On a goroutine of its own, so that an interrupt ends a batch waiting for
// its next line; a line over max is dropped up to its newline, so that
// the batch answers it with an error and goes on. A byte-order mark
// before the first line is no part of it: a file of requests saved by a
// Windows editor or PowerShell's Out-File had its first line refused.
func readLines(r io.Reader, max int, out chan<- inputLine) {
	br := bufio.NewReaderSize(r, 64<<10)
	for first := true; ; first = false {
		var g gathered
		var head, tail []byte
		tooLong := false
		for {
			part, err := br.ReadSlice('\n')
			if !tooLong {
				g.write(part)
				// Room for a line of max bytes and its CR LF, which are
				// no part of it.
				if g.n > max+2 {
					head, tail = g.ends(cutEnds)
					g, tooLong = gathered{}, true
				}
			} else {
				tail = append(tail, part...)
				tail = tail[len(tail)-min(len(tail), cutEnds):]
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && (err != io.EOF || g.n == 0 && !tooLong) {
				out <- inputLine{err: err}
				return
			}
			break
		}
		line := g.bytes()
		if first {
			_, line = textfile.CutUTF8BOM(line)
		}
		unended := !bytes.HasSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if !tooLong && len(line) > max {
			head, tail, line, tooLong = line, line, nil, true
		}
		out <- inputLine{data: line, tooLong: tooLong, head: head, tail: bytes.TrimRight(tail, "\r\n"), unended: unended}
	}
}

// batchStatus is a batch's exit code: the first failure's, but for a
// search's "nothing matched" (1 under --exit-status), which any later
// failure replaces. A misspelt path after a search that found nothing
// exited 1, and passed the gate "must find nothing".
type batchStatus struct {
	code    int
	noMatch bool // code is a search's "nothing matched"
}

// add counts a line of exit code n, noMatch when it is "nothing matched".
func (b *batchStatus) add(n int, noMatch bool) {
	if n != 0 && (b.code == 0 || b.noMatch && !noMatch) {
		b.code, b.noMatch = n, noMatch
	}
}

// idOfCut is the id of a line too long to decode, read from its first
// bytes (an "id" among the first keys) or its last ("id" the last key, as
// a JSON.stringify of an MCP SDK's request puts it); nil when neither
// holds one. A refusal is then answered under the id it refuses.
func idOfCut(head, tail []byte) json.RawMessage { return idOf(head, tail, true) }

// idOfLine is the id of a whole line that cannot be decoded, or nil:
// read from its first keys or as its object's last; unended when the
// input closed before its newline, so that a number at its end may have
// gone on (12 of 123).
func idOfLine(line []byte, unended bool) json.RawMessage { return idOf(line, nil, unended) }

// idOf is idOfCut, tail nil for a whole line; cut when the head may go on
// past its end.
func idOf(head, tail []byte, cut bool) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(head))
	if t, err := d.Token(); err == nil && t == json.Delim('{') {
		for d.More() {
			k, err := d.Token()
			key, ok := k.(string)
			var v json.RawMessage
			if err != nil || !ok || d.Decode(&v) != nil {
				break // cut short by the head's end
			}
			if key == "id" {
				// What follows must end the value: 01, 12x and 1.2.3
				// were answered as 0, 12 and 1.2, an id the line
				// never gave, perhaps another request's. The line's
				// end ends it too, but for a number at the end of a
				// line that may go on.
				rest := bytes.TrimLeft(head[d.InputOffset():], " \t\r\n")
				whole := !cut || v[0] == '"'
				if isID(v) && (len(rest) == 0 && whole || len(rest) > 0 && (rest[0] == ',' || rest[0] == '}')) {
					return v
				}
				return nil
			}
		}
	}
	if tail == nil {
		return lastTopID(head)
	}
	if m := lastID.FindSubmatch(tail); m != nil && isID(m[1]) {
		return bytes.Clone(m[1])
	}
	return nil
}

// lastTopID is the id of a whole line that is its object's last key, for
// a line whose fault (a syntax error, a raw control character) comes
// before it. The line is read from its start, so that an "id" of args,
// {"args":{"id":5}, is not taken for the request's.
func lastTopID(line []byte) json.RawMessage {
	start := len(line) - len(bytes.TrimLeft(line, " \t\r\n"))
	// The end a cut line keeps: the regexp is slow on megabytes.
	off := max(start, len(line)-cutEnds)
	m := lastID.FindSubmatchIndex(line[off:])
	if m == nil || line[start] != '{' {
		return nil
	}
	for i := range m {
		m[i] += off
	}
	if !isID(line[m[2]:m[3]]) {
		return nil
	}
	// The brackets open where the key begins: the line's own { only.
	var open []byte
	inString, escaped := false, false
	for _, b := range line[start : m[0]+1] {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped, inString = b == '\\', b != '"'
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			open = append(open, b)
		case b == '}' || b == ']':
			// b-2 is b's opener in ASCII: { for }, [ for ].
			if len(open) < 2 || open[len(open)-1] != b-2 {
				return nil // mismatched, or the line's object ended before its id
			}
			open = open[:len(open)-1]
		}
	}
	if inString || len(open) != 1 {
		return nil
	}
	return bytes.Clone(line[m[2]:m[3]])
}

// lastID matches an "id" that is the last key of the line's object.
var lastID = regexp.MustCompile(`[,{]\s*"id"\s*:\s*(-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*")\s*}\s*$`)

// isID reports whether raw is a JSON-RPC id: a string or a number, in
// UTF-8 and without an unpaired surrogate escape. An id with other bytes,
// echoed in an answer, made the answer no JSON (json.Valid takes such
// bytes inside a string), and one with "\ud800" no JSON a strict parser
// takes, answering a line refused for that very escape.
func isID(raw json.RawMessage) bool {
	return len(raw) > 0 && (raw[0] == '"' || raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') && core.CheckJSON(raw) == nil
}

// closestTool is the tool of names whose name is a plausible typo of name,
// spelled as name is: a model's name (agentfs_read) for one of that kind.
func closestTool(name string, names []string) string {
	bare, prefixed := strings.CutPrefix(strings.ReplaceAll(strings.ToLower(name), "-", "_"), "agentfs_")
	c := core.Closest(strings.ReplaceAll(bare, "_", "-"), names)
	if c != "" && prefixed {
		return registry.ToolName(c)
	}
	return c
}
