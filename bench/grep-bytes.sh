#!/usr/bin/env bash
# Output bytes of agentfs grep against ripgrep's text for the same matches,
# on the Go source tree.
#
#   bench/grep-bytes.sh [AGENTFS_BINARY]   # default: built from this tree
#
# For each query, agentfs is paged to the end (--limit 1000, following
# nextOffset) and its stdout bytes are summed: what a caller receives to see
# every match. ripgrep prints the same lines once, as `rg -n` does when its
# output is not a terminal (a path on every line); --hidden because agentfs
# searches hidden files too, --sort path for the same order (the bytes are the
# same unsorted). Each query runs without context against `rg -n` and with
# --context 2 against `rg -n -C2`. The ratio is agentfs bytes / rg bytes: at
# most 1 means agentfs costs no more than rg for the same information. The
# matching-line counts of both are printed so that a difference in what was
# found cannot pass for a difference in size.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in rg python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y ripgrep python3" >&2; exit 1; }
done
bin=${1:-}
if [[ -z $bin ]]; then
  bin=$(mktemp -d)/agentfs
  . bench/build.sh && build_agentfs "$bin"
fi
bin=$(realpath "$bin")
cd "$(go env GOROOT)/src"

python3 - "$bin" <<'PY'
import json, subprocess, sys

bin = sys.argv[1]
# name, agentfs grep arguments, rg arguments (the query last, then the path)
queries = [
    ("literal 'func main'", ["func main"], ["-F", "func main"]),
    ("literal 'return nil'", ["return nil"], ["-F", "return nil"]),
    ("literal 'TODO'", ["TODO"], ["-F", "TODO"]),
    ("regex 'func \\w+Error\\('", ["func \\w+Error\\(", "--regex"], ["func \\w+Error\\("]),
    ("ignore-case 'readfile'", ["readfile", "--ignore-case"], ["-F", "-i", "readfile"]),
    ("literal 'err' in net/http", ["err", "net/http"], ["-F", "err", "net/http"]),
    ("regex 'Handler\\b' in net/http", ["Handler\\b", "--regex", "net/http"], ["Handler\\b", "net/http"]),
]

def agentfs(args):
    total, off, lines, calls = 0, 0, 0, 0
    while True:
        out = subprocess.run([bin, "grep", *args, "--limit", "1000", "--offset", str(off)],
                             capture_output=True, stdin=subprocess.DEVNULL, check=True).stdout
        total, calls = total + len(out), calls + 1
        r = json.loads(out)
        lines += r["count"]
        if "nextOffset" not in r:
            return total, lines, calls
        off = r["nextOffset"]

def rg(args):
    base = ["rg", "--hidden", "--sort", "path"]
    out = subprocess.run(base + ["-n"] + args, capture_output=True, stdin=subprocess.DEVNULL).stdout
    counts = subprocess.run(base + ["-c"] + [a for a in args if a != "-C2"], capture_output=True,
                            stdin=subprocess.DEVNULL).stdout
    lines = sum(int(l.rsplit(b":", 1)[1]) for l in counts.splitlines() if l)
    return len(out), lines

print("| query | context | matching lines (agentfs / rg) | agentfs calls | agentfs bytes | rg -n bytes | ratio |")
print("|:--|--:|--:|--:|--:|--:|--:|")
for name, ours, theirs in queries:
    for ctx in (0, 2):
        a = ours + (["--context", "2"] if ctx else [])
        r = (["-C2"] if ctx else []) + theirs
        ab, al, calls = agentfs(a)
        rb, rl = rg(r)
        print(f"| {name} | {ctx} | {al} / {rl} | {calls} | {ab} | {rb} | {ab / rb:.2f} |")
PY
