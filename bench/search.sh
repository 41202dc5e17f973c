#!/usr/bin/env bash
# Benchmark of agentfs find and grep against ripgrep and fd on the Go source
# tree, with hyperfine (wall time) and GNU time (peak memory).
#
#   bench/search.sh [RUNS]      # default 10 runs per command, 2 warm-ups
#
# Every grep row is a full scan on both sides: agentfs --mode count (totals)
# against rg --count (a count per file), so neither side spends its time
# printing. ripgrep runs twice: as is (parallel, unordered) and with
# --sort path (one thread; the same order as agentfs). find walks the whole
# tree without printing (an offset past the end) against fdfind -H, which
# prints every path. rg and fd honour .gitignore as agentfs does; the Go
# tree has no ignore file below src/, so all three see the same files.
# CPU is user+system time (means): on a shared machine it is steadier than
# wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
for tool in rg fdfind hyperfine /usr/bin/time python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y ripgrep fd-find hyperfine time" >&2; exit 1; }
done
bin=$(mktemp -d)/agentfs
. bench/build.sh && build_agentfs "$bin"
corpus=$(go env GOROOT)/src
out=$(mktemp -d)
cd "$corpus"

# name | agentfs command | rg (or fd) command
rows=(
  "literal 'func main'|$bin grep 'func main' --mode count|rg --count -F 'func main'"
  "regex 'func \\w+Error\\('|$bin grep 'func \\w+Error\\(' --regex --mode count|rg --count 'func \\w+Error\\('"
  "ignore-case 'readfile'|$bin grep readfile --ignore-case --mode count|rg --count -i -F readfile"
  "rare literal 'EPROTONOSUPPORT'|$bin grep EPROTONOSUPPORT --mode count|rg --count -F EPROTONOSUPPORT"
  "common literal 'err'|$bin grep err --mode count|rg --count -F err"
  "regex, no literal '[A-Z][a-z]+[0-9]{2,}'|$bin grep '[A-Z][a-z]+[0-9]{2,}' --regex --mode count|rg --count '[A-Z][a-z]+[0-9]{2,}'"
  "first page of 'err' (limit 200)|$bin grep err|rg -F err"
  "find '**/*_test.go'|$bin find '**/*_test.go' --limit 1000 --offset 1000000|fdfind -H -g '*_test.go'"
)

echo "corpus: $corpus ($(find . -type f | wc -l) files, $(du -sh . | cut -f1)); $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
for row in "${rows[@]}"; do
  IFS='|' read -r name ours theirs <<<"$row"
  cmds=("$ours" "$theirs")
  if [[ $theirs == rg* ]]; then
    cmds+=("${theirs/rg /rg --sort path }")
  fi
  hyperfine -N -w 2 -r "$runs" -i --export-json "$out/$i.json" "${cmds[@]}" >/dev/null
  for c in "${cmds[@]}"; do
    # GNU time's peak resident set size, in KiB, the largest of three runs.
    m=0
    for _ in 1 2 3; do
      k=$( { eval "/usr/bin/time -f %M $c" >/dev/null; } 2>&1 | tail -1)
      (( k > m )) && m=$k
    done
    echo "$m" >>"$out/$i.mem"
  done
  echo "$name" >"$out/$i.name"
  i=$((i + 1))
done

python3 - "$out" "$i" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
print("| query | agentfs ms | rg/fd ms | rg --sort path ms | ratio vs rg/fd | ratio vs sorted rg | agentfs CPU ms | rg/fd CPU ms | agentfs MiB | rg/fd MiB |")
print("|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
for i in range(n):
    name = open(f"{out}/{i}.name").read().strip()
    res = json.load(open(f"{out}/{i}.json"))["results"]
    med = [r["median"] * 1000 for r in res]
    cpu = [(r["user"] + r["system"]) * 1000 for r in res]
    mem = [int(x) / 1024 for x in open(f"{out}/{i}.mem").read().split()]
    sorted_ms = f"{med[2]:.0f}" if len(med) > 2 else "-"
    sorted_ratio = f"{med[0] / med[2]:.2f}" if len(med) > 2 else "-"
    print(f"| {name} | {med[0]:.0f} | {med[1]:.0f} | {sorted_ms} | {med[0] / med[1]:.2f} | {sorted_ratio} | {cpu[0]:.0f} | {cpu[1]:.0f} | {mem[0]:.1f} | {mem[1]:.1f} |")
PY
