package subcommands

import (
	"bufio"
	"encoding/json"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/registry"
	"github.com/urfave/cli/v2"
)

// batchLine is one request of a batch.
type batchLine struct {
	ID   json.RawMessage `json:"id,omitempty"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// batchAnswer is one line of a batch's output: the request's id and its
// result or its error.
type batchAnswer struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Result any             `json:"result,omitempty"`
	Error  *fault.Error    `json:"error,omitempty"`
}

// maxBatchID bounds an id, which every answer repeats beside a result
// bounded by --max-bytes.
const maxBatchID = 256

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

// runBatch answers every line of stdin in order, in one process, so that a
// harness pays the start-up once. A bad line (not JSON, an unknown tool, an
// invalid request) gets its error, and the batch goes on; the exit status
// is that of the first failure, as for several paths. An interrupt ends
// the batch after the request in progress.
func runBatch(c *cli.Context, tl *core.Tools) error {
	byName := map[string]registry.Tool{}
	for _, t := range registry.All() {
		byName[t.Info().Name] = t
	}
	o := outputOf(c)
	in := bufio.NewScanner(streamsOf(c).Stdin)
	in.Buffer(make([]byte, 64<<10), maxRequestBytes)
	enc := json.NewEncoder(o.streams.Stdout)
	enc.SetEscapeHTML(false)
	code := 0
	for in.Scan() {
		if len(in.Bytes()) == 0 {
			continue
		}
		var line batchLine
		answer := batchAnswer{}
		err := json.Unmarshal(in.Bytes(), &line)
		answer.ID = line.ID
		switch t, known := byName[line.Tool]; {
		case len(line.ID) > maxBatchID:
			answer.ID = nil
			err = fault.InvalidArgument("the id is %d bytes, over %d.", len(line.ID), maxBatchID).
				WithHint("use a short id (a number, or a short string)")
		case err != nil:
			err = fault.InvalidArgument("the line is not a JSON object {tool, args, id}: %s.", err).
				WithHint(`write one request a line: {"tool":"read","args":{"path":"a.go"},"id":1}`)
		case !known:
			err = fault.InvalidArgument("there is no tool %q.", line.Tool).
				WithHint("agentfs tools lists the tools and their arguments")
		default:
			if len(line.Args) == 0 {
				line.Args = json.RawMessage(`{}`)
			}
			answer.Result, err = runStoppable(c.Context, tl, func() (any, error) { return t.Call(c.Context, tl, line.Args) })
		}
		if err != nil {
			e := fault.AsError(err)
			answer.Result, answer.Error = nil, e.Bounded()
			if code == 0 {
				code = exitCode(e.Code)
			}
		}
		if err := enc.Encode(answer); err != nil {
			return err
		}
		if c.Context.Err() != nil {
			return fault.Interrupted(c.Context)
		}
	}
	if err := in.Err(); err != nil {
		return fault.Errorf(fault.CodeIOError, "standard input could not be read: %s.", err).
			WithHint("write requests of at most 64 MiB a line")
	}
	o.code = code
	return nil
}
