#!/usr/bin/env bash
# Two agentfs binaries' index builds against each other and one rg scan,
# in alternating rounds on a tree already there: on a shared machine the
# load moves more between runs than a change moves the build, and a
# ratio taken within one round follows the load.
#
#   bench/index-ab.sh ROUNDS TREE BINARY_A BINARY_B
#
# Per round: each binary (A first in odd rounds, B first in even ones)
# drops the tree's index and builds it from nothing, timed by
# /usr/bin/time, then rg scans the tree once. It prints the medians of
# wall and CPU (user+system) time, the median of B's per-round difference
# from A, and the medians of B's per-round ratios to the rg scan.
set -euo pipefail
if (($# != 4)); then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
rounds=$1 tree=$2 a=$3 b=$4
for tool in rg python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
state=$(mktemp -d)
out=$state/times
trap 'rm -rf "$state"' EXIT
export AGENTFS_STATE_DIR=$state/index
mkdir -m 700 "$AGENTFS_STATE_DIR"
cd "$tree"
for r in $(seq "$rounds"); do
  order=("$a" "$b")
  ((r % 2)) || order=("$b" "$a")
  for bin in "${order[@]}"; do
    "$bin" index --drop . >/dev/null 2>&1 || true
    /usr/bin/time -f "$r $bin %e %U %S" -a -o "$out" "$bin" index . >/dev/null
  done
  /usr/bin/time -f "$r rg %e %U %S" -a -o "$out" rg --count -F zzqq_nowhere >/dev/null || true
done
python3 - "$out" "$a" "$b" <<'EOF'
import statistics as st, sys
path, a, b = sys.argv[1:4]
rounds = {}
for line in open(path):
    f = line.split()
    if len(f) == 5:
        rounds.setdefault(int(f[0]), {})[f[1]] = (float(f[2]), float(f[3]) + float(f[4]))
rs = list(rounds.values())
med = lambda xs: st.median(xs) * 1000
for name in (a, b, "rg"):
    print(f"{name}: wall {med([r[name][0] for r in rs]):.0f} ms, CPU {med([r[name][1] for r in rs]):.0f} ms")
dc = [r[b][1] - r[a][1] for r in rs]
print(f"B - A per round: wall {med([r[b][0] - r[a][0] for r in rs]):+.0f} ms, CPU {med(dc):+.0f} ms; B used less CPU in {sum(d < 0 for d in dc)} of {len(rs)} rounds")
print(f"B / rg per round: wall {st.median([r[b][0] / r['rg'][0] for r in rs]):.2f}x, CPU {st.median([r[b][1] / r['rg'][1] for r in rs]):.2f}x")
EOF
