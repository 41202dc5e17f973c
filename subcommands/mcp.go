package subcommands

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/registry"
	"github.com/agentfs/agentfs/textfile"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"
)

func mcpCommand() subcommand {
	return fixed{&cli.Command{
		Name:  "mcp",
		Usage: "serve the tools to an MCP client over stdin and stdout (JSON-RPC lines) until stdin ends",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "watch", Usage: "index each local root and keep the index proven fresh while serving (Linux inotify), so that grep reads only the files that may match"},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return fault.InvalidArgument("mcp takes no arguments: its requests come on standard input.").
					WithHint("give the roots as --root DIR: agentfs mcp --root DIR")
			}
			if err := refuseOneCallShapes(c, "mcp answers each call with a JSON-RPC message", "each call's result is whole, and its isError tells a failure"); err != nil {
				return err
			}
			if c.Bool("watch") {
				// Made before the backend opens, as agentfs index does.
				if _, err := localfs.StateDir(); err != nil {
					return err
				}
			}
			tl, err := tools(c)
			if err != nil {
				return err
			}
			if c.Bool("watch") {
				stop, err := watchRoots(c, tl)
				if err != nil {
					return err
				}
				defer stop()
			}
			return serveMCP(c.Context, tl, streamsOf(c), readOnlyNames(c))
		},
	}}
}

// serveMCP serves one MCP session on s's stdin and stdout. Each tool is
// registered with the schemas of agentfs tools --format mcp, not ones the
// SDK would derive, and answers with the result agentfs prints:
// structuredContent is the result, content its JSON text; an error is an
// isError result whose text is the error object, with its stable code.
// readOnlyBy names what makes the session read-only (readOnlyNames), ""
// when it is not.
func serveMCP(sessionCtx context.Context, tl *core.Tools, s Streams, readOnlyBy string) error {
	readOnly := readOnlyBy != ""
	// A client gone (its end of stdout closed: it died) ends the session
	// as an interrupt does: the call under way ran to its end for nobody,
	// a grep for up to its timeout, and failed only at its answer.
	sessionCtx, endSession := context.WithCancelCause(sessionCtx)
	defer endSession(nil)
	go watchReader(sessionCtx, s.Stdout, func() { endSession(errClientGone) })
	server := mcp.NewServer(&mcp.Implementation{Name: "agentfs", Version: buildVersion().Version},
		// No logging capability: agentfs logs nothing. Its tools never
		// change during a session: no listChanged.
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	// One call at a time, in the order they came, as in a batch: a call's
	// interrupt gate is the Tools' own. A call cancelled while it waits
	// for its turn answers INTERRUPTED at once: a client reusing its id
	// waits for that answer.
	turn := make(chan struct{}, 1)
	calls := newUnanswered()
	for _, t := range registry.Listed(readOnly) {
		info := t.Info()
		req, _ := t.Types()
		fields := core.Fields(req) // an error speaks of them, not of flags
		server.AddTool(&mcp.Tool{
			Name:         registry.ToolName(info.Name),
			Description:  info.Description,
			InputSchema:  info.InputSchema,
			OutputSchema: info.OutputSchema,
			Annotations: &mcp.ToolAnnotations{
				ReadOnlyHint:    info.Annotations.ReadOnlyHint,
				DestructiveHint: &info.Annotations.DestructiveHint,
				IdempotentHint:  info.Annotations.IdempotentHint,
				OpenWorldHint:   &info.Annotations.OpenWorldHint,
			},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := req.Params.Arguments
			seq, numbered := req.Params.Meta[seqKey].(float64)
			if numbered {
				if aside, ok := calls.takeArgs(int(seq)); ok {
					args = aside
				}
			}
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage(`{}`)
			}
			// An interrupt (SIGINT, SIGTERM) ends the call, answered: its
			// context is the session's, so that a call begun after the
			// signal, or waking for its turn, finds it ended at once (with
			// an AfterFunc of the session, the stop came on a goroutine of
			// its own, after such a call wrote, with success). The SDK's
			// context ends with the client's cancellation.
			sdkCtx := ctx
			ctx, stop := context.WithCancel(sessionCtx)
			defer stop()
			defer context.AfterFunc(sdkCtx, stop)()
			if numbered {
				if err := calls.awaitTurn(ctx, int(seq)); errors.Is(err, errAnswerLost) {
					return callResult(nil, fault.Errorf(fault.CodeInterrupted, "the call was not run: %v.", err).
						WithHint("the client's output is gone; start a new session"), tl.MaxBytes)
				} else if err != nil {
					return callResult(nil, fault.Interrupted(ctx), tl.MaxBytes)
				}
			}
			select {
			case turn <- struct{}{}:
			case <-ctx.Done():
				return callResult(nil, fault.Interrupted(ctx), tl.MaxBytes)
			}
			defer func() { <-turn }()
			res, err := runRequest(ctx, tl, func() (any, error) { return t.Call(ctx, tl, args) })
			if err != nil {
				err = sessionHint(fieldSpelling(fault.AsError(err), fields))
			}
			return callResult(res, err, tl.MaxBytes)
		})
	}
	server.AddReceivingMiddleware(unknownToolSuggestion(readOnlyBy))
	out := &syncWriter{w: s.Stdout}
	lines := make(chan inputLine)
	go readLines(s.Stdin, mcp.DefaultMaxLineLength, lines)
	frames := &mcpFrames{lines: lines, out: out, calls: calls, done: sessionCtx.Done(), maxBytes: tl.MaxBytes}
	// The session ends at the end of its input, which an interrupt
	// (SIGINT, SIGTERM) makes come at once: once the calls under way have
	// their answer (INTERRUPTED, or what they finished). Ended by its
	// context, the SDK drops the answers still being computed.
	err := server.Run(context.WithoutCancel(sessionCtx), &mcp.IOTransport{Reader: io.NopCloser(frames), Writer: nopCloser{&answerWriter{w: out, calls: calls, maxBytes: tl.MaxBytes}}})
	switch {
	case context.Cause(sessionCtx) == errClientGone:
		return fault.Errorf(fault.CodeInterrupted, "the session was interrupted: the client closed its end of standard output, and no answer could reach it.").
			WithHint("a call under way was stopped before it changed anything, or its change finished; check the files, then start a new session")
	case sessionCtx.Err() != nil:
		return fault.Interrupted(sessionCtx)
	case errors.Is(err, io.EOF):
		return nil // the client closed stdin: the session is over
	}
	return err
}

// errClientGone ends a session whose client's end of stdout is closed.
var errClientGone = errors.New("the client is gone")

// readerPoll is how long watchReader's each look at stdout lasts.
const readerPoll = 250 * time.Millisecond

// watchReader calls gone once the reader of out (standard output: a
// pipe, a socket, a terminal) is gone, its end closed, and returns; it
// returns too when ctx ends, or when out is a regular file or no
// descriptor (a buffer), which have no reader to lose. poll with no
// events asked reports only that (POLLERR for a pipe, POLLHUP for a
// socket or a terminal), not a client that only closed stdin, nor the
// half-close of a socket that is both stdin and stdout. A system whose
// poll reports nothing so (macOS's, it seems) ends the session as
// before: at the first answer it cannot write.
func watchReader(ctx context.Context, out io.Writer, gone func()) {
	if a, ok := out.(*answerStream); ok {
		out = a.w
	}
	if f, ok := out.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return
		}
	}
	conn, ok := out.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := conn.SyscallConn()
	if err != nil {
		return
	}
	for ctx.Err() == nil {
		fds := []unix.PollFd{{Events: 0}}
		var perr error
		if err := rc.Control(func(fd uintptr) {
			fds[0].Fd = int32(fd)
			_, perr = unix.Poll(fds, int(readerPoll/time.Millisecond))
		}); err != nil {
			return
		}
		switch {
		case perr != nil && !errors.Is(perr, unix.EINTR), fds[0].Revents&unix.POLLNVAL != 0:
			return
		case fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0:
			gone()
			return
		}
	}
}

// mcpFrames is the MCP server's input: the lines of stdin that are
// JSON-RPC messages the SDK's transport takes. It answers each other line
// itself with a JSON-RPC error, -32700 when it is not JSON and -32600 when
// it is no message: the transport stops at the first line it cannot
// decode, which ended the session. A key given twice or bytes that are not
// UTF-8 are refused as in any request: with two "name"s the last chose
// the tool. A request whose id is that of a call not yet answered is kept
// back until that answer, and the tools/calls after it behind it, in
// order; the lines after it are read on (a cancellation of the call it
// waits for, a ping): the reader waiting on it left the session deaf until
// that call ended, and its cancellation unread. At the end of stdin it
// hands on what it kept back, then waits for the calls it handed on to be
// answered: the SDK ends the session at its reader's EOF and drops the
// answers still being computed, so a client that wrote its requests and
// closed stdin got none of them, with exit 0.
type mcpFrames struct {
	lines   <-chan inputLine
	out     io.Writer
	calls   *unanswered
	done    <-chan struct{}
	pending []byte
	// maxBytes bounds an answer written here (--max-bytes).
	maxBytes int
	// kept are the requests held back, in the order they came; end is
	// the input's end, once read.
	kept []keptMessage
	end  error
}

// keptMessage is a request as read, held back while its id is busy, or a
// refusal under such an id: answered before the call in flight, it was
// taken for that call's answer by a client matching answers by id.
type keptMessage struct {
	data    []byte
	msg     message
	refusal *refusal
}

// refusal is the JSON-RPC error that answers a line, or, interrupted,
// the INTERRUPTED answer of a kept tools/call cancelled before it ran.
type refusal struct {
	id          json.RawMessage
	code        int
	text        string
	interrupted bool
}

// key is the id the message is answered under, if it has one.
func (k keptMessage) key() (string, bool) {
	if k.refusal != nil {
		return idKey(k.refusal.id)
	}
	if k.msg.Method == nil {
		return "", false
	}
	return idKey(k.msg.ID)
}

func (f *mcpFrames) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if err := f.handOn(); err != nil {
			return 0, err
		}
		if len(f.pending) > 0 {
			break
		}
		if f.end != nil && len(f.kept) == 0 {
			f.calls.wait()
			return 0, f.end
		}
		lines, answered := f.lines, f.calls.changed
		if f.end != nil {
			lines = nil // read to its end: only an answer frees a kept request
		}
		if len(f.kept) == 0 {
			answered = nil
		}
		var in inputLine
		select {
		case in = <-lines:
		case <-answered:
			continue
		case <-f.done:
		}
		select {
		case <-f.done:
			// Interrupted: no call after those under way, though a line
			// came with the signal (select took either at random); what
			// was kept back is answered once those are.
			f.calls.wait()
			return 0, f.interruptKept()
		default:
		}
		if in.err == io.EOF {
			f.end = io.EOF
			continue
		}
		if in.err != nil {
			// Said as batch says it: the bare read error's hint sent the
			// user to retry and check the file system.
			return 0, fault.Errorf(fault.CodeIOError, "standard input could not be read: %s.", in.err).
				WithHint("check the MCP client that writes the messages; start a new session")
		}
		if !in.tooLong && len(bytes.TrimSpace(in.data)) == 0 {
			continue
		}
		var k keptMessage
		if code, text, id, msg := frameError(in); code != 0 {
			k.refusal = &refusal{id: id, code: code, text: text}
		} else {
			k.data, k.msg = in.data, msg
		}
		if f.cancelKept(k.msg) {
			continue
		}
		if f.mustWait(k) {
			f.kept = append(f.kept, k)
			continue
		}
		taken, err := f.offer(k)
		if err != nil {
			return 0, err
		}
		if !taken {
			f.kept = append(f.kept, k)
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	if len(f.pending) == 0 {
		// Let the message go: its end, an empty slice, held it all.
		f.pending = nil
	}
	return n, nil
}

// handOn hands on the kept messages that may go now, in the order they
// came: each whose id is free, but a tools/call never before one kept
// ahead of it, and a message never before one kept ahead under its id.
// It stops at the first message passed to the server, which reads one at
// a time.
func (f *mcpFrames) handOn() error {
	callAhead, idsAhead := false, map[string]bool{}
	for i := 0; i < len(f.kept); {
		k := f.kept[i]
		key, hasKey := k.key()
		if !(isToolCall(k.msg) && callAhead) && !(hasKey && idsAhead[key]) {
			taken, err := f.offer(k)
			if err != nil {
				return err
			}
			if taken {
				f.kept = slices.Delete(f.kept, i, i+1)
				if len(f.pending) > 0 {
					return nil
				}
				continue
			}
		}
		callAhead = callAhead || isToolCall(k.msg)
		if hasKey {
			idsAhead[key] = true
		}
		i++
	}
	return nil
}

// mustWait reports whether k waits behind what is kept: a tools/call
// behind a kept one, to run in the order they came, and a message behind
// one kept under its id.
func (f *mcpFrames) mustWait(k keptMessage) bool {
	if isToolCall(k.msg) && slices.ContainsFunc(f.kept, func(kept keptMessage) bool { return isToolCall(kept.msg) }) {
		return true
	}
	key, ok := k.key()
	return ok && slices.ContainsFunc(f.kept, func(kept keptMessage) bool {
		other, ok := kept.key()
		return ok && other == key
	})
}

// cancelKept takes a cancellation of a tools/call kept back, not passed
// to the server (which would not know its id and drop the cancellation:
// the call ran later, a write made): the call is taken off and answers
// INTERRUPTED in its place. A cancellation of an id neither kept nor in flight
// (answered, or not sent yet) is taken too, and dropped, as the protocol
// lets a server do: passed on, the server's handlers raced, and one sent
// before its request cancelled that request (9 times in 20). taken is
// false for any other message, and for the cancellation of an id in
// flight, which the server cancels.
func (f *mcpFrames) cancelKept(m message) (taken bool) {
	if m.Method == nil || *m.Method != "notifications/cancelled" {
		return false
	}
	var params struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(m.fields["params"], &params) != nil || len(params.RequestID) == 0 {
		return false
	}
	key, ok := idKey(params.RequestID)
	if !ok || f.calls.inFlight(key) {
		// Not busy: an answer being written is of a call done, and the
		// server drops its cancellation (a kept call under the id ran).
		return false
	}
	i := slices.IndexFunc(f.kept, func(k keptMessage) bool {
		other, ok := k.key()
		return ok && other == key && isToolCall(k.msg)
	})
	if i < 0 {
		return true
	}
	// Answered in its place, as a refusal: once the answer under its id
	// is written, and after what is kept ahead of it under that id.
	// Written at once, it came before the answer of the call ahead of it
	// being written (the cancellation came then), or a refusal kept ahead
	// of it, and a client matching answers by id took each for the other.
	f.kept[i] = keptMessage{refusal: &refusal{id: f.kept[i].msg.ID, interrupted: true}}
	return true
}

// answer writes the refusal r.
func (f *mcpFrames) answer(r *refusal) error {
	if r.interrupted {
		return f.interrupted(r.id)
	}
	return f.refuse(r.id, r.code, r.text)
}

// interrupted answers the tools/call id INTERRUPTED.
func (f *mcpFrames) interrupted(id json.RawMessage) error {
	answer, err := interruptedAnswer(id, f.maxBytes)
	if err != nil {
		return err
	}
	_, err = f.out.Write(answer)
	return err
}

// interruptKept answers what was kept back when the session is
// interrupted, the calls under way answered: a tools/call INTERRUPTED,
// another request a JSON-RPC error, a refusal as it was to be. Each
// request gets its answer, as the man page promises. It returns io.EOF,
// which ends the session.
func (f *mcpFrames) interruptKept() error {
	for _, k := range f.kept {
		var err error
		switch _, hasKey := k.key(); {
		case k.refusal != nil:
			err = f.answer(k.refusal)
		case isToolCall(k.msg):
			err = f.interrupted(k.msg.ID)
		case hasKey:
			err = f.refuse(k.msg.ID, -32000, "interrupted: the session ended before this request was handled")
		}
		if err != nil {
			return err
		}
	}
	f.kept = nil
	return io.EOF
}

// pass makes the message the next the server reads: trimmed (the
// transport takes nothing but a line's end after a message, and ended the
// session at a space), a tools/call numbered.
func (f *mcpFrames) pass(data []byte, msg message) {
	if key, ok := idKey(msg.ID); ok && isToolCall(msg) {
		seq := f.calls.number(key)
		if line, args, ok := numbered(msg.fields, seq); ok {
			if args != nil {
				f.calls.setArgs(seq, args)
			}
			f.pending = append(line, '\n')
			return
		}
	}
	f.pending = append(bytes.TrimSpace(data), '\n')
}

// offer hands k on to the server, or refuses it under an open listen's id
// (the SDK drops such a request unanswered, and tools/calls numbered after
// it waited for it for ever); taken is false when its id is that of a
// call not yet answered, and k must wait. A refusal is written once its
// id is free.
func (f *mcpFrames) offer(k keptMessage) (taken bool, err error) {
	if r := k.refusal; r != nil {
		if key, ok := idKey(r.id); ok && f.calls.busy(key) {
			return false, nil
		}
		return true, f.answer(r)
	}
	switch handed, inUse := f.calls.hand(k.msg); {
	case inUse:
		return true, f.refuse(k.msg.ID, -32600, "the id is that of an open subscriptions/listen: give each request an id of its own")
	case handed:
		f.pass(k.data, k.msg)
		return true, nil
	}
	return false, nil
}

func isToolCall(m message) bool { return m.Method != nil && *m.Method == "tools/call" }

// refuse answers a message the server is not given with a JSON-RPC error.
func (f *mcpFrames) refuse(id json.RawMessage, code int, text string) error {
	reply, err := compactJSON(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": text}})
	if err != nil {
		return err
	}
	_, err = f.out.Write(append(reply, '\n'))
	return err
}

// frameError is the JSON-RPC error of a line that is no message the
// transport can take, with the id to answer (null when it has none);
// code 0 for a message, with what tracking needs of it (read here, where
// the line is parsed once for all the checks: a write's content may be
// megabytes). An array (a batch) is refused whatever the protocol:
// 2025-06-18 removed batches, and for an older one the SDK's transport
// ends the session at the first element it cannot take.
func frameError(in inputLine) (code int, text string, id json.RawMessage, msg message) {
	id = json.RawMessage("null")
	const parseError, invalidRequest = -32700, -32600
	if in.tooLong {
		if cut := idOfCut(in.head, in.tail); cut != nil {
			id = cut
		}
		return invalidRequest, fmt.Sprintf("the message is over %d MiB", mcp.DefaultMaxLineLength>>20), id, msg
	}
	m, err := rawFields(in.data)
	if err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			// Under the id read before the fault or at the line's end:
			// under null, its caller waited for ever.
			if cut := idOfLine(in.data, in.unended); cut != nil && answerableID(cut) && len(cut) <= maxIDBytes {
				id = cut
			}
		}
		switch {
		case syntax != nil && strings.HasSuffix(syntax.Error(), "exceeded max depth"):
			// JSON all the same, too deep for encoding/json (10,000), as
			// one over the SDK's 1,000 is refused below.
			return invalidRequest, "the message is nested too deep: " + err.Error(), id, msg
		case syntax != nil:
			return parseError, "the line is not JSON: send one JSON-RPC message a line", id, msg
		}
		return invalidRequest, "a message is a JSON object; batches are not supported", id, msg
	}
	if raw, ok := m["id"]; ok && isID(raw) {
		if len(raw) > maxIDBytes {
			return invalidRequest, fmt.Sprintf("the id is %d bytes, over %d: use a short id (a number, or a short string)", len(raw), maxIDBytes), id, msg
		}
		id = raw
		if !answerableID(raw) {
			if _, ok := idKey(id); !ok {
				id = json.RawMessage("null") // past float64: no JSON client reads it
			}
			return invalidRequest, "the id must be a string or an integer of at most 53 bits", id, msg
		}
	} else if ok && string(raw) != "null" {
		return invalidRequest, "the id must be a number, or a string of UTF-8 text with no unpaired surrogate escape", id, msg
	} else if _, request := m["method"]; ok && request {
		// MCP forbids a null id; the SDK dropped such a request unanswered
		// and undone, and its client waited for ever. (A response may
		// carry one: a client's answer to a request it could not read.)
		return invalidRequest, "a request's id must not be null: use a string or a number (a notification has no id)", id, msg
	}
	if err := core.CheckJSON(in.data); err != nil {
		return invalidRequest, strings.TrimSuffix(fault.AsError(err).Message, "."), id, msg
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return invalidRequest, `the message must have "jsonrpc": "2.0"`, id, msg
	}
	if method, ok := m["method"]; ok && (len(method) == 0 || method[0] != '"') {
		return invalidRequest, "the method must be a string", id, msg
	}
	_, request := m["method"]
	_, result := m["result"]
	_, failure := m["error"]
	if !request && !result && !failure {
		// Neither a request nor a response: the SDK dropped one with an
		// id unanswered, and its sender waited for ever.
		return invalidRequest, "a message has a method (a request or a notification), or a result or an error (a response)", id, msg
	}
	if _, err := jsonrpc.DecodeMessage(withoutArguments(in.data, m)); err != nil {
		// What the SDK's transport cannot decode ends the session (an id
		// past float64, JSON nested past its decoder's depth): refused
		// here, under its id when that is one the SDK reads (a refusal
		// under a null id ends an SDK client's session).
		if _, ok := idKey(id); !ok {
			id = json.RawMessage("null")
		}
		return invalidRequest, "the message cannot be decoded: " + err.Error(), id, msg
	}
	msg, _ = messageOf(m) // its method is a string, checked above
	return 0, "", nil, msg
}

// withoutArguments is the message line, of fields, with its params'
// arguments left out when it is a tools/call that has them, as the SDK
// reads it (numbered sets them aside): the SDK decoded a call's
// arguments only to find the message it reads whole, through a buffer
// grown by doubling (3 times the arguments' size allocated while the
// line was held). They are valid JSON, which CheckJSON found.
func withoutArguments(line []byte, fields map[string]json.RawMessage) []byte {
	if string(fields["method"]) != `"tools/call"` {
		return line
	}
	params, err := rawFields(fields["params"])
	if _, ok := params["arguments"]; err != nil || !ok {
		return line
	}
	delete(params, "arguments")
	all := maps.Clone(fields)
	if all["params"], err = compactJSON(params); err != nil {
		return line
	}
	if out, err := compactJSON(all); err == nil {
		return out
	}
	return line
}

// unanswered are the ids of the calls handed to the server that it has
// not answered, each true when the end of input waits for its answer. A
// call the client cancelled is one of them until its answer: the SDK runs
// it until its handler returns and answers it then (an error, or
// INTERRUPTED), and drops a call reusing its id before. A
// subscriptions/listen is not waited for: it lasts until cancelled, which
// the SDK does at the end of input.
type unanswered struct {
	mu      sync.Mutex
	ids     map[string]bool
	changed chan struct{}
	// seqs are the numbers of the tools/calls not answered, by id, in the
	// order they came (last is the latest). Every call numbered below low
	// is answered; done are the numbers above it answered (a call
	// cancelled while it waits answers out of turn). turns wakes the
	// call whose turn it is, by number: each answer woke every waiting
	// call to look at every number, and 2,000 calls written at once took
	// 30 s of CPU.
	seqs map[string]int
	// args are the arguments of those calls, by number, taken out of
	// the messages the SDK reads (numbered) for their handlers.
	args  map[int]json.RawMessage
	last  int
	low   int
	done  map[int]bool
	turns map[int]chan struct{}
	// lost is set once an answer could not be written: no call's turn
	// comes after it.
	lost bool
	// writing are the ids whose answers are being written, taken off ids
	// (answered) but not yet out: a refusal kept back under one of them,
	// written then, came before the answer it waited for.
	writing map[string]int
}

func newUnanswered() *unanswered {
	return &unanswered{ids: map[string]bool{}, changed: make(chan struct{}, 1), seqs: map[string]int{},
		args: map[int]json.RawMessage{}, low: 1, done: map[int]bool{}, turns: map[int]chan struct{}{}, writing: map[string]int{}}
}

// seqKey is the key of params._meta under which mcpFrames numbers each
// tools/call in the order it came. The SDK runs each call on a goroutine
// of its own, in no order: pipelined, a write then a read of one file ran
// the read first (the old content, with success), and of 100 writes of
// one file the last to run was not the last sent.
const seqKey = "agentfs/seq"

// number gives the call with the id key the next number.
func (u *unanswered) number(key string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.last++
	u.seqs[key] = u.last
	return u.last
}

// setArgs keeps the arguments of the call numbered seq for its handler.
func (u *unanswered) setArgs(seq int, args json.RawMessage) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.args[seq] = args
}

// takeArgs gives the handler of the call numbered seq its arguments.
func (u *unanswered) takeArgs(seq int) (json.RawMessage, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	args, ok := u.args[seq]
	delete(u.args, seq)
	return args, ok
}

// awaitTurn returns once every call numbered before seq is answered, or
// with ctx's error, or errAnswerLost.
func (u *unanswered) awaitTurn(ctx context.Context, seq int) error {
	u.mu.Lock()
	if u.lost {
		u.mu.Unlock()
		return errAnswerLost
	}
	if u.low >= seq {
		u.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	u.turns[seq] = turn
	u.mu.Unlock()
	select {
	case <-turn:
		u.mu.Lock()
		defer u.mu.Unlock()
		if u.lost {
			return errAnswerLost
		}
		return nil
	case <-ctx.Done():
		u.mu.Lock()
		delete(u.turns, seq)
		u.mu.Unlock()
		return ctx.Err()
	}
}

// numbered is the tools/call of fields with seq in its params._meta and
// its arguments taken out, which it returns (nil when it has none), or
// false when its params are absent or no object, or its _meta no object
// (the SDK refuses it: params made here were refused as a call of the
// tool ""). The SDK never reads a call's arguments but to hand them to
// its handler, which takes them from unanswered.args: it decoded them
// four times over, each time through a buffer grown by doubling, and
// held two copies of them (a 15 MB call peaked at 170 MB).
func numbered(fields map[string]json.RawMessage, seq int) (line []byte, args json.RawMessage, ok bool) {
	meta := map[string]json.RawMessage{}
	// null decodes into a nil map (which panicked at the assignment
	// below): null params are no object, which the SDK refuses, and a
	// null _meta is none.
	raw, ok := fields["params"]
	if !ok {
		return nil, nil, false
	}
	params, err := rawFields(raw)
	if err != nil || params == nil {
		return nil, nil, false
	}
	// A call the SDK refuses unread is left as sent, which its answer
	// quotes: no number of agentfs's in it. Its fields, by their exact
	// keys (the SDK's decoder matches no other case), into its types.
	var call mcp.CallToolParamsRaw
	for key, into := range map[string]any{"name": &call.Name, "requestState": &call.RequestState, "inputResponses": &call.InputResponses} {
		if raw, ok := params[key]; ok && json.Unmarshal(raw, into) != nil {
			return nil, nil, false
		}
	}
	// Its values as the SDK reads them too: a number past float64 (1e400)
	// the SDK refused, quoting the line made here, its arguments left out
	// and agentfs's number in.
	if raw, ok := params["_meta"]; ok && (json.Unmarshal(raw, &meta) != nil || json.Unmarshal(raw, new(mcp.Meta)) != nil) {
		return nil, nil, false
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[seqKey] = json.RawMessage(strconv.Itoa(seq))
	if params["_meta"], err = compactJSON(meta); err != nil {
		return nil, nil, false
	}
	args = params["arguments"]
	delete(params, "arguments")
	all := maps.Clone(fields)
	if all["params"], err = compactJSON(params); err != nil {
		return nil, nil, false
	}
	line, err = compactJSON(all)
	return line, args, err == nil
}

// message is what tracking needs of a JSON-RPC message.
type message struct {
	ID     json.RawMessage
	Method *string
	fields map[string]json.RawMessage
}

// decodeMessage reads the id and method of a message by their exact keys,
// as the SDK does: encoding/json's fields match "ID" or "Method" too, and
// a call the SDK took for a notification was awaited for ever.
func decodeMessage(data []byte) (message, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return message{}, false
	}
	return messageOf(fields)
}

// messageOf is decodeMessage of a message's fields.
func messageOf(fields map[string]json.RawMessage) (message, bool) {
	m := message{ID: fields["id"], fields: fields}
	if method, ok := fields["method"]; ok {
		m.Method = new(string)
		if json.Unmarshal(method, m.Method) != nil {
			return message{}, false
		}
	}
	return m, true
}

// answerableID reports whether the SDK answers under the id it was given:
// a string, or an integer of at most 53 bits. It reads a number as a
// float64 and answers it as an int64, so that 8.5 was answered as 8 (the
// id of another call), 0.1 as 0 and 1e19 as -2^63.
func answerableID(raw json.RawMessage) bool {
	if raw[0] == '"' {
		return true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && -1<<53 <= n && n <= 1<<53
}

// idKey is the id as the SDK answers it: a number is taken as an int64.
func idKey(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return "s" + v, true
	case float64:
		return "n" + strconv.FormatInt(int64(v), 10), true
	}
	return "", false
}

// hand records a message about to be given to the server: a call is to
// be answered. handed is false for a request whose id is that of a call
// not yet answered, which mcpFrames keeps back until that answer: the SDK
// drops such a call unanswered, and a refusal under the same id came before
// the first call's answer, which a client matching by id took for its own.
// inUse is true, and the message not recorded, when the id is an open
// subscriptions/listen's, which may last for the session.
func (u *unanswered) hand(m message) (handed, inUse bool) {
	if m.Method == nil {
		return true, false
	}
	key, ok := idKey(m.ID)
	if !ok {
		return true, false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	awaited, busy := u.ids[key]
	if !busy {
		u.ids[key] = *m.Method != "subscriptions/listen"
		return true, false
	}
	return false, !awaited
}

// busy reports whether the id key is a request's handed to the server
// whose answer is not yet written.
func (u *unanswered) busy(key string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.ids[key]
	return ok || u.writing[key] > 0
}

// inFlight reports whether the id key is a request's handed to the
// server and not yet answered (its answer may be being written).
func (u *unanswered) inFlight(key string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.ids[key]
	return ok
}

// isCall reports whether the id key is a tools/call's not yet answered.
func (u *unanswered) isCall(key string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.seqs[key]
	return ok
}

// answered takes the call with the id key off as its answer goes out: a
// client that reads the answer may send its id again at once. It returns
// the call's number (0 for none), whose turn passes (passed) once the
// answer is written; written ends the writing.
func (u *unanswered) answered(key string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.ids, key)
	seq := u.seqs[key]
	delete(u.seqs, key)
	delete(u.args, seq) // answered without its handler: refused, cancelled
	u.writing[key]++
	return seq
}

// written ends the writing of the answer under the id key, written or
// not, and wakes what waits for it.
func (u *unanswered) written(key string) {
	u.mu.Lock()
	if u.writing[key]--; u.writing[key] == 0 {
		delete(u.writing, key)
	}
	u.mu.Unlock()
	select {
	case u.changed <- struct{}{}:
	default:
	}
}

// passed ends the turn of the call numbered seq, whose answer was written,
// or was not (seq 0: the answer of another request): then no call waiting
// for its turn runs. The next call ran while the answer before it failed
// to go out, and the client, its output gone, could not tell which calls
// had changed anything.
func (u *unanswered) passed(seq int, written bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !written {
		u.lost = true
		for n, turn := range u.turns {
			close(turn)
			delete(u.turns, n)
		}
		return
	}
	u.done[seq] = true
	for u.done[u.low] {
		delete(u.done, u.low)
		u.low++
		if turn, ok := u.turns[u.low]; ok {
			close(turn)
			delete(u.turns, u.low)
		}
	}
}

// errAnswerLost is the turn of a call after one whose answer could not be
// written.
var errAnswerLost = errors.New("an earlier answer could not be written")

// wait returns once every call waited for is answered, its answer
// written: interrupted, each answers at once (INTERRUPTED, or what its
// commit finished).
func (u *unanswered) wait() {
	for {
		u.mu.Lock()
		n := len(u.writing)
		for _, awaited := range u.ids {
			if awaited {
				n++
			}
		}
		u.mu.Unlock()
		if n == 0 {
			return
		}
		<-u.changed
	}
}

// answerWriter is the server's output: each reply it writes answers a call.
type answerWriter struct {
	w        io.Writer
	calls    *unanswered
	maxBytes int
}

// Write takes the call off before its answer goes out: a client that
// reads the answer and sends its next call with the same id at once would
// otherwise find it still in flight.
func (a *answerWriter) Write(p []byte) (int, error) {
	out, seq := p, 0
	if m, ok := decodeMessage(p); ok && m.Method == nil {
		if key, ok := idKey(m.ID); ok {
			defer a.calls.written(key)
			// The SDK answers with code 0 a call cancelled before its
			// handler ran ("context canceled"), where the handler answers
			// INTERRUPTED, and a request out of the session's order (a
			// call before initialize, a second initialize), which a
			// client could not tell from any other failure: -32600.
			switch e, isErr := answerError(m); {
			case !isErr || *e.Code != 0:
			case e.Message != context.Canceled.Error():
				out = invalidRequest(m.ID, e, p)
			case a.calls.isCall(key):
				if answer, err := interruptedAnswer(m.ID, a.maxBytes); err == nil {
					out = answer
				}
			}
			seq = a.calls.answered(key)
		}
	}
	_, err := a.w.Write(boundedError(unescapeHTML(out), a.maxBytes))
	if seq > 0 || err != nil {
		// Any answer not written, a ping's or tools/list's too: the
		// output is gone, and a call after it would run unreported.
		a.calls.passed(seq, err == nil)
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// wireError is a JSON-RPC error object as the SDK writes it.
type wireError struct {
	Code    *int            `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// answerError is the error of the answer m, if it is one.
func answerError(m message) (wireError, bool) {
	var e wireError
	raw, ok := m.fields["error"]
	return e, ok && json.Unmarshal(raw, &e) == nil && e.Code != nil
}

// invalidRequest is the error answer line (under id, with the error e)
// given the code -32600; line when it cannot be rewritten.
func invalidRequest(id json.RawMessage, e wireError, line []byte) []byte {
	code := -32600
	e.Code = &code
	out, err := compactJSON(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, e})
	if err != nil {
		return line
	}
	return append(out, '\n')
}

// interruptedAnswer is the answer to the call id as its handler gives a
// call cancelled: INTERRUPTED, as a tool's error.
func interruptedAnswer(id json.RawMessage, maxBytes int) ([]byte, error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := callResult(nil, fault.Interrupted(ctx), maxBytes)
	if err != nil {
		return nil, err
	}
	line, err := compactJSON(struct {
		JSONRPC string              `json:"jsonrpc"`
		ID      json.RawMessage     `json:"id"`
		Result  *mcp.CallToolResult `json:"result"`
	}{"2.0", id, res})
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// boundedError is a reply within maxBytes when it is a JSON-RPC error: the
// SDK's own errors (-32602) echo the whole params, a write's content too
// (1 MB at --max-bytes 512). Its message is cut, to MaxEchoBytes at most as
// any echo, and its data left out. A tool's answer is bounded already.
func boundedError(p []byte, maxBytes int) []byte {
	if len(p) <= maxBytes && len(p) <= 2*fault.MaxEchoBytes {
		return p
	}
	var reply struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(p, &reply) != nil || reply.Error == nil {
		return p
	}
	msg := reply.Error.Message
	// Cut again by what escaping added (an echoed quote takes 2 bytes
	// or more), until the line fits.
	for n := fault.MaxEchoBytes; ; {
		reply.Error.Message = fault.CutTo(msg, n)
		out, err := compactJSON(reply)
		if err != nil {
			return p
		}
		if over := len(out) + 1 - maxBytes; over > 0 && n > 0 {
			n -= over
			continue
		}
		return append(out, '\n')
	}
}

// unescapeHTML turns the SDK's \u003c, \u003e and \u0026 in JSON back
// into <, > and &, as agentfs writes JSON everywhere else: each cost 6
// bytes where 1 says the same. Escapes are read in pairs, so that an
// escaped backslash before "u003c" stays as it is.
func unescapeHTML(p []byte) []byte {
	if !bytes.Contains(p, []byte(`\u00`)) {
		return p
	}
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		if p[i] != '\\' || i+1 == len(p) {
			out = append(out, p[i])
			continue
		}
		if p[i+1] == 'u' && i+6 <= len(p) {
			switch string(p[i+2 : i+6]) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out, i = append(out, p[i], p[i+1]), i+1
	}
	return out
}

// syncWriter serialises the writes of the server and of mcpFrames, each a
// whole message.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write's error says that the call ran: a change it made stands, and the
// hint to retry an IO_ERROR would repeat an append or a replace.
func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.w.Write(p)
	if err != nil {
		return n, answerNotWritten(err)
	}
	return n, nil
}

// callResult is a tool's answer as an MCP result: an error's text is
// bounded by maxBytes (--max-bytes) as the CLI's is.
func callResult(res any, err error, maxBytes int) (*mcp.CallToolResult, error) {
	if err != nil {
		text, merr := compactJSON(map[string]any{"error": fault.AsError(err).Within(maxBytes - len(`{"error":}`))})
		if merr != nil {
			return nil, merr
		}
		// No structuredContent: it would have to follow the output schema.
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
	}
	text, err := compactJSON(res)
	if err != nil {
		return nil, err
	}
	content := mediaContent(res)
	if content == nil {
		content = []mcp.Content{&mcp.TextContent{Text: string(text)}}
	}
	return &mcp.CallToolResult{Content: content, StructuredContent: json.RawMessage(text)}, nil
}

// mediaContent is the content of a read of an image or a PDF, which a
// model takes as an image or a document, not as base64 text (every kind
// read calls an image, PNG, JPEG, GIF and WebP, models take): the result
// without its data as text, then an image item, or for a PDF an embedded
// resource (uri agentfs:PATH), the item clients hand a model as a
// document. nil for any other result (and should its data or its
// description not be encoded: it goes as text then).
func mediaContent(res any) []mcp.Content {
	r, ok := res.(*core.ReadResult)
	if !ok || r.Media == nil || (r.Kind != string(textfile.KindImage) && r.Kind != string(textfile.KindPDF)) {
		return nil
	}
	data, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		return nil
	}
	described, media := *r, *r.Media
	media.Data = ""
	described.Media = &media
	text, err := compactJSON(&described)
	if err != nil {
		return nil
	}
	var item mcp.Content = &mcp.ImageContent{Data: data, MIMEType: r.MimeType}
	if r.Kind == string(textfile.KindPDF) {
		// The name's bytes, which pathBase64 gives when they are not
		// UTF-8: the display path's U+FFFD names no file.
		name := r.Path
		if b, err := base64.StdEncoding.DecodeString(r.PathBase64); err == nil && r.PathBase64 != "" {
			name = string(b)
		}
		item = &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: "agentfs:" + (&url.URL{Path: name}).EscapedPath(), MIMEType: r.MimeType, Blob: data}}
	}
	return []mcp.Content{&mcp.TextContent{Text: string(text)}, item}
}

// compactJSON is v as the CLI writes it: one line, < > & unescaped.
func compactJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// nopCloser leaves the process's stdout open when the session ends.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// unknownToolSuggestion answers a tools/call of a tool the session does
// not list as the SDK does (-32602, unknown tool), naming the closest
// tool as batch does: an agent that called "read" or
// "agentfs_apply-patch" learnt no name to call instead. A tool that
// changes files, called under --readonly, is said to be left out for
// that, by readOnlyBy (--readonly, AGENTFS_READONLY; "" when the session
// is not read-only): a client that cached another session's list was
// told it did not exist, and nothing why.
func unknownToolSuggestion(readOnlyBy string) mcp.Middleware {
	readOnly := readOnlyBy != ""
	var names, all []string
	for _, t := range registry.Listed(readOnly) {
		names = append(names, t.Info().Name)
	}
	for _, t := range registry.All() {
		all = append(all, t.Info().Name)
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || call.Params == nil {
				return next(ctx, method, req)
			}
			name := call.Params.Name
			for _, n := range names {
				if registry.ToolName(n) == name {
					return next(ctx, method, req)
				}
			}
			msg := fmt.Sprintf("unknown tool %q", name)
			near := closestTool(name, all)
			listed := func(n string) bool { return n == near || registry.ToolName(n) == near }
			if readOnly && near != "" && !slices.ContainsFunc(names, listed) {
				msg += ": the session is read-only (" + readOnlyBy + "), and lists no tool that changes files"
			} else if c := closestTool(name, names); c != "" {
				if !strings.HasPrefix(c, "agentfs_") {
					c = registry.ToolName(c)
				}
				msg += fmt.Sprintf("; did you mean %q?", c)
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
		}
	}
}
