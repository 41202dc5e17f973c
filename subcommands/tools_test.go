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
		if !listed[c.Name] && c.Name != "tools" && c.Name != "version" && c.Name != "batch" && c.Name != "index" {
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
