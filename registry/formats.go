package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentfs/agentfs/core"
)

// Formats are the shapes of a tool list: agentfs (the tools as agentfs
// tools, batch and the subcommands name them, in MCP's tools/list shape),
// mcp (the same, with the names a model sees), openai (Chat Completions
// tools, strict) and anthropic (Messages tools).
var Formats = []string{"agentfs", "mcp", "openai", "anthropic"}

// ToolName is a tool's name in a model's tool list, whose namespace it
// shares with other servers' tools: agentfs_read, agentfs_apply_patch.
func ToolName(name string) string {
	return "agentfs_" + strings.ReplaceAll(name, "-", "_")
}

// Listed lists every tool in order, or only those that change no file.
func Listed(readOnly bool) []Tool {
	var out []Tool
	for _, t := range All() {
		if !readOnly || t.Info().Annotations.ReadOnlyHint {
			out = append(out, t)
		}
	}
	return out
}

// ToolList is what agentfs tools prints: {"tools": [...]}, the tools in
// format's shape.
type ToolList struct {
	Tools []any `json:"tools"`
}

// OpenAITool is a Chat Completions tool: a function whose parameters the
// model must follow exactly (strict).
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is an OpenAITool's function.
type OpenAIFunction struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Parameters  *core.Schema `json:"parameters"`
	Strict      bool         `json:"strict"`
}

// AnthropicTool is a Messages API tool.
type AnthropicTool struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	InputSchema *core.Schema `json:"input_schema"`
}

// ListIn describes the tools (all, or the read-only ones) in format, one of
// Formats.
func ListIn(format string, readOnly bool) (ToolList, error) {
	if !slices.Contains(Formats, format) {
		return ToolList{}, fmt.Errorf("no tool list format %q", format)
	}
	list := ToolList{Tools: []any{}}
	for _, t := range Listed(readOnly) {
		info := t.Info()
		switch format {
		case "agentfs":
			list.Tools = append(list.Tools, info)
		case "mcp":
			info.Name = ToolName(info.Name)
			list.Tools = append(list.Tools, info)
		case "openai":
			list.Tools = append(list.Tools, OpenAITool{Type: "function", Function: OpenAIFunction{
				Name: ToolName(info.Name), Description: info.Description, Parameters: Strict(info.InputSchema), Strict: true,
			}})
		case "anthropic":
			list.Tools = append(list.Tools, AnthropicTool{Name: ToolName(info.Name), Description: info.Description, InputSchema: info.InputSchema})
		}
	}
	return list, nil
}

// Strict is s in OpenAI's strict form, which a model's call then follows
// exactly: every object lists all its properties as required and allows no
// others; an optional property takes null, which agentfs reads as left
// out; a value of several types is an anyOf; a default, which the form has
// no keyword for, is said in the description. Nor has it a string's
// length: a precondition's minLength 1 goes (agentfs refuses "" there).
func Strict(s *core.Schema) *core.Schema {
	c := *s
	c.Default, c.MinLength = nil, nil
	if s.Default != nil {
		c.Description = strings.TrimSpace(fmt.Sprintf("%s (default: %v)", s.Description, s.Default))
	}
	if s.Items != nil {
		c.Items = Strict(s.Items)
	}
	if len(s.Properties) > 0 || s.Type == "object" {
		required := map[string]bool{}
		for _, r := range s.Required {
			required[r] = true
		}
		c.Properties, c.Required = nil, nil
		for _, p := range s.Properties {
			ps := Strict(p.Schema)
			if !required[p.Name] {
				ps = nullable(ps)
			}
			c.Properties = append(c.Properties, core.Property{Name: p.Name, Schema: ps})
			c.Required = append(c.Required, p.Name)
		}
		c.AdditionalProperties = false
	}
	types, several := s.Type.([]string)
	if !several {
		return &c
	}
	// One branch a type, each with the keywords of its type.
	alt := &core.Schema{Description: c.Description}
	for _, typ := range types {
		b := &core.Schema{Type: typ}
		switch typ {
		case "object":
			b.Properties, b.Required, b.AdditionalProperties = c.Properties, c.Required, false
		case "array":
			b.Items = c.Items
		case "integer", "number":
			b.Minimum, b.Maximum = c.Minimum, c.Maximum
		}
		alt.AnyOf = append(alt.AnyOf, b)
	}
	return alt
}

// nullable is s accepting null as well.
func nullable(s *core.Schema) *core.Schema {
	if typ, ok := s.Type.(string); ok && s.Enum == nil {
		c := *s
		c.Type = []string{typ, "null"}
		return &c
	}
	null := &core.Schema{Type: "null"}
	if s.AnyOf != nil {
		c := *s
		c.AnyOf = append(slices.Clone(s.AnyOf), null)
		return &c
	}
	inner := *s
	inner.Description = ""
	return &core.Schema{Description: s.Description, AnyOf: []*core.Schema{&inner, null}}
}
