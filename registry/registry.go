// Package registry declares the agentfs tools once, apart from any way of
// calling them: each tool's name, the description a model reads in a tool
// list, its request type (whose tags give the flags, the JSON fields, the
// schema and the validation), its handler in core, whether it mutates, and
// its text rendering. The command line (package subcommands), agentfs
// tools, and MCP and batch after them are built from it.
package registry

import (
	"context"
	"reflect"
	"strings"

	"github.com/agentfs/agentfs/core"
)

// Def declares one tool whose request is Req and whose result is Res.
type Def[Req, Res any] struct {
	Name string
	// Description is for a model choosing a tool: what it does, what it
	// returns and when to use it, in the JSON fields' names. Its first
	// sentence is the tool's summary in --help.
	Description string
	// Mutates is set for a tool that changes files: --readonly refuses it.
	// Every such tool may overwrite or remove what is there (MCP's
	// destructiveHint) unless Additive.
	Mutates bool
	// Additive is set for a mutating tool that overwrites and removes
	// nothing: publish, which adds a link.
	Additive bool
	// OpenWorld is set for a tool that reaches beyond the workspace:
	// publish hands a link to people, from a store outside the roots.
	OpenWorld bool
	// Idempotent is set for a mutating tool whose repeated call changes
	// nothing more (a write of the same content, an edit already applied).
	Idempotent bool
	Run        func(context.Context, *core.Tools, *Req) (Res, error)
	// Text renders a result for people: the data for standard output and
	// the notes (lines cut, files skipped) for standard error, so that a
	// pipe gets the data and nothing else; the palette colours the data
	// for a terminal.
	Text func(Res, Palette) (data, notes string)
	// Untextable, when set, is the error of a result whose data Text
	// cannot show (a read of a file that is not text): a note alone on
	// standard error left a redirect's file empty, exit 0.
	Untextable func(Res) error
}

// Tool is a Def whatever its types: what a tool list needs, and a call
// from JSON.
type Tool interface {
	Info() Info
	// Types are the request and result types, whose fields the schemas
	// list.
	Types() (request, result reflect.Type)
	// Call decodes a JSON request strictly, runs it and returns its result.
	Call(ctx context.Context, t *core.Tools, request []byte) (any, error)
}

// Info describes one tool as a tool list gives it (agentfs tools, and
// MCP's tools/list, whose shape it has).
type Info struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	InputSchema *core.Schema `json:"inputSchema"`
	// OutputSchema is the result's schema, read from its JSON tags.
	OutputSchema *core.Schema `json:"outputSchema"`
	Annotations  Annotations  `json:"annotations"`
}

// Annotations are hints about a tool's behaviour, as MCP names them.
type Annotations struct {
	// ReadOnlyHint is set for a tool that changes no file.
	ReadOnlyHint bool `json:"readOnlyHint"`
	// DestructiveHint is set for a tool that may overwrite or remove.
	DestructiveHint bool `json:"destructiveHint"`
	// IdempotentHint is set for a tool whose repeated call changes nothing
	// more.
	IdempotentHint bool `json:"idempotentHint"`
	// OpenWorldHint is set for a tool that reaches beyond the workspace.
	// It is given when false too, since MCP takes an absent one for true.
	OpenWorldHint bool `json:"openWorldHint"`
}

// Info describes d from its declaration and its request's and result's
// tags.
func (d *Def[Req, Res]) Info() Info {
	req, res := d.Types()
	return Info{
		Name:         d.Name,
		Description:  d.Description,
		InputSchema:  core.RequestSchema(req),
		OutputSchema: core.ResultSchema(res),
		Annotations: Annotations{
			ReadOnlyHint:    !d.Mutates,
			DestructiveHint: d.Mutates && !d.Additive,
			IdempotentHint:  !d.Mutates || d.Idempotent,
			OpenWorldHint:   d.OpenWorld,
		},
	}
}

// Types returns Req and Res.
func (d *Def[Req, Res]) Types() (request, result reflect.Type) {
	return reflect.TypeFor[Req](), reflect.TypeFor[Res]()
}

// Call decodes request into a Req and runs it; the tool validates it first.
func (d *Def[Req, Res]) Call(ctx context.Context, t *core.Tools, request []byte) (any, error) {
	req := new(Req)
	if err := core.DecodeJSON(request, req); err != nil {
		return nil, err
	}
	return d.Run(ctx, t, req)
}

// Summary is the description's first sentence, as a --help line: "read a
// text file ...".
func (d *Def[Req, Res]) Summary() string {
	s, _, _ := strings.Cut(d.Description, ". ")
	s = strings.TrimSuffix(s, ".")
	return strings.ToLower(s[:1]) + s[1:]
}

// All lists every tool, in the order of --help and of tool lists.
func All() []Tool {
	return []Tool{Read, Ls, Find, Grep, Write, Edit, Rm, ApplyPatch, Mv, Replace, Publish}
}

// List describes every tool, in order.
func List() []Info {
	var out []Info
	for _, t := range All() {
		out = append(out, t.Info())
	}
	return out
}
