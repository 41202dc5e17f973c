package subcommands

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/agentfs/agentfs/index"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/registry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpSession runs agentfs ARGS mcp (ARGS, when they hold mcp) in memory, connected to the SDK's
// client over pipes; the server's exit code comes on the channel once the
// session is closed.
func mcpSession(t *testing.T, args ...string) (*mcp.ClientSession, <-chan int, *syncBuffer) {
	t.Helper()
	toServer, clientOut := io.Pipe()
	clientIn, fromServer := io.Pipe()
	stderr := syncBuffer{wrote: make(chan struct{}, 1)}
	code := make(chan int, 1)
	if !slices.Contains(args, "mcp") {
		args = append(args, "mcp")
	}
	go func() {
		c := Main(context.Background(), args, Streams{Stdin: toServer, Stdout: fromServer, Stderr: &stderr})
		fromServer.Close()
		code <- c
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr %q)", err, stderr.String())
	}
	return s, code, &stderr
}

// syncBuffer is a server's stderr that a test reads while it runs.
type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.wrote <- struct{}{}:
	default:
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Len() int { return len(s.String()) }

// waitFor reports whether the buffer holds sub within 30 s.
func (s *syncBuffer) waitFor(sub string) bool {
	deadline := time.After(30 * time.Second)
	for !strings.Contains(s.String(), sub) {
		select {
		case <-s.wrote:
		case <-deadline:
			return false
		}
	}
	return true
}

// TestMCP: agentfs mcp lists the registry's tools with its schemas, and a
// call answers what the subcommand prints: structuredContent is the
// result and content its JSON text; an error is an isError result
// carrying the error object and its stable code. Closing the session ends
// the server with exit 0.
func TestMCP(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "dot.png"), dotPNG, 0o644)
	tinyPDF := []byte("%PDF-1.4\n%%EOF\n")
	os.WriteFile(filepath.Join(dir, "a b.pdf"), tinyPDF, 0o644)
	os.WriteFile(filepath.Join(dir, "x\xff.pdf"), tinyPDF, 0o644)
	s, code, stderr := mcpSession(t, "--root", dir)
	ctx := context.Background()

	// The tools never change during a session: a client that watched
	// for a change of the list was told to.
	if caps := s.InitializeResult().Capabilities; caps.Tools == nil || caps.Tools.ListChanged {
		t.Errorf("capabilities %+v, want tools without listChanged", caps)
	}
	list, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The SDK lists the tools by name.
	want, _ := registry.ListIn("mcp", false)
	wantJSON, _ := json.Marshal(want.Tools)
	var wantList []map[string]any
	json.Unmarshal(wantJSON, &wantList)
	slices.SortFunc(wantList, func(a, b map[string]any) int { return strings.Compare(a["name"].(string), b["name"].(string)) })
	if len(list.Tools) != len(wantList) {
		t.Fatalf("%d tools listed, want %d", len(list.Tools), len(wantList))
	}
	for i, tl := range list.Tools {
		got := map[string]any{"name": tl.Name, "description": tl.Description, "inputSchema": tl.InputSchema,
			"outputSchema": tl.OutputSchema, "annotations": map[string]any{"readOnlyHint": tl.Annotations.ReadOnlyHint,
				"destructiveHint": *tl.Annotations.DestructiveHint, "idempotentHint": tl.Annotations.IdempotentHint,
				"openWorldHint": *tl.Annotations.OpenWorldHint}}
		if !sameJSON(got, wantList[i]) {
			t.Errorf("tools/list's %s is not agentfs tools --format mcp's %s", tl.Name, wantList[i]["name"])
		}
	}

	call := func(name string, args any) *mcp.CallToolResult {
		t.Helper()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	text := func(res *mcp.CallToolResult) string {
		if len(res.Content) != 1 {
			t.Fatalf("content %v, want one text", res.Content)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}

	res := call("agentfs_read", map[string]any{"path": "a.txt"})
	_, cli, _ := run(t, "", "--root", dir, "read", "--json", `{"path":"a.txt"}`)
	if res.IsError || text(res) != strings.TrimSpace(cli) || !sameJSON(res.StructuredContent, json.RawMessage(cli)) {
		t.Errorf("read: isError %v, text %s, structured %v; the CLI prints %s", res.IsError, text(res), res.StructuredContent, cli)
	}

	// An image is given as one, which a model sees, after the result
	// without its data; structuredContent is the result whole. It was
	// its base64 as text, which a model reads as characters.
	res = call("agentfs_read", map[string]any{"path": "dot.png"})
	_, cli, _ = run(t, "", "--root", dir, "read", "dot.png")
	var described map[string]any
	if res.IsError || len(res.Content) != 2 || !sameJSON(res.StructuredContent, json.RawMessage(cli)) {
		t.Fatalf("read of an image: isError %v, content %v, structured %v; the CLI prints %s", res.IsError, res.Content, res.StructuredContent, cli)
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &described); err != nil || described["data"] != nil || described["mimeType"] != "image/png" || described["version"] == nil {
		t.Errorf("read of an image: its description %v (%v), want the result without its data", described, err)
	}
	if img, ok := res.Content[1].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || !bytes.Equal(img.Data, dotPNG) {
		t.Errorf("read of an image: content %#v, want the image/png", res.Content[1])
	}

	// A PDF is given as an embedded resource, a document a client hands a
	// model, after the result without its data: it was its base64 as
	// text, up to 4.7 MB of it.
	res = call("agentfs_read", map[string]any{"path": "a b.pdf"})
	_, cli, _ = run(t, "", "--root", dir, "read", "a b.pdf")
	if res.IsError || len(res.Content) != 2 || !sameJSON(res.StructuredContent, json.RawMessage(cli)) {
		t.Fatalf("read of a PDF: isError %v, content %v, structured %v; the CLI prints %s", res.IsError, res.Content, res.StructuredContent, cli)
	}
	described = nil
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &described); err != nil || described["data"] != nil || described["kind"] != "pdf" || described["version"] == nil {
		t.Errorf("read of a PDF: its description %v (%v), want the result without its data", described, err)
	}
	if doc, ok := res.Content[1].(*mcp.EmbeddedResource); !ok || doc.Resource.MIMEType != "application/pdf" ||
		!bytes.Equal(doc.Resource.Blob, tinyPDF) || doc.Resource.URI != "agentfs:a%20b.pdf" {
		t.Errorf("read of a PDF: content %#v, want the application/pdf resource", res.Content[1])
	}

	// A name that is not UTF-8 is its bytes in the resource's address, as
	// pathBase64 gives them: the display path's U+FFFD named no file.
	res = call("agentfs_read", map[string]any{"pathBase64": base64.StdEncoding.EncodeToString([]byte("x\xff.pdf"))})
	if doc, ok := res.Content[len(res.Content)-1].(*mcp.EmbeddedResource); res.IsError || !ok || doc.Resource.URI != "agentfs:x%FF.pdf" {
		t.Errorf("read of a PDF not named in UTF-8: content %#v, want the resource agentfs:x%%FF.pdf", res.Content[len(res.Content)-1])
	}

	res = call("agentfs_edit", map[string]any{"path": filepath.Join(dir, "a.txt"), "oldText": "beta", "newText": "gamma"})
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); res.IsError || string(b) != "alpha\ngamma\n" {
		t.Errorf("edit: %s; the file holds %q", text(res), b)
	}

	for _, tc := range []struct {
		tool string
		args any
		code string
	}{
		{"agentfs_read", map[string]any{"path": "missing.txt"}, "NOT_FOUND"},
		{"agentfs_read", map[string]any{}, "INVALID_ARGUMENT"},
		{"agentfs_ls", map[string]any{"depth": 11}, "INVALID_ARGUMENT"},
		{"agentfs_read", map[string]any{"path": "/etc/passwd"}, "OUTSIDE_ROOT"},
	} {
		res := call(tc.tool, tc.args)
		var e struct {
			Error struct{ Code, Message string }
		}
		if !res.IsError || res.StructuredContent != nil || json.Unmarshal([]byte(text(res)), &e) != nil || e.Error.Code != tc.code {
			t.Errorf("%s %v: isError %v, %s; want the error %s", tc.tool, tc.args, res.IsError, text(res), tc.code)
		}
	}
	// An error names the request's fields, not the flags of the CLI.
	if res := call("agentfs_write", map[string]any{"path": "k"}); !strings.Contains(text(res), "contentFile") || strings.Contains(text(res), "--content") {
		t.Errorf("write without content: %s; want its hint in JSON field names", text(res))
	}

	s.Close()
	if c := <-code; c != 0 || stderr.Len() != 0 {
		t.Errorf("after the session: exit %d, stderr %q", c, stderr)
	}
}

// watchedRoot is a root for mcp --watch, holding a.txt, with a state
// directory of its own; the test is skipped where no watcher runs.
func watchedRoot(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the watcher needs inotify (Linux)")
	}
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("needle one\n"), 0o644)
	return dir
}

// mcp --watch keeps each local root's index proven fresh while it serves,
// and the watcher ends with the session.
func TestMCPWatch(t *testing.T) {
	dir := watchedRoot(t)
	s, code, stderr := mcpSession(t, "--root", dir, "mcp", "--watch")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if st, err := index.StatusOf(dir, nil); err == nil && st.Watched {
			if st.WatcherPid != os.Getpid() {
				t.Fatalf("the watcher is %d, not the server's process %d", st.WatcherPid, os.Getpid())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no watcher answered within 30 s (stderr %q)", stderr)
		}
	}
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("needle two\n"), 0o644)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "agentfs_grep",
		Arguments: map[string]any{"query": "needle", "mode": "files"}})
	if err != nil || res.IsError {
		t.Fatalf("grep: %v %v", err, res)
	}
	got, _ := json.Marshal(res.StructuredContent)
	_, scan, _ := run(t, "", "--root", dir, "grep", "needle", "--mode", "files", "--no-index")
	if !sameJSON(res.StructuredContent, json.RawMessage(scan)) {
		t.Errorf("the watched search answered %s, the scan %s", got, scan)
	}
	s.Close()
	if c := <-code; c != 0 || stderr.Len() != 0 {
		t.Errorf("after the session: exit %d, stderr %q", c, stderr)
	}
	if st, err := index.StatusOf(dir, nil); err != nil || st.Watched {
		t.Errorf("after the session: %+v, %v; want the index, unwatched", st, err)
	}
}

// mcp --watch serves whatever its watchers cannot do: a root that cannot
// be indexed, or one another watcher serves under other settings (whose
// list this session's searches cannot use), is noted on stderr, and the
// session goes on.
func TestMCPWatchNotes(t *testing.T) {
	dir := watchedRoot(t)

	// A root that is itself denied: plain mcp starts, so mcp --watch does.
	s, code, stderr := mcpSession(t, "--root", dir, "--deny", dir, "mcp", "--watch")
	s.Close()
	if c := <-code; c != 0 || !strings.Contains(stderr.String(), `"DENIED"`) {
		t.Errorf("a denied root: exit %d, stderr %q; want 0 and a DENIED note", c, stderr)
	}

	// Another watcher of the tree, under other settings.
	fsys, err := localfs.New(localfs.Config{Roots: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, ended := make(chan struct{}), make(chan error, 1)
	go func() {
		ended <- index.Watch(ctx, fsys, dir, dir, index.WatchOptions{
			BuildOptions: index.BuildOptions{LockTimeout: time.Minute, Config: "other settings"},
			Ready:        func(index.Status) { close(ready) },
		})
	}()
	<-ready
	s, code, stderr = mcpSession(t, "--root", dir, "mcp", "--watch")
	noted := stderr.waitFor("other settings")
	s.Close()
	if c := <-code; c != 0 || !noted || !strings.Contains(stderr.String(), `"EXISTS"`) || !strings.Contains(stderr.String(), "then run agentfs mcp --watch again") {
		t.Errorf("another watcher under other settings: exit %d, stderr %q; want 0 and an EXISTS note naming mcp --watch", c, stderr)
	}
	cancel()
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
}

// TestMCPReadOnly: with --readonly, the server offers only the tools that
// change no file.
func TestMCPReadOnly(t *testing.T) {
	s, code, _ := mcpSession(t, "--root", t.TempDir(), "--readonly")
	list, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if want := []string{"agentfs_find", "agentfs_grep", "agentfs_ls", "agentfs_read"}; !slices.Equal(names, want) {
		t.Errorf("read-only tools %v, want %v", names, want)
	}
	s.Close()
	<-code
}

// An unknown tool is -32602 naming the closest listed tool, as batch
// names it (the SDK's error named none); one not listed under
// --readonly is said to be left out for it, with no suggestion of a tool
// that is not listed.
func TestMCPUnknownToolSuggestion(t *testing.T) {
	for _, tc := range []struct {
		readOnly   bool
		name, want string
	}{
		{false, "read", `unknown tool "read"; did you mean "agentfs_read"?`},
		{false, "agentfs_apply-patch", `unknown tool "agentfs_apply-patch"; did you mean "agentfs_apply_patch"?`},
		{false, "zzzz", `unknown tool "zzzz"`},
		{true, "agentfs_write", `unknown tool "agentfs_write": the session is read-only (--readonly), and lists no tool that changes files`},
		{true, "agentfs_rm", `unknown tool "agentfs_rm": the session is read-only (--readonly), and lists no tool that changes files`},
		{true, "agentfs_wrte", `unknown tool "agentfs_wrte": the session is read-only (--readonly), and lists no tool that changes files`},
		{true, "read", `unknown tool "read"; did you mean "agentfs_read"?`},
		{true, "zzzz", `unknown tool "zzzz"`},
	} {
		args := []string{"--root", t.TempDir()}
		if tc.readOnly {
			args = append(args, "--readonly")
		}
		s, code, _ := mcpSession(t, args...)
		_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.name, Arguments: map[string]any{}})
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("%s (read-only %v): %v; want %s", tc.name, tc.readOnly, err, tc.want)
		}
		s.Close()
		<-code
	}
	// Made read-only by the variable, the session names it.
	t.Setenv("AGENTFS_READONLY", "1")
	s, code, _ := mcpSession(t, "--root", t.TempDir())
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "agentfs_write", Arguments: map[string]any{}})
	if want := "the session is read-only (AGENTFS_READONLY), and lists no tool that changes files"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("agentfs_write under AGENTFS_READONLY=1: %v; want %s", err, want)
	}
	s.Close()
	<-code
}

// sameJSON reports whether a and b marshal to the same JSON value.
func sameJSON(a, b any) bool {
	var va, vb any
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return json.Unmarshal(ja, &va) == nil && json.Unmarshal(jb, &vb) == nil && reflect.DeepEqual(va, vb)
}

// TestMCPBadLines: a line that is no JSON-RPC message gets a JSON-RPC
// error and the session goes on (the SDK's transport alone ended it); a
// key given twice is refused as in any request (the last "name" chose
// the tool: read became rm).
func TestMCPBadLines(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "v.txt")
	os.WriteFile(victim, []byte("keep\n"), 0o644)
	toServer, in := io.Pipe()
	out, fromServer := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- Main(context.Background(), []string{"--root", dir, "mcp"}, Streams{Stdin: toServer, Stdout: fromServer, Stderr: io.Discard})
		fromServer.Close()
	}()
	replies := bufio.NewReader(out)
	exchange := func(line string) map[string]any {
		t.Helper()
		go in.Write([]byte(line + "\n"))
		reply, err := replies.ReadString('\n')
		if err != nil {
			t.Fatalf("no reply to %s: %v", line, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(reply), &m); err != nil {
			t.Fatalf("reply to %s: %q is not JSON", line, reply)
		}
		return m
	}
	// After a byte-order mark (a session replayed from a file saved on
	// Windows): it was refused, -32700.
	if m := exchange("\ufeff" + `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); m["result"] == nil {
		t.Fatalf("the first line after a byte-order mark was answered %v", m)
	}
	go in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	for _, tc := range []struct {
		line string
		code float64
		id   any
	}{
		{`garbage`, -32700, nil},
		// Not JSON, under the id read before the fault or at the end
		// (an SDK client writes its id last); not an id of arguments.
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"agentfs_read","arguments":{"path":"a.txt",}},"id":21}`, -32700, 21.0},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"agentfs_read","arguments":{"path":"a` + "\x01" + `.txt"}},"id":"c"}`, -32700, "c"},
		{`{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"agentfs_read",}}`, -32700, 22.0},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"agentfs_read","arguments":{"path":"a.txt","id":23}}`, -32700, nil},
		{`[{"jsonrpc":"2.0","id":9,"method":"ping"}]`, -32600, nil},
		{`{"id":14,"method":"ping"}`, -32600, 14.0},
		// Neither a request nor a response: the SDK dropped it, and its
		// sender waited for ever.
		{`{"jsonrpc":"2.0","id":11}`, -32600, 11.0},
		{`{"jsonrpc":"2.0","id":12,"params":{}}`, -32600, 12.0},
		{`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"agentfs_read","name":"agentfs_rm","arguments":{"path":"v.txt"}}}`, -32600, "x"},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600, nil},
		// A null id: MCP forbids it, and the SDK dropped the request
		// unanswered, undone; its client waited for ever.
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"nullid.txt","content":"x"}}}`, -32600, nil},
		// Not echoed: the answer would not be UTF-8, so no JSON.
		{`{"jsonrpc":"2.0","id":"` + "\xff" + `","method":"ping"}`, -32600, nil},
		// Nor one with an unpaired surrogate escape: a strict parser
		// refuses the answer as the message was refused.
		{`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, -32600, nil},
		// JSON the SDK's decoder cannot read ended the session, exit 1,
		// with the calls before it unanswered.
		{`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, -32600, nil},
		// An id the SDK answers as another number: 8.5 as 8, the id of
		// another call, 1e19 as -2^63.
		{`{"jsonrpc":"2.0","id":8.5,"method":"ping"}`, -32600, 8.5},
		{`{"jsonrpc":"2.0","id":1e19,"method":"ping"}`, -32600, 1e19},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, -32600, 9007199254740993.0},
		// Every answer repeats the id, beside a result bounded by
		// --max-bytes: a longer id made the line go over it.
		{`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", maxIDBytes-1) + `","method":"ping"}`, -32600, nil},
		// null params or _meta panicked, ending the session.
		{`{"jsonrpc":"2.0","id":"np","method":"tools/call","params":null}`, -32600, "np"},
		{`{"jsonrpc":"2.0","id":"nop","method":"tools/call"}`, -32600, "nop"},
		{`{"jsonrpc":"2.0","id":"nm","method":"tools/call","params":{"name":"agentfs_nosuch","_meta":null}}`, -32602, "nm"},
		{`{"jsonrpc":"2.0","id":15,"method":"ping","params":{"x":` + strings.Repeat("[", 1100) + strings.Repeat("]", 1100) + `}}`, -32600, 15.0},
		// Past encoding/json's depth (10,000) it was -32700, not JSON,
		// under null.
		{`{"jsonrpc":"2.0","id":17,"method":"ping","params":{"x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}}`, -32600, 17.0},
		// Over 16 MiB, under the id read from either end (an SDK client
		// writes its id last), where it was null and the client waited.
		{`{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"big","content":"` + strings.Repeat("a", 17<<20) + `"}}}`, -32600, 16.0},
		{`{"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"big","content":"` + strings.Repeat("a", 17<<20) + `","id":1}},"jsonrpc":"2.0","id":"big"}`, -32600, "big"},
		{`{"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"big","content":"` + strings.Repeat("a", 17<<20) + `"}},"id":{"x":1}}`, -32600, nil},
	} {
		reply := exchange(tc.line)
		e, _ := reply["error"].(map[string]any)
		if e == nil || e["code"] != tc.code || reply["id"] != tc.id {
			t.Errorf("%s: reply %v, want error %v with id %v", tc.line, reply, tc.code, tc.id)
		}
	}
	if reply := exchange(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); reply["id"] != 2.0 || reply["error"] != nil {
		t.Fatalf("after the bad lines, ping: %v", reply)
	}
	// Params the SDK cannot read are quoted in its answer as sent: they
	// quoted the number agentfs adds under _meta to keep the calls' order.
	var reply map[string]any
	for _, params := range []string{`{"name":5}`, `{"name":"agentfs_ls","requestState":5}`, `{"name":"agentfs_ls","inputResponses":5}`} {
		reply = exchange(`{"jsonrpc":"2.0","id":"ns","method":"tools/call","params":` + params + `}`)
		if e, _ := reply["error"].(map[string]any); e == nil || e["code"] != -32602.0 || strings.Contains(fmt.Sprint(e["message"]), seqKey) {
			t.Fatalf("a call with params %s: %v, want -32602 without %s", params, reply, seqKey)
		}
	}
	// null arguments are none, as absent ones are (they were INVALID_ARGUMENT).
	reply = exchange(`{"jsonrpc":"2.0","id":"na","method":"tools/call","params":{"name":"agentfs_ls","arguments":null}}`)
	if r, _ := reply["result"].(map[string]any); r == nil || r["isError"] == true || r["structuredContent"] == nil {
		t.Fatalf("ls with null arguments: %v", reply)
	}
	id := `"` + strings.Repeat("i", maxIDBytes-2) + `"`
	if reply := exchange(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`); reply["id"] != strings.Trim(id, `"`) || reply["error"] != nil {
		t.Fatalf("ping with an id of %d bytes: %v", len(id), reply)
	}
	// Blanks after a message: the SDK's transport ended the session.
	if reply := exchange("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"} \t "); reply["id"] != 3.0 || reply["error"] != nil {
		t.Fatalf("a ping followed by blanks: %v", reply)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("the file named by the second \"name\" is gone: %v", err)
	}
	in.Close()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d at the end of input", c)
	}
}

// TestMCPBatchRefusedWhateverTheProtocol: a client of 2025-03-26, which
// had batches, gets -32600 for one and the session goes on: passed to the
// SDK, one bad element ([], [1], a repeated id) ended it.
func TestMCPBatchRefusedWhateverTheProtocol(t *testing.T) {
	send := pipedSession(t, "2025-03-26")
	for _, batch := range []string{`[]`, `[1]`, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`} {
		if reply := send(batch); !strings.Contains(reply, `"code":-32600`) {
			t.Fatalf("%s: %q, want -32600", batch, reply)
		}
	}
	if reply := send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`); !strings.Contains(reply, `"id":9,"result"`) {
		t.Fatalf("after the batches, ping: %q", reply)
	}
}

// TestMCPAnswersEveryCallBeforeEOF: a client that writes its calls and
// closes stdin gets every answer: the SDK ended the session at EOF and
// dropped the answers in flight, exit 0.
func TestMCPAnswersEveryCallBeforeEOF(t *testing.T) {
	dir := t.TempDir()
	for i := range 50 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte(strings.Repeat("some text\n", 200)), 0o644)
	}
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	const calls = 10
	for id := 2; id < 2+calls; id++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"agentfs_grep","arguments":{"query":"text"}}}`+"\n", id)
	}
	var out bytes.Buffer
	code := Main(context.Background(), []string{"--root", dir, "mcp"}, Streams{Stdin: strings.NewReader(in.String()), Stdout: &out, Stderr: io.Discard})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	answers := map[float64]int{}
	for line := range strings.Lines(out.String()) {
		var m struct {
			ID     *float64
			Result json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.ID == nil || m.Result == nil {
			t.Fatalf("reply %q", line)
		}
		answers[*m.ID]++
	}
	for id := 1; id < 2+calls; id++ {
		if answers[float64(id)] != 1 {
			t.Errorf("call %d answered %d times; replies:\n%s", id, answers[float64(id)], out.String())
		}
	}
}

// mustMessage is what tracking reads of the message data.
func mustMessage(t *testing.T, data string) message {
	m, ok := decodeMessage([]byte(data))
	if !ok {
		t.Fatalf("%s is no message", data)
	}
	return m
}

// TestUnanswered: the calls awaited at the end of input. A call whose id
// is one in flight is not handed on until its answer (the SDK dropped it
// unanswered, and a refusal under that id came before the first call's
// answer); an id is free again once answered, not when cancelled (the SDK
// still runs the call, then answers it); ids are keyed as the SDK answers
// them (2.0 is 2, "2" is not).
func TestUnanswered(t *testing.T) {
	u := newUnanswered()
	handed := func(data string) bool {
		h, _ := u.hand(mustMessage(t, data))
		return h
	}
	goesOn := func(id string) bool { return handed(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`) }
	reply := func(id string) {
		(&answerWriter{w: io.Discard, calls: u}).Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}` + "\n"))
	}
	steps := []struct {
		name string
		do   func() bool
		want bool
	}{
		{"call 2", func() bool { return goesOn("2") }, true},
		{"call 2 again", func() bool { return goesOn("2") }, false},
		{"call 2.0", func() bool { return goesOn("2.0") }, false},
		{`call "2"`, func() bool { return goesOn(`"2"`) }, true},
		{"a notification", func() bool {
			return handed(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		}, true},
		{"call 2 once answered", func() bool { reply("2"); return goesOn("2") }, true},
		{"call 2 once cancelled", func() bool {
			handed(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
			return goesOn("2")
		}, false},
		{"call 2 once the cancelled call answered", func() bool { reply("2"); return goesOn("2") }, true},
		// Keys are matched exactly, as the SDK matches them: "ID" is no
		// id, and the SDK answers no such call.
		{`call "ID":5`, func() bool {
			return handed(`{"jsonrpc":"2.0","ID":5,"method":"ping"}`) && goesOn("5") && goesOn("5") == false
		}, true},
		{`"Method" is no method`, func() bool {
			return handed(`{"jsonrpc":"2.0","id":6,"Method":"ping"}`) && goesOn("6")
		}, true},
		// A listen lasts until cancelled: neither the end of input nor a
		// call reusing its id waits for it; the call is refused (the SDK
		// dropped it, and the calls after it waited for it for ever).
		{"a listen, and a call reusing its id", func() bool {
			listen := handed(`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{}}`)
			h, inUse := u.hand(mustMessage(t, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{}}`))
			return listen && !h && inUse
		}, true},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Fatalf("%s: %v, want %v", s.name, got, s.want)
		}
	}
	reply(`"2"`)
	reply("2")
	reply("5")
	reply("6")
	// Every call answered but the listen, which is not waited for.
	done := make(chan struct{})
	go func() { u.wait(); close(done) }()
	<-done
}

// TestTurns: a call's turn comes once every call numbered before it is
// answered, whatever order they are answered in (a call cancelled while it
// waits answers out of turn), and only then.
func TestTurns(t *testing.T) {
	u := newUnanswered()
	for _, key := range []string{"a", "b", "c", "d"} {
		u.number(key)
	}
	// A probe with its context done answers at once: nil when the turn
	// has come, else the context's error.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	hasTurn := func(seq int) bool { return u.awaitTurn(done, seq) == nil }
	fourth := make(chan error, 1)
	go func() { fourth <- u.awaitTurn(context.Background(), 4) }()
	// The fourth's turn is looked at on its waiter, not probed: a probe
	// of its number took the waiter's place and, done, left it waiting
	// for ever (the test hung, 1 run in a few hundred).
	fourthRan := func() bool {
		select {
		case err := <-fourth:
			fourth <- err
			return true
		default:
			return false
		}
	}
	if !hasTurn(1) || hasTurn(2) {
		t.Fatal("the first call's turn has not come, or the second's has")
	}
	answer := func(key string, written bool) { u.passed(u.answered(key), written) }
	answer("b", true) // out of turn: a, before it, is not answered
	if hasTurn(3) || fourthRan() {
		t.Fatal("a turn came with the first call unanswered")
	}
	// Its turn passes once its answer is written, not as it goes out.
	seqA := u.answered("a")
	if hasTurn(2) || hasTurn(3) {
		t.Fatal("a turn came before the first call's answer was written")
	}
	u.passed(seqA, true)
	if !hasTurn(3) || fourthRan() {
		t.Fatal("once the first two are answered, the third's turn has not come, or the fourth's has")
	}
	answer("c", true)
	if err := <-fourth; err != nil {
		t.Fatalf("the fourth call waiting for its turn: %v", err)
	}

	// An answer not written: no call after it runs, waiting or to come.
	u = newUnanswered()
	for _, key := range []string{"a", "b", "c"} {
		u.number(key)
	}
	second := make(chan error, 1)
	go func() { second <- u.awaitTurn(context.Background(), 2) }()
	answer("a", false)
	if err := <-second; !errors.Is(err, errAnswerLost) {
		t.Errorf("the call waiting after an answer not written: %v, want errAnswerLost", err)
	}
	if err := u.awaitTurn(context.Background(), 3); !errors.Is(err, errAnswerLost) {
		t.Errorf("a call after an answer not written: %v, want errAnswerLost", err)
	}

	// Another request's answer not written (a ping's): the output is
	// gone just as much, and the call after it ran, its answer lost too.
	u = newUnanswered()
	u.number("call")
	a := &answerWriter{w: failingWriter{err: syscall.EPIPE}, calls: u, maxBytes: 1 << 20}
	if _, err := a.Write([]byte(`{"jsonrpc":"2.0","id":"ping","result":{}}` + "\n")); err == nil {
		t.Fatal("the ping's answer was written to a failing writer")
	}
	if err := u.awaitTurn(context.Background(), 1); !errors.Is(err, errAnswerLost) {
		t.Errorf("a call after a ping's answer not written: %v, want errAnswerLost", err)
	}
}

// TestMCPIDReusedOnceAnswered: a client that sends its next call with the
// id of the one just answered is served: the call was taken off only after
// its answer was written, and a client quick enough was refused (252 in
// 20,000 pings).
func TestMCPIDReusedOnceAnswered(t *testing.T) {
	send := pipedSession(t, "2025-06-18")
	for i := range 3000 {
		if reply := send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`); !strings.Contains(reply, `"result"`) {
			t.Fatalf("ping %d with the id of the one answered before: %s", i, reply)
		}
	}
}

// pipedSession starts an MCP session on pipes, initialised with protocol,
// and returns send: a line to the server, then its reply.
func pipedSession(t *testing.T, protocol string) func(line string) string {
	toServer, in := io.Pipe()
	out, fromServer := io.Pipe()
	go func() {
		Main(context.Background(), []string{"--root", t.TempDir(), "mcp"}, Streams{Stdin: toServer, Stdout: fromServer, Stderr: io.Discard})
		fromServer.Close()
	}()
	t.Cleanup(func() { in.Close() })
	replies := bufio.NewReader(out)
	write := func(line string) {
		t.Helper()
		if _, err := in.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	send := func(line string) string {
		t.Helper()
		write(line)
		reply, err := replies.ReadString('\n')
		if err != nil {
			t.Fatalf("no reply to %s: %v", line, err)
		}
		return reply
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + protocol + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return send
}

// TestMCPIDInFlightWaits: a call reusing the id of one in flight is run
// once that one is answered, so that each answer under the id is a call's
// own: it was refused -32600 under the id before the first call's answer,
// which a client matching by id took for the write's failure.
func TestMCPIDInFlightWaits(t *testing.T) {
	dir := t.TempDir()
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"w.txt","content":"x"}}}
{"jsonrpc":"2.0","id":7,"method":"ping"}
`
	var out bytes.Buffer
	if code := Main(context.Background(), []string{"--root", dir, "mcp"}, Streams{Stdin: strings.NewReader(in), Stdout: &out, Stderr: io.Discard}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var sevens []string
	for line := range strings.Lines(out.String()) {
		if strings.Contains(line, `"id":7`) {
			sevens = append(sevens, line)
		}
	}
	if len(sevens) != 2 || !strings.Contains(sevens[0], "bytesWritten") || strings.Contains(out.String(), `"error"`) {
		t.Fatalf("the answers under id 7: %q", sevens)
	}
	if _, err := os.Stat(filepath.Join(dir, "w.txt")); err != nil {
		t.Fatal(err)
	}
}

// TestMCPOutOfOrderIsInvalidRequest: a call before initialize and a second
// initialize are -32600, and nothing is done; the SDK answered them with
// code 0, which no client can tell from any other failure.
func TestMCPOutOfOrderIsInvalidRequest(t *testing.T) {
	dir := t.TempDir()
	initialize := `{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"early.txt","content":"x"}}}
` + strings.ReplaceAll(initialize, "ID", "2") + `
` + strings.ReplaceAll(initialize, "ID", "3") + `
{"jsonrpc":"2.0","method":"notifications/initialized"}
`
	var out bytes.Buffer
	if code := Main(context.Background(), []string{"--root", dir, "mcp"}, Streams{Stdin: strings.NewReader(in), Stdout: &out, Stderr: io.Discard}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	codes := map[float64]any{}
	for line := range strings.Lines(out.String()) {
		var reply struct {
			ID    float64
			Error map[string]any
		}
		if err := json.Unmarshal([]byte(line), &reply); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		codes[reply.ID] = reply.Error["code"]
	}
	if want := map[float64]any{1: -32600.0, 2: nil, 3: -32600.0}; !maps.Equal(codes, want) {
		t.Fatalf("error codes by id %v, want %v; the answers:\n%s", codes, want, out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "early.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the call before initialize wrote its file: %v", err)
	}
}

// lockedSession is agentfs ARGS mcp on a new root, its input a pipe, with
// the lock of the root's file name held by the test until it ends.
type lockedSession struct {
	t          *testing.T
	dir, state string
	held       int
	toServer   *io.PipeWriter
	out        syncBuffer
	code       chan int
	// interrupt is what SIGINT or SIGTERM does to the session.
	interrupt context.CancelFunc
}

func newLockedSession(t *testing.T, name string, args ...string) *lockedSession {
	t.Helper()
	return lockedSessionTo(t, name, nil, args...)
}

// lockedSessionTo is newLockedSession answering on stdout, or in its out
// when stdout is nil.
func lockedSessionTo(t *testing.T, name string, stdout io.Writer, args ...string) *lockedSession {
	t.Helper()
	waitForAbandonedCalls(t)
	ls := &lockedSession{t: t, dir: t.TempDir(), state: t.TempDir(), code: make(chan int), out: syncBuffer{wrote: make(chan struct{}, 1)}}
	// A call abandoned by an interrupt may still be making its lock files
	// when the session has exited: the directories go once it is done
	// (cleanups run last first, this after the unlock below).
	t.Cleanup(func() { waitForAbandonedCalls(t) })
	t.Setenv(localfs.StateDirEnv, ls.state)
	fsys, err := localfs.New(localfs.Config{Roots: []string{ls.dir}})
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := fsys.Lock(context.Background(), filepath.Join(ls.dir, name), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	ls.held = openLockFiles(t, ls.state)
	in, toServer := io.Pipe()
	ls.toServer = toServer
	ctx, interrupt := context.WithCancel(context.Background())
	ls.interrupt = interrupt
	if stdout == nil {
		stdout = &ls.out
	}
	go func() {
		ls.code <- Main(ctx, append([]string{"--root", ls.dir}, append(args, "mcp")...), Streams{Stdin: in, Stdout: stdout, Stderr: io.Discard})
	}()
	ls.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`)
	return ls
}

func (ls *lockedSession) send(lines string) {
	if _, err := io.WriteString(ls.toServer, lines); err != nil {
		ls.t.Fatal(err)
	}
}

// waitForTheLock returns once a call waits for the lock the test holds:
// it has opened the lock files the test holds, the file's last. Cancelled
// then, it only gives up its wait, and makes no lock file while the
// test's state directory goes.
func (ls *lockedSession) waitForTheLock() {
	// Bounded: a call that never comes to the lock (or has left it)
	// fails the test, where the loop once spun until CI's limit.
	for deadline := time.Now().Add(time.Minute); openLockFiles(ls.t, ls.state) < 2*ls.held; runtime.Gosched() {
		if time.Now().After(deadline) {
			ls.t.Fatalf("no call came to wait for the lock within a minute; the session wrote: %s", ls.out.String())
		}
	}
}

// answers ends the input and, once the server exits 0, returns its
// answers by id.
func (ls *lockedSession) answers() map[string][]string {
	ls.toServer.Close()
	if c := <-ls.code; c != 0 {
		ls.t.Fatalf("exit %d", c)
	}
	return ls.byID()
}

// byID is the server's answers so far by id, in the order written.
func (ls *lockedSession) byID() map[string][]string {
	byID := map[string][]string{}
	for line := range strings.Lines(ls.out.String()) {
		var m struct{ ID json.RawMessage }
		json.Unmarshal([]byte(line), &m)
		byID[string(m.ID)] = append(byID[string(m.ID)], strings.TrimSpace(line))
	}
	return byID
}

// TestMCPEndsWhenTheClientIsGone: a session whose client is gone (it
// died: its ends of standard input and output closed) interrupts the call
// under way and exits, nothing changed. It ran the call to its end (here
// a wait for a lock of --lock-timeout 10m; a grep of --timeout 24h), all
// its work for nobody, only to find that the answer could not be written.
func TestMCPEndsWhenTheClientIsGone(t *testing.T) {
	clientEnd, stdout, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	ls := lockedSessionTo(t, "w.txt", stdout, "--lock-timeout", "10m")
	ls.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"w.txt","content":"x"}}}
`)
	ls.waitForTheLock()
	clientEnd.Close()
	ls.toServer.Close()
	select {
	case c := <-ls.code:
		if c != ExitInterrupted {
			t.Fatalf("exit %d, want %d", c, ExitInterrupted)
		}
	case <-time.After(time.Minute):
		t.Fatal("the session still runs a minute after its client is gone")
	}
	if _, err := os.Stat(filepath.Join(ls.dir, "w.txt")); !os.IsNotExist(err) {
		t.Fatalf("the write of the client that is gone left w.txt: %v", err)
	}
}

// TestMCPIDReusedAfterCancel: a call reusing the id of a cancelled call
// still running waits for that call's answer, as for any id in flight.
// The cancellation freed the id at once: the SDK, still running the
// write (it waits for a lock), dropped the ping, and the client took the
// write's answer for the ping's.
func TestMCPIDReusedAfterCancel(t *testing.T) {
	ls := newLockedSession(t, "w.txt")
	ls.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"w.txt","content":"x"}}}
`)
	ls.waitForTheLock()
	ls.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}
{"jsonrpc":"2.0","id":7,"method":"ping"}
`)
	if sevens := ls.answers()["7"]; len(sevens) != 2 || !strings.Contains(sevens[0], "INTERRUPTED") || sevens[1] != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Fatalf("the answers under id 7: %q", sevens)
	}
	if _, err := os.Stat(filepath.Join(ls.dir, "w.txt")); !os.IsNotExist(err) {
		t.Fatalf("the cancelled write left w.txt: %v", err)
	}
}

// TestMCPIDInFlightKeepsReading: a call reusing the id of one in flight
// is kept back, and the lines after it are read on: a ping is answered
// while the first call runs, and a cancellation of the first call ends it
// at once. The reader waited on the reused id: the session answered
// nothing else, and the cancellation went unread, until the first call
// ended (here its lock wait's 60 s).
func TestMCPIDInFlightKeepsReading(t *testing.T) {
	ls := newLockedSession(t, "w.txt", "--lock-timeout", "60s")
	ls.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"w.txt","content":"x"}}}
`)
	ls.waitForTheLock()
	ls.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"agentfs_read","arguments":{"path":"w.txt"}}}
{"jsonrpc":"2.0","id":8,"method":"ping"}
`)
	if !ls.out.waitFor(`"id":8`) {
		t.Fatal("no answer to the ping while the call before it ran")
	}
	ls.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}
`)
	answers := ls.answers()
	if sevens := answers["7"]; len(sevens) != 2 || !strings.Contains(sevens[0], "INTERRUPTED") || !strings.Contains(sevens[1], "NOT_FOUND") {
		t.Fatalf("the answers under id 7: %q; want the write INTERRUPTED, then the read's NOT_FOUND", sevens)
	}
}

// TestMCPAnswerNotWritten: an answer that standard output refuses ends
// the session with an IO_ERROR saying the call ran, as batch's does: its
// hint to retry would repeat an append.
func TestMCPAnswerNotWritten(t *testing.T) {
	dir := t.TempDir()
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"log.txt","content":"x","append":true}}}
`
	var stderr bytes.Buffer
	code := Main(context.Background(), []string{"--root", dir, "mcp"}, Streams{Stdin: strings.NewReader(in), Stdout: failingWriter{syscall.EPIPE}, Stderr: &stderr})
	if code != ExitFailure || !strings.Contains(stderr.String(), `"IO_ERROR"`) || !strings.Contains(stderr.String(), "check the files before running it again") {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
}

// TestMCPStdinUnreadable: standard input that fails (a socket its client
// reset, a terminal hung up, a directory) ends the session with an
// IO_ERROR that says so, as batch's does: it was the bare read error,
// whose hint sent the user to retry and check the file system.
func TestMCPStdinUnreadable(t *testing.T) {
	dir := t.TempDir()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
`
	var stdout, stderr bytes.Buffer
	in := io.MultiReader(strings.NewReader(init), iotest.ErrReader(syscall.ECONNRESET))
	code := Main(context.Background(), []string{"--root", dir, "mcp"}, Streams{Stdin: in, Stdout: &stdout, Stderr: &stderr})
	var e struct {
		Error struct{ Code, Message, Hint string }
	}
	if err := json.Unmarshal(stderr.Bytes(), &e); err != nil {
		t.Fatalf("exit %d, stderr %q: %v", code, stderr.String(), err)
	}
	if code != ExitFailure || e.Error.Code != "IO_ERROR" || !strings.HasPrefix(e.Error.Message, "standard input could not be read: ") ||
		!strings.Contains(e.Error.Message, "connection reset by peer") || !strings.Contains(e.Error.Hint, "MCP client") {
		t.Fatalf("exit %d, stderr %s; want IO_ERROR saying standard input could not be read, its hint naming the MCP client", code, stderr.String())
	}
}

// TestMCPNoCallAfterAnAnswerNotWritten: once an answer cannot be written
// (the client's output gone), no call after it runs, as a batch stops at
// the first answer it cannot write. The next call's turn came as the
// answer went out, and its write landed, unanswered, in 8 runs of 12.
func TestMCPNoCallAfterAnAnswerNotWritten(t *testing.T) {
	dir := t.TempDir()
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"a.txt","content":"a"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"b.txt","content":"b"}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"c.txt","content":"c"}}}
`
	var stderr bytes.Buffer
	// Its failing write lasts until b.txt appears, or 300 ms: a call that
	// runs while an answer fails to go out is seen every time.
	out := &writesThenFails{ok: 1, err: syscall.EPIPE, until: filepath.Join(dir, "b.txt")}
	code := Main(context.Background(), []string{"--root", dir, "mcp"}, Streams{Stdin: strings.NewReader(in), Stdout: out, Stderr: &stderr})
	if code != ExitFailure || !strings.Contains(stderr.String(), `"IO_ERROR"`) {
		t.Errorf("exit %d, stderr %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Errorf("the call whose answer was lost did not run: %v", err)
	}
	for _, name := range []string{"b.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s was written after the answer before it was lost", name)
		}
	}
}

// writesThenFails takes its first ok writes, then fails every one with
// err, once the file until exists or 300 ms have passed.
type writesThenFails struct {
	ok    int
	err   error
	until string
}

func (w *writesThenFails) Write(p []byte) (int, error) {
	if w.ok > 0 {
		w.ok--
		return len(p), nil
	}
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, err := os.Stat(w.until); err == nil {
			break
		}
	}
	return 0, w.err
}

// failingWriter fails every write with err.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestMCPCancelKeptCall: a call kept back behind a call whose id is in
// flight, cancelled, answers INTERRUPTED at once and never runs: the SDK,
// not given it, dropped the cancellation, and the write ran later with
// success. Interrupted, the session answers every call still kept back,
// which were left unanswered.
func TestMCPCancelKeptCall(t *testing.T) {
	ls := newLockedSession(t, "w.txt", "--lock-timeout", "60s")
	ls.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"w.txt","content":"x"}}}
`)
	ls.waitForTheLock()
	ls.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agentfs_read","arguments":{"path":"w.txt"}}}
{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"cancelled.txt","content":"x"}}}
{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"kept.txt","content":"x"}}}
{"jsonrpc":"2.0","id":9,"method":"ping"}
`)
	if !ls.out.waitFor(`"id":9`) {
		t.Fatal("no answer to the ping")
	}
	ls.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}
`)
	if !ls.out.waitFor(`"id":7`) {
		t.Fatal("no answer to the cancelled call while the call ahead of it runs")
	}
	ls.interrupt()
	ls.toServer.Close()
	if c := <-ls.code; c != ExitInterrupted {
		t.Fatalf("exit %d, want %d", c, ExitInterrupted)
	}
	byID := ls.byID()
	for id, n := range map[string]int{"1": 2, "7": 1, "8": 1} {
		if len(byID[id]) != n || slices.ContainsFunc(byID[id], func(a string) bool { return !strings.Contains(a, "INTERRUPTED") }) {
			t.Errorf("the answers under id %s: %q, want %d, INTERRUPTED", id, byID[id], n)
		}
	}
	for _, name := range []string{"cancelled.txt", "kept.txt"} {
		if _, err := os.Stat(filepath.Join(ls.dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want no such file", name, err)
		}
	}
}

// TestMCPRefusalWaitsForItsID: a line refused under the id of a call in
// flight is answered after that call: answered before, a client matching
// answers by id took the refusal for the call's answer.
func TestMCPRefusalWaitsForItsID(t *testing.T) {
	ls := newLockedSession(t, "w.txt", "--lock-timeout", "60s")
	ls.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"w.txt","content":"x"}}}
`)
	ls.waitForTheLock()
	ls.send(`{"id":1,"method":"ping"}
{"jsonrpc":"2.0","id":2,"method":"ping"}
`)
	if !ls.out.waitFor(`"id":2`) {
		t.Fatal("no answer to the ping")
	}
	if strings.Contains(ls.out.String(), `"id":1`) {
		t.Fatalf("an answer under id 1 while its call runs: %s", ls.out.String())
	}
	ls.interrupt()
	ls.toServer.Close()
	<-ls.code
	ones := ls.byID()["1"]
	if len(ones) != 2 || !strings.Contains(ones[0], "INTERRUPTED") || !strings.Contains(ones[1], "-32600") {
		t.Fatalf("the answers under id 1: %q, want the call's, then the refusal", ones)
	}
}

// mcpCallPairs is the output of a session that, once initialized, is sent
// pair (a format of the id, %[1]d) for the ids 1 to 40, then stdin closed.
func mcpCallPairs(t *testing.T, pair string) string {
	t.Helper()
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`
	for i := 1; i <= 40; i++ {
		in += fmt.Sprintf(pair, i)
	}
	var out bytes.Buffer
	if code := Main(context.Background(), []string{"--root", t.TempDir(), "mcp"}, Streams{Stdin: strings.NewReader(in), Stdout: &out, Stderr: io.Discard}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	return out.String()
}

// TestMCPCancelledBeforeItRuns: a call cancelled before its handler runs
// answers INTERRUPTED, as a tool's error, like one cancelled while it
// runs: the SDK answered it with a JSON-RPC error of code 0, "context
// canceled" (38 of 50 such calls), which no contract code names.
func TestMCPCancelledBeforeItRuns(t *testing.T) {
	out := mcpCallPairs(t, `{"jsonrpc":"2.0","id":%[1]d,"method":"tools/call","params":{"name":"agentfs_ls","arguments":{}}}
{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%[1]d}}
`)
	interrupted := 0
	for line := range strings.Lines(out) {
		var m struct {
			Error  json.RawMessage
			Result *mcp.CallToolResult
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.Error != nil {
			t.Fatalf("an answer that is no tool result: %s (%v)", line, err)
		}
		if m.Result.IsError {
			if text := m.Result.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, `"code":"INTERRUPTED"`) {
				t.Fatalf("a cancelled call answered %s", text)
			}
			interrupted++
		}
	}
	if interrupted == 0 {
		t.Skip("no call was cancelled before it answered: the race went the other way every time")
	}
}

// TestMCPCancelBeforeItsRequest: a cancellation of an id not yet sent is
// dropped, and the request sent later under that id runs. Passed on to
// the server, it cancelled that later request in 9 of 20 sessions.
func TestMCPCancelBeforeItsRequest(t *testing.T) {
	out := mcpCallPairs(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%[1]d}}
{"jsonrpc":"2.0","id":%[1]d,"method":"tools/call","params":{"name":"agentfs_ls","arguments":{}}}
`)
	answers := 0
	for line := range strings.Lines(out) {
		var m struct {
			ID     int
			Error  json.RawMessage
			Result *mcp.CallToolResult
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.Error != nil || m.ID > 0 && m.Result.IsError {
			t.Fatalf("an answer that is no result: %s (%v)", line, err)
		}
		answers++
	}
	if answers != 41 {
		t.Fatalf("%d answers, want 41:\n%s", answers, out)
	}
}

// openLockFiles counts this process's descriptors of lock files in state
// (Linux's /proc; the test is skipped elsewhere).
func openLockFiles(t *testing.T, state string) int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to see the lock files opened: ", err)
	}
	n := 0
	for _, fd := range fds {
		if p, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(p, filepath.Join(state, "locks")+"/") {
			n++
		}
	}
	return n
}

// TestMCPCancelledWhileWaitingForItsTurn: a call cancelled while it waits
// for the call before it to end answers INTERRUPTED at once. It waited
// for its turn whatever its context, and a call reusing its id kept the
// input waiting behind it: the cancellation of the call before was never
// read, and that write went on to its end (here LOCK_TIMEOUT; with a lock
// let go in time, the cancelled write was made).
func TestMCPCancelledWhileWaitingForItsTurn(t *testing.T) {
	ls := newLockedSession(t, "a.txt", "--lock-timeout", "10s")
	if err := os.WriteFile(filepath.Join(ls.dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ls.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"a.txt","content":"x\n"}}}
`)
	ls.waitForTheLock()
	ls.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agentfs_read","arguments":{"path":"a.txt"}}}
{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}
{"jsonrpc":"2.0","id":2,"method":"ping"}
`)
	// The write still waits: the read and the ping answer first. (Sent at
	// once, the write's cancellation could be handled before the read's,
	// and the read then ran.)
	if !ls.out.waitFor(`{"jsonrpc":"2.0","id":2,"result":{}}`) {
		t.Errorf("no answer to the ping while the write waits: %s", ls.out.String())
	}
	ls.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}
`)
	answers := ls.answers()
	read := func(line string) bool { return strings.Contains(line, "INTERRUPTED") }
	if w := answers["1"]; len(w) != 1 || !strings.Contains(w[0], "INTERRUPTED") {
		t.Errorf("the cancelled write answered %q, want INTERRUPTED", w)
	}
	if r := answers["2"]; len(r) != 2 || !read(r[0]) || r[1] != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Errorf("the answers under id 2: %q, want the cancelled read's, then the ping's", r)
	}
	if b, _ := os.ReadFile(filepath.Join(ls.dir, "a.txt")); string(b) != "hello\n" {
		t.Errorf("a.txt holds %q after its write was cancelled", b)
	}
}

// TestMCPClientSurvivesARefusal: a call the server cannot decode
// (arguments nested past the SDK decoder's depth, which the SDK's client
// sends) is refused under its own id, and the client's session goes on.
// Refused under a null id, it ended the client's session: its reader
// cannot take an answer to no call, and every later call failed.
func TestMCPClientSurvivesARefusal(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644)
	s, code, _ := mcpSession(t, "--root", dir)
	var deep any = []any{}
	for range 1001 {
		deep = []any{deep}
	}
	// A deadline so that a refusal never delivered fails the test.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "agentfs_read", Arguments: map[string]any{"path": "a.txt", "x": deep}}); err == nil || ctx.Err() != nil {
		t.Fatalf("the call nested too deep: %v, want its refusal", err)
	}
	if err := s.Ping(ctx, nil); err != nil {
		t.Fatalf("ping after the refusal: %v", err)
	}
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "agentfs_read", Arguments: map[string]any{"path": "a.txt"}}); err != nil {
		t.Fatalf("read after the refusal: %v", err)
	}
	s.Close()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d", c)
	}
}

// TestMCPCallsRunInOrder: calls written at once run in the order they
// came, as in a batch. The SDK runs each on a goroutine of its own: a read
// sent after a write of the same file saw the content before it (14 of
// 800 reads), with success.
func TestMCPCallsRunInOrder(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	const pairs = 400
	for k := range pairs {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"f","content":"v%d\n"}}}`+"\n", 2*k+1, k)
		// A _meta of the client's own is kept beside the call's number.
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"progressToken":%d},"name":"agentfs_read","arguments":{"path":"f"}}}`+"\n", 2*k+2, k)
	}
	var out bytes.Buffer
	if code := Main(context.Background(), []string{"--root", dir, "mcp"}, Streams{Stdin: strings.NewReader(in.String()), Stdout: &out, Stderr: io.Discard}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	reads := map[int]string{}
	for line := range strings.Lines(out.String()) {
		var m struct {
			ID     int
			Result struct{ StructuredContent struct{ Content string } }
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("reply %q: %v", line, err)
		}
		if m.ID > 0 && m.ID%2 == 0 {
			reads[m.ID/2-1] = m.Result.StructuredContent.Content
		}
	}
	for k := range pairs {
		if want := fmt.Sprintf("v%d\n", k); reads[k] != want {
			t.Fatalf("the read after write v%d saw %q", k, reads[k])
		}
	}
}

// TestMCPInterruptAnswersTheCall: an interrupt (SIGINT, SIGTERM) ends the
// call under way, which answers INTERRUPTED and changes nothing, and the
// session, exit 130. The call went on with the SDK's own context: its
// write landed once the lock was free, unanswered.
func TestMCPInterruptAnswersTheCall(t *testing.T) {
	ls := newLockedSession(t, "w.txt")
	ls.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"w.txt","content":"x"}}}
`)
	ls.waitForTheLock()
	ls.interrupt()
	if c := <-ls.code; c != ExitInterrupted {
		t.Fatalf("exit %d, want %d", c, ExitInterrupted)
	}
	if !strings.Contains(ls.out.String(), `"id":7,`) || !strings.Contains(ls.out.String(), "INTERRUPTED") {
		t.Fatalf("the call under way was not answered INTERRUPTED: %s", ls.out.String())
	}
	if _, err := os.Stat(filepath.Join(ls.dir, "w.txt")); !os.IsNotExist(err) {
		t.Fatalf("the interrupted write left w.txt: %v", err)
	}
}

// TestMCPNoCallRunsAfterInterrupt: a call not begun at the interrupt,
// waiting behind the call under way or read after the signal, never
// runs. Both orders are raced, many times: a call waking for its turn
// found its context live until a goroutine of its own stopped it, and a
// line read with the signal was handed on; either wrote later.txt and was
// answered success, with exit 130, in about half the runs.
func TestMCPNoCallRunsAfterInterrupt(t *testing.T) {
	const later = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"later.txt","content":"x"}}}` + "\n"
	for i := range 40 {
		ls := newLockedSession(t, "w.txt")
		ls.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"w.txt","content":"x"}}}` + "\n")
		ls.waitForTheLock()
		if i%2 == 0 {
			// Behind the call under way: the ping's answer shows the call
			// handed on, its handler started.
			ls.send(later + `{"jsonrpc":"2.0","id":"p","method":"ping"}` + "\n")
			if !ls.out.waitFor(`"id":"p"`) {
				t.Fatal("no answer to the ping")
			}
		}
		ls.interrupt()
		if i%2 == 1 {
			go ls.toServer.Write([]byte(later)) // with the signal
		}
		if c := <-ls.code; c != ExitInterrupted {
			t.Fatalf("run %d: exit %d, want %d", i, c, ExitInterrupted)
		}
		if _, err := os.Stat(filepath.Join(ls.dir, "later.txt")); err == nil {
			t.Fatalf("run %d: a write not begun at the interrupt was made: %s", i, ls.out.String())
		}
	}
}

// waitForAbandonedCalls returns once no call an interrupted session
// abandoned is still running (runStoppable answers INTERRUPTED at once;
// in a process the call dies with it, in a test it runs on until it
// notices). Such a call took its locks under the state directory of the
// next session, set since: counted as the test's own, they made that
// session's wait for its call at the lock last for ever.
func waitForAbandonedCalls(t *testing.T) {
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(time.Minute); ; runtime.Gosched() {
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "subcommands.runStoppable[") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a call abandoned by an interrupt still runs after a minute:\n%s", stacks)
		}
	}
}

// TestMCPErrorFitsMaxBytes: an error's text is bounded by --max-bytes as
// the CLI's and batch's are (it was 1171 bytes at 512).
func TestMCPErrorFitsMaxBytes(t *testing.T) {
	dir := t.TempDir()
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agentfs_read","arguments":{"path":"` + strings.Repeat(strings.Repeat("d", 200)+"/", 15) + `f"}}}` + "\n" +
		// The SDK's own error echoes the params: 1 MB at 512.
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"x","content":"` + strings.Repeat("c", 1<<20) + `"},"_meta":5}}` + "\n"
	var out bytes.Buffer
	if code := Main(context.Background(), []string{"--root", dir, "--max-bytes", "512", "mcp"}, Streams{Stdin: strings.NewReader(in), Stdout: &out, Stderr: io.Discard}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	answered := false
	for line := range strings.Lines(out.String()) {
		if strings.Contains(line, `"id":2,`) {
			answered = strings.Contains(line, `"error":{"code":-32602`)
			if len(line) > 512 {
				t.Errorf("the SDK's error: %d bytes at --max-bytes 512: %.200s", len(line), line)
			}
		}
		var m struct {
			ID     int
			Result struct {
				IsError bool
				Content []struct{ Text string }
			}
		}
		json.Unmarshal([]byte(line), &m)
		if m.ID == 1 && (!m.Result.IsError || len(m.Result.Content) != 1 || len(m.Result.Content[0].Text) > 512 || !strings.Contains(m.Result.Content[0].Text, "NOT_FOUND")) {
			t.Fatalf("the error at --max-bytes 512: %s", line)
		}
	}
	if !answered {
		t.Fatalf("no -32602 for the call with _meta 5: %.300s", out.String())
	}
}

// TestMCPRefusedCallQuotedAsSent: a call whose _meta the SDK cannot read
// (a number past float64) is refused quoting its params as sent: it
// quoted the line numbered made, with agentfs's number in its _meta and
// its arguments left out.
func TestMCPRefusedCallQuotedAsSent(t *testing.T) {
	send := pipedSession(t, "2025-06-18")
	reply := send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agentfs_read","arguments":{"path":"a.txt"},"_meta":{"x":1e400}}}`)
	if !strings.Contains(reply, `-32602`) || strings.Contains(reply, seqKey) || !strings.Contains(reply, "a.txt") {
		t.Fatalf("the refusal: %s", reply)
	}
}

// TestUnescapeHTML: the SDK's HTML escapes are undone, an escaped
// backslash before "u003c" is left, and the JSON means the same.
func TestUnescapeHTML(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"\u003cb\u003e \u0026"}`:      `{"a":"<b> &"}`,
		`{"a":"\\u003c"}`:                   `{"a":"\\u003c"}`,
		`{"a":"\\\u003c"}`:                  `{"a":"\\<"}`,
		`{"a":"\u2028 \n \u00e9"}`:          `{"a":"\u2028 \n \u00e9"}`,
		`{"a":"x\u003`:                      `{"a":"x\u003`,
		`{"a":"\u003c","b":{"c":"\u0026"}}`: `{"a":"<","b":{"c":"&"}}`,
	} {
		got := string(unescapeHTML([]byte(in)))
		if got != want {
			t.Errorf("unescapeHTML(%s) = %s, want %s", in, got, want)
		}
		var a, b any
		if json.Unmarshal([]byte(in), &a) == nil && (json.Unmarshal([]byte(got), &b) != nil || !reflect.DeepEqual(a, b)) {
			t.Errorf("unescapeHTML(%s) = %s: not the same JSON", in, got)
		}
	}
}

// dotPNG is a PNG of one red pixel.
var dotPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00IEND\xaeB`\x82")

// fiveCall is a tools/call under the id 5.
const fiveCall = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"agentfs_ls","arguments":{}}}`

// answeringFive is a session's frames that handed fiveCall on and is
// writing its answer, what they write, and msg, which decodes a line.
func answeringFive(t *testing.T) (f *mcpFrames, out *bytes.Buffer, msg func(string) message) {
	t.Helper()
	msg = func(s string) message {
		m, ok := decodeMessage([]byte(s))
		if !ok {
			t.Fatalf("not a message: %s", s)
		}
		return m
	}
	out = &bytes.Buffer{}
	f = &mcpFrames{out: out, calls: newUnanswered(), maxBytes: 1 << 16}
	if handed, _ := f.calls.hand(msg(fiveCall)); !handed {
		t.Fatal("the first call was not handed on")
	}
	f.calls.answered("n5") // the first call's answer is being written
	return f, out, msg
}

// TestMCPCancelWhileAnAnswerIsWritten: a cancellation of a tools/call kept
// back (its id reused while the first call under it ran) that comes while
// the first call's answer is being written cancels the kept call, as it
// did once the answer was out. Seen as busy then (writing, for a refusal
// kept back to wait for), it was passed to the server, which had answered
// that id and dropped it: the kept call ran later, cancelled. The kept
// call's INTERRUPTED goes out after the first call's answer: written at
// once, it came first, and a client matching answers by id took each for
// the other's (a read's content for the answer to the cancelled call).
func TestMCPCancelWhileAnAnswerIsWritten(t *testing.T) {
	f, out, msg := answeringFive(t)
	f.kept = []keptMessage{{data: []byte(fiveCall), msg: msg(fiveCall)}} // the id again, kept back
	if !f.cancelKept(msg(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)) {
		t.Fatal("the cancellation was passed on: the kept call would run")
	}
	if err := f.handOn(); err != nil || out.Len() != 0 || len(f.pending) != 0 {
		t.Fatalf("while the first answer is written: %v, answered %q, handed on %q", err, out.String(), f.pending)
	}
	f.calls.written("n5")
	if err := f.handOn(); err != nil || len(f.kept) != 0 || len(f.pending) != 0 || !strings.Contains(out.String(), "INTERRUPTED") {
		t.Fatalf("once it is written: %v, kept %d, handed on %q, answered %q", err, len(f.kept), f.pending, out.String())
	}
}

// TestMCPCancelledCallAfterARefusal: a kept call cancelled behind a
// refusal kept under its id answers after that refusal, in the order
// they came: its INTERRUPTED was written at once, before the refusal
// (waiting for the answer under the id) of the line sent before it.
func TestMCPCancelledCallAfterARefusal(t *testing.T) {
	f, out, msg := answeringFive(t)
	f.kept = []keptMessage{
		{refusal: &refusal{id: json.RawMessage("5"), code: -32600, text: "the method must be a string"}},
		{data: []byte(fiveCall), msg: msg(fiveCall)},
	}
	if !f.cancelKept(msg(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)) {
		t.Fatal("the cancellation was passed on")
	}
	f.calls.written("n5")
	if err := f.handOn(); err != nil || len(f.kept) != 0 {
		t.Fatalf("%v, kept %d", err, len(f.kept))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "-32600") || !strings.Contains(lines[1], "INTERRUPTED") {
		t.Fatalf("the answers under id 5: %q, want the refusal, then INTERRUPTED", lines)
	}
}
