#!/usr/bin/env bash
# Start-up cost: what one small call costs against an empty Go binary's
# run (the floor of any Go process) and cat, in one hyperfine run. Agents
# make thousands of calls, so start-up is paid on each; the goal is a small
# read at most 1.5x the empty binary (median).
#
#   bench/startup.sh [RUNS]     (default 1000; needs hyperfine and python3)
#
# agentfs is built as the README builds it; the empty binary with the same
# toolchain and flags.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000}
for tool in hyperfine python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y hyperfine python3" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-trimpath -ldflags='-s -w')
CGO_ENABLED=0 go build "${flags[@]}" -tags urfave_cli_no_docs -o "$tmp/agentfs" ./cmd/agentfs
printf 'package main\n\nfunc main() {}\n' >"$tmp/empty.go"
(cd "$tmp" && CGO_ENABLED=0 go build "${flags[@]}" -o empty empty.go)
echo "agentfs $(stat -c %s "$tmp/agentfs") bytes, empty binary $(stat -c %s "$tmp/empty") bytes;" \
  "$(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"

# No shell (-N): these commands take about a millisecond.
hyperfine -N --style basic --warmup 50 --runs "$runs" --export-json "$tmp/result.json" \
  -n "empty Go binary" "$tmp/empty" \
  -n "agentfs version" "$tmp/agentfs version" \
  -n "agentfs read README.md --limit 5" "$tmp/agentfs read README.md --limit 5" \
  -n "cat README.md" "cat README.md" >/dev/null

# Medians are wall time; on a shared machine the CPU time (user+system,
# mean) is the steadier figure, as other processes' load does not count.
python3 - "$tmp/result.json" <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
base, base_cpu = res[0]["median"], res[0]["user"] + res[0]["system"]
print("| command | median ms | min ms | CPU ms | median vs empty | CPU vs empty |")
print("|:--|--:|--:|--:|--:|--:|")
for r in res:
    cpu = r["user"] + r["system"]
    print("| `%s` | %.2f | %.2f | %.2f | %.2f× | %.2f× |" % (
        r["command"], r["median"] * 1000, r["min"] * 1000, cpu * 1000, r["median"] / base, cpu / base_cpu))
EOF
