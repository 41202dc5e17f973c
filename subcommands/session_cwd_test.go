package subcommands

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An MCP session's relative paths start at the working directory it
// began in. Once that directory is removed, a relative write is refused
// as a call of its own from a removed directory refuses it: it re-created
// the removed directories and answered success. An absolute path still
// works.
func TestMCPRefusesRelativePathsOnceTheWorkingDirectoryIsRemoved(t *testing.T) {
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	src := filepath.Join(dir, "proj", "src")
	mustRun(t, os.MkdirAll(src, 0o755))
	t.Chdir(src)
	s, code, _ := mcpSession(t, "--root", dir)
	write := func(path string) (isError bool, text string) {
		t.Helper()
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "agentfs_write", Arguments: map[string]any{"path": path, "content": "x"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.IsError, res.Content[0].(*mcp.TextContent).Text
	}
	if isErr, text := write("util.go"); isErr {
		t.Fatalf("a write in the working directory: %s", text)
	}
	mustRun(t, os.RemoveAll(filepath.Join(dir, "proj")))
	isErr, text := write("util.go")
	var e struct {
		Error struct{ Code, Message string }
	}
	if !isErr || json.Unmarshal([]byte(text), &e) != nil || e.Error.Code != "INVALID_ARGUMENT" ||
		!strings.Contains(e.Error.Message, "the working directory was removed") {
		t.Errorf("a relative write once the working directory was removed: %s", text)
	}
	if _, err := os.Lstat(filepath.Join(dir, "proj")); err == nil {
		t.Error("the removed working directory was made again")
	}
	if isErr, text := write(filepath.Join(dir, "top.go")); isErr {
		t.Errorf("an absolute write once the working directory was removed: %s", text)
	}
	s.Close()
	<-code
}
