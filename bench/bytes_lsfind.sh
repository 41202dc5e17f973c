#!/usr/bin/env bash
# Bytes of ls and find output against the classic tools, for the same
# entries, on the Go source tree (the contract: ls no more than ls -la, find
# at most 1.5 times fd).
#
#   bench/bytes_lsfind.sh        # prints a markdown table; a few seconds
#
# agentfs is paged to the end (--limit 1000, following nextOffset), and every
# page counts, its envelope included. ls -la and fdfind run with LC_ALL=C and
# print to a pipe, as agentfs does. find runs with --no-ignore against fd -I:
# the tree is not a git repository, where fd reads no .gitignore but agentfs
# does, so only then are the two lists the same. "entries" are agentfs's, and
# the script fails when fd's line count differs. "all directories" lists every
# directory of the tree, one call each, and adds the bytes up.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in fdfind python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y fd-find python3" >&2; exit 1; }
done
bin=$(mktemp -d)/agentfs
trap 'rm -rf "$(dirname "$bin")"' EXIT
. bench/build.sh && build_agentfs "$bin"
corpus=$(go env GOROOT)/src
cd "$corpus"
export LC_ALL=C AGENTFS_BIN=$bin

python3 - <<'EOF'
import json, os, shlex, subprocess

bin = os.environ["AGENTFS_BIN"]

def run(args):
    return subprocess.run(args, capture_output=True, check=True).stdout

def agentfs(args):
    """Bytes and entries of every page of an agentfs call."""
    size, n, off = 0, 0, 0
    while True:
        out = run([bin] + args + ["--limit", "1000", "--offset", str(off)])
        size += len(out)
        r = json.loads(out)
        n += len(r.get("entries", r.get("results", [])))
        if "nextOffset" not in r:
            return size, n
        off = r["nextOffset"]

def row(name, ours, theirs, cmd, check_lines=False):
    size, n = agentfs(ours)
    other = run(theirs)
    lines = other.count(b"\n")
    if check_lines and lines != n:
        raise SystemExit(f"{name}: agentfs {n} entries, {cmd} {lines} lines")
    print(f"| {name} | `agentfs {shlex.join(ours)}` | `{cmd}` | {n} | {size} | {len(other)} | {size / len(other):.2f} |")

print("| case | agentfs | classic | entries | agentfs bytes | classic bytes | ratio |")
print("|:--|:--|:--|--:|--:|--:|--:|")
for d in [".", "net/http", "cmd/compile/internal/ssa", "internal/syscall/unix"]:
    row(f"ls {d}", ["ls", d], ["ls", "-la", d], f"ls -la {d}")
    row(f"ls --long {d}", ["ls", "--long", d], ["ls", "-la", d], f"ls -la {d}")

dirs = ["."] + run(["fdfind", "-H", "-I", "-t", "d"]).decode().split("/\n")[:-1]
for long in ([], ["--long"]):
    ours = theirs = n = 0
    for d in dirs:
        s, k = agentfs(["ls"] + long + [d])
        ours, n = ours + s, n + k
        theirs += len(run(["ls", "-la", d]))
    flag = " ".join(["ls"] + long)
    print(f"| {flag}, all {len(dirs)} directories | `agentfs {flag} DIR` | `ls -la DIR` | {n} | {ours} | {theirs} | {ours / theirs:.2f} |")

row("ls --depth 10 net/http", ["ls", "--depth", "10", "net/http"], ["ls", "-laR", "net/http"], "ls -laR net/http")

row("find (everything)", ["find", "--no-ignore"], ["fdfind", "-H", "-I"], "fdfind -H -I", True)
row("find '*.go'", ["find", "--no-ignore", "*.go"], ["fdfind", "-H", "-I", "-g", "*.go"], "fdfind -H -I -g '*.go'", True)
row("find '*_test.go' net", ["find", "--no-ignore", "*_test.go", "net"], ["fdfind", "-H", "-I", "-g", "*_test.go", "net"], "fdfind -H -I -g '*_test.go' net", True)
row("find '*.go' net/http", ["find", "--no-ignore", "*.go", "net/http"], ["fdfind", "-H", "-I", "-g", "*.go", "net/http"], "fdfind -H -I -g '*.go' net/http", True)
row("find --type dir", ["find", "--no-ignore", "--type", "dir"], ["fdfind", "-H", "-I", "-t", "d"], "fdfind -H -I -t d", True)
EOF
