#!/usr/bin/env bash
# Speed of the integration paths (issue 12 point 8), measured in one run:
#   1. a batch of N reads (one agentfs batch process) against N processes
#      (agentfs read each); the goal is at most 1/10;
#   2. an MCP tools/call round trip (agentfs mcp, one session) against a
#      batch line's round trip (agentfs batch), each request sent when the
#      previous answer has come back, as an agent waits for each result;
#      the goal is at most 2x.
# Every read is README.md's first 5 lines. Each figure is the median of
# ROUNDS rounds, the rounds interleaved so that the machine's load falls on
# both sides alike.
#
#   bench/mcp.sh [N] [ROUNDS]     (default 200 and 7; needs python3)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
rounds=${2:-7}
command -v python3 >/dev/null || { echo "missing python3: apt-get install -y python3" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. bench/build.sh && build_agentfs "$tmp/agentfs"
echo "agentfs $(git rev-parse --short HEAD); $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$tmp/agentfs" "$n" "$rounds" <<'EOF'
import json, os, statistics, subprocess, sys, time

agentfs, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# The server's CPU time (user+system) over a whole session, start-up and
# handshake included: on a loaded machine, steadier than wall time.
cpu = {"mcp": [], "batch": []}
args = {"path": "README.md", "limit": 5}

def processes():
    t = time.perf_counter()
    for _ in range(n):
        subprocess.run([agentfs, "read", "--json", json.dumps(args)], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t

def batch_piped():
    lines = "".join(json.dumps({"tool": "read", "args": args, "id": i}) + "\n" for i in range(n))
    t = time.perf_counter()
    out = subprocess.run([agentfs, "batch"], input=lines.encode(), check=True, capture_output=True).stdout
    took = time.perf_counter() - t
    assert out.count(b"\n") == n and b'"error"' not in out, out[:500]
    return took

def round_trips(argv, handshake, request):
    """Start argv, run handshake, then time n requests, each sent when the
    previous answer is back; the process start is not counted."""
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    def ask(msg, answered=True):
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()
        if answered:
            line = p.stdout.readline()
            assert line and b'"error"' not in line and b'"isError"' not in line, line[:500]
            return line
    for msg, answered in handshake:
        ask(msg, answered)
    t = time.perf_counter()
    for i in range(n):
        ask(request(i))
    took = time.perf_counter() - t
    p.stdin.close()
    _, status, usage = os.wait4(p.pid, 0)
    assert status == 0
    p.returncode = 0
    cpu[argv[1]].append(usage.ru_utime + usage.ru_stime)
    return took

def mcp():
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
    return round_trips([agentfs, "mcp"], [(init, True), ({"jsonrpc": "2.0", "method": "notifications/initialized"}, False)],
        lambda i: {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": "agentfs_read", "arguments": args}})

def batch_lines():
    return round_trips([agentfs, "batch"], [], lambda i: {"tool": "read", "args": args, "id": i})

cases = [("processes", processes), ("batch, piped", batch_piped), ("mcp round trips", mcp), ("batch round trips", batch_lines)]
times = {name: [] for name, _ in cases}
for _ in range(rounds):
    for name, f in cases:
        times[name].append(f())
med = {name: statistics.median(ts) for name, ts in times.items()}
print(f"\n{n} reads of README.md --limit 5, median of {rounds} rounds:\n")
print("| path | total ms | per read ms |")
print("|:--|--:|--:|")
for name, _ in cases:
    print(f"| {name} | {med[name] * 1000:.1f} | {med[name] * 1000 / n:.3f} |")
r1 = med["batch, piped"] / med["processes"]
r2 = med["mcp round trips"] / med["batch round trips"]
print(f"\nbatch / processes: {r1:.3f} (goal at most 0.1): {'met' if r1 <= 0.1 else 'NOT met'}")
print(f"mcp round trip / batch line round trip: {r2:.2f}x (goal at most 2x): {'met' if r2 <= 2 else 'NOT met'}")
c_mcp, c_batch = statistics.median(cpu["mcp"]), statistics.median(cpu["batch"])
print(f"server CPU per round trip: mcp {c_mcp * 1000 / n:.3f} ms, batch {c_batch * 1000 / n:.3f} ms: {c_mcp / c_batch:.2f}x")
EOF
