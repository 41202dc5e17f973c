package subcommands

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
)

// TestSessionHintAudit: every hint of the packages a session's call runs
// through that names a global setting as a remedy comes out of a session
// naming it only in the restart its note gives, or not at all: a call
// cannot change a session's settings. --deny (named to say why a path is
// refused) and --recover (a command of its own) are left as they are.
func TestSessionHintAudit(t *testing.T) {
	var flags []string
	for _, g := range globals {
		switch g.name {
		case "deny", "recover":
			continue
		}
		flags = append(flags, "--"+g.name)
	}
	verb := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	// The restart a session's hint names.
	note := regexp.MustCompile(`restart the session with [^;,]*`)
	// Hints of what runs before a session answers a call: a --symlinks
	// value refused, agentfs --recover's wait (s3fs Settle), a --root
	// refused.
	startup := []string{"use --symlinks within (the default)", "retry with a --lock-timeout over",
		"pass a directory to --root", "pass an existing directory to --root", "pass a directory this user may read as --root"}
	seen := 0
	for _, dir := range []string{"../core", "../localfs", "../s3fs", "../memfs", "../mixfs", "../backend"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				lit, isLit := call.Args[0].(*ast.BasicLit)
				if !ok || sel.Sel.Name != "WithHint" || !isLit || lit.Kind != token.STRING {
					return true
				}
				format, _ := strconv.Unquote(lit.Value)
				hint := verb.ReplaceAllString(format, "7")
				if !namesAny(hint, flags) || slices.ContainsFunc(startup, func(s string) bool { return strings.HasPrefix(hint, s) }) {
					return true
				}
				seen++
				got := sessionHint(&fault.Error{Code: fault.CodeInvalidArgument, Hint: hint}).Hint
				if rest := note.ReplaceAllString(got, ""); namesAny(rest, flags) {
					t.Errorf("%s: a session's hint names a setting a call cannot change:\n  hint: %s\n  session's: %s", fset.Position(lit.Pos()), hint, got)
				}
				if strings.Contains(got, "; ;") || strings.HasPrefix(got, ";") || got == "" {
					t.Errorf("%s: a session's hint is malformed: %q", fset.Position(lit.Pos()), got)
				}
				return true
			})
		}
	}
	if seen < 20 {
		t.Fatalf("only %d hints name a global setting: is the audit reading the sources?", seen)
	}
}

// flagTokens are the --flag tokens of s, whole (--offset is not the start
// of --offset-lines): the audit's own reading, apart from namesFlag's.
func flagTokens(s string) []string {
	var out []string
	for i := 0; ; {
		j := strings.Index(s[i:], "--")
		if j < 0 {
			return out
		}
		j += i
		end := j + 2
		for end < len(s) && (s[end] == '-' || s[end] >= 'a' && s[end] <= 'z' || s[end] >= '0' && s[end] <= '9') {
			end++
		}
		out = append(out, s[j:end])
		i = end
	}
}

func namesAny(s string, flags []string) bool {
	for _, tok := range flagTokens(s) {
		for _, f := range flags {
			if tok == f {
				return true
			}
		}
	}
	return strings.Contains(s, "AGENTFS_ASSETS")
}

// TestSessionHintOfARestart: a hint that already says to start agentfs
// again is left as it is. The root renamed during a session (rootMoved,
// a hint built at run time, which the audit does not read) lost its only
// remedy, "start agentfs again ... with --root naming the directory as it
// is now", and said instead that a call cannot add a root.
func TestSessionHintOfARestart(t *testing.T) {
	for _, tc := range []struct {
		code       fault.Code
		hint, want string
	}{
		{fault.CodeOutsideRoot, "start agentfs again (a new batch or MCP session) with --root naming the directory as it is now; nothing was changed",
			"start agentfs again (a new batch or MCP session) with --root naming the directory as it is now; nothing was changed"},
	} {
		if got := sessionHint(&fault.Error{Code: tc.code, Hint: tc.hint}).Hint; got != tc.want {
			t.Errorf("%s: session's hint\n  %s\nwant\n  %s", tc.hint, got, tc.want)
		}
	}
}

// TestSessionHintOfARootNamedLikeAFlag: the letters of a root's name are
// no setting. OUTSIDE_ROOT under the root w--symlinks was told "restart
// the session with --symlinks within", and under w--root lost the root's
// name: flagTokens took --symlinks and --root inside the path for flags.
func TestSessionHintOfARootNamedLikeAFlag(t *testing.T) {
	for _, root := range []string{"/srv/w--symlinks", "/srv/w--root", "/srv/w--max-bytes"} {
		hint := "use a path inside " + root + ", or add a root with --root"
		want := "use a path inside " + root + "; this session's roots were set when it started, and a call cannot add one"
		if got := sessionHint(&fault.Error{Code: fault.CodeOutsideRoot, Message: "the path is outside the allowed roots.", Hint: hint}).Hint; got != want {
			t.Errorf("%s: session's hint\n  %s\nwant\n  %s", hint, got, want)
		}
	}
}
