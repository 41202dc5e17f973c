package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/s3fs/s3test"
	"github.com/agentfs/agentfs/subcommands"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"agentfs": func() { os.Exit(subcommands.Run()) },
	})
}

// mcpClient is the directory of the MCP end-to-end client (client.mjs and
// its npm packages).
var mcpClient, _ = filepath.Abs("../../test/mcp")

// examples is the directory of the README's example programs.
var examples, _ = filepath.Abs("../../examples")

// TestScripts runs the CLI scripts of testdata/script: each asserts stdout
// JSON, stderr, the exit code and the files left on disk.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"json":         cmdJSON,
			"jsonenv":      cmdJSONEnv,
			"mkfifo":       cmdMkfifo,
			"mksock":       cmdMksock,
			"mounttmpfs":   cmdMountTmpfs,
			"mountbind":    cmdMountBind,
			"mountoverlay": cmdMountOverlay,
			"status":       cmdStatus,
			"settle":       cmdSettle,
			// For publish and serve.
			"freeport":    cmdFreePort,
			"waitlisten":  cmdWaitListen,
			"httpget":     cmdHTTPGet,
			"stallget":    cmdStallGet,
			"holdconns":   cmdHoldConns,
			"expiredlink": cmdExpiredLink,
			// For s3:// roots.
			"stalledstore": cmdStalledStore,
		},
		// $EXAMPLES: the README's programs, which scripts run as a user
		// would; $MCP_CLIENT: the MCP end-to-end client; and the S3
		// server's settings (s3Setup).
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLES", examples)
			env.Setenv("MCP_CLIENT", mcpClient)
			return s3Setup(env)
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			case "mount":
				return canMount(), nil
			case "mcpclient":
				// node, and the client's packages installed by npm ci.
				_, err := exec.LookPath("node")
				_, missing := os.Stat(filepath.Join(mcpClient, "node_modules", "@modelcontextprotocol", "sdk"))
				return err == nil && missing == nil, nil
			case "s3":
				return os.Getenv(s3test.EnvEndpoint) != "", nil
			case "s3dir":
				// The server's directory, $S3_DIR, to change a bucket
				// behind its back: one this user may write in (CI's
				// unprivileged pass shares the server root started).
				dir := os.Getenv(s3test.EnvDir)
				return os.Getenv(s3test.EnvEndpoint) != "" && dir != "" && unix.Access(dir, unix.W_OK) == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// s3Setup gives a script, when an S3 server is at hand (the condition
// [s3]), a bucket of its own in $BUCKET, the server's URL in
// $AGENTFS_TEST_S3_ENDPOINT and the AWS_* variables that reach it, and
// the directory it keeps its buckets in, when known, in $S3_DIR.
func s3Setup(env *testscript.Env) error {
	ep := os.Getenv(s3test.EnvEndpoint)
	if ep == "" {
		return nil
	}
	name, drop, err := s3test.Make(context.Background(), ep)
	if err != nil {
		return err
	}
	env.Defer(drop)
	access, secret := s3test.Keys()
	for k, v := range map[string]string{"BUCKET": name, s3test.EnvEndpoint: ep, "AWS_ENDPOINT_URL": ep, "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": access, "AWS_SECRET_ACCESS_KEY": secret, "S3_DIR": os.Getenv(s3test.EnvDir)} {
		env.Setenv(k, v)
	}
	return nil
}

// cmdJSON asserts one value of a JSON file: json stdout .error.code NOT_FOUND.
// The path is dotted, with [N] for array elements and a final |length for
// the length of an array, object or string, as in jq; EXPECTED is compared
// as compact JSON, or as the string value when it is not JSON.
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: json FILE .path EXPECTED")
	}
	data := ts.ReadFile(args[0])
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		ts.Fatalf("%s is not one JSON value: %v\n%s", args[0], err, data)
	}
	got, ok := lookup(v, args[1])
	var gotText string
	if ok {
		b, _ := json.Marshal(got)
		gotText = string(b)
	}
	want := args[2]
	var wv any
	if json.Unmarshal([]byte(want), &wv) == nil {
		var buf bytes.Buffer
		_ = json.Compact(&buf, []byte(want))
		want = buf.String()
	} else {
		b, _ := json.Marshal(want)
		want = string(b)
	}
	match := ok && gotText == want
	if match == neg {
		if !ok {
			ts.Fatalf("%s: no value at %s in %s", args[0], args[1], data)
		}
		ts.Fatalf("%s: %s is %s, want %s%s", args[0], args[1], gotText, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// cmdJSONEnv sets an environment variable to a string or number of a
// JSON file, so that a later command can pass it back: jsonenv CURSOR
// stdout .nextCursor.
func cmdJSONEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: jsonenv VAR FILE .path")
	}
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile(args[1])), &v); err != nil {
		ts.Fatalf("%s is not one JSON value: %v", args[1], err)
	}
	got, _ := lookup(v, args[2])
	switch x := got.(type) {
	case string:
		ts.Setenv(args[0], x)
	case float64:
		ts.Setenv(args[0], strconv.FormatFloat(x, 'f', -1, 64))
	default:
		ts.Fatalf("%s: no string or number at %s", args[1], args[2])
	}
}

func lookup(v any, path string) (any, bool) {
	if p, ok := strings.CutSuffix(path, "|length"); ok {
		x, _ := lookup(v, p)
		switch x := x.(type) {
		case []any:
			return len(x), true
		case map[string]any:
			return len(x), true
		case string:
			return len([]rune(x)), true
		}
		return nil, false
	}
	path = strings.TrimPrefix(path, ".")
	for path != "" {
		var key string
		if strings.HasPrefix(path, "[") {
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return nil, false
			}
			i, err := strconv.Atoi(path[1:end])
			arr, ok := v.([]any)
			if err != nil || !ok || i < 0 || i >= len(arr) {
				return nil, false
			}
			v, path = arr[i], strings.TrimPrefix(path[end+1:], ".")
			continue
		}
		end := strings.IndexAny(path, ".[")
		if end < 0 {
			end = len(path)
		}
		key, path = path[:end], strings.TrimPrefix(path[end:], ".")
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[key]; !ok {
			return nil, false
		}
	}
	return v, true
}

// cmdStatus runs a program and asserts its exact exit code, which `exec`
// cannot: status 3 agentfs write ... (stdout and stderr are kept for the
// assertions that follow).
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: %q is not an exit code", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	for _, a := range args {
		if err := syscall.Mkfifo(ts.MkAbs(a), 0o644); err != nil {
			ts.Fatalf("mkfifo %s: %v", a, err)
		}
	}
}

// cmdSettle waits until each path's ctime is backend.RacySlack old: the
// index trusts no file changed more recently, and touch -d dates back the
// mtime alone. It waits on the clock, which is the condition itself.
func cmdSettle(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: settle PATH...")
	}
	for _, a := range args {
		var st unix.Stat_t
		if err := unix.Lstat(ts.MkAbs(a), &st); err != nil {
			ts.Fatalf("settle %s: %v", a, err)
		}
		time.Sleep(time.Until(time.Unix(st.Ctim.Unix()).Add(backend.RacySlack + 10*time.Millisecond)))
	}
}

// cmdMksock makes a Unix socket file at each path (bound, then closed: the
// file stays).
func cmdMksock(ts *testscript.TestScript, neg bool, args []string) {
	for _, a := range args {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			ts.Fatalf("mksock: %v", err)
		}
		err = syscall.Bind(fd, &syscall.SockaddrUnix{Name: ts.MkAbs(a)})
		syscall.Close(fd)
		if err != nil {
			ts.Fatalf("mksock %s: %v", a, err)
		}
	}
}

// TestReadmeShowsExamples keeps the README's programs the ones the
// examples script runs: each file of examples/ appears in it whole.
func TestReadmeShowsExamples(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../examples/*")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(readme, data) {
			t.Errorf("README.md does not show %s as it is", f)
		}
	}
}
