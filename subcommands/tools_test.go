package subcommands

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/registry"
)

// TestToolsCommand: agentfs tools prints one object listing every tool of
// the registry and every subcommand built from it, each with a description
// and an input schema; it is bounded by --max-bytes like any result.
func TestToolsCommand(t *testing.T) {
	code, out, errs := run(t, "<block>", "tools")
	if code != 0 || errs != "" || strings.Count(out, "\n") != 1 {
		t.Fatalf("tools: %d %q %q", code, out, errs)
	}
	var got struct {
		Tools []struct {
			Name, Description string
			InputSchema       map[string]any
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, tl := range got.Tools {
		listed[tl.Name] = true
		if tl.Description == "" || tl.InputSchema["type"] != "object" {
			t.Errorf("%s: %+v", tl.Name, tl)
		}
	}
	if len(got.Tools) != len(registry.All()) {
		t.Errorf("%d tools listed, the registry has %d", len(got.Tools), len(registry.All()))
	}
	for _, c := range commands("") {
		if !listed[c.Name] && c.Name != "tools" && c.Name != "version" && c.Name != "batch" && c.Name != "mcp" && c.Name != "serve" && c.Name != "index" {
			t.Errorf("subcommand %s is not a listed tool", c.Name)
		}
	}
	for _, tl := range registry.All() {
		if commandNamed(commands(""), tl.Info().Name) == nil {
			t.Errorf("tool %s has no subcommand", tl.Info().Name)
		}
	}
	t.Logf("agentfs tools: %d bytes", len(out))

	if code, _, errs := run(t, "", "--max-bytes", "512", "tools"); code != 1 || !strings.Contains(errs, `"TOO_LARGE"`) {
		t.Errorf("tools over --max-bytes: %d %q", code, errs)
	}
	if code, _, errs := run(t, "", "tools", "read"); code != 2 || !strings.Contains(errs, `"INVALID_ARGUMENT"`) {
		t.Errorf("tools with an argument: %d %q", code, errs)
	}
}

// TestToolsFormats: every format prints one {"tools": [...]} line, JSON
// whatever the global --format, with every tool or, with --readonly, the
// read-only ones; an unknown format is INVALID_ARGUMENT.
func TestToolsFormats(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		tools int
		first string // the first tool's name, wherever its format puts it
	}{
		{[]string{"tools", "--format", "agentfs"}, len(registry.All()), `"name":"read"`},
		{[]string{"tools", "--format", "mcp"}, len(registry.All()), `"name":"agentfs_read"`},
		{[]string{"tools", "--format", "openai"}, len(registry.All()), `"function":{"name":"agentfs_read"`},
		{[]string{"tools", "--format", "anthropic", "--readonly"}, 4, `"input_schema"`},
		{[]string{"--readonly", "tools", "--format", "mcp"}, 4, `"outputSchema"`},
		{[]string{"--format", "text", "tools", "--format", "openai"}, len(registry.All()), `"strict":true`},
	} {
		code, out, errs := run(t, "", tc.args...)
		var got struct{ Tools []json.RawMessage }
		if code != 0 || errs != "" || json.Unmarshal([]byte(out), &got) != nil || len(got.Tools) != tc.tools ||
			!strings.Contains(string(got.Tools[0]), tc.first) {
			t.Errorf("%v: %d %q, %d tools; want %d tools, the first with %s", tc.args, code, errs, len(got.Tools), tc.tools, tc.first)
		}
	}
	if code, _, errs := run(t, "", "tools", "--format", "yaml"); code != 2 || !strings.Contains(errs, `"INVALID_ARGUMENT"`) {
		t.Errorf("tools --format yaml: %d %q", code, errs)
	}
}
