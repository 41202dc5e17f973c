package subcommands

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/agentfs/agentfs/internal/allocs"
)

// TestReadLinesGathersOnce: a long line is read whole, gathered in
// chunks and joined once; the ends of one too long are its ends. Grown a
// quarter at a time, an 8 MiB line allocated about 38 MiB.
func TestReadLinesGathersOnce(t *testing.T) {
	line := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB
	line[0], line[len(line)-1] = '<', '>'
	input := append(append(append(append([]byte{}, line...), "\r\n{}\n"...), line...), "\n"...)
	lines := make(chan inputLine)
	var got []inputLine
	n := allocs.Bytes(func() {
		go readLines(bytes.NewReader(input), len(line)+10, lines)
		for l := <-lines; l.err != io.EOF; l = <-lines {
			got = append(got, l)
		}
	})
	if len(got) != 3 || !bytes.Equal(got[0].data, line) || string(got[1].data) != "{}" || !bytes.Equal(got[2].data, line) {
		t.Fatalf("read %d lines, not the input's", len(got))
	}
	if n > 3*uint64(2*len(line)) {
		t.Fatalf("reading two lines of %d bytes allocated %d", len(line), n)
	}
	// Too long, through a reader that gives a byte at a time.
	go readLines(iotest.OneByteReader(bytes.NewReader(input)), 100<<10, lines)
	l := <-lines
	// The tail is the last bytes read, the CR LF among them, then cut.
	if !l.tooLong || !bytes.Equal(l.head, line[:cutEnds]) || !bytes.Equal(l.tail, line[len(line)-cutEnds+2:]) {
		t.Fatalf("too long %v, head %.10q, tail %.10q", l.tooLong, l.head, l.tail)
	}
}

// TestBatchArgsAreTheLines: a batch line's args are the bytes of the
// line, not a copy of them (a 50 MB line's args were held twice).
func TestBatchArgsAreTheLines(t *testing.T) {
	data := []byte(`{"id":1,"tool":"write","args":{"path":"a","content":"` + strings.Repeat("x", 1<<20) + `"}}`)
	line, err := decodeBatchLine(data)
	if err != nil || line.Tool != "write" || string(line.ID) != "1" {
		t.Fatalf("%+v, %v", line.Tool, err)
	}
	at := bytes.Index(data, []byte(`{"path"`))
	if len(line.Args) != len(data)-at-1 || &line.Args[0] != &data[at] {
		t.Fatalf("args are a copy of the line")
	}
}

// TestNumberedSetsArgumentsAside: a tools/call is numbered without its
// arguments, which are given back as the bytes of the line, for its
// handler: the SDK decoded them four times over and held two copies.
// Re-encoded through compactJSON twice, 4 MiB of arguments allocated
// 29 MiB.
func TestNumberedSetsArgumentsAside(t *testing.T) {
	big := strings.Repeat("x", 4<<20)
	line := []byte(`{"jsonrpc":"2.0", "id":3,"method":"tools/call","params":{"name":"agentfs_write","arguments":{"path":"a", "content":"` + big + `"},"_meta":{"k":[1, 2]}}}`)
	fields, err := rawFields(line)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	var args json.RawMessage
	var ok bool
	n := allocs.Bytes(func() { got, args, ok = numbered(fields, 9) })
	want := `{"id":3,"jsonrpc":"2.0","method":"tools/call","params":{"_meta":{"agentfs/seq":9,"k":[1,2]},"name":"agentfs_write"}}`
	if !ok || string(got) != want {
		t.Fatalf("numbered %v: %.200s", ok, got)
	}
	at := bytes.Index(line, []byte(`{"path"`))
	if string(args) != `{"path":"a", "content":"`+big+`"}` || &args[0] != &line[at] {
		t.Fatalf("arguments %.40s", args)
	}
	if n > 64<<10 {
		t.Fatalf("numbering %d bytes allocated %d", len(line), n)
	}
}

// TestGatheredEnds: the ends of bytes gathered in many chunks, and their
// joining, are those of the bytes written.
func TestGatheredEnds(t *testing.T) {
	var all []byte
	var g gathered
	for i := range 3000 {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, i%7)
		all = append(all, p...)
		g.write(p)
	}
	for _, n := range []int{0, 1, 5, 100, 4096, len(all), len(all) + 1} {
		head, tail := g.ends(n)
		k := min(n, len(all))
		if !bytes.Equal(head, all[:k]) || !bytes.Equal(tail, all[len(all)-k:]) {
			t.Fatalf("ends(%d): %q %q", n, head, tail)
		}
	}
	if len(g.chunks) < 3 || !bytes.Equal(g.bytes(), all) || g.n != 0 {
		t.Fatalf("%d chunks, joined differently", len(g.chunks))
	}
}

// TestArgumentsAsideLeaveWithTheirAnswer: the arguments set aside for a
// call its handler never takes (the SDK refused it, the client cancelled
// it) go with its answer.
func TestArgumentsAsideLeaveWithTheirAnswer(t *testing.T) {
	u := newUnanswered()
	method := "tools/call"
	if handed, _ := u.hand(message{ID: json.RawMessage(`7`), Method: &method}); !handed {
		t.Fatal("not handed")
	}
	seq := u.number("7")
	u.setArgs(seq, json.RawMessage(`{"path":"a"}`))
	if n := u.answered("7"); n != seq || len(u.args) != 0 {
		t.Fatalf("answered %d (numbered %d), %d arguments kept", n, seq, len(u.args))
	}
	if _, ok := u.takeArgs(seq); ok {
		t.Fatal("arguments taken after the answer")
	}
}
